"""How much an open source may add (hardening round 4, item 2; docs/enrichment.md, "How much a
source may add"): a hostile OpenAlex on loopback (tests/scholarly_fakes.py) names, day after day,
hundreds of new works each citing every paper of the map. Before the bounds one round on the
seeds' 99 papers added every citation it was told of (per cited paper an answer's cap of 2,000
never triggered); now a round adds at most the round's bound of citations and of stub papers,
a day at most the day's (kept in `source_additions`, so a new round, or a restart, does not reset
it), one answer at most MAX_CITATIONS_PER_ANSWER citations, the round's report names the bound
reached, and what was stored stays. Real SQLite, the real round against the fakes.

The map of the seeds has 2 pages, so its bounds are the floors: 5,000 citations and 2,000 stubs
a round, 10,000 and 4,000 a day."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.rows import one_column, scalar
from mapwatch.store.questions.teams import team_papers_by_server
from mapwatch.store.records import OpenAlexWork
from mapwatch.store.scholarly.budget import MAX_CITATIONS_PER_ANSWER, Budget, Rule, Rules
from mapwatch.store.scholarly.enrich import EnrichSettings, RoundReport, enrich_round
from mapwatch.store.scholarly.new_works import parse_new_works, save_new_works
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions.tracking import tracked_paper_ids
from tests.conftest import FakeClock
from tests.scholarly_fakes import ScholarlyFakes, dumps, new_work, s2_citation, serve_scholarly

SURVEY = "2412.10400"
FAST = {s: Politeness(0.0, timeout=10.0, max_retry_after=1.0) for s in POLITENESS}
ROUND_LINE = ("openalex reached its bound of 5,000 new citations a round (the larger of 5,000 and 2 per map "
              "page, 2 pages): it adds no more this round (the rest waits for the next)")
DAY_LINE = ("openalex reached its bound of 10,000 new citations a day (the larger of 10,000 and 4 per map "
            "page, 2 pages): it adds no more until tomorrow (UTC)")


def match_every_paper(path: Path, clock: FakeClock) -> dict[str, str]:
    """Every paper of the map matched to an OpenAlex work, as enrichment does: paper -> work id."""
    db = open_db(path)
    try:
        ids = one_column(db, "SELECT id FROM papers ORDER BY id")
        works = {pid: f"W{9_000_000 + n}" for n, pid in enumerate(ids)}
        save_openalex(db, [OpenAlexWork(pid, w, (), None, None) for pid, w in works.items()], ids, clock())
    finally:
        db.close()
    return works


def flood(n: int, references: list[str], first: int = 0, month: str = "2610") -> list[dict[str, Any]]:
    """`n` new arXiv works, each citing every one of `references` (OpenAlex work ids)."""
    return [new_work(f"{month}.{first + k:05d}", f"W{70_000_000 + first + k}", f"Flood {first + k}", 2026, references)
            for k in range(1, n + 1)]


def counts(path: Path) -> dict[str, int]:
    """What the sources added: their rows of `source_citations`, their citations in `citations`,
    the events, the stub papers (no page)."""
    db = open_db(path)
    try:
        return {"said": scalar(db, "SELECT count(*) FROM source_citations"),
                "citations": scalar(db, "SELECT count(*) FROM citations WHERE provenance != 'map'"),
                "events": scalar(db, "SELECT count(*) FROM events"),
                "stubs": scalar(db, "SELECT count(*) FROM papers WHERE has_page = 0")}
    finally:
        db.close()


def added(after: dict[str, int], before: dict[str, int]) -> dict[str, int]:
    return {k: after[k] - before[k] for k in after}


def openalex_round(path: Path, fakes: ScholarlyFakes, clock: FakeClock, **kw: object) -> RoundReport:
    settings = EnrichSettings(("openalex",), fakes.apis(), politeness=FAST, source_citations="include", **kw)
    return asyncio.run(enrich_round(path, settings, tracked=tracked_paper_ids, team=team_papers_by_server, clock=clock))


def new_work_requests(fakes: ScholarlyFakes) -> list[dict[str, str]]:
    return [r.query for r in fakes.seen("openalex") if not r.query.get("filter", "").startswith("doi:")]


@dataclass
class Rounds:
    """Rounds of OpenAlex an hour apart: their reports, what the sources had added before the
    first and after each, and the requests for new works each made."""

    reports: list[RoundReport]
    counts: list[dict[str, int]]
    asked: list[list[dict[str, str]]]

    def added(self, after: int, before: int = 0) -> dict[str, int]:
        """What was added from before round `before + 1` to after round `after`."""
        return added(self.counts[after], self.counts[before])

    def bounds(self, k: int) -> list[str]:
        return self.reports[k - 1].sources["openalex"].bounds


def rounds_an_hour_apart(path: Path, fakes: ScholarlyFakes, clock: FakeClock, n: int = 3) -> Rounds:
    done = Rounds([], [counts(path)], [])
    for k in range(n):
        if k:
            clock.advance(hours=1)
        fakes.requests.clear()
        done.reports.append(openalex_round(path, fakes, clock))
        done.counts.append(counts(path))
        done.asked.append(new_work_requests(fakes))
    return done


def additions(path: Path) -> list[tuple[Any, ...]]:
    db = open_db(path)
    try:
        return db.conn.execute("SELECT source, day, citations, stubs, reached FROM source_additions ORDER BY 1, 2"
                               ).fetchall()
    finally:
        db.close()


def test_a_day_of_works_citing_every_paper_adds_the_rounds_bound_then_the_days(seeded_path: Path,
                                                                              clock: FakeClock) -> None:
    works = match_every_paper(seeded_path, clock)
    today = clock().date()
    yesterday = (today - timedelta(days=1)).isoformat()
    fakes = ScholarlyFakes()
    fakes.new_works[yesterday] = flood(300, list(works.values()))  # 29,700 citations, 2 pages
    with serve_scholarly(fakes):
        r = rounds_an_hour_apart(seeded_path, fakes, clock)  # the third as after a restart
        # The next day (UTC) the day's bound starts again: that day's flood adds the round's bound.
        fakes.new_works[today.isoformat()] = flood(300, list(works.values()), first=300)
        clock.advance(days=1)
        openalex_round(seeded_path, fakes, clock)
        four = counts(seeded_path)
    # One round: the round's bound of citations exactly, each with its event; the 200 works of the
    # one page read are the stubs.
    assert r.added(1) == {"said": 5_000, "citations": 5_000, "events": 5_000, "stubs": 200}
    assert r.bounds(1) == [ROUND_LINE]
    assert f"enrichment: {ROUND_LINE}" in r.reports[0].trouble_lines() and not r.reports[0].troubles()
    # The second round of the day: up to the day's bound; the third adds nothing and asks nothing.
    assert r.added(2, 1) == {"said": 5_000, "citations": 5_000, "events": 5_000, "stubs": 0}
    assert r.bounds(2) == [DAY_LINE]
    assert r.counts[3] == r.counts[2] and r.asked[2] == [] and r.bounds(3) == [DAY_LINE]
    assert additions(seeded_path)[0] == ("openalex", today.isoformat(), 10_000, 200, ROUND_LINE)
    assert added(four, r.counts[3])["citations"] == 5_000
    # The pass stopped by a bound is not finished (read again while the day allows); what was stored stays.
    db = open_db(seeded_path)
    try:
        assert db.conn.execute("SELECT count(*) FROM discovery_passes WHERE day = ?", [yesterday]).fetchone() == (0,)
        assert db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    finally:
        db.close()


def test_many_works_add_at_most_the_stub_bounds(seeded_path: Path, clock: FakeClock) -> None:
    works = match_every_paper(seeded_path, clock)
    yesterday = (clock().date() - timedelta(days=1)).isoformat()
    fakes = ScholarlyFakes()
    fakes.new_works[yesterday] = flood(4_400, [works[SURVEY]])  # 22 pages of new papers citing the survey
    with serve_scholarly(fakes):
        r = rounds_an_hour_apart(seeded_path, fakes, clock)
    assert r.added(1)["stubs"] == 2_000 and r.added(1)["citations"] == 2_000
    assert r.bounds(1) == [
        "openalex reached its bound of 2,000 new stub papers a round (the larger of 2,000 and 1 per 10 map pages, "
        "2 pages): it adds no more this round (the rest waits for the next)"]
    assert r.added(2, 1)["stubs"] == 2_000 and r.added(2)["citations"] == 4_000
    assert r.bounds(2) == [
        "openalex reached its bound of 4,000 new stub papers a day (the larger of 4,000 and 1 per 5 map pages, "
        "2 pages): it adds no more until tomorrow (UTC)"]
    assert r.counts[3] == r.counts[2] and r.asked[2] == []


def test_the_newest_citers_of_tracked_and_team_papers_are_bounded_too(tracked: Path, clock: FakeClock) -> None:
    works = match_every_paper(tracked, clock)
    fakes = ScholarlyFakes()
    fakes.new_works[clock().date().isoformat()] = flood(600, list(works.values()))  # today's: not a day's pass
    with serve_scholarly(fakes):
        r = rounds_an_hour_apart(tracked, fakes, clock)
    # One page of 200 works citing 99 papers: past the bound, no second page asked.
    assert [q["filter"][:6] for q in r.asked[0]] == ["from_p", "from_p", "cites:"]
    assert r.added(1)["citations"] == 5_000 and r.added(2)["citations"] == 10_000
    assert r.bounds(1) == [ROUND_LINE] and r.bounds(3) == [DAY_LINE]
    assert r.counts[3] == r.counts[2] and r.asked[2] == []
    db = open_db(tracked)
    try:  # not read to the end: asked again next round
        assert db.conn.execute("SELECT count(*) FROM recent_citers_asked").fetchone() == (0,)
    finally:
        db.close()


def test_one_answer_adds_at_most_its_bound_across_all_cited_papers(seeded_path: Path, clock: FakeClock) -> None:
    """400 works (what one answer may hold) each citing all 99 papers name 39,600 citations; the
    round's and day's bounds set far away, the answer's own bound holds."""
    works = match_every_paper(seeded_path, clock)
    page = parse_new_works(dumps({"meta": {"next_cursor": None}, "results": flood(400, list(works.values()))}))
    far = Rule(10_000_000, 0)
    db = open_db(seeded_path)
    try:
        budget = Budget("openalex", 2, Rules(far, far, far, far))
        found = save_new_works(db, page.works, clock(), include=True, budget=budget)
        stored = scalar(db, "SELECT count(*) FROM source_citations")
        events = scalar(db, "SELECT count(*) FROM citations WHERE provenance = 'openalex'")
    finally:
        db.close()
    assert stored == MAX_CITATIONS_PER_ANSWER == 20_000 and events <= 20_000
    assert found.over == 39_600 - 20_000
    assert budget.reached == ["openalex: an answer named 39,600 citations of map papers, more than the 20,000 one "
                              "answer may add: the rest of it was left out"]


