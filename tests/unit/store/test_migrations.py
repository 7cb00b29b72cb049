"""Migrations are declared in the order they apply, and every way to today's schema gives
the same schema: a fresh database, one upgraded from the first schema
(tests/data/db/schema_0001.db), and one that applied them in their earlier order."""

from __future__ import annotations

import re
import shutil
import sqlite3
from pathlib import Path

from sqlite_utils import Database

from mapwatch.store.database import schema
from mapwatch.store.database.db import open_db
from tests.conftest import DATA

FIXTURE_0001 = DATA / "db" / "schema_0001.db"


def normalised_schema(path: Path) -> dict[tuple[str, str], tuple]:
    """Every table, index, trigger and view: its SQL with whitespace collapsed, and for a
    table its columns by name (type, not null, default, primary key)."""
    conn = sqlite3.connect(path)
    try:
        out: dict[tuple[str, str], tuple] = {}
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master"):
            text = re.sub(r"\s+", " ", sql or "").strip()
            columns: tuple = ()
            if kind == "table":
                columns = tuple(sorted(tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info([{name}])")))
            out[kind, name] = (text, columns)
        return out
    finally:
        conn.close()


def names() -> list[str]:
    return [m.name for m in schema.migrations._migrations]


def test_migrations_are_declared_in_the_order_they_apply() -> None:
    assert names() == sorted(names())
    assert [n[:4] for n in names()] == [f"{i:04d}" for i in range(1, len(names()) + 1)]


def test_fresh_and_upgraded_databases_have_the_same_schema(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    open_db(fresh).close()
    upgraded = tmp_path / "upgraded.db"
    shutil.copy(FIXTURE_0001, upgraded)
    before = normalised_schema(upgraded)
    open_db(upgraded).close()
    after = normalised_schema(upgraded)
    assert before != after  # the fixture really was an older schema
    assert {n for _, n in after} - {n for _, n in before} >= {"direction_ranks", "follows"}
    assert after == normalised_schema(fresh)
    applied = [r[0] for r in sqlite3.connect(upgraded).execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == names()


def test_the_earlier_declaration_order_gives_the_same_schema(tmp_path: Path) -> None:
    """Databases made before the reordering applied 0005 and 0006 before 0004."""
    old_order = [n for n in names() if not n.startswith("0004")]
    old_order.insert(old_order.index("0006_delivery_failures") + 1, "0004_graph")
    assert old_order != names()
    path = tmp_path / "old-order.db"
    db = Database(path)
    by_name = {m.name: m for m in schema.migrations._migrations}
    for name in old_order:  # as sqlite-utils applies them: the step, then its record
        by_name[name].fn(db)
        db["_sqlite_migrations"].insert({"migration_set": schema.migrations.name, "name": name,
                                         "applied_at": "2026-01-01 00:00:00+00:00"})
    db.close()
    reopened = open_db(path)  # nothing left to apply
    assert schema.migrations.pending(reopened) == []
    reopened.close()
    fresh = tmp_path / "fresh.db"
    open_db(fresh).close()
    old, new = normalised_schema(path), normalised_schema(fresh)
    old.pop(("table", "_sqlite_migrations")), new.pop(("table", "_sqlite_migrations"))
    assert old == new
