"""Each person stored once (migration 0044, issue 44) answers exactly as the version before.

tests/data/people_before/ holds a database made by the version before (authors in the table
`paper_authors`, a row an author slot), with every answer about people and every feed byte
that version gave (tests/people_answers.py). It is migrated here and asked again, and a new
database made from the same records by this version is asked too: the same byline rows (the
view `paper_authors`), answers and feed files. One order differs, on purpose: names equal but
for case among /author's choices, which came in storage order and are now ordered by the name.
The write path keeps `people` to the people bylines name, and a migration killed midway is
rolled back and made again at the next open.
"""

from __future__ import annotations

import gzip
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from bench import generate as gen
from mapwatch.store.database.db import open_db
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.questions import authors
from mapwatch.store.records import AuthorRecord
from mapwatch.store.scholarly.saved import save_openalex
from tests import people_answers as pa
from tests.author_helpers import work
from tests.killpoints import kill_inside_migration

CASE_TIES = "choices"  # answers whose ties (names equal but for case) were in storage order


def _untied(key: str, value: Any) -> Any:
    """An autocomplete answer with the choices of names equal but for case in one order."""
    if not key.startswith(CASE_TIES):
        return value
    return sorted(value, key=lambda c: (c["name"].casefold(), c["name"], c["value"]))


def _same(got: dict, want: dict) -> None:
    assert got["feeds"] == want["feeds"]
    assert got["answers"].keys() == want["answers"].keys()
    for key, value in want["answers"].items():
        assert _untied(key, got["answers"][key]) == _untied(key, value), key


def test_the_fixture_holds_what_the_test_is_about() -> None:
    """Namesakes, a name in two cases, a second spelling of one id, lists of both sources."""
    want = pa.expected()["answers"]
    rows = want["rows"]
    assert len(rows) > 500 and {r[5] for r in rows} == {"arxiv", "openalex"}
    assert {r[2] for r in rows} >= {"Ada Prolific", "ada prolific", "A. Prolific", pa.HOSTILE}
    people = want["find Ada Prolific"]
    assert len(people) >= 3 and len({p["key"] for p in people}) == len(people)
    tied = [c["name"] for c in want["choices ada prolific"]]
    assert "Ada Prolific" in tied and "ada prolific" in tied


def test_the_migrated_database_answers_as_before(tmp_path: Path) -> None:
    db = pa.load(tmp_path / "before.db")
    assert db.conn.execute("SELECT type FROM sqlite_master WHERE name = 'paper_authors'").fetchone() == ("view",)
    _same(pa.jsonable(pa.everything(db, tmp_path / "feeds")), pa.expected())
    # each person once, none that no byline names
    c = db.conn
    assert c.execute("SELECT count(*) FROM people").fetchone() == c.execute(
        "SELECT count(*) FROM (SELECT DISTINCT name, author_id, orcid FROM paper_authors)").fetchone()
    assert c.execute("SELECT count(*) FROM people WHERE id NOT IN (SELECT person FROM paper_people)"
                     ).fetchone() == (0,)
    assert c.execute("PRAGMA foreign_key_check").fetchall() == []


def test_a_new_database_answers_as_before(tmp_path: Path) -> None:
    db = pa.build(tmp_path)
    _same(pa.jsonable(pa.everything(db, tmp_path / "feeds")), pa.expected())
    assert db.conn.execute("SELECT count(*) FROM people WHERE id NOT IN (SELECT person FROM paper_people)"
                           ).fetchone() == (0,)


