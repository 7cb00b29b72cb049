"""Citations the map never names, from the open sources (issue 32, item 2; docs/enrichment.md,
"Citations the map does not name"): Semantic Scholar's citers of tracked and team papers and
OpenAlex's new arXiv works, each citation with its provenance until a map page names it, in
feeds and alerts exactly once; checked before stored; held back by `omit`; nothing with `off`
or with the sources down. Real SQLite, the real enrichment round against the sources' fakes
on loopback, the real publish, feeds read with feedparser."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import feedparser

from mapwatch.bot.rendering.render import alert as render_alert
from mapwatch.bot.rendering.render_follow import citer_line
from mapwatch.feeds.publish import publish
from mapwatch.store.database.db import open_db
from mapwatch.store.questions.teams import team_papers_by_server
from mapwatch.store.records import FoundCiter, OpenAlexWork
from mapwatch.store.scholarly.discovered import save_found_citers
from mapwatch.store.scholarly.enrich import EnrichSettings, enrich_round
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions.digests import paper_news
from mapwatch.store.subscriptions.follows import add_follow, pending_follow_alerts
from mapwatch.store.subscriptions.tracking import pending_alerts, tracked_paper_ids
from tests.conftest import FakeClock, seed_page
from tests.follow_helpers import store_pages
from tests.scholarly_fakes import ScholarlyFakes, new_work, s2_citation, serve_scholarly

SURVEY = "2412.10400"
FAST = {s: Politeness(0.0, timeout=5.0, max_retry_after=1.0) for s in POLITENESS}
NEW = ("2610.01234", "A Citer No Map Page Names", 2026)


def settings(fakes: ScholarlyFakes, mode: str = "include", sources: tuple[str, ...] = ("s2",)) -> EnrichSettings:
    return EnrichSettings(sources, fakes.apis(), politeness=FAST, source_citations=mode)


def run_round(path: Path, fakes: ScholarlyFakes, clock: FakeClock, mode: str = "include",
              sources: tuple[str, ...] = ("s2",)):
    return asyncio.run(enrich_round(path, settings(fakes, mode, sources), tracked=tracked_paper_ids,
                                    team=team_papers_by_server, clock=clock))


def map_citers(path: Path, paper_id: str) -> list[str]:
    db = open_db(path)
    try:
        return [r[0] for r in db.conn.execute("SELECT citing_id FROM citations WHERE cited_id = ? ORDER BY 1",
                                              [paper_id])]
    finally:
        db.close()


def s2_of(db_path: Path) -> list[dict]:
    """What Semantic Scholar says cites the survey: the map's citers (so it agrees with the map)."""
    return [s2_citation(c, [f"As {SURVEY} shows"], ["background"], False) for c in map_citers(db_path, SURVEY)]


def row(path: Path, sql: str, params: list) -> tuple | None:
    db = open_db(path)
    try:
        return db.conn.execute(sql, params).fetchone()
    finally:
        db.close()


