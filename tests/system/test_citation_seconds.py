"""Citation times as numbers (migration 0048, issue 44): the view `citations` gives every row
exactly as the table held it.

A database at migration 0047 is filled with the citations of a real map (tests/
compact_answers.py's generated map, read twice by this version: two times), then given what a
long-lived database can hold: citations only an open source named (no snapshot, no event, not
at first read), and times far from the map's (before 1970, after 2038). After the migration
every column of every row is the same, and sorting by the number is sorting by the text. A time
the number cannot give back stops the migration with nothing changed (one line for a user). A
migration killed midway is rolled back and made again at the next open.
(tests/system/test_compact_schema.py and test_people_schema.py migrate databases of earlier
versions through 0048 and compare every answer and feed byte.)
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mapwatch.cli import main
from mapwatch.store.clock import iso, parse_iso, unix_seconds
from mapwatch.store.database.db import open_db
from mapwatch.store.errors import MigrationRefused
from tests.killpoints import kill_inside_migration
from tests.older_schema import beside_generated_map

CITATIONS = ("SELECT citing_id, cited_id, first_seen, snapshot_id, at_first_read, provenance, event_id FROM citations"
             " ORDER BY citing_id, cited_id")
FAR_TIMES = ("1969-07-20T20:17:40+00:00", "2040-02-29T23:59:59+00:00")


def _older(tmp_path: Path) -> tuple[Path, list[tuple]]:
    """A database at 0047 holding a real map's citations and a few odd ones; its citations."""
    db = beside_generated_map(tmp_path, "0048_citation_seconds")
    path, conn = tmp_path / "older.db", db.conn
    with conn:
        conn.execute("INSERT INTO citations SELECT citing_id, cited_id, first_seen, snapshot_id, at_first_read,"
                     " provenance, event_id FROM src.citations")
        picked = conn.execute("SELECT citing_id, cited_id FROM citations ORDER BY cited_id, citing_id"
                              " LIMIT 4").fetchall()
        conn.execute("UPDATE citations SET provenance = 's2', snapshot_id = NULL, event_id = NULL, at_first_read = 0"
                     " WHERE citing_id = ? AND cited_id = ?", picked[0])
        conn.execute("UPDATE citations SET provenance = 'openalex', snapshot_id = NULL WHERE citing_id = ?"
                     " AND cited_id = ?", picked[1])
        for (citing, cited), when in zip(picked[2:], FAR_TIMES, strict=True):
            conn.execute("UPDATE citations SET first_seen = ? WHERE citing_id = ? AND cited_id = ?",
                         (when, citing, cited))
    conn.execute("DETACH src")
    rows = conn.execute(CITATIONS).fetchall()
    db.close()
    return path, rows


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple]]:
    return _older(tmp_path_factory.mktemp("seconds"))


def _copy(older: tuple[Path, list[tuple]], tmp_path: Path) -> Path:
    path = tmp_path / "older.db"
    path.write_bytes(older[0].read_bytes())
    return path


def test_the_fixture_holds_what_the_test_is_about(older: tuple[Path, list[tuple]]) -> None:
    _path, rows = older
    assert len(rows) > 2_000
    assert len({r[2] for r in rows}) == 4  # the two reads of the map, and the far times
    assert {r[5] for r in rows} == {"map", "openalex", "s2"}
    assert any(r[3] is None and r[6] is None for r in rows) and {r[4] for r in rows} == {0, 1}


def test_every_citation_is_the_same_after_the_migration(older: tuple[Path, list[tuple]], tmp_path: Path) -> None:
    path = _copy(older, tmp_path)
    db = open_db(path)
    kinds = dict(db.conn.execute("SELECT name, type FROM sqlite_master WHERE name LIKE 'citation%'").fetchall())
    assert kinds == {"citations": "view", "citation_edges": "table", "citations_cited_seen": "index",
                     "citations_cited_seen_old": "index", "citation_contexts": "table"}
    assert db.conn.execute(CITATIONS).fetchall() == older[1]
    # Stored as numbers, 4 bytes each until 2038; the number sorts as the text did.
    assert db.conn.execute("SELECT DISTINCT typeof(first_seen_unix) FROM citation_edges").fetchall() == [("integer",)]
    by_number = db.conn.execute("SELECT strftime('%Y-%m-%dT%H:%M:%S+00:00', first_seen_unix, 'unixepoch')"
                                " FROM citation_edges ORDER BY first_seen_unix, citing_key, cited_key").fetchall()
    assert by_number == sorted(by_number)
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_the_python_and_sql_conversions_agree(older: tuple[Path, list[tuple]], tmp_path: Path) -> None:
    """What the writers store (store/clock.py's unix_seconds) is what the view gives back as iso()."""
    db = open_db(_copy(older, tmp_path))
    for text in {r[2] for r in older[1]}:
        (back,) = db.conn.execute("SELECT strftime('%Y-%m-%dT%H:%M:%S+00:00', ?, 'unixepoch')",
                                  (unix_seconds(text),)).fetchone()
        assert back == text == iso(parse_iso(text))


@pytest.mark.parametrize("odd", ["2026-11-20T12:00:00.250000+00:00", "2026-11-20T13:00:00+01:00",
                                 "2026-11-20 12:00:00", "yesterday"])
def test_a_time_the_number_cannot_give_back_stops_the_migration(older: tuple[Path, list[tuple]], tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str], odd: str) -> None:
    path = _copy(older, tmp_path)
    citing, cited = older[1][10][:2]
    with closing(sqlite3.connect(path)) as raw, raw:
        raw.execute("UPDATE citations SET first_seen = ? WHERE citing_id = ? AND cited_id = ?", (odd, citing, cited))
    with pytest.raises(MigrationRefused, match=f"migration 0048_citation_seconds: the citation {citing} -> {cited}"):
        open_db(path)
    # A user sees one line and a usage status, no traceback.
    assert main(["stats", "--db", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"mapwatch: error: {path}: migration 0048_citation_seconds: ") and err.count("\n") == 1
    assert repr(odd) in err and err.rstrip().endswith("the file is unchanged")
    with closing(sqlite3.connect(path)) as raw:  # nothing changed: the table, its rows, no record
        assert raw.execute("SELECT type FROM sqlite_master WHERE name = 'citations'").fetchone() == ("table",)
        assert raw.execute("SELECT count(*) FROM citations").fetchone() == (len(older[1]),)
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'citation_edges'").fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM _sqlite_migrations WHERE name = '0048_citation_seconds'"
                           ).fetchone() == (0,)


def test_a_migration_killed_midway_is_made_again_at_the_next_open(older: tuple[Path, list[tuple]],
                                                                   tmp_path: Path) -> None:
    path, marker = _copy(older, tmp_path), tmp_path / "reached"
    kill_inside_migration(path, marker)
    with closing(sqlite3.connect(path)) as raw:  # rolled back: the table as it was
        assert raw.execute("SELECT type FROM sqlite_master WHERE name = 'citations'").fetchone() == ("table",)
        assert raw.execute(CITATIONS).fetchall() == older[1]
    db = open_db(path)
    assert db.conn.execute(CITATIONS).fetchall() == older[1]
