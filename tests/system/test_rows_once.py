"""Rows kept once (migration 0050, issue 44): `placements`, `enrichment_fetches` and
`openalex_works` rebuilt WITHOUT ROWID keep every row, column and index, and lose only the second
copy of each row that their primary key's index held.

A database at migration 0049 is filled with a real map (tests/compact_answers.py's generated map,
read twice by this version: its papers, directions and placements) and with the enrichment rows a
database with authors holds (a fetch a source and paper, OpenAlex works with and without a DOI).
A migration killed midway is rolled back and made again at the next open.
(tests/system/test_compact_schema.py and test_people_schema.py migrate databases of earlier
versions through 0050 and compare every answer and feed byte.)
"""

from __future__ import annotations

import shutil
import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from tests.killpoints import kill_inside_migration
from tests.older_schema import beside_generated_map

TABLES = {"placements": "paper_id, direction_slug", "enrichment_fetches": "paper_id, source",
          "openalex_works": "paper_id"}  # each table and its primary key


def _state(conn: sqlite3.Connection) -> dict[str, object]:
    """Each table's rows in key order and its indexes' statements (the key's own excepted)."""
    out: dict[str, object] = {}
    for table, key in TABLES.items():
        out[table] = conn.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()
        out[f"{table} indexes"] = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL"
            " ORDER BY name", (table,)).fetchall()
    return out


def _without_rowid(conn: sqlite3.Connection) -> set[str]:
    return {name for name, sql in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'")
            if sql and sql.rstrip().upper().endswith("WITHOUT ROWID")}


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, object]]:
    """A database at 0049 holding a real map's placements and enrichment rows; its state."""
    tmp_path = tmp_path_factory.mktemp("older")
    db = beside_generated_map(tmp_path, "0050_rows_once")
    conn = db.conn
    with conn:
        conn.execute("INSERT INTO papers SELECT * FROM src.papers")
        conn.execute("INSERT INTO directions SELECT * FROM src.directions")
        conn.execute("INSERT INTO placements SELECT * FROM src.placements")
        ids = [r[0] for r in conn.execute("SELECT id FROM papers ORDER BY id")]
        # Inserted out of key order, so a table read in rowid order differs from one in key order.
        for n, pid in enumerate(reversed(ids)):
            for source, status in (("arxiv", "ok"), ("openalex", ("ok", "not_found", "failed")[n % 3])):
                conn.execute("INSERT INTO enrichment_fetches VALUES (?, ?, ?, ?, ?, ?)",
                             (pid, source, "2026-11-20T12:00:00+00:00", status,
                              "HTTP 503" if status == "failed" else None, f"2026-12-{1 + n % 28:02d}T00:00:00+00:00"))
            if n % 2:
                conn.execute("INSERT INTO openalex_works VALUES (?, ?, ?, ?, ?)",
                             (pid, f"W{1000 + n}", "A journal" if n % 4 == 1 else None,
                              f"10.1000/x{n}" if n % 3 else f"10.48550/arXiv.{pid}", "2026-11-20T12:00:00+00:00"))
    conn.execute("DETACH src")
    state = _state(conn)
    assert len(state["placements"]) > 200 and len(state["enrichment_fetches"]) == 2 * len(ids)  # type: ignore[arg-type]
    assert not _without_rowid(conn) & set(TABLES)
    db.close()
    return tmp_path / "older.db", state


def _copy(older: tuple[Path, dict[str, object]], tmp_path: Path) -> Path:
    path = tmp_path / "copy.db"
    shutil.copy(older[0], path)
    return path


def test_each_table_keeps_every_row_and_index_and_its_rows_once(older: tuple[Path, dict[str, object]],
                                                                 tmp_path: Path) -> None:
    path = _copy(older, tmp_path)
    with closing(sqlite3.connect(path)) as raw:
        autoindexes = {name for (name,) in raw.execute("SELECT name FROM sqlite_master WHERE name LIKE"
                                                       " 'sqlite_autoindex_%'")}
    assert {f"sqlite_autoindex_{t}_1" for t in TABLES} <= autoindexes  # the second copies, before
    db = open_db(path)
    conn = db.conn
    assert _state(conn) == older[1]
    assert set(TABLES) <= _without_rowid(conn)
    assert not {name for (name,) in conn.execute("SELECT name FROM sqlite_master")} \
        & {f"sqlite_autoindex_{t}_1" for t in TABLES}
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    # The queries the indexes are for still read them (docs/database.md, "Why each index").
    plan = " ".join(r[3] for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT paper_id FROM enrichment_fetches WHERE source = 'openalex'"
        " AND next_fetch_at <= '2026-12-05' ORDER BY next_fetch_at LIMIT 10"))
    assert "enrichment_fetches_due" in plan and "TEMP B-TREE" not in plan, plan
    plan = " ".join(r[3] for r in conn.execute(
        "EXPLAIN QUERY PLAN SELECT paper_id FROM placements WHERE direction_slug = 'x'"))
    assert "placements_direction" in plan, plan
    db.close()


def test_a_migration_killed_midway_is_made_again_at_the_next_open(older: tuple[Path, dict[str, object]],
                                                                   tmp_path: Path) -> None:
    path, marker = _copy(older, tmp_path), tmp_path / "reached"
    kill_inside_migration(path, marker)
    with closing(sqlite3.connect(path)) as raw:  # rolled back: the tables as they were
        assert not _without_rowid(raw) & set(TABLES)
        assert _state(raw) == older[1]
    db = open_db(path)
    assert _state(db.conn) == older[1]
    assert set(TABLES) <= _without_rowid(db.conn)
    db.close()
