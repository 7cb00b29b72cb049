"""A write that first reads (an ingest's batch, the feed index) waits for another process's
write lock instead of failing: its transaction takes the lock at BEGIN (store.database.db.MapDatabase.atomic).
With a deferred BEGIN, the batch's reads pin a snapshot, the other writer commits, and the
batch's first write fails at once with "database is locked" (SQLITE_BUSY_SNAPSHOT)."""

from __future__ import annotations

import sqlite3
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR


def hold_write_lock(path: Path, seconds: float, held: threading.Event, done: threading.Event) -> None:
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("CREATE TABLE other_writer (x)")
    held.set()
    time.sleep(seconds)  # on purpose: the other writer holds the lock this long
    conn.execute("COMMIT")
    done.set()
    conn.close()


def test_an_ingest_waits_for_another_writer_and_loses_nothing(tmp_path: Path) -> None:
    path = tmp_path / "map.db"
    open_db(path).close()
    held, done = threading.Event(), threading.Event()
    other = threading.Thread(target=hold_write_lock, args=(path, 1.0, held, done))
    other.start()
    assert held.wait(10)
    db = open_db(path)
    report = ingest_paths(db, [SEEDS_DIR])
    other.join()
    assert done.is_set()  # the other writer really held the lock and committed while the ingest ran
    assert not report.rejected and report.stored == 2
    assert db["papers"].count > 2 and db.conn.execute("SELECT count(*) FROM other_writer").fetchone() == (0,)


def test_a_track_waits_for_another_writer(tmp_path: Path) -> None:
    """The bot's writes (here /track's) read and then write too: they wait as well."""
    from mapwatch.store.subscriptions import tracking

    path = tmp_path / "map.db"
    ingest_paths(open_db(path), [SEEDS_DIR])
    held, done = threading.Event(), threading.Event()
    other = threading.Thread(target=hold_write_lock, args=(path, 1.0, held, done))
    other.start()
    assert held.wait(10)
    db = open_db(path)
    track, new = tracking.add_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2412.10400", created_by=3,
                                    now=datetime.now(UTC))
    other.join()
    assert done.is_set() and new and track.paper_id == "2412.10400"
    assert db["tracks"].count == 1