def test_semantic_scholar_baseline_then_a_new_citer_in_feeds_and_alerts_once(tracked: Path, clock: FakeClock,
                                                                             tmp_path: Path) -> None:
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = [*s2_of(tracked), s2_citation("2601.99999", ["an old citer"], [], False, "Old", 2026)]
    with serve_scholarly(fakes):
        first = run_round(tracked, fakes, clock)
        # The first answer is the baseline: there before mapwatch asked, so not news.
        assert first.sources["s2"].discovered == 0
        assert row(tracked, "SELECT baseline FROM source_citations WHERE citing_id = '2601.99999'", []) == (1,)
        assert "2601.99999" not in map_citers(tracked, SURVEY)
        events_before = row(tracked, "SELECT count(*) FROM events", [])
        # An hour later it names a citer no map page names: news, with its provenance.
        fakes.s2[SURVEY].insert(0, s2_citation(NEW[0], ["We build on the survey [12]."], ["methodology"], True,
                                               NEW[1], NEW[2]))
        clock.advance(hours=1)
        second = run_round(tracked, fakes, clock)
        asked = fakes.seen("s2")
        assert second.sources["s2"].discovered == 1, second.summary()
    # Each round: its citation count, then (it moved, or was never read) every page of its citers.
    paper = f"/graph/v1/paper/arXiv:{SURVEY}"
    assert [r.path for r in asked] == [paper, f"{paper}/citations"] * 2
    assert row(tracked, "SELECT provenance, snapshot_id, at_first_read FROM citations WHERE citing_id = ?",
               [NEW[0]]) == ("s2", None, 0)
    # Its stub queues its map page for the next tick (has_page 0), with the source's title.
    assert row(tracked, "SELECT title, year, has_page FROM papers WHERE id = ?", [NEW[0]]) == (NEW[1], NEW[2], 0)
    assert row(tracked, "SELECT count(*) FROM events", [])[0] == events_before[0] + 1

    db = open_db(tracked)
    try:
        (a,) = pending_alerts(db)
        assert [(c.id, c.provenance) for c in a.new_citers] == [(NEW[0], "s2")]
        text = render_alert(a).embeds[0].description
        assert "via Semantic Scholar" in text and "We build on the survey" in text  # and the sentence that cites
        publish(db, tmp_path / "out", "https://example.org/", clock=clock)
    finally:
        db.close()
    feeds = sorted((tmp_path / "out" / "feeds").glob("**/*.atom"))
    assert len(feeds) == 3  # the survey's two directions and its own feed
    for path in feeds:
        feed = feedparser.parse(path.read_bytes())
        assert not feed.bozo, (path, feed.bozo_exception)
        entries = [e for e in feed.entries if e.id.endswith(f"/citer/{NEW[0]}") or NEW[1] in e.title]
        assert len(entries) == 1, path
        assert "from Semantic Scholar: no map page names this citation yet" in entries[0].summary
        others = [e for e in feed.entries if e not in entries]
        assert others and not any("Semantic Scholar" in e.summary for e in others)  # map citations as before


def test_a_citation_count_that_did_not_move_costs_one_request_and_a_week_a_full_read(tracked: Path,
                                                                                     clock: FakeClock) -> None:
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = s2_of(tracked)
    with serve_scholarly(fakes):
        run_round(tracked, fakes, clock)  # the baseline: every page read
        for hours in (1, 1, 1):  # nothing new: one request a round, its citers not read again
            clock.advance(hours=hours)
            fakes.requests.clear()
            quiet = run_round(tracked, fakes, clock).sources["s2"]
            assert [r.path for r in fakes.seen("s2")] == [f"/graph/v1/paper/arXiv:{SURVEY}"]
            assert quiet.unchanged == 1 and quiet.requests == 1 and "same citation count" in quiet.summary()
        fakes.s2[SURVEY].insert(0, s2_citation(NEW[0], ["We build on it."], [], False, NEW[1], NEW[2]))
        clock.advance(hours=1)
        fakes.requests.clear()
        moved = run_round(tracked, fakes, clock).sources["s2"]
        assert moved.discovered == 1 and moved.unchanged == 0 and len(fakes.seen("s2")) == 2  # count, then citers
        clock.advance(days=7, hours=1)  # a week since the last full read: read again, the count the same
        fakes.requests.clear()
        weekly = run_round(tracked, fakes, clock).sources["s2"]
        assert weekly.unchanged == 0 and [r.path.endswith("/citations") for r in fakes.seen("s2")] == [False, True]
    assert row(tracked, "SELECT citation_count FROM discovery_asked WHERE paper_id = ? AND source = 's2'",
               [SURVEY]) == (len(fakes.s2[SURVEY]),)


