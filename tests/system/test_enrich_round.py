"""`mapwatch enrich` on the seeds against the loopback fakes of arXiv, OpenAlex and Semantic
Scholar (tests/scholarly_fakes.py): what is stored, how the sources are asked (batches, the
User-Agent and mailto, the key), the refetch schedule, and `ask "/paper"` still answering."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.paper_keys import keys_of
from mapwatch.store.questions.authors import bylines
from mapwatch.store.questions.teams import team_papers_by_server
from mapwatch.store.scholarly.enrich import EnrichSettings, enrich_round
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.subscriptions import tracking
from tests.scholarly_fakes import ScholarlyFakes, serving_seeds

ROOT = Path(__file__).resolve().parents[2]
FAST = {s: Politeness(0.01, timeout=5.0, max_retry_after=2.0) for s in POLITENESS}
CONTACT = "team@example.org"


@pytest.fixture
def fakes(seeded_path: Path) -> Iterator[ScholarlyFakes]:
    with serving_seeds(seeded_path) as served:
        yield served


def settings(fakes: ScholarlyFakes, **kw: object) -> EnrichSettings:
    # Authors and contexts only: the citers the map does not name are tests/unit/store/test_source_citations.py's.
    base = EnrichSettings(("arxiv", "openalex", "s2"), fakes.apis(), CONTACT, None, politeness=FAST,
                          source_citations="off")
    return replace(base, **kw)  # type: ignore[arg-type]


def track(db_path: Path, clock, paper: str = "2412.10400") -> None:
    db = open_db(db_path)
    try:
        tracking.add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=paper, created_by=3, now=clock())
    finally:
        db.close()


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mapwatch", *args], cwd=ROOT, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env}, timeout=120)


def test_enrich_then_ask_names_authors_and_institutions(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    track(seeded_path, clock)
    env = {**fakes.env(), "MAPWATCH_ENRICH": "arxiv,openalex,s2", "MAPWATCH_CONTACT": CONTACT}
    r = cli("enrich", "--db", str(seeded_path), env=env)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "Enriched from arxiv: 99 of 99 due asked in 1 request, 99 found, 0 not found, 0 failed."
    # 2 requests for the papers, and 1 each for the new arXiv works of yesterday and of 3 days ago (none here).
    assert lines[1] == "Enriched from openalex: 99 of 99 due asked in 5 requests, 98 found, 1 not found, 0 failed."
    # (its citation count first, then its citers: never read before)
    assert lines[2].startswith("Enriched from s2: 1 of 1 due asked in 2 requests, 1 found")

    db = open_db(seeded_path)
    b = bylines(db, ["2412.10400"])["2412.10400"]
    assert [a.name for a in b.authors] == ["Shuhe Wang", "Shengyu Zhang", "Jie Zhang"]
    assert b.authors[0].institutions == ("Massachusetts Institute of Technology",)
    assert b.authors[2].institutions == ("ETH Zurich", "Massachusetts Institute of Technology")
    assert b.authors[0].orcid == "0000-0002-1825-0097" and b.authors[0].author_id == "A5000000001"
    assert b.venue == "ACM Computing Surveys" and b.journal_ref == "ACM Computing Surveys 58 (2026)"
    assert db["institutions"].get("I63966007")["ror"] == "042nb2s44"
    rec = db["arxiv_records"].get("2412.10400")
    assert (rec["primary_category"], rec["categories"], rec["published"], rec["updated"], rec["doi"],
            rec["comments"]) == ("cs.LG", "cs.LG cs.AI", "2024-12-05T18:00:00+00:00", "2025-01-10T10:00:00+00:00",
                                 "10.1145/1234567", "40 pages")
    # The paper OpenAlex does not know keeps arXiv's names.
    assert db.conn.execute("SELECT DISTINCT source FROM paper_authors WHERE paper_id = '1706.03762'").fetchall() \
        == [("arxiv",)]
    # Semantic Scholar: the contexts of the tracked paper's citers the map knows (30), none other.
    rows = db.conn.execute("SELECT citing_id, contexts, intents FROM citation_contexts WHERE cited_id = '2412.10400'"
                           ).fetchall()
    assert len(rows) == 30 and "2601.99999" not in {r[0] for r in rows}
    assert json.loads(rows[0][1]) == ["As 2412.10400 shows, ..."] and json.loads(rows[0][2]) == ["background"]
    statuses = dict(db.conn.execute("SELECT source || ':' || status, count(*) FROM enrichment_fetches"
                                    " GROUP BY 1").fetchall())
    assert statuses == {"arxiv:ok": 99, "openalex:ok": 98, "openalex:not_found": 1, "s2:ok": 1}
    db.close()

    # The card answers from the database (its rendering of authors is the bot's).
    r = cli("ask", "--db", str(seeded_path), "/paper 2412.10400", env={})
    assert r.returncode == 0 and "Reinforcement Learning Enhanced LLMs" in r.stdout

    # How they were asked: batches, the contact, nothing of a key.
    (ax,) = fakes.seen("arxiv")
    assert len(ax.query["id_list"].split(",")) == 99 and ax.query["max_results"] == "99"
    assert f"mailto:{CONTACT}" in ax.headers["User-Agent"] and ax.headers["User-Agent"].startswith("mapwatch/")
    oa = fakes.seen("openalex")
    papers = [q for q in oa if q.query["filter"].startswith("doi:")]
    assert [len(q.query["filter"].removeprefix("doi:").split("|")) for q in papers] == [50, 49]
    # Yesterday's and 3 days ago's new works, then the works of the last days citing the tracked paper.
    new_works = [q.query for q in oa if not q.query["filter"].startswith("doi:")]
    assert [(q["filter"].split(",")[0][:22], q["cursor"], q["mailto"]) for q in new_works] == [
        ("from_publication_date:", "*", CONTACT)] * 2 + [("cites:W4405000000", "*", CONTACT)]
    assert all(q.query["mailto"] == CONTACT and q.query["filter"].startswith("doi:10.48550/arxiv.") for q in papers)
    count, s2 = fakes.seen("s2")
    assert count.path == "/graph/v1/paper/arXiv:2412.10400" and count.query == {"fields": "citationCount"}
    assert s2.path == "/graph/v1/paper/arXiv:2412.10400/citations" and "x-api-key" not in s2.headers
    assert set(s2.query["fields"].split(",")) == {"contexts", "intents", "isInfluential", "externalIds", "title",
                                                  "year"}

    # Asked again at once: nothing is due, nothing requested.
    before = len(fakes.requests)
    r = cli("enrich", "--db", str(seeded_path), env=env)
    assert r.returncode == 0 and len(fakes.requests) == before, r.stdout
    assert "Enriched from arxiv: nothing due." in r.stdout


def test_one_source_and_the_limit(fakes: ScholarlyFakes, seeded_path: Path) -> None:
    env = {**fakes.env(), "MAPWATCH_ENRICH": "off", "MAPWATCH_SOURCE_CITATIONS": "off"}
    r = cli("enrich", "--db", str(seeded_path), env=env)
    assert r.returncode == 0 and "Enrichment is off" in r.stdout and not fakes.requests
    r = cli("enrich", "--db", str(seeded_path), "--source", "openalex", "--limit", "7", env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "Enriched from openalex: 7 of 7 due asked in 1 request, 7 found, 0 not found, 0 failed."
    assert {q.source for q in fakes.requests} == {"openalex"}


def test_the_key_is_sent_as_a_header_only(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    track(seeded_path, clock)
    key = "s2-secret-key-0123456789abcdef"
    report = asyncio.run(enrich_round(seeded_path, settings(fakes, sources=("s2",), s2_key=key),
                                      tracked=tracking.tracked_paper_ids))
    assert report.sources["s2"].found == 1
    (q,) = fakes.seen("s2")
    assert q.headers["x-api-key"] == key and key not in repr(q.query) and key not in q.path
    assert key not in repr(settings(fakes, s2_key=key))


def test_refetch_schedule(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    """Found: asked again after 30 days (a new version is stored); not found: after 7 days;
    Semantic Scholar: when a tracked paper gains a citer."""
    track(seeded_path, clock)
    s = settings(fakes)
    asyncio.run(enrich_round(seeded_path, s, tracked=tracking.tracked_paper_ids, team=team_papers_by_server,
                             clock=clock))
    clock.advance(days=8)
    fakes.openalex["1706.03762"] = fakes.openalex["2005.14165"] | {"doi": "https://doi.org/10.48550/arxiv.1706.03762",
                                                                   "id": "https://openalex.org/W1"}
    r = asyncio.run(enrich_round(seeded_path, s, tracked=tracking.tracked_paper_ids, team=team_papers_by_server,
                                 clock=clock))
    assert (r.sources["arxiv"].due, r.sources["openalex"].due, r.sources["s2"].due) == (0, 1, 0)
    assert r.sources["openalex"].found == 1
    clock.advance(days=23)
    fakes.arxiv["2412.10400"].updated, fakes.arxiv["2412.10400"].version = "2026-11-20T09:00:00Z", 3
    r = asyncio.run(enrich_round(seeded_path, s, tracked=tracking.tracked_paper_ids, team=team_papers_by_server,
                                 clock=clock))
    assert r.sources["arxiv"].due == 99
    db = open_db(seeded_path)
    try:
        assert db["arxiv_records"].get("2412.10400")["updated"] == "2026-11-20T09:00:00+00:00"
        # A new citer of the tracked paper: Semantic Scholar is asked about it.
        when = "2026-12-03T00:00:00+00:00"
        db.conn.execute("INSERT INTO papers (id, title, has_page, first_seen, updated) VALUES (?, ?, 0, ?, ?)",
                        ["2611.00001", "A new citer", when, when])
        key = keys_of(db.conn, ["2611.00001", "2412.10400"])
        db.conn.execute("INSERT INTO citation_edges (citing_key, cited_key, first_seen_unix) VALUES"
                        " (?, ?, unixepoch('2026-12-03T00:00:00+00:00'))", [key["2611.00001"], key["2412.10400"]])
        db.conn.commit()
    finally:
        db.close()
    clock.advance(days=1)
    fakes.s2["2412.10400"].append(fakes.s2["2412.10400"][0] | {"citingPaper": {"externalIds": {"ArXiv": "2611.00001"}}})
    r = asyncio.run(enrich_round(seeded_path, settings(fakes, sources=("s2",)), tracked=tracking.tracked_paper_ids,
                                 team=team_papers_by_server, clock=clock))
    assert r.sources["s2"].found == 1
    db = open_db(seeded_path)
    try:
        sql = "SELECT count(*) FROM citation_contexts WHERE citing_id = '2611.00001'"
        assert db.conn.execute(sql).fetchone()[0] == 1
    finally:
        db.close()


def test_the_enrichment_bench_runs(capsys: pytest.CaptureFixture[str]) -> None:
    """bench/enrich.py cannot rot (its figures are in bench/RESULTS.md; no timing asserted)."""
    from bench import enrich as bench_enrich

    assert bench_enrich.main(["--papers", "300", "--sizes", "1000"]) == 0
    out = capsys.readouterr().out
    assert "database growth" in out and "| 1,000 | 10 |" in out


def test_the_done_when_enrich_names_authors_in_the_card_and_the_feeds(fakes: ScholarlyFakes, seeded_path: Path,
                                                                      tmp_path: Path) -> None:
    """Issue 29's check, as a user runs it: the feeds published, then `mapwatch enrich` against
    the fakes, then `ask "/paper 2412.10400"` names the authors and their institutions, and the
    next (incremental) publish rebuilds the feeds whose citers got authors: the direction feed's
    entries carry <author> elements, as feed readers read them (feedparser)."""
    import feedparser

    env = {**fakes.env(), "MAPWATCH_ENRICH": "arxiv,openalex", "MAPWATCH_CONTACT": CONTACT}
    out = tmp_path / "public"
    feed = out / "feeds" / "lr" / "reinforcement-learning-for-reasoning.atom"
    publish = ("publish", "--db", str(seeded_path), "--out", str(out), "--base-url", "https://feeds.example.org")
    assert cli(*publish, env=env).returncode == 0
    before = feedparser.parse(feed.read_bytes())
    assert before.entries and not any(e.get("authors") and e.authors[0].get("name") != "mapwatch"
                                      for e in before.entries)
    assert cli("enrich", "--db", str(seeded_path), env=env).returncode == 0
    card = cli("ask", "--db", str(seeded_path), "/paper 2412.10400", env=env)
    assert card.returncode == 0, card.stderr
    assert "Shuhe Wang" in card.stdout and "Massachusetts Institute of Technology" in card.stdout, card.stdout
    again = cli(*publish, env=env)
    assert again.returncode == 0, again.stderr
    after = feedparser.parse(feed.read_bytes())
    named = [a.get("name") for e in after.entries for a in e.get("authors", []) if a.get("name") != "mapwatch"]
    assert named, "no entry names its authors after enrich and publish"
    db = open_db(seeded_path)
    try:
        expected = {a.name for b in bylines(db, [e.id.rsplit("/", 2)[-2] if e.id.endswith("/") else
                                                 e.id.rsplit("/", 1)[-1] for e in after.entries]).values()
                    for a in b.authors[:10]}
    finally:
        db.close()
    assert set(named) <= expected and set(named)