def test_a_first_answer_past_the_bound_stays_a_baseline_and_announces_nothing(tracked: Path,
                                                                              clock: FakeClock) -> None:
    """Semantic Scholar's first answer about a paper is its baseline (not news): one of 6,000 citers
    is cut at the round's bound of 5,000, and the rest comes in the next round as baseline too;
    only a citer that appears after it is news."""
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = [s2_citation(f"2609.{k:05d}", [], [], False, f"Old {k}", 2026) for k in range(1, 6_001)]
    events = counts(tracked)["events"]
    with serve_scholarly(fakes):
        settings = EnrichSettings(("s2",), fakes.apis(), politeness=FAST, source_citations="include")
        first = asyncio.run(enrich_round(tracked, settings, tracked=tracked_paper_ids,
                                         team=team_papers_by_server, clock=clock))
        baseline_one = counts(tracked)["said"]
        clock.advance(hours=1)
        asyncio.run(enrich_round(tracked, settings, tracked=tracked_paper_ids, team=team_papers_by_server, clock=clock))
        baseline_two = counts(tracked)
        fakes.s2[SURVEY].insert(0, s2_citation("2610.00001", [], [], False, "New", 2026))
        clock.advance(hours=1)
        asyncio.run(enrich_round(tracked, settings, tracked=tracked_paper_ids, team=team_papers_by_server, clock=clock))
        after = counts(tracked)
    assert baseline_one == 5_000
    assert first.sources["s2"].bounds[0].startswith(
        "s2 reached its bound of 5,000 new citations a round")
    assert baseline_two["said"] == 6_000 and baseline_two["events"] == events and baseline_two["citations"] == 0
    assert (after["said"], after["citations"], after["events"]) == (6_001, 1, events + 1)


