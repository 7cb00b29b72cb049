"""Semantic Scholar's queue (hardening round 4, item 4; docs/enrichment.md, "Whose papers Semantic
Scholar asks first"): the tracked papers are never asked after any team's papers, and one
server's team cannot take the round from another's (the servers' team papers in turn, at most
TEAM_PER_SERVER of one server a round). Before, a paper never asked sorted first whoever's it
was: a foreign team of 98 papers put the tracked paper at request 197 of 198, 197 s into the
round (at Semantic Scholar's 1 request a second), and about 450 team papers pushed the tracked
papers out of a round (its 15 minutes). Real SQLite, the real round against the loopback fake,
on a virtual clock."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path

import pytest

from mapwatch.store.clock import iso
from mapwatch.store.database.db import open_db
from mapwatch.store.database.rows import one_column
from mapwatch.store.questions.teams import team_paper_ids, team_papers_by_server
from mapwatch.store.scholarly import saved
from mapwatch.store.scholarly.enrich import EnrichSettings, RoundReport, enrich_round
from mapwatch.store.scholarly.polite import POLITENESS
from mapwatch.store.subscriptions import teams
from mapwatch.store.subscriptions.tracking import tracked_paper_ids
from tests.conftest import FakeClock
from tests.scholarly_fakes import ScholarlyFakes, from_seeds, serve_scholarly
from tests.system.test_enrich_faults import VirtualTime

SURVEY = "2412.10400"


def make_team(path: Path, guild: int, name: str, papers: Sequence[str], clock: FakeClock, *,
              author: str | None = None) -> None:
    """A server's team of `papers`, or of one person, `author`, who wrote them (an OpenAlex id)."""
    db = open_db(path)
    try:
        team, _ = teams.ensure_team(db, guild, name, 3, clock())
        if author is not None:
            with db.atomic():
                db.conn.execute("INSERT INTO people (name, author_id) VALUES ('A. Prolific', ?)", [author])
                db.conn.executemany("INSERT INTO paper_people (paper_id, position, person, from_openalex)"
                                    " SELECT ?, 1, id, 1 FROM people WHERE author_id = ?",
                                    [(p, author) for p in papers])
            teams.add_member(db, team, "author", author, "A. Prolific", 3, clock())
        else:
            for pid in papers:
                teams.add_member(db, team, "paper", pid, pid, 3, clock())
    finally:
        db.close()


def column(path: Path, sql: str) -> list[str]:
    """The one column `sql` reads from the database at `path`."""
    db = open_db(path)
    try:
        return one_column(db, sql)
    finally:
        db.close()


def every_paper(path: Path) -> list[str]:
    return column(path, "SELECT id FROM papers ORDER BY id")


def s2_round(path: Path, fakes: ScholarlyFakes, clock: FakeClock, vt: VirtualTime) -> RoundReport:
    """A round of Semantic Scholar alone at its real rate (1 request a second, on `vt`), asked for citers."""
    settings = EnrichSettings(("s2",), fakes.apis(), politeness={"s2": POLITENESS["s2"]}, source_citations="include")
    return asyncio.run(enrich_round(path, settings, tracked=tracked_paper_ids, team=team_papers_by_server,
                                    clock=clock, monotonic=vt, sleep=vt.sleep, seconds=15 * 60))


def asked_in_order(fakes: ScholarlyFakes, start: float) -> list[tuple[str, float]]:
    """(paper, seconds into the round) of each Semantic Scholar request, in order."""
    return [(r.path.split("arXiv:", 1)[1].split("/", 1)[0], r.at - start) for r in fakes.seen("s2")]


def round_after_a_team(path: Path, clock: FakeClock,
                       team: Callable[[], None]) -> tuple[RoundReport, list[tuple[str, float]]]:
    """A round (the survey's citers asked: its baseline), then `team()` makes another server's
    team, and the round an hour later: its report, and (paper, seconds into it) of each request."""
    db = open_db(path)
    data = from_seeds(db)
    db.close()
    vt = VirtualTime()
    with serve_scholarly(data) as fakes:
        fakes.clock = vt
        s2_round(path, fakes, clock, vt)
        team()
        clock.advance(hours=1)
        fakes.requests.clear()
        start = vt()
        report = s2_round(path, fakes, clock, vt)
    return report, asked_in_order(fakes, start)


def test_a_tracked_paper_is_asked_before_a_foreign_teams_papers(tracked: Path, clock: FakeClock) -> None:
    # Another server's team holds every paper of the map (the survey among them).
    report, order = round_after_a_team(tracked, clock,
                                       lambda: make_team(tracked, 2, "Everyone", every_paper(tracked), clock))
    # The tracked survey first, at 0 s: its count (unchanged: its citers are not read again); then the
    # 98 team papers, two requests each (Semantic Scholar does not know them).
    assert len(order) == 1 + 98 * 2 and report.sources["s2"].asked == 99
    assert order[0] == (SURVEY, 0.0) and SURVEY not in {pid for pid, _ in order[1:]}
    assert report.sources["s2"].unchanged == 1