def test_a_map_page_naming_it_later_makes_it_the_maps_without_a_second_entry(tracked: Path, clock: FakeClock) -> None:
    db = open_db(tracked)
    try:
        save_found_citers(db, SURVEY, "s2", [], clock(), include=True)  # the baseline: nothing
        clock.advance(hours=1)
        found = save_found_citers(db, SURVEY, "s2", [FoundCiter(NEW[0], NEW[1], NEW[2])], clock(), include=True)
        assert (found.new, found.baseline) == (1, 0)
        first_seen = db.conn.execute("SELECT first_seen FROM citations WHERE citing_id = ?", [NEW[0]]).fetchone()[0]
        events = db.conn.execute("SELECT count(*) FROM events WHERE citing_id = ?", [NEW[0]]).fetchone()[0]
        # The survey's page a day later lists the new citer first.
        page = seed_page(SURVEY)
        assert page.built_on_by is not None
        listed = replace(page.built_on_by, items=(replace(page.built_on_by.items[0], id=NEW[0], title=NEW[1]),
                                                  *page.built_on_by.items[1:]))
        clock.advance(days=1)
        store_pages(db, [replace(page, built_on_by=listed)], clock)
        got = db.conn.execute("SELECT provenance, first_seen, snapshot_id IS NOT NULL FROM citations"
                              " WHERE citing_id = ?", [NEW[0]]).fetchone()
        assert got == ("map", first_seen, 1)
        assert db.conn.execute("SELECT count(*) FROM events WHERE citing_id = ?", [NEW[0]]).fetchone()[0] == events
        # Saying it again adds nothing either.
        assert save_found_citers(db, SURVEY, "s2", [FoundCiter(NEW[0])], clock(), include=True).new == 0
    finally:
        db.close()


def test_what_a_source_says_is_checked_before_it_is_stored(tracked: Path, clock: FakeClock) -> None:
    db = open_db(tracked)
    try:
        # A paper the map has (from a list) that does not cite the survey, with its title.
        other, title = db.conn.execute(
            "SELECT id, title FROM papers p WHERE id != ? AND id LIKE '2%' AND NOT EXISTS (SELECT 1 FROM citations c"
            " WHERE c.citing_id = p.id AND c.cited_id = ?) ORDER BY id LIMIT 1", [SURVEY, SURVEY]).fetchone()
        save_found_citers(db, SURVEY, "s2", [], clock(), include=True)
        bad = [FoundCiter("2712.00001", "From a month to come"), FoundCiter(SURVEY, "Itself"),
               FoundCiter("2613.00001", "Month 13"), FoundCiter("1501.0001", "Four digits in 2015")]
        found = save_found_citers(db, SURVEY, "s2", [*bad, FoundCiter(other, "A Hostile Rename")], clock(),
                                  include=True)
        assert found.dropped == 4 and found.new == 1
        # A map paper's title is never overwritten by what a source says of it.
        assert db.conn.execute("SELECT title FROM papers WHERE id = ?", [other]).fetchone()[0] == title
        assert db.conn.execute("SELECT provenance FROM citations WHERE citing_id = ? AND cited_id = ?",
                               [other, SURVEY]).fetchone() == ("s2",)
        # A cited paper the map does not have: nothing is stored at all.
        nothing = save_found_citers(db, "2601.00001", "s2", [FoundCiter(NEW[0])], clock(), include=True)
        assert nothing.dropped == 1
        assert db.conn.execute("SELECT count(*) FROM source_citations WHERE cited_id = '2601.00001'").fetchone() == (0,)
        impossible = db.conn.execute("SELECT count(*) FROM papers WHERE id IN ('2712.00001', '2613.00001')")
        assert impossible.fetchone() == (0,)
    finally:
        db.close()


def test_omit_holds_them_back_until_include_or_a_map_page(tracked: Path, clock: FakeClock) -> None:
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = s2_of(tracked)
    with serve_scholarly(fakes):
        run_round(tracked, fakes, clock, "omit")
        fakes.s2[SURVEY].insert(0, s2_citation(NEW[0], [], [], False, NEW[1], NEW[2]))
        clock.advance(hours=1)
        held = run_round(tracked, fakes, clock, "omit")
        assert held.sources["s2"].discovered == 1
        assert NEW[0] not in map_citers(tracked, SURVEY)  # not in feeds or alerts
        assert row(tracked, "SELECT source, baseline FROM source_citations WHERE citing_id = ?", [NEW[0]]) == ("s2", 0)
        clock.advance(hours=1)
        run_round(tracked, fakes, clock, "include")  # the setting changed: it comes in at the next answer
    assert row(tracked, "SELECT provenance FROM citations WHERE citing_id = ?", [NEW[0]]) == ("s2",)


