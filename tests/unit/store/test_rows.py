"""store/database/rows.py: rows read by column name, on one cursor, never the connection."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import pytest
from sqlite_utils import Database

from mapwatch.store.database.rows import fill, named_cursor, named_row, named_rows, one_column, scalar


@pytest.fixture
def db() -> Database:
    d = Database(sqlite3.connect(":memory:"))
    d.conn.execute("CREATE TABLE papers (id TEXT PRIMARY KEY, title TEXT, year INTEGER)")
    d.conn.executemany("INSERT INTO papers VALUES (?, ?, ?)", [("a", "A", 2020), ("b", "B", None)])
    return d


def test_rows_by_name_and_the_connection_keeps_tuples(db: Database) -> None:
    rows = named_rows(db, "SELECT p.id, p.title, p.year AS posted FROM papers p ORDER BY p.id")
    assert [(r["id"], r["title"], r["posted"]) for r in rows] == [("a", "A", 2020), ("b", "B", None)]
    one = named_row(db.conn, "SELECT title FROM papers WHERE id = ?", ("b",))
    assert one is not None and one["title"] == "B"
    assert named_row(db, "SELECT title FROM papers WHERE id = ?", ("zz",)) is None
    assert [r["id"] for r in named_cursor(db, "SELECT id FROM papers ORDER BY id")] == ["a", "b"]
    assert db.conn.row_factory is None
    assert db.conn.execute("SELECT id FROM papers ORDER BY id").fetchone() == ("a",)
    assert list(db.query("SELECT id FROM papers ORDER BY id")) == [{"id": "a"}, {"id": "b"}]


def test_a_missing_name_is_an_error(db: Database) -> None:
    row = named_row(db, "SELECT id FROM papers")
    assert row is not None
    with pytest.raises(IndexError):
        row["title"]


def test_one_column_and_scalar(db: Database) -> None:
    assert one_column(db, "SELECT id FROM papers ORDER BY id") == ["a", "b"]
    assert scalar(db, "SELECT max(year) FROM papers") == 2020
    assert scalar(db, "SELECT id FROM papers WHERE id = 'zz'") is None
    with pytest.raises(ValueError):
        one_column(db, "SELECT id, title FROM papers")
    with pytest.raises(ValueError):
        scalar(db, "SELECT id, title FROM papers")


@dataclass(frozen=True)
class Paper:
    id: str
    title: str
    year: int | None
    note: str = ""


def test_fill_by_field_name(db: Database) -> None:
    row = named_row(db, "SELECT year, title, id, 'x' AS unused FROM papers WHERE id = 'a'")
    assert row is not None
    assert fill(Paper, row) == Paper("a", "A", 2020)
    assert fill(Paper, row, title="T", note="n") == Paper("a", "T", 2020, "n")
    short = named_row(db, "SELECT id FROM papers WHERE id = 'a'")
    assert short is not None
    with pytest.raises(TypeError):
        fill(Paper, short)
