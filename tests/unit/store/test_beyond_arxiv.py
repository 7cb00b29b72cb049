"""Citers beyond arXiv (issue 41, item 1; docs/enrichment.md, "Citers beyond arXiv"): a journal
article OpenAlex lists as citing a tracked paper becomes a citer keyed by its DOI, with its
title, year, venue and authors, in alerts, `/citers`, `/paper <DOI>`, the feeds and the export,
exactly once; no map page is asked for it and no source is asked about it; when the same work
shows its arXiv version (OpenAlex merges the two, or arXiv gives the arXiv paper that DOI), it
is one citer and nobody is alerted again. Real SQLite, the real enrichment round against the
sources' fakes on loopback, the real publish, feeds read with feedparser."""

from __future__ import annotations

import asyncio
from pathlib import Path

import bibtexparser
import feedparser
import pytest

from mapwatch.bot.rendering.render import alert as render_alert
from mapwatch.bot.rendering.render import paper_card, to_text
from mapwatch.bot.rendering.render_why import why_card
from mapwatch.feeds.bibliography import write
from mapwatch.feeds.publish import publish
from mapwatch.store.database.db import open_db
from mapwatch.store.ids import arxiv_only, doi_key, is_outside_key, paper_key, paper_label, paper_link, work_key
from mapwatch.store.questions.citer_records import citer_records
from mapwatch.store.questions.queries import citers, paper_view, resolve_paper
from mapwatch.store.questions.teams import team_papers_by_server
from mapwatch.store.questions.why import resolve_id, why
from mapwatch.store.records import ArxivRecord, OpenAlexWork
from mapwatch.store.scholarly.enrich import EnrichSettings, enrich_round
from mapwatch.store.scholarly.new_works import parse_new_works
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.scholarly.saved import due_papers, save_arxiv, save_openalex
from mapwatch.store.sources.crawl_plan import plan_crawl
from mapwatch.store.subscriptions.tracking import pending_alerts, tracked_paper_ids
from mapwatch.store.subscriptions.watched import followed_direction_papers
from tests.conftest import FakeClock, seed_page
from tests.follow_helpers import grow, store_pages
from tests.scholarly_fakes import ScholarlyFakes, dumps, journal_work, serve_scholarly

SURVEY = "2412.10400"
SURVEY_WORK = "W4405000000"
DOI = "10.1016/j.jrs.2026.01.002"
ARXIV_VERSION = "2611.00077"
FAST = {s: Politeness(0.0, timeout=5.0, max_retry_after=1.0) for s in POLITENESS}


def run_round(path: Path, fakes: ScholarlyFakes, clock: FakeClock, beyond: str = "include",
              sources: tuple[str, ...] = ("openalex",)):
    settings = EnrichSettings(sources, fakes.apis(), politeness=FAST, beyond_arxiv=beyond)  # type: ignore[arg-type]
    return asyncio.run(enrich_round(path, settings, tracked=tracked_paper_ids, team=team_papers_by_server,
                                    followed=followed_direction_papers, clock=clock))


def one(path: Path, sql: str, params: list | tuple = ()) -> tuple | None:
    db = open_db(path)
    try:
        return db.conn.execute(sql, params).fetchone()
    finally:
        db.close()


def citation_events(path: Path) -> list[tuple[int, str]]:
    db = open_db(path)
    try:
        return [tuple(r) for r in db.conn.execute(
            "SELECT id, citing_id FROM events WHERE kind = 'citation' AND paper_id = ? ORDER BY id", [SURVEY])]
    finally:
        db.close()


@pytest.fixture
def matched(tracked: Path, clock: FakeClock) -> Path:
    """The tracked survey, matched to its OpenAlex work (so its newest citers are asked for)."""
    db = open_db(tracked)
    save_openalex(db, [OpenAlexWork(SURVEY, SURVEY_WORK, (), None, None)], [SURVEY], clock())
    db.close()
    return tracked


