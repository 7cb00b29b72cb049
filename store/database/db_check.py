"""Is a --db file a mapwatch database? Checked before anything is written to it.

A mistyped --db can name another program's SQLite file, or an empty file: a command must not
add mapwatch's tables to it, nor switch it to WAL. Only the commands that create databases
(ingest, refresh, run) may start one, and only in a new or empty file. A database migrated
by a newer mapwatch (a migration this code does not know) is refused too: this code would
write rows its schema no longer describes (docs/getting-started.md, "Exit status").
"""

from __future__ import annotations

import functools
import sqlite3
from enum import Enum
from pathlib import Path

from mapwatch.store.atomic import not_replaceable
from mapwatch.store.database.rows import one_column
from mapwatch.store.errors import NotMapwatchDatabase

MIGRATIONS_TABLE = "_sqlite_migrations"
SIDE_FILES = ("-journal", "-wal", "-shm")  # what SQLite keeps beside a database file


class Kind(Enum):
    EMPTY = "empty"  # a new or empty file, or one left by a first migration that never committed
    MAPWATCH = "mapwatch"
    NEWER = "newer"  # mapwatch's, with migrations this code does not know
    FOREIGN = "foreign"  # another program's database


def known_migrations() -> list[str]:
    from mapwatch.store.database.migrations import migrations

    return [m.name for m in migrations._migrations]


def database_kind(conn: sqlite3.Connection) -> tuple[Kind, list[str]]:
    """What the database on `conn` is, and (for NEWER) the migrations this code does not know.
    Only reads (raises sqlite3.DatabaseError for a file that is not a SQLite database)."""
    from mapwatch.store.database.migrations import migrations

    names = set(one_column(conn, "SELECT name FROM sqlite_master WHERE name NOT LIKE 'sqlite\\_%' ESCAPE '\\'"))
    applied: list[str] = []
    others = 0
    if MIGRATIONS_TABLE in names:
        rows = conn.execute(f"SELECT migration_set, name FROM {MIGRATIONS_TABLE} ORDER BY rowid").fetchall()
        applied = [name for migration_set, name in rows if migration_set == migrations.name]
        others = len(rows) - len(applied)
    if applied:
        unknown = [name for name in applied if name not in set(known_migrations())]
        return (Kind.NEWER, unknown) if unknown else (Kind.MAPWATCH, [])
    leftovers = names - {MIGRATIONS_TABLE}
    if others or (leftovers and not _interrupted_start(conn, names)):
        return Kind.FOREIGN, []
    return Kind.EMPTY, []


def _interrupted_start(conn: sqlite3.Connection, names: set[str]) -> bool:
    """Objects left by mapwatch's first migration killed before its record (its script commits
    on its own): the migrations table there, only the first migration's objects beside it, and
    no row in any of them. Another program's file never passes for this. Only versions that made
    a new database migration by migration leave this: one made from schema.sql is one transaction
    (store/database/schema.py)."""
    if MIGRATIONS_TABLE not in names or not names - {MIGRATIONS_TABLE} <= first_migration_objects():
        return False
    tables = one_column(conn, "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE "
                              "'CREATE VIRTUAL%' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
    return all(conn.execute(f"SELECT 1 FROM [{t}] LIMIT 1").fetchone() is None for t in tables
               if t != MIGRATIONS_TABLE and not t.startswith("papers_fts_"))


@functools.cache
def first_migration_objects() -> frozenset[str]:
    """The tables, indexes and triggers mapwatch's first migration creates (on a scratch database)."""
    from mapwatch.store.database.migrations import migrations

    scratch = sqlite3.connect(":memory:")
    try:
        from sqlite_utils import Database

        first = migrations._migrations[1].name if len(migrations._migrations) > 1 else None
        migrations.apply(Database(scratch, execute_plugins=False), stop_before=first)
        return frozenset(one_column(scratch, "SELECT name FROM sqlite_master WHERE name NOT LIKE "
                                             "'sqlite\\_%' ESCAPE '\\'")) - {MIGRATIONS_TABLE}
    finally:
        scratch.close()


def clear_interrupted_start(conn: sqlite3.Connection) -> None:
    """Drop what a first migration killed before its record left (Kind.EMPTY with objects), so
    the migrations start again from nothing; only ever mapwatch's own, empty, objects."""
    leftovers = [(t, n) for t, n in conn.execute("SELECT type, name FROM sqlite_master WHERE type IN ('table', "
                                                  "'view', 'trigger') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'")
                 if n != MIGRATIONS_TABLE and n in first_migration_objects()]
    for kind, name in leftovers:
        conn.execute(f"DROP {kind.upper()} IF EXISTS [{name}]")
    conn.commit()


def check_database(conn: sqlite3.Connection, path: str, *, create: bool) -> Kind:
    """Raise `NotMapwatchDatabase` unless the file is mapwatch's (or, with `create`, empty)."""
    kind, unknown = database_kind(conn)
    if kind is Kind.MAPWATCH or (kind is Kind.EMPTY and create):
        return kind
    if kind is Kind.NEWER:
        raise NotMapwatchDatabase(f"{path}: its schema is newer than this mapwatch (migration "
                                  f"{unknown[0]!r} is unknown to it); upgrade mapwatch, the file was not changed")
    if kind is Kind.EMPTY:
        raise NotMapwatchDatabase(f"{path}: an empty file, not a mapwatch database (mapwatch ingest, "
                                  f"refresh or run creates one); the file was not changed")
    raise NotMapwatchDatabase(f"{path}: not a mapwatch database (another program's SQLite file?); "
                              f"the file was not changed")


def check_file(path: str, *, create: bool = False) -> Kind:
    """`check_database` on a connection of its own that only reads (mode=rw: no file is made)."""
    import os
    import urllib.parse

    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + "?mode=rw"
    conn = sqlite3.connect(uri, uri=True)
    try:
        conn.execute("PRAGMA busy_timeout = 10000")
        return check_database(conn, path, create=create)
    finally:
        conn.close()


def output_problem(target: Path, database: Path) -> str | None:
    """Why a command (backup, graph) must not write its output to `target`, or None: not the
    database itself (by any name: a hard or symbolic link too), not its `-wal`, `-shm` or
    `-journal` (writing over the live WAL loses committed transactions and breaks every
    reader), and only a regular file or a new path (`atomic.not_replaceable`)."""
    real_target = target.parent.resolve() / target.name
    real_db = database.resolve()
    exists = target.exists()
    for suffix in SIDE_FILES:
        side = real_db.with_name(real_db.name + suffix)
        if real_target == side or (exists and side.exists() and target.samefile(side)):
            return f"{target}: must not overwrite the database's {suffix} file"
    if real_target == real_db or (exists and database.exists() and target.samefile(database)):
        return f"{target}: must not overwrite the database itself"
    return not_replaceable(target)
