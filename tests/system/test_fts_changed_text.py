"""A paper's full-text entries are rewritten only when its text changed (migration 0045).

A page stored again with a new count and date writes its paper's row again; before 0045 that
took the title and abstract out of both full-text indexes and put them back (the text
tokenised twice per page, about 0.2 of the 0.5 ms a re-stored page cost at 30,000 papers).
Now the indexes' own tables are not written at all; a new title or abstract is indexed as
before, and FTS5's integrity check (index against the papers' text) passes throughout.
"""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.questions.search import search_papers
from tests.conftest import FakeClock, seed_page, write_page

SURVEY = "2412.10400"
FTS_TABLES = ("papers_fts_data", "papers_fts_idx", "papers_fts_docsize", "papers_title_fts_data",
              "papers_title_fts_idx", "papers_title_fts_docsize")


def _index_rows(db) -> dict[str, list[tuple]]:
    return {t: db.conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in FTS_TABLES}


def _consistent(db) -> None:
    """FTS5's own check of each index against the text in papers (raises when they differ)."""
    for table in ("papers_fts", "papers_title_fts"):
        db.conn.execute(f"INSERT INTO {table} ({table}, rank) VALUES ('integrity-check', 1)")


def _ids(db, text: str) -> set[str]:
    return {row.id for row in search_papers(db, text, limit=50).items}


def test_a_page_stored_again_leaves_the_indexes_alone(db, tmp_path: Path, clock: FakeClock) -> None:
    page = seed_page(SURVEY)
    ingest_paths(db, [write_page(tmp_path / "1", page)], clock=clock)
    before = _index_rows(db)
    clock.advance(days=7)
    assert page.cited_by is not None and page.data_through is not None
    newer = dataclasses.replace(page, cited_by=page.cited_by + 5, data_through=page.data_through + timedelta(days=7))
    report = ingest_paths(db, [write_page(tmp_path / "2", newer)], clock=clock)
    assert report.stored == 1
    assert db.conn.execute("SELECT cited_by FROM papers WHERE id = ?", [SURVEY]).fetchone() == (newer.cited_by,)
    assert _index_rows(db) == before  # not a byte of either index written
    _consistent(db)
    assert SURVEY in _ids(db, "reinforcement learning")


def test_a_new_title_and_abstract_are_indexed(db, tmp_path: Path, clock: FakeClock) -> None:
    page = seed_page(SURVEY)
    ingest_paths(db, [write_page(tmp_path / "1", page)], clock=clock)
    assert SURVEY in _ids(db, "reinforcement learning")
    clock.advance(days=7)
    assert page.data_through is not None
    renamed = dataclasses.replace(page, title="Zymurgical survey of quokka ethics",
                                  abstract="An abstract about xylophones only.",
                                  data_through=page.data_through + timedelta(days=7))
    assert ingest_paths(db, [write_page(tmp_path / "2", renamed)], clock=clock).stored == 1
    _consistent(db)
    assert SURVEY in _ids(db, "quokka") and SURVEY in _ids(db, "xylophones")
    assert SURVEY not in _ids(db, "reinforcement learning enhanced")
    title_hits = db.conn.execute("SELECT count(*) FROM papers_title_fts WHERE papers_title_fts MATCH 'zymurgical'"
                                 ).fetchone()
    assert title_hits == (1,)