def _journal_citer(fakes: ScholarlyFakes, day: str, arxiv_id: str | None = None, doi: str | None = DOI) -> None:
    fakes.new_works[day] = [journal_work(doi, "W900", "Reward Models in the Wild", 2026, ["W1", SURVEY_WORK],
                                         arxiv_id=arxiv_id)]


def test_keys_of_citers_beyond_arxiv() -> None:
    assert doi_key("https://doi.org/10.1016/J.JRS.2026.01.002") == DOI
    assert doi_key("doi:10.1145/3580305.3599000") == "10.1145/3580305.3599000"
    assert doi_key("10.48550/arXiv.2412.10400") is None  # arXiv's own DOI names an arXiv paper
    assert paper_key("10.48550/arXiv.2412.10400") == SURVEY
    assert paper_key(f"https://doi.org/{DOI}") == DOI and paper_key("2412.10400v2") == SURVEY
    assert work_key("https://openalex.org/w900") == "W900" and paper_key("W900") == "W900"
    assert paper_key("Reward modeling and RLHF") is None
    assert [is_outside_key(k) for k in (DOI, "W900", SURVEY, "hep-th/9901001", "1001.1234")] == [
        True, True, False, False, False]
    assert paper_link(DOI) == f"https://doi.org/{DOI}" and paper_link("W900") == "https://openalex.org/W900"
    assert paper_link(SURVEY) == f"https://arxiv.org/abs/{SURVEY}"
    assert paper_label(DOI) == f"DOI {DOI}"


def test_the_sql_condition_agrees_with_the_python_one(db) -> None:
    ids = [DOI, "W900", "W1", SURVEY, "hep-th/9901001", "1001.1234", "math.GT/0309136", "10.1145/1"]
    db.conn.executemany("INSERT INTO papers (id, title, has_page, first_seen, updated) VALUES (?, ?, 0, '', '')",
                        [(i, i) for i in ids])
    arxiv = {r[0] for r in db.conn.execute(f"SELECT id FROM papers WHERE {arxiv_only('id')}")}
    assert arxiv == {i for i in ids if not is_outside_key(i)} == {SURVEY, "hep-th/9901001", "1001.1234",
                                                                 "math.GT/0309136"}


def test_a_work_without_an_arxiv_id_is_read_as_a_citer_only_when_asked() -> None:
    body = dumps({"meta": {"next_cursor": None}, "results": [
        journal_work(DOI, "W900", "With a DOI", 2026, [SURVEY_WORK], venue="NeurIPS"),
        journal_work(None, "W901", "Without a DOI", 2025, [SURVEY_WORK]),
        {**journal_work("10.1/x", "W902", "Without an id", 2026, [SURVEY_WORK]), "id": "not an id"}]})
    assert parse_new_works(body).works == () and parse_new_works(body).skipped == 3
    page = parse_new_works(body, beyond_arxiv=True)
    assert page.skipped == 1  # no OpenAlex work id: nothing to key it by
    with_doi, without = page.works
    assert with_doi.citer.citing_id == DOI and with_doi.citer.year == 2026
    assert with_doi.citer.work == OpenAlexWork(DOI, "W900", with_doi.citer.work.authors, "NeurIPS", DOI)  # type: ignore[union-attr]
    assert [a.name for a in with_doi.citer.work.authors] == ["Ana Lima", "Bo Chen"]  # type: ignore[union-attr]
    assert without.citer.citing_id == "W901" and without.citer.work.doi is None  # type: ignore[union-attr]
    assert with_doi.references == (SURVEY_WORK,)