def test_people_follow_the_bylines(db) -> None:
    """A list reordered keeps its people (their numbers too); a person no list names any more
    is deleted; one still on another paper stays; one person on a list twice is one row."""
    m = gen.build_map(6, seed=1)
    save_pages(db, [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)], pa.FIRST)
    one, two = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY id LIMIT 2")]
    ada, bo, cy = AuthorRecord("Ada", "A5000000001"), AuthorRecord("Bo"), AuthorRecord("Cy", None, pa._orcid(3))
    save_openalex(db, [work(one, ada, bo, cy), work(two, bo)], [one, two], pa.FIRST)
    numbers = dict(db.conn.execute("SELECT name, id FROM people"))
    assert set(numbers) == {"Ada", "Bo", "Cy"}

    save_openalex(db, [work(one, cy, ada, bo)], [one], pa.NOW)
    assert dict(db.conn.execute("SELECT name, id FROM people")) == numbers
    assert db.conn.execute("SELECT name FROM paper_authors WHERE paper_id = ? ORDER BY position", [one]
                           ).fetchall() == [("Cy",), ("Ada",), ("Bo",)]

    save_openalex(db, [work(one, ada, ada)], [one], pa.NOW)  # Bo stays (paper two), Cy goes
    assert dict(db.conn.execute("SELECT name, id FROM people")) == {"Ada": numbers["Ada"], "Bo": numbers["Bo"]}
    assert db.conn.execute("SELECT position, name, author_id, orcid, source FROM paper_authors WHERE paper_id = ?"
                           " ORDER BY position", [one]).fetchall() == [
        (1, "Ada", "A5000000001", None, "openalex"), (2, "Ada", "A5000000001", None, "openalex")]
    save_openalex(db, [work(two, ada)], [two], pa.NOW)
    assert [r[0] for r in db.conn.execute("SELECT name FROM people")] == ["Ada"]


def test_a_migration_killed_midway_is_made_again_at_the_next_open(tmp_path: Path) -> None:
    path, marker = tmp_path / "before.db", tmp_path / "reached"
    path.write_bytes(gzip.decompress((pa.FIXTURES / "people.db.gz").read_bytes()))
    kill_inside_migration(path, marker)
    with closing(sqlite3.connect(path)) as raw:  # rolled back: the table as it was, nothing recorded
        assert raw.execute("SELECT type FROM sqlite_master WHERE name = 'paper_authors'").fetchone() == ("table",)
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'people'").fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM _sqlite_migrations WHERE name = '0044_people'").fetchone() == (0,)
        rows = raw.execute("SELECT * FROM paper_authors ORDER BY paper_id, position").fetchall()
    assert [list(r) for r in rows] == pa.expected()["answers"]["rows"]

    db = open_db(path)
    _same(pa.jsonable(pa.everything(db, tmp_path / "feeds")), pa.expected())
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize("text", ["A5100000000", "Ada Prolific", "Ingrid"])
def test_people_are_found_from_indexes(tmp_path: Path, text: str) -> None:
    """find_people, papers_by_name: every statement reads indexes, never a whole table."""
    db = pa.build(tmp_path)
    ran: list[str] = []
    db.conn.set_trace_callback(ran.append)
    try:
        found = authors.find_people(db, text)
        authors.author_view(db, found[0])
        authors.papers_by_name(db, text)
    finally:
        db.conn.set_trace_callback(None)
    plans = {sql: [r[3] for r in db.conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
             for sql in dict.fromkeys(ran) if "people" in sql or "paper_authors" in sql}
    assert plans
    scans = [(sql, line) for sql, lines in plans.items() for line in lines
             if (line.startswith("SCAN ") and not line.startswith("SCAN (subquery")) or "AUTOMATIC" in line]
    assert scans == []


def test_an_empty_id_migrates_as_none(tmp_path: Path) -> None:
    """An id or ORCID stored empty (no parser gives one) and one stored as NULL are the same
    person after 0044, not a unique-index failure that would stop every open."""
    from sqlite_utils import Database

    from mapwatch.store.database.migrations import migrations

    older = Database(tmp_path / "older.db")
    migrations.apply(older, stop_before="0044_people")
    older.conn.executemany("INSERT INTO paper_authors (paper_id, position, name, author_id, orcid, source)"
                           " VALUES (?, 1, 'Bo', ?, ?, 'arxiv')", [("2401.00001", "", None),
                                                                    ("2401.00002", None, ""),
                                                                    ("2401.00003", None, None)])
    older.conn.commit()
    older.close()
    db = open_db(tmp_path / "older.db")
    assert db.conn.execute("SELECT name, author_id, orcid FROM people").fetchall() == [("Bo", None, None)]
    assert db.conn.execute("SELECT paper_id, name, author_id, orcid, source FROM paper_authors ORDER BY 1"
                           ).fetchall() == [(f"2401.0000{i}", "Bo", None, None, "arxiv") for i in (1, 2, 3)]