def test_off_and_sources_down_change_nothing(tracked: Path, clock: FakeClock) -> None:
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = [*s2_of(tracked), s2_citation(NEW[0], [], [], False)]
    with serve_scholarly(fakes):
        run_round(tracked, fakes, clock, "off")
        assert row(tracked, "SELECT count(*) FROM discovery_asked", []) == (0,)
        before = row(tracked, "SELECT count(*), (SELECT count(*) FROM events) FROM citations", [])
        fakes.down("s2")
        clock.advance(hours=1)
        report = run_round(tracked, fakes, clock)
        assert report.sources["s2"].down is not None
        assert len(fakes.seen("s2")) >= 2  # the fake really was asked, and really refused
    assert row(tracked, "SELECT count(*), (SELECT count(*) FROM events) FROM citations", []) == before
    assert row(tracked, "SELECT count(*) FROM source_citations", []) == (0,)


def test_openalex_new_works_name_citers_of_map_papers(seeded_path: Path, clock: FakeClock) -> None:
    db = open_db(seeded_path)
    save_openalex(db, [OpenAlexWork(SURVEY, "W4405000000", (), None, None)], [SURVEY], clock())
    db.close()
    fakes = ScholarlyFakes()
    yesterday = (clock().date() - timedelta(days=1)).isoformat()
    unrelated = [new_work(f"2610.{90000 + k}", f"W99{k}", f"Unrelated {k}", 2026, ["W1"]) for k in range(250)]
    fakes.new_works[yesterday] = [*unrelated, new_work(NEW[0], "W77", NEW[1], NEW[2], ["W4405000000", "W1"]),
                                  {"id": "https://openalex.org/W78", "title": "Not on arXiv", "doi": None}]
    with serve_scholarly(fakes):
        report = run_round(seeded_path, fakes, clock, sources=("openalex",))
        pages = [r for r in fakes.seen("openalex") if "from_publication_date" in r.query.get("filter", "")]
        again = run_round(seeded_path, fakes, clock, sources=("openalex",))  # the same day: not read again
        pages_again = [r for r in fakes.seen("openalex") if "from_publication_date" in r.query.get("filter", "")]
    assert report.sources["openalex"].discovered == 1, report.summary()
    # Yesterday's works paged by cursor to the end; three days ago's (read again for late ones) empty.
    days = [r.query["filter"].split(",")[0].split(":")[1] for r in pages]
    three_ago = (clock().date() - timedelta(days=3)).isoformat()
    assert days == [three_ago, yesterday, yesterday]
    assert [r.query["cursor"] for r in pages] == ["*", "*", "200"]
    assert again.sources["openalex"].discovered == 0 and len(pages_again) == len(pages)
    assert row(seeded_path, "SELECT provenance FROM citations WHERE citing_id = ? AND cited_id = ?",
               [NEW[0], SURVEY]) == ("openalex",)
    assert row(seeded_path, "SELECT has_page, title FROM papers WHERE id = ?", [NEW[0]]) == (0, NEW[1])
    assert row(seeded_path, "SELECT works, citations FROM discovery_passes WHERE day = ? AND lag = 1",
               [yesterday]) == (251, 1)


def test_direction_follows_and_digests_say_where_the_citation_is_known_from(tracked: Path, clock: FakeClock) -> None:
    db = open_db(tracked)
    try:
        slug = db.conn.execute("SELECT direction_slug FROM placements WHERE paper_id = ? ORDER BY position",
                               [SURVEY]).fetchone()[0]
        follow, _new = add_follow(db, guild_id=1, channel_id=5, user_id=None, direction_slug=slug, created_by=3,
                                  now=clock())
        after = db.conn.execute("SELECT max(id) FROM events").fetchone()[0]
        save_found_citers(db, SURVEY, "s2", [], clock(), include=True)  # the baseline
        save_found_citers(db, SURVEY, "s2", [FoundCiter(NEW[0], NEW[1], NEW[2])], clock(), include=True)
        (news,) = [n for n in pending_follow_alerts(db) if n.follow.id == follow.id]
        assert [(c.id, c.provenance) for c in news.citers] == [(NEW[0], "s2")]
        assert "via Semantic Scholar" in citer_line(news.citers[0])
        citers, *_counts = paper_news(db, SURVEY, after, after + 10)
        assert [(c.id, c.provenance) for c in citers] == [(NEW[0], "s2")]
    finally:
        db.close()