def test_a_journal_citer_is_a_citer_everywhere_once(matched: Path, clock: FakeClock, tmp_path: Path) -> None:
    fakes = ScholarlyFakes()
    _journal_citer(fakes, clock().date().isoformat())
    with serve_scholarly(fakes):
        report = run_round(matched, fakes, clock)
        assert report.sources["openalex"].discovered == 1, report.summary()
        again = run_round(matched, fakes, clock)  # the same answer an hour later: nothing twice
    assert again.sources["openalex"].discovered == 0
    assert one(matched, "SELECT title, year, has_page, arxiv_url FROM papers WHERE id = ?", [DOI]) == (
        "Reward Models in the Wild", 2026, 0, None)
    assert one(matched, "SELECT work_id, venue, doi FROM openalex_works WHERE paper_id = ?", [DOI]) == (
        "W900", "Journal of Reward Studies", DOI)
    assert one(matched, "SELECT provenance FROM citations WHERE citing_id = ? AND cited_id = ?", [DOI, SURVEY]) == (
        "openalex",)
    assert [c for _, c in citation_events(matched)].count(DOI) == 1
    db = open_db(matched)
    try:
        # The alert: linked by its DOI, named with its venue and authors.
        (a,) = pending_alerts(db)
        assert [c.id for c in a.new_citers] == [DOI]
        text = to_text(render_alert(a))
        assert f"(https://doi.org/{DOI})" in text and "in Journal of Reward Studies" in text
        assert "Ana Lima" in text and "via OpenAlex" in text
        # /citers and /paper <DOI>.
        page = citers(db, SURVEY, sort="newest", limit=50)
        assert [c.id for c in page.items].count(DOI) == 1
        for typed in (DOI, f"https://doi.org/{DOI.upper()}", f"doi:{DOI}"):
            assert resolve_paper(db, typed).id == DOI
        card = to_text(paper_card(paper_view(db, DOI), "http://feeds.example"))
        assert f"DOI [{DOI}](https://doi.org/{DOI})" in card and "Not on arXiv" in card
        assert "Journal of Reward Studies" in card
        # /why: known from OpenAlex, and why no map page names it.
        answer = to_text(why_card(why(db, SURVEY, resolve_id(db, f"doi:{DOI}", clock().date()))))
        assert "OpenAlex" in answer and "is not on arXiv, and the map has pages of arXiv papers only" in answer
        # No map page is asked for it, and no source is asked about it (OpenAlex described it).
        plan = plan_crawl(db, "https://mlsanity.com", clock(), 1000)
        assert DOI not in plan.unseen and DOI not in plan.due
        assert all(DOI not in due_papers(db, s, clock(), 10_000) for s in ("arxiv", "openalex", "s2"))
        # The export: its DOI and URL, no arXiv eprint.
        library = bibtexparser.parse_string(write(citer_records(db, [SURVEY]), "bibtex"))
        (entry,) = [e for e in library.entries if e.fields_dict["title"].value == "Reward Models in the Wild"]
        fields = {k: f.value for k, f in entry.fields_dict.items()}
        assert (fields["doi"], fields["url"], fields["journal"]) == (DOI, f"https://doi.org/{DOI}",
                                                                     "Journal of Reward Studies")
        assert "eprint" not in fields and fields["mapwatch-provenance"] == "openalex"
    finally:
        db.close()
    # The survey's feed: one entry, linked to the DOI, named with its venue.
    publish(open_db(matched), tmp_path / "out", base_url="http://feeds.example")
    feed = feedparser.parse((tmp_path / "out" / "feeds" / "papers" / f"{SURVEY}.atom").read_bytes())
    mine = [e for e in feed.entries if e.id.endswith(f"/citer/{DOI}")]
    assert len(mine) == 1 and mine[0].link == f"https://doi.org/{DOI}"
    assert "in Journal of Reward Studies" in mine[0].summary and "not on arXiv" in mine[0].summary


def test_off_leaves_them_out(matched: Path, clock: FakeClock) -> None:
    fakes = ScholarlyFakes()
    _journal_citer(fakes, clock().date().isoformat())
    with serve_scholarly(fakes):
        report = run_round(matched, fakes, clock, beyond="off")
    assert report.sources["openalex"].discovered == 0
    assert one(matched, "SELECT count(*) FROM papers WHERE id = ?", [DOI]) == (0,)


def _delivered(path: Path) -> None:
    """The track's alert went out: its cursor past every event."""
    db = open_db(path)
    with db.atomic():
        db.conn.execute("UPDATE tracks SET last_event_id = (SELECT max(id) FROM events)")
    db.close()


