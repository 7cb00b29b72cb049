"""A new database made in one step from store/database/schema.sql, the whole schema in one file.

schema.sql is the schema as the migrations leave it after the last one it names (its line
`-- last migration: NNNN_<job>`). A new file is made from it in one transaction, with every
migration up to that one recorded in `_sqlite_migrations` as sqlite-utils records them: later
migrations then apply on top, as on any database, and a database made before keeps taking the
ones it lacks, one by one (store/database/migrations/). One script, instead of every migration
in its own transaction, is what makes a new database quick; tests/unit/store/test_schema_file.py
proves that both paths give the same schema.
"""

from __future__ import annotations

import functools
import re
import sqlite3
from pathlib import Path

from sqlite_utils import Database

from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.database.db_check import MIGRATIONS_TABLE
from mapwatch.store.database.migrations import STEPS, migrations
from mapwatch.store.database.rows import scalar

SCHEMA_FILE = Path(__file__).with_name("schema.sql")
LAST_MIGRATION = re.compile(r"^-- last migration: (\S+)$", re.MULTILINE)


@functools.cache
def schema_sql() -> str:
    """schema.sql's text, read once per process."""
    return SCHEMA_FILE.read_text(encoding="utf-8")


def covered_migrations(sql: str | None = None) -> list[str]:
    """The migrations the schema file stands for: every one registered up to the one its
    `last migration` line names. A name no migration has is an error, not a guess: recording
    the wrong ones would skip a migration, or run one again on tables it already made."""
    found = LAST_MIGRATION.search(schema_sql() if sql is None else sql)
    names = [step.NAME for step in STEPS]
    if found is None or found.group(1) not in names:
        raise RuntimeError(f"{SCHEMA_FILE}: its '-- last migration:' line names no registered migration")
    return names[: names.index(found.group(1)) + 1]


def is_new(conn: sqlite3.Connection) -> bool:
    """Nothing in the file but SQLite's own tables and, at most, sqlite-utils' migrations table
    without a row (left by an earlier start stopped before its first migration). Only reads."""
    others = scalar(conn, "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"
                          " AND tbl_name <> ?", (MIGRATIONS_TABLE,))
    if others:
        return False
    table = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (MIGRATIONS_TABLE,))
    return table.fetchone() is None or conn.execute(f"SELECT 1 FROM [{MIGRATIONS_TABLE}] LIMIT 1").fetchone() is None


def create(db: Database, *, clock: Clock = utc_now) -> bool:
    """Make the schema in a new file, in one transaction: schema.sql in one script, then the
    record of the migrations it stands for. False, with nothing written, when the file is not
    new, or when another connection wrote to it since it was looked at (it is then for the
    caller to decide again what the file is). A kill leaves the file as it was."""
    conn = db.conn
    seen = _data_version(conn)
    if not is_new(conn):
        return False
    names = covered_migrations()
    try:
        try:
            # BEGIN IMMEDIATE: the write lock for the whole script. executescript would commit an
            # open transaction first, so the script opens its own.
            conn.executescript(f"BEGIN IMMEDIATE;\n{schema_sql()}")
        except sqlite3.OperationalError:
            if _data_version(conn) == seen:
                raise
            # another connection made its tables first ("table papers already exists")
        if _data_version(conn) != seen:
            conn.rollback()
            return False
        _record(db, names, str(clock()))
        conn.commit()
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    return True


def _record(db: Database, names: list[str], applied_at: str) -> None:
    """The migrations the schema stands for, recorded as sqlite-utils' Migrations records each
    one it applies (migration_set, name, applied_at: `str` of an aware UTC datetime), in their
    order: Migrations.pending() then finds them applied."""
    migrations.ensure_migrations_table(db)
    db.conn.executemany(f"INSERT INTO [{MIGRATIONS_TABLE}] (migration_set, name, applied_at) VALUES (?, ?, ?)",
                        [(migrations.name, name, applied_at) for name in names])


def _data_version(conn: sqlite3.Connection) -> int:
    """SQLite's count of the commits other connections made to the file that this one saw:
    the same value before and inside the transaction means nobody wrote in between."""
    return int(scalar(conn, "PRAGMA data_version"))
