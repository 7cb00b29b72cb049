"""store/database/rows.py: rows read by column name, on one cursor, never the connection."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import pytest
from sqlite_utils import Database

from mapwatch.store.database.rows import (
    chunked,
    fill,
    named_cursor,
    named_row,
    named_rows,
    one_column,
    rows_by_chunk,
    rows_in_chunks,
    scalar,
)


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


def test_chunked_cuts_any_keys_lazily() -> None:
    assert list(chunked([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]
    assert list(chunked([], 2)) == []
    endless = iter(range(10**9))
    assert next(chunked(endless, 3)) == [0, 1, 2]
    assert next(endless) == 3  # nothing past the first chunk was read


def test_rows_in_chunks_binds_params_keys_and_after(db: Database) -> None:
    db.conn.executemany("INSERT INTO papers VALUES (?, ?, ?)", [(f"p{i}", f"P{i}", 2000 + i) for i in range(7)])
    keys = [f"p{i}" for i in range(7)] + ["missing"]
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    rows = rows_in_chunks(db, "SELECT id, ? AS tag FROM papers WHERE id IN ({}) AND year >= ? ORDER BY id", keys,
                          ["t"], size=3, after=[2002])
    db.conn.set_trace_callback(None)
    assert [(r["id"], r["tag"]) for r in rows] == [(f"p{i}", "t") for i in range(2, 7)]
    assert len(statements) == 3  # 8 keys, 3 at a time
    twice = rows_in_chunks(db, "SELECT id FROM papers WHERE id IN ({}) UNION SELECT id FROM papers"
                               " WHERE title IN ({}) ORDER BY id", ["a", "B"])
    assert [r["id"] for r in twice] == ["a", "b"]  # each `{}` gets the chunk's keys: id "a", title "B"
    pairs = rows_in_chunks(db, "SELECT p.id FROM (VALUES {}) AS v JOIN papers p ON p.id = v.column1"
                               " AND p.title = v.column2 ORDER BY p.id", [("a", "A"), ("b", "x")], mark="(?, ?)")
    assert [r["id"] for r in pairs] == ["a"]
    with pytest.raises(ValueError):
        rows_in_chunks(db, "SELECT id FROM papers", keys)


def test_rows_by_chunk_runs_a_chunk_only_when_asked(db: Database) -> None:
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    by_chunk = rows_by_chunk(db, "SELECT id FROM papers WHERE id IN ({}) ORDER BY id", ["a", "b", "zz"], size=1)
    assert statements == []
    assert [r["id"] for r in next(by_chunk)] == ["a"]
    assert len(statements) == 1
    db.conn.set_trace_callback(None)
    assert [[r["id"] for r in rows] for rows in by_chunk] == [["b"], []]
