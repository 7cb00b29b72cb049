"""Bulk load: a cold ingest into an empty map builds its secondary indexes once, at the end.

An ingest that starts with no papers stored and more than `BULK_LOAD_THRESHOLD` pages to read
drops the indexes the save does not need and the full-text triggers, loads, then builds them:
each index with its own CREATE INDEX, each full-text index with one 'rebuild' (docs/pages.md,
"mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]"). Random-key inserts into a dozen
B-trees, and the full-text rows of papers written twice (a stub, then its page), cost the single
writer more than sorting each index once.

Crash safety: what is dropped is recorded in `pending_builds` (the exact SQL, from
sqlite_master) in the transaction that drops it; each build deletes its row in the transaction
that makes it. The builds run at the end of the ingest, on Ctrl-C too; if the process is killed,
the next open of the database for writing, or the next ingest, finishes them.
"""

from __future__ import annotations

import ctypes
import logging
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager, suppress

from sqlite_utils import Database

from mapwatch.store.database.pragmas import temporary_pragmas
from mapwatch.store.database.rows import scalar

log = logging.getLogger(__name__)

# Pages to read above which a cold ingest bulk-loads. Below it the ingest takes seconds and the
# indexes of its few thousand pages stay in the page cache: dropping and building them gains
# little (docs/pages.md, "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]");
# the seeds and small ingests keep the ordinary path.
BULK_LOAD_THRESHOLD = 5_000
# Tables the ingest writes; their non-unique secondary indexes are dropped while it loads.
LOADED_TABLES = ("papers", "paper_keys", "citation_edges", "placements", "event_log", "directions", "snapshots")
KEPT_INDEXES = frozenset({"snapshots_paper"})  # the save's lookup of a paper's last snapshot
# Full-text indexes over papers kept in step by triggers; rebuilt from papers at the end.
FTS_TABLES = ("papers_fts", "papers_title_fts")
# While the builds run: SQLite's sorter keeps up to cache_size of keys in memory before it
# spills a sorted run to a temporary file, on top of the page cache itself, so the ingest's
# large cache (store/database/ingest.py) would double the builds' memory. A small cache bounds both;
# the sorter's worker threads sort the runs on the other core (PRAGMA threads).
BUILD_CACHE_KIB = 65_536
BUILD_THREADS = 2


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def pending(db: Database) -> int:
    """How many builds a bulk load left to do (0 before migration 0010 too)."""
    try:
        return int(scalar(db.conn, "SELECT count(*) FROM pending_builds"))
    except sqlite3.OperationalError:
        return 0


def _map_is_empty(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT 1 FROM papers LIMIT 1").fetchone() is None


def _dropped_objects(conn: sqlite3.Connection) -> list[tuple[str, str, str]]:
    """(type, name, sql) of the indexes and triggers a bulk load drops, in sqlite_master order."""
    marks = ",".join("?" * len(LOADED_TABLES))
    rows = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL AND ("
        f"(type = 'index' AND tbl_name IN ({marks}) AND sql NOT LIKE 'CREATE UNIQUE%')"
        " OR (type = 'trigger' AND tbl_name = 'papers')) ORDER BY rowid", LOADED_TABLES).fetchall()
    return [(t, n, s) for t, n, s in rows if n not in KEPT_INDEXES]


def begin(db: Database) -> bool:
    """Drop the indexes and full-text triggers if the map is empty, recording them in
    pending_builds in the same transaction. False (and nothing done) if papers are stored."""
    with db.atomic():
        conn = db.conn
        if not _map_is_empty(conn) or pending(db):
            return False
        objects = _dropped_objects(conn)
        conn.executemany("INSERT INTO pending_builds (name, kind, sql, owner_pid) VALUES (?, ?, ?, ?)",
                         [(name, kind, sql, os.getpid()) for kind, name, sql in objects])
        conn.executemany("INSERT INTO pending_builds (name, kind, sql, owner_pid) VALUES (?, 'fts', ?, ?)",
                         [(t, f"INSERT INTO {t} ({t}) VALUES ('rebuild')", os.getpid()) for t in FTS_TABLES])
        for kind, name, _sql in objects:
            conn.execute(f'DROP {kind.upper()} "{name}"')
    return True


def _return_freed_memory() -> None:
    """Give the pages the load's page cache freed back to the system (glibc's malloc_trim),
    so that the sorter's buffers do not stack on top of them; nothing where there is none."""
    with suppress(AttributeError, OSError):
        ctypes.CDLL(None).malloc_trim(0)


@contextmanager
def _build_pragmas(conn: sqlite3.Connection) -> Iterator[None]:
    """The builds' cache and sorter threads (BUILD_CACHE_KIB, BUILD_THREADS), restored after;
    the page cache the load filled is released first (PRAGMA shrink_memory, malloc_trim)."""
    with temporary_pragmas(conn, cache_size=-BUILD_CACHE_KIB, threads=BUILD_THREADS):
        conn.execute("PRAGMA shrink_memory")
        _return_freed_memory()
        yield


def finish(db: Database) -> int:
    """Make every pending build: each index in its own transaction; the triggers and the
    full-text rebuilds together in one. Returns how many builds were made."""
    with _build_pragmas(db.conn):
        return _build(db)


def _build(db: Database) -> int:
    done = 0
    rows = db.conn.execute("SELECT name, sql FROM pending_builds WHERE kind = 'index' ORDER BY seq").fetchall()
    for name, sql in rows:
        with db.atomic():
            db.conn.execute(sql)
            db.conn.execute("DELETE FROM pending_builds WHERE name = ?", (name,))
        done += 1
    with db.atomic():
        rest = db.conn.execute("SELECT name, kind, sql FROM pending_builds ORDER BY kind = 'fts', seq").fetchall()
        for _name, _kind, sql in rest:  # the triggers first, then each full-text index from papers
            db.conn.execute(sql)
        for name in (name for name, kind, _sql in rest if kind == "fts"):
            # A rebuild leaves its index in many segments, which every query then reads: merged
            # into one, the 1M map's autocomplete p99 fell from ~20 to ~8 ms (bench/RESULTS.md).
            db.conn.execute(f"INSERT INTO {name} ({name}) VALUES ('optimize')")
        db.conn.execute("DELETE FROM pending_builds")
    return done + len(rest)


def finish_interrupted(db: Database) -> int:
    """Finish the builds of a bulk load whose process is gone (killed mid-load), logging one
    line; nothing while that process still loads. Returns how many builds were made."""
    try:
        owners = {pid for (pid,) in db.conn.execute("SELECT DISTINCT owner_pid FROM pending_builds")}
    except sqlite3.OperationalError:
        return 0  # before migration 0010
    if not owners or any(_alive(pid) for pid in owners):
        return 0
    made = finish(db)
    log.warning("mapwatch: finished the %d index and full-text builds an interrupted bulk load left", made)
    return made


@contextmanager
def bulk_load(db: Database, enabled: bool) -> Iterator[bool]:
    """Around a cold ingest's saves: drops (if `enabled` and the map is empty) and builds at the
    end, on an error or Ctrl-C too. Yields whether it bulk-loads."""
    finish_interrupted(db)
    active = enabled and begin(db)
    try:
        yield active
    finally:
        if active:
            if db.conn.in_transaction:
                db.conn.rollback()
            finish(db)
