"""Events without their kind and time (migration 0047, issue 44): the view `events` gives every
row exactly as the table held it.

A database at migration 0046 is filled with the events and batches of a real map (tests/
compact_answers.py's generated map, read twice by this version), then given what a long-lived
database can hold: events deleted since (a merge), the last id deleted (the sequence above every
row), and an event whose time is not its batch's. After the migration every column of every event
is the same, the next id is the one SQLite would have given, and an event that cannot be stored
without its kind stops the migration with nothing changed (one line for a user). A migration
killed midway is rolled back and made again at the next open. (tests/system/test_compact_schema.py
and test_people_schema.py migrate databases of earlier versions through 0047 and compare every
answer and feed byte.)
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mapwatch.cli import main
from mapwatch.store.database.db import open_db
from mapwatch.store.database.rows import next_ids
from mapwatch.store.errors import MigrationRefused
from tests.killpoints import kill_inside_migration
from tests.older_schema import beside_generated_map

EVENTS = "SELECT id, kind, paper_id, citing_id, old_count, new_count, unlisted, snapshot_id, seen_at FROM events"
ODD_TIME = "2026-11-30T08:00:00+00:00"


def _older(tmp_path: Path) -> tuple[Path, list[tuple], int]:
    """A database at 0046 holding a real map's events; its events, and its id sequence."""
    db = beside_generated_map(tmp_path, "0047_lean_events")
    path, conn = tmp_path / "older.db", db.conn
    with conn:
        conn.execute("INSERT INTO events SELECT * FROM src.events ORDER BY id")
        conn.execute("INSERT INTO event_batches SELECT * FROM src.event_batches")
        top = conn.execute("SELECT max(id) FROM events").fetchone()[0]
        conn.execute("DELETE FROM events WHERE id IN (?, ?, ?, ?)", (5, 6, top // 2, top))  # gaps, the last too
        conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'events'", (top + 6,))
        conn.execute("UPDATE events SET seen_at = ? WHERE id = ?", (ODD_TIME, top // 3))
    conn.execute("DETACH src")
    rows = conn.execute(f"{EVENTS} ORDER BY id").fetchall()
    db.close()
    return path, rows, top + 6


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple], int]:
    return _older(tmp_path_factory.mktemp("lean"))


def _copy(older: tuple[Path, list[tuple], int], tmp_path: Path) -> Path:
    path = tmp_path / "older.db"
    path.write_bytes(older[0].read_bytes())
    return path


def test_the_fixture_holds_what_the_test_is_about(older: tuple[Path, list[tuple], int]) -> None:
    _path, rows, _seq = older
    kinds = {r[1] for r in rows}
    assert kinds == {"citation", "count"} and len(rows) > 1000
    assert len({r[8] for r in rows}) == 3  # the two reads of the map, and the odd time
    assert 5 not in {r[0] for r in rows}


def test_every_event_is_the_same_after_the_migration(older: tuple[Path, list[tuple], int], tmp_path: Path) -> None:
    path = _copy(older, tmp_path)
    _, rows, seq = older
    db = open_db(path)
    assert db.conn.execute("SELECT type FROM sqlite_master WHERE name = 'events'").fetchone() == ("view",)
    assert db.conn.execute(f"{EVENTS} ORDER BY id").fetchall() == rows
    assert next_ids(db, "event_log") == seq + 1  # an id once used is not used again
    assert db.conn.execute("SELECT count(*) FROM sqlite_sequence WHERE name = 'events'").fetchone() == (0,)
    # Each batch holds one time: the odd event has its own, between two of the map's.
    odd = [r[0] for r in rows if r[8] == ODD_TIME]
    assert db.conn.execute("SELECT first_id, last_id FROM event_batches WHERE seen_at = ?",
                           (ODD_TIME,)).fetchall() == [(odd[0], odd[0])]
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_an_event_that_does_not_fit_stops_the_migration(older: tuple[Path, list[tuple], int], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    path = _copy(older, tmp_path)
    with closing(sqlite3.connect(path)) as raw, raw:
        raw.execute("UPDATE events SET citing_id = NULL WHERE id = 7")
    with pytest.raises(MigrationRefused, match="migration 0047_lean_events: event 7 is a citation event without"):
        open_db(path)
    # A user sees one line and a usage status, no traceback.
    assert main(["stats", "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mapwatch: error: {path}: migration 0047_lean_events: event 7 ") and err.count("\n") == 1
    assert err.rstrip().endswith("the file is unchanged")
    with closing(sqlite3.connect(path)) as raw:  # nothing changed: the table, its rows, no record
        assert raw.execute("SELECT type FROM sqlite_master WHERE name = 'events'").fetchone() == ("table",)
        assert raw.execute("SELECT count(*) FROM events").fetchone() == (len(older[1]),)
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'event_log'").fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM _sqlite_migrations WHERE name = '0047_lean_events'").fetchone() == (0,)


def test_a_migration_killed_midway_is_made_again_at_the_next_open(older: tuple[Path, list[tuple], int],
                                                                   tmp_path: Path) -> None:
    path, marker = _copy(older, tmp_path), tmp_path / "reached"
    kill_inside_migration(path, marker)
    with closing(sqlite3.connect(path)) as raw:  # rolled back: the table and batches as they were
        assert raw.execute("SELECT type FROM sqlite_master WHERE name = 'events'").fetchone() == ("table",)
        assert raw.execute(f"{EVENTS} ORDER BY id").fetchall() == older[1]
        assert raw.execute("SELECT count(*) FROM event_batches WHERE seen_at = ?", (ODD_TIME,)).fetchone() == (0,)
    db = open_db(path)
    assert db.conn.execute(f"{EVENTS} ORDER BY id").fetchall() == older[1]