@pytest.mark.slow
def test_the_flood_measured(tracked: Path, clock: FakeClock, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's attack at a smaller scale (`FLOOD_WORKS` works a day, default 2,000, on each of
    the days a round reads: 3 days ago, yesterday and today, each work citing all 99 papers; the
    survey tracked and a team of all 99 papers), 3 rounds an hour apart: rows added, database
    size, time, and the time to compose the team's alert afterwards. It prints its figures before
    its checks, so it can measure the code before the bounds as well."""
    from mapwatch.store.subscriptions import people_tracks, teams

    n = int(os.environ.get("FLOOD_WORKS", "2000"))
    seeded_path = tracked
    works = match_every_paper(seeded_path, clock)
    db = open_db(seeded_path)
    team, _ = teams.ensure_team(db, 1, "Everyone", 3, clock())
    for pid in works:
        teams.add_member(db, team, "paper", pid, pid, 3, clock())
    people_tracks.add_subject_track(db, guild_id=1, channel_id=4, user_id=None, team_slug=team.slug, created_by=3,
                                    now=clock())
    db.close()
    fakes = ScholarlyFakes()
    today = clock().date()
    for k, lag in enumerate((3, 1, 0)):
        fakes.new_works[(today - timedelta(days=lag)).isoformat()] = flood(n, list(works.values()), first=k * n)
    start = counts(seeded_path)
    size = seeded_path.stat().st_size
    lines: list[str] = []
    with serve_scholarly(fakes):
        for r in range(3):
            began = time.perf_counter()
            report = openalex_round(seeded_path, fakes, clock)
            seconds = time.perf_counter() - began
            now = counts(seeded_path)
            db_bytes = sum(p.stat().st_size for p in seeded_path.parent.glob(seeded_path.name + "*"))
            lines.append(f"round {r + 1} in {seconds:.1f} s, added since the first {added(now, start)}, database "
                         f"{size / 1e6:.2f} MB -> {db_bytes / 1e6:.2f} MB; {report.trouble_lines()}")
            clock.advance(hours=1)
    db = open_db(seeded_path)
    try:
        began = time.perf_counter()
        alerts = people_tracks.pending_subject_alerts(db)
        lines.append(f"the team's alert composed in {time.perf_counter() - began:.2f} s ({len(alerts)} alerts)")
    finally:
        db.close()
    with capsys.disabled():
        print(f"\nFLOOD_WORKS={n} (x3 days, 99 papers):", *lines, sep="\n  ")
    total = added(counts(seeded_path), start)
    assert total["said"] <= 10_000 and total["citations"] <= 10_000 and total["stubs"] <= 4_000