def test_openalex_merging_the_arxiv_version_makes_one_citer_and_no_second_alert(matched: Path,
                                                                                 clock: FakeClock) -> None:
    fakes = ScholarlyFakes()
    day = clock().date().isoformat()
    _journal_citer(fakes, day)
    with serve_scholarly(fakes):
        run_round(matched, fakes, clock)
        _delivered(matched)
        before = citation_events(matched)
        # OpenAlex merges the work's arXiv version into it: the same work now has an arXiv id.
        _journal_citer(fakes, day, arxiv_id=ARXIV_VERSION)
        clock.advance(hours=1)
        report = run_round(matched, fakes, clock)
    assert report.sources["openalex"].discovered == 0
    after = citation_events(matched)
    assert [i for i, _ in after] == [i for i, _ in before]  # no new event: nobody is alerted again
    assert (dict(before)[max(dict(before))], dict(after)[max(dict(after))]) == (DOI, ARXIV_VERSION)
    assert one(matched, "SELECT count(*) FROM papers WHERE id IN (?, ?)", [DOI, ARXIV_VERSION]) == (1,)
    assert one(matched, "SELECT arxiv_url, has_page FROM papers WHERE id = ?", [ARXIV_VERSION]) == (
        f"https://arxiv.org/abs/{ARXIV_VERSION}", 0)  # a stub now: its map page is queued
    assert one(matched, "SELECT paper_id, how FROM paper_aliases WHERE alias = ?", [DOI]) == (
        ARXIV_VERSION, "openalex-work")
    db = open_db(matched)
    try:
        assert pending_alerts(db) == []
        assert [c.id for c in citers(db, SURVEY, sort="newest", limit=50).items].count(ARXIV_VERSION) == 1
        assert resolve_paper(db, DOI).id == ARXIV_VERSION  # /paper <DOI> still finds it
        plan = plan_crawl(db, "https://mlsanity.com", clock(), 1000)
        assert ARXIV_VERSION in plan.unseen
    finally:
        db.close()


def test_a_map_page_naming_the_arxiv_version_then_arxiv_giving_the_doi_is_one_citer(matched: Path,
                                                                                     clock: FakeClock) -> None:
    """The map names the arXiv version as a new citer before anything says the two are one work:
    its event waits behind the alert hold while the tick describes it; arXiv's record gives the
    journal DOI, and the map's citation takes the journal citer's first-seen time and event."""
    fakes = ScholarlyFakes()
    _journal_citer(fakes, clock().date().isoformat())
    with serve_scholarly(fakes):
        run_round(matched, fakes, clock)
    _delivered(matched)
    (first_id, _), = [(i, c) for i, c in citation_events(matched) if c == DOI]
    seen = one(matched, "SELECT first_seen FROM citations WHERE citing_id = ?", [DOI])
    clock.advance(days=1)
    db = open_db(matched)
    store_pages(db, [grow(seed_page(SURVEY), [(ARXIV_VERSION, "Reward Models in the Wild", 2026)])], clock)
    assert [c.id for a in pending_alerts(db) for c in a.new_citers] == [ARXIV_VERSION]  # before the merge
    record = ArxivRecord(ARXIV_VERSION, "Reward Models in the Wild", (), "cs.LG", ("cs.LG",), None, None, DOI,
                         "J. Reward Stud. 1 (2026)", None)
    save_arxiv(db, [record], [ARXIV_VERSION], clock())
    try:
        # The map's new event was the journal citer's, already alerted (the map's count moved: its own news).
        assert [c.id for a in pending_alerts(db) for c in a.new_citers] == []
        assert [(i, c) for i, c in citation_events(matched) if c in (DOI, ARXIV_VERSION)] == [
            (first_id, ARXIV_VERSION)]
        assert db.conn.execute("SELECT first_seen, provenance FROM citations WHERE citing_id = ?",
                               [ARXIV_VERSION]).fetchone() == (seen[0], "map")  # type: ignore[index]
        assert db.conn.execute("SELECT count(*) FROM papers WHERE id = ?", [DOI]).fetchone() == (0,)
        assert resolve_paper(db, DOI).id == ARXIV_VERSION
    finally:
        db.close()