def add_papers(path: Path, n: int, clock: FakeClock) -> list[str]:
    """`n` more papers in the map (stubs, as a source adds them)."""
    ids = [f"2601.{k:05d}" for k in range(1, n + 1)]
    db = open_db(path)
    try:
        with db.atomic():
            db.conn.executemany("INSERT INTO papers (id, title, arxiv_url, has_page, first_seen, updated)"
                                " VALUES (?, ?, ?, 0, ?, ?)", [(p, p, f"https://arxiv.org/abs/{p}", iso(clock()),
                                                               iso(clock())) for p in ids])
    finally:
        db.close()
    return ids


def test_a_team_of_500_papers_leaves_the_tracked_paper_in_the_round(tracked: Path, clock: FakeClock) -> None:
    """A team of one person with 500 papers Semantic Scholar does not know: 1,000 requests, more
    than a round's 15 minutes hold (900 at 1 a second). Before, the tracked survey was left out of
    the round; now it is asked first, and the team's papers at most TEAM_PER_SERVER a round."""
    report, order = round_after_a_team(
        tracked, clock, lambda: make_team(tracked, 2, "Many", add_papers(tracked, 500, clock), clock,
                                          author="A5999999999"))
    assert order[0] == (SURVEY, 0.0)
    # At most TEAM_PER_SERVER of the team a round (the rest in the next rounds): 201 requests, 200 s.
    assert report.sources["s2"].asked == 1 + saved.TEAM_PER_SERVER == 101 and not report.sources["s2"].out_of_time
    assert len(order) == 201 and order[-1][1] == 200.0


def test_tracked_papers_come_first_however_many_team_papers(tracked: Path, clock: FakeClock) -> None:
    """The queue itself: 98 team papers never asked, and the tracked survey asked an hour ago."""
    db = open_db(tracked)
    try:
        saved.save_status(db, [SURVEY], "s2", "ok", clock())
        hour_ago = iso(clock() - timedelta(hours=1))
        db.conn.execute("INSERT INTO discovery_asked (paper_id, source, first_asked, last_asked)"
                        " VALUES (?, 's2', ?, ?)", [SURVEY, hour_ago, hour_ago])
        others = [p for p in one_column(db, "SELECT id FROM papers ORDER BY id") if p != SURVEY]
        due = saved.due_citations(db, [SURVEY], clock(), 10_000, {2: others})
    finally:
        db.close()
    assert due[0] == SURVEY and sorted(due[1:]) == others


def test_one_servers_team_does_not_starve_anothers(tracked: Path, clock: FakeClock,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Server 2's team holds 97 papers, server 3's one paper (the newest id, which sorted last): the
    servers take turns, so server 3's paper is the second team paper asked; with a cap of 10 team
    papers a server a round, server 2 has 10 asked a round, the longest unasked first, and every
    paper of its team is asked within 10 rounds."""
    papers = [p for p in every_paper(tracked) if p != SURVEY]
    last = max(papers)
    make_team(tracked, 2, "Big", [p for p in papers if p != last], clock)
    make_team(tracked, 3, "Small", [last], clock)
    db = open_db(tracked)
    try:
        by_server = team_papers_by_server(db)
        assert by_server == {2: sorted(p for p in papers if p != last), 3: [last]}
        assert team_paper_ids(db) == sorted(papers)
        due = saved.due_citations(db, [SURVEY], clock(), 10_000, by_server)
        assert due[:3] == [SURVEY, min(papers), last]  # tracked (never asked), then server 2, server 3 in turn
        assert len(due) == 1 + len(papers)
        monkeypatch.setattr(saved, "TEAM_PER_SERVER", 10)
        rounds = []
        for _ in range(10):
            due = saved.due_citations(db, [SURVEY], clock(), 10_000, by_server)
            rounds.append(due)
            db.conn.executemany(
                "INSERT INTO discovery_asked (paper_id, source, first_asked, last_asked) VALUES (?, 's2', ?, ?)"
                " ON CONFLICT (paper_id, source) DO UPDATE SET last_asked = excluded.last_asked",
                [(p, iso(clock()), iso(clock())) for p in due])
            clock.advance(hours=1)
    finally:
        db.close()
    assert rounds[0][:3] == [SURVEY, min(papers), last] and len(rounds[0]) == 1 + 10 + 1
    assert all(len(r) == 1 + 10 for r in rounds[1:9])  # the survey every round, 10 of server 2
    assert {p for r in rounds for p in r} == {SURVEY, *papers}  # all 97 within 10 rounds
    assert all(r[0] == SURVEY for r in rounds)