def test_openalex_names_a_tracked_papers_newest_citer_within_the_round(tracked: Path, clock: FakeClock) -> None:
    """Semantic Scholar reads at most 10,000 citers of a paper, in an order of its own; so every
    round OpenAlex is asked for the works of the last days that cite the tracked and team papers,
    newest first: a tracked paper's new citer is alerted within the hour, before the day's pass
    (which then adds nothing twice)."""
    db = open_db(tracked)
    save_openalex(db, [OpenAlexWork(SURVEY, "W4405000000", (), None, None)], [SURVEY], clock())
    db.close()
    start = clock().date()
    fakes = ScholarlyFakes()
    fakes.new_works[(start - timedelta(days=9)).isoformat()] = [
        new_work("2609.00001", "W60", "An older citer", 2026, ["W4405000000"])]
    with serve_scholarly(fakes):
        first = run_round(tracked, fakes, clock, sources=("openalex",))
        events = row(tracked, "SELECT count(*) FROM events", [])
        fakes.new_works[start.isoformat()] = [new_work(NEW[0], "W77", NEW[1], NEW[2], ["W1", "W4405000000"]),
                                              new_work("2610.05555", "W78", "Cites something else", 2026, ["W1"])]
        clock.advance(hours=1)
        second = run_round(tracked, fakes, clock, sources=("openalex",))
        clock.advance(hours=1)
        third = run_round(tracked, fakes, clock, sources=("openalex",))
        clock.advance(days=1)  # today's works are now yesterday's: the day's pass reads them
        fourth = run_round(tracked, fakes, clock, sources=("openalex",))
        asked = [r.query for r in fakes.seen("openalex") if r.query.get("filter", "").startswith("cites:")]
    # Older than the window (three days): not asked about, so not news.
    assert first.sources["openalex"].discovered == 0
    assert second.sources["openalex"].discovered == 1, second.summary()
    assert third.sources["openalex"].discovered == 0 and fourth.sources["openalex"].discovered == 0
    assert asked[0] == {"filter": f"cites:W4405000000,from_publication_date:{start - timedelta(days=3)}",
                        "sort": "publication_date:desc", "per-page": "200", "cursor": "*",
                        "select": "id,doi,ids,title,publication_year,referenced_works,locations,"
                                  "authorships,primary_location"}
    assert len(asked) == 4  # one request a round for the one tracked paper
    assert row(tracked, "SELECT provenance FROM citations WHERE citing_id = ? AND cited_id = ?",
               [NEW[0], SURVEY]) == ("openalex",)
    assert row(tracked, "SELECT count(*) FROM citations WHERE citing_id IN ('2609.00001', '2610.05555')",
               []) == (0,)
    assert row(tracked, "SELECT count(*) FROM events", [])[0] == events[0] + 1
    db = open_db(tracked)
    try:
        (a,) = pending_alerts(db)
        assert [(c.id, c.provenance) for c in a.new_citers] == [(NEW[0], "openalex")]
    finally:
        db.close()


def test_a_bad_answer_about_the_newest_citers_stores_nothing_and_is_named(tracked: Path, clock: FakeClock) -> None:
    db = open_db(tracked)
    save_openalex(db, [OpenAlexWork(SURVEY, "W4405000000", (), None, None)], [SURVEY], clock())
    db.close()
    fakes = ScholarlyFakes()
    before = row(tracked, "SELECT count(*), (SELECT count(*) FROM events) FROM citations", [])
    with serve_scholarly(fakes):
        run_round(tracked, fakes, clock, sources=("openalex",))  # the DOIs and the day's passes, answered
        fakes.down("openalex", how="malformed")
        clock.advance(hours=1)
        report = run_round(tracked, fakes, clock, sources=("openalex",))
        cites = [r for r in fakes.seen("openalex") if r.query.get("filter", "").startswith("cites:")]
    assert len(cites) == 2  # asked in both rounds: the second answer really was malformed
    assert report.sources["openalex"].problems == [
        "the newest citers of tracked, team and followed papers: the OpenAlex answer is not JSON"]
    assert row(tracked, "SELECT count(*), (SELECT count(*) FROM events) FROM citations", []) == before
