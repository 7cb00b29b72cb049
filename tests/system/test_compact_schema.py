"""The compact schema (migration 0038, issue 44) answers exactly as the version before it did.

tests/data/compact_before/ holds two databases made by the version before (the seeds, and a
generated map of 160 pages read twice), as SQL dumps, with every answer and feed byte that
version gave for them (tests/compact_answers.py). Each is migrated here and asked again; a new
database made from the same pages by this version is asked too. Both must give the same history
rows, the same answers and the same feed files, byte for byte. And the migration, killed while
it fills the event ids step by step, goes on at the next open and ends as a new database.
"""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from bench import generate as gen
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from tests import compact_answers as ca
from tests.killpoints import kill_when
from tests.older_schema import as_before


def _same(got: dict, want: dict) -> None:
    for part in ("history", "feeds", "answers"):
        assert got[part].keys() == want[part].keys(), part
        for key in want[part]:
            assert got[part][key] == want[part][key], (part, key)


@pytest.mark.parametrize("name", ca.MAPS)
def test_migrated_database_answers_as_before(tmp_path: Path, name: str) -> None:
    want = ca.expected(name)
    db = ca.load(name, tmp_path / "before.db")
    got = ca.jsonable(ca.everything(db, tmp_path / "feeds"))
    _same(got, want)


@pytest.mark.parametrize("name", ca.MAPS)
def test_new_database_answers_as_before(tmp_path: Path, name: str) -> None:
    want = ca.expected(name)
    db = ca.build(name, tmp_path)
    got = ca.jsonable(ca.everything(db, tmp_path / "feeds"))
    for part in (got, want):
        part["answers"]["stats"].pop("last_ingest_source")  # the folder the pages were read from
    _same(got, want)


KILLED_MIGRATION = """
import sys
from mapwatch.store.database.migrations import _edge_events
from mapwatch.store.database.db import open_db
_edge_events.CITERS_A_STEP = 1  # one citer a transaction: the widest window to be killed in
open_db(sys.argv[1])
"""

BEFORE_0038 = """
UPDATE citations SET event_id = NULL;
CREATE INDEX citations_cited ON citations(cited_id, citing_id);
CREATE INDEX events_edge ON events(paper_id, citing_id, id);
CREATE INDEX events_citing_edge ON events(citing_id, paper_id, id);
DELETE FROM _sqlite_migrations WHERE name = '0038_compact_edges';
"""


def _filled(path: Path) -> int:
    try:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as conn:
            return conn.execute("SELECT count(*) FROM citations WHERE event_id IS NOT NULL").fetchone()[0]
    except sqlite3.Error:
        return 0


def test_a_migration_killed_while_it_fills_event_ids_goes_on_at_the_next_open(tmp_path: Path) -> None:
    """Migration 0038 killed (SIGKILL) between two of its steps: what it filled stays, the rest
    is NULL, nothing is recorded; the next open finishes it with the same ids as a new database
    gets, and drops the indexes."""
    folder = tmp_path / "pages"
    gen.write_map(gen.build_map(1200, seed=5, list_items=40), folder, 1, check_every=0)
    path = tmp_path / "map.db"
    db = open_db(path)
    ingest_paths(db, [folder], clock=lambda: ca.FIRST, pool=False)
    want = db.conn.execute("SELECT citing_id, cited_id, event_id FROM citations ORDER BY 1, 2").fetchall()
    total = len(want)
    assert total > 10_000 and all(e is not None for *_, e in want)
    as_before(db)  # the events and citations as tables, as 0037 had them (0047, 0048 run again)
    db.conn.executescript(BEFORE_0038)  # as the migration's first step leaves a database of 0037
    db.close()

    proc = subprocess.Popen([sys.executable, "-c", KILLED_MIGRATION, str(path)], cwd=ca.ROOT,
                            stderr=subprocess.PIPE)
    killed = kill_when(proc, lambda: _filled(path) >= 50, timeout=120, what="50 citations filled")
    assert killed, proc.stderr.read() if proc.stderr else ""
    with closing(sqlite3.connect(path)) as raw:  # the kill landed inside the filling
        filled = raw.execute("SELECT count(*) FROM citations WHERE event_id IS NOT NULL").fetchone()[0]
        assert 50 <= filled < total
        assert raw.execute("SELECT count(*) FROM _sqlite_migrations WHERE name = '0038_compact_edges'"
                           ).fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'events_citing_edge'").fetchone() == (1,)

    db = open_db(path)
    assert db.conn.execute("SELECT citing_id, cited_id, event_id FROM citations ORDER BY 1, 2").fetchall() == want
    gone = db.conn.execute("SELECT name FROM sqlite_master WHERE name IN"
                           " ('citations_cited', 'events_edge', 'events_citing_edge')").fetchall()
    assert gone == []
    assert db.conn.execute("SELECT count(*) FROM _sqlite_migrations WHERE name = '0038_compact_edges'"
                           ).fetchone() == (1,)
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
