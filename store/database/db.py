"""Opening the database: one place for the file, pragmas and schema."""

from __future__ import annotations

import os
import sqlite3
import urllib.parse
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlite_utils import Database

from mapwatch.store.database import bulk_load, migrations, schema
from mapwatch.store.database.db_check import Kind, check_database, check_file, clear_interrupted_start
from mapwatch.store.database.migrations._refused import Refused
from mapwatch.store.database.replica import replica_url
from mapwatch.store.environment import current
from mapwatch.store.errors import MigrationRefused, NoDatabase

# Bytes a page of a new database: SQLite's default, kept on purpose. Larger pages hold papers'
# rows better (a row, most of it its abstract, fits twice in 4 KiB and leaves a fifth of the page
# empty): 16 KiB pages make a 1M map with authors 6% smaller, but its point lookups read 4x the
# bytes a page, and `/citers` p99 went from 6.1-6.4 to 8.0-8.2 ms, the 50 most prolific people's
# `/author` from 45 to 51 ms (bench/RESULTS.md, "The compact database, part 9"). `mapwatch
# compact --page-size` (store/database/compact.py) rewrites a database in another size.
PAGE_SIZE = 4096


def default_db_path() -> str:
    """$MAPWATCH_DB, else ./mapwatch.db (store.environment)."""
    return current().database()


def busy_timeout_ms() -> int:
    """How long a command waits for another process's write lock (store.environment)."""
    return current().busy_timeout_ms()


def require_db(path: str | Path | None) -> str:
    """The database path, if that file exists and is a mapwatch database; else `NoDatabase`
    or `NotMapwatchDatabase` naming it (store/database/db_check.py). Nothing is written."""
    target = str(path) if path is not None else default_db_path()
    if target != ":memory:":
        if not Path(target).is_file():
            raise NoDatabase(target)
        check_file(target)
    return target


def open_db(path: str | Path | None = None, *, migrate: bool = True, create: bool = True) -> Database:
    """Open the mapwatch database: WAL, foreign keys, schema applied (`apply_schema`). With `create` (ingest,
    refresh, run) a missing or empty file and its folders are made into one; without, a
    missing file raises `NoDatabase` and nothing is created (docs/getting-started.md, "Usage"). A file that is
    not a mapwatch database (another program's, empty without `create`, or of a newer schema)
    raises `NotMapwatchDatabase` before anything is written to it."""
    target = str(path) if path is not None else default_db_path()
    # check_same_thread=False: the bot hands the connection to worker threads
    # (asyncio.to_thread); callers that share one connection serialise its use.
    if target == ":memory:" or create:
        if target != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(target, check_same_thread=False)
    else:
        require_db(target)
        # mode=rw: SQLite itself refuses to create the file (no race with the check above).
        uri = "file:" + urllib.parse.quote(os.path.abspath(target)) + "?mode=rw"
        try:
            conn = sqlite3.connect(uri, uri=True, check_same_thread=False)
        except sqlite3.OperationalError:
            if not Path(target).is_file():
                raise NoDatabase(target) from None
            raise
    db = MapDatabase(conn, execute_plugins=False)
    db.conn.execute(f"PRAGMA busy_timeout = {busy_timeout_ms()}")
    db.conn.execute(f"PRAGMA cache_size = -{current().db_cache_kib()}")  # KiB ($MAPWATCH_DB_CACHE_MIB)
    try:  # before anything is written: another program's file, or a newer schema, stays untouched
        kind = check_database(db.conn, target, create=create or target == ":memory:")
        if kind is Kind.EMPTY:
            clear_interrupted_start(db.conn)
            db.conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # before the first page is written
    except BaseException:
        conn.close()
        raise
    if target != ":memory:":
        db.conn.execute("PRAGMA journal_mode = WAL")
        db.conn.execute("PRAGMA synchronous = NORMAL")
        if replica_url():
            # Litestream checkpoints the WAL itself once it has copied it (docs/operations.md,
            # "Replication (Litestream)"): a checkpoint of ours could restart the WAL before it did.
            db.conn.execute("PRAGMA wal_autocheckpoint = 0")
    db.conn.execute("PRAGMA foreign_keys = ON")
    if migrate:
        apply_schema(db, target, new=kind is Kind.EMPTY)
        # the index builds of a killed bulk load
        # (docs/pages.md, "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]")
        bulk_load.finish_interrupted(db)
    return db


def apply_schema(db: Database, target: str, *, new: bool) -> None:
    """A new file (`new`: checked empty) is made from store/database/schema.sql in one step; any
    other mapwatch database takes the migrations it lacks, one by one (store/database/migrations/).
    Should another connection write to a new file between the check and the schema, the check
    runs again on what it then holds (another program's file is still refused, untouched)."""
    if new and not schema.create(db):
        try:
            check_database(db.conn, target, create=True)
        except BaseException:
            db.conn.close()
            raise
    lacking = not new and bool(migrations.migrations.pending(db))
    try:
        migrations.apply(db)
    except Refused as e:
        db.conn.close()
        raise MigrationRefused(f"{target}: {e}; the file is unchanged") from None
    if lacking and target != ":memory:" and not replica_url():
        # A migration that rewrote a big table left it in the WAL (gigabytes at 1M papers), where
        # every read would look for its pages until the next checkpoint: move them into the file
        # now and give the WAL's space back. (With Litestream, it checkpoints after copying.)
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")


class MapDatabase(Database):
    """sqlite-utils' Database whose transactions begin IMMEDIATE: every `atomic()` here reads
    and then writes, so it takes the write lock first and waits (busy_timeout) while another
    process writes. A deferred BEGIN would fail at once ("database is locked") if that process
    committed between this transaction's reads and its first write. Nested: a savepoint."""

    @contextmanager
    def atomic(self) -> Iterator[MapDatabase]:
        if self.conn.in_transaction:
            with super().atomic():
                yield self
            return
        self.conn.execute("BEGIN IMMEDIATE")
        try:
            yield self
        except BaseException:
            if self.conn.in_transaction:
                self.conn.rollback()
            raise
        self.conn.commit()