def test_a_journal_citer_that_is_a_known_arxiv_paper_is_stored_under_its_arxiv_id(matched: Path,
                                                                                   clock: FakeClock) -> None:
    """OpenAlex keeps the journal version apart from the arXiv preprint, but arXiv gave the
    preprint that DOI: the journal work is not a second citer."""
    db = open_db(matched)
    store_pages(db, [grow(seed_page(SURVEY), [(ARXIV_VERSION, "Reward Models in the Wild", 2026)])], clock)
    save_arxiv(db, [ArxivRecord(ARXIV_VERSION, "Reward Models in the Wild", (), None, (), None, None, DOI, None,
                                None)], [ARXIV_VERSION], clock())
    _delivered(matched)
    db.close()
    fakes = ScholarlyFakes()
    _journal_citer(fakes, clock().date().isoformat())
    with serve_scholarly(fakes):
        report = run_round(matched, fakes, clock)
    assert report.sources["openalex"].discovered == 0
    assert one(matched, "SELECT count(*) FROM papers WHERE id = ?", [DOI]) == (0,)
    assert [c for _, c in citation_events(matched)].count(ARXIV_VERSION) == 1


def test_a_hostile_answer_cannot_key_a_citer_as_a_map_paper(matched: Path, clock: FakeClock) -> None:
    """A DOI is stored only as what it is: a work naming arXiv's DOI of a map paper with no arXiv
    location is that map paper (not a new key), and cites nothing of itself; the map's papers
    are never overwritten."""
    fakes = ScholarlyFakes()
    title_before = one(matched, "SELECT title FROM papers WHERE id = ?", [SURVEY])
    fakes.new_works[clock().date().isoformat()] = [
        journal_work(f"10.48550/arxiv.{SURVEY}", "W901", "A Hostile Rename", 2026, [SURVEY_WORK])]
    with serve_scholarly(fakes):
        report = run_round(matched, fakes, clock)
    assert report.sources["openalex"].discovered == 0  # itself: dropped
    assert one(matched, "SELECT title FROM papers WHERE id = ?", [SURVEY]) == title_before
    assert one(matched, "SELECT count(*) FROM papers WHERE id LIKE '10.48550/%' OR id = 'W901'") == (0,)


def test_the_day_after_a_new_citer_its_alert_was_one(matched: Path, clock: FakeClock) -> None:
    """The day's pass reads arXiv works only: the journal citer from the newest citers' answer is
    not announced again by it, nor by the next days' newest citers."""
    fakes = ScholarlyFakes()
    _journal_citer(fakes, clock().date().isoformat())
    with serve_scholarly(fakes):
        run_round(matched, fakes, clock)
        for _ in range(3):
            clock.advance(days=1)
            run_round(matched, fakes, clock)
    assert [c for _, c in citation_events(matched)].count(DOI) == 1
    assert one(matched, "SELECT count(*) FROM papers WHERE id = ?", [DOI]) == (1,)


def test_followed_directions_papers_are_asked_daily(matched: Path, clock: FakeClock) -> None:
    from mapwatch.store.subscriptions.follows import add_follow

    db = open_db(matched)
    slug = db.conn.execute("SELECT direction_slug FROM placements WHERE paper_id = ?", [SURVEY]).fetchone()[0]
    with db.atomic():
        db.conn.execute("DELETE FROM tracks")
    add_follow(db, guild_id=1, channel_id=2, user_id=None, direction_slug=slug, created_by=3, now=clock())
    assert SURVEY in followed_direction_papers(db)
    db.close()
    fakes = ScholarlyFakes()
    _journal_citer(fakes, clock().date().isoformat())
    with serve_scholarly(fakes):
        first = run_round(matched, fakes, clock)
        clock.advance(hours=1)
        run_round(matched, fakes, clock)  # within the day: not asked again
        asked = [r.query for r in fakes.seen("openalex") if r.query.get("filter", "").startswith("cites:")]
    assert first.sources["openalex"].discovered == 1
    assert len(asked) == 1 and SURVEY_WORK in asked[0]["filter"]
