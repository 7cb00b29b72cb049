"""Before the alerts (store/scholarly/before_alerts.py): the tick's new citers, the watched
papers' first; each source within the bound, against loopback fakes of the three."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.scholarly.before_alerts import describe_new_citers, late_lines, new_citers
from mapwatch.store.scholarly.enrich import EnrichSettings
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from tests.scholarly_fakes import ScholarlyFakes, from_seeds, serve_scholarly

SURVEY, TECH = "2412.10400", "2507.04136"
SOURCES = ("arxiv", "openalex", "s2")


def _seeded(tmp_path: Path) -> Path:
    path = tmp_path / "m.db"
    db = open_db(path)
    ingest_paths(db, [SEEDS_DIR])
    db.close()
    return path


def _settings(fakes: ScholarlyFakes) -> EnrichSettings:
    return EnrichSettings(SOURCES, fakes.apis(), "team@example.org",
                          politeness={s: Politeness(0.01, timeout=20.0) for s in POLITENESS})


def test_the_watched_papers_citers_come_first(tmp_path: Path) -> None:
    db = open_db(_seeded(tmp_path))
    news = new_citers(db, 0, [TECH])
    tech = {r[0] for r in db.conn.execute("SELECT citing_id FROM citations WHERE cited_id = ?", [TECH])}
    assert set(news.papers[:len(tech)]) == tech  # the watched paper's citers, then the rest
    assert len(news.papers) == len(set(news.papers)) > len(tech)
    assert [p for p, _ in news.cited] == [TECH] and news.cited[0][1] == tech
    assert new_citers(db, 10**9, [TECH]).papers == ()  # no event after that one: nothing to ask


def test_a_source_slower_than_the_bound_is_left_and_the_others_answer(tmp_path: Path) -> None:
    path = _seeded(tmp_path)
    db = open_db(path)
    fakes = from_seeds(db)
    db.close()
    fakes.slow_seconds = 30.0
    fakes.down("s2", how="slow")
    with serve_scholarly(fakes):
        report = asyncio.run(describe_new_citers(path, _settings(fakes), 0, watched=lambda _db: [SURVEY],
                                                 seconds=1.0))
    assert fakes.seen("s2"), "Semantic Scholar was really asked (and did not answer within the bound)"
    assert report.sources["s2"].out_of_time and not report.sources["s2"].found
    assert report.sources["arxiv"].found > 0 and report.sources["openalex"].found > 0
    db = open_db(path)
    assert db.conn.execute("SELECT count(*) FROM enrichment_fetches WHERE source = 's2'").fetchone()[0] == 0
    assert db.conn.execute("SELECT count(DISTINCT paper_id) FROM paper_authors").fetchone()[0] > 0
    [line] = late_lines(report, 1.0)
    assert line.startswith("before alerts: s2 was still answering after 1 s")


def test_a_source_down_is_one_line_and_nothing_else_changes(tmp_path: Path) -> None:
    path = _seeded(tmp_path)
    db = open_db(path)
    fakes = from_seeds(db)
    db.close()
    fakes.down("arxiv", "openalex", "s2")
    with serve_scholarly(fakes):
        report = asyncio.run(describe_new_citers(path, _settings(fakes), 0, watched=lambda _db: [SURVEY],
                                                 seconds=5.0))
    assert {r.source for r in fakes.requests} == set(SOURCES)
    lines = late_lines(report, 5.0)
    assert sorted(line.split()[2] for line in lines) == sorted(SOURCES)
    assert all("gave nothing (HTTP 503)" in line for line in lines)
    db = open_db(path)
    assert db.conn.execute("SELECT count(*) FROM paper_authors").fetchone()[0] == 0
    # Semantic Scholar's schedule of the watched paper is untouched (the round asks it as before).
    assert db.conn.execute("SELECT count(*) FROM enrichment_fetches WHERE source = 's2'").fetchone()[0] == 0
