"""Semantic Scholar's backlog converges (hardening round 4, item 8; docs/enrichment.md, "Citations
the map does not name"). Its first answer about a paper is a baseline; a later answer naming
thousands more citers (its list grew at once) used to be fed in as news 2,000 a round
(MAX_NEW_PER_ANSWER), every round re-reading the whole list while any of it was held back, until
the day's bounds stopped it, and again the next day. Now one answer's news of a paper is at most
MAX_NEW_PER_ANSWER, the newest by arXiv id, and the rest of it is kept as baseline, absorbed at
once: the rounds after it add nothing and ask one request (the count). Real SQLite, the real
round against the loopback fake."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path

from mapwatch.store.ids import posted_key
from mapwatch.store.questions.teams import team_papers_by_server
from mapwatch.store.scholarly.budget import Rule, Rules
from mapwatch.store.scholarly.discovered import MAX_NEW_PER_ANSWER
from mapwatch.store.scholarly.enrich import EnrichSettings, RoundReport, enrich_round
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.subscriptions.tracking import tracked_paper_ids
from tests.conftest import FakeClock
from tests.scholarly_fakes import ScholarlyFakes, s2_citation, serve_scholarly
from tests.unit.store.test_s2_queue import column

SURVEY = "2412.10400"
FAST = {s: Politeness(0.0, timeout=10.0, max_retry_after=1.0) for s in POLITENESS}
FAR = Rule(10_000_000, 0)  # the bounds of a map of millions of pages


def citers(first: int, last: int) -> list[dict[str, object]]:
    return [s2_citation(f"2609.{k:05d}", [], [], False, f"Citer {k}", 2026) for k in range(first, last + 1)]


@dataclass
class Rounds:
    """Hourly rounds of Semantic Scholar: per round the events added, the source's rows added, and
    the requests made; the citers announced, in all."""

    events: list[int] = field(default_factory=list)
    said: list[int] = field(default_factory=list)
    requests: list[int] = field(default_factory=list)
    reports: list[RoundReport] = field(default_factory=list)


def counts(path: Path) -> tuple[int, int]:
    """The events, and the rows of what the sources said."""
    (events,) = column(path, "SELECT count(*) FROM events")
    (said,) = column(path, "SELECT count(*) FROM source_citations")
    return int(events), int(said)


def announced(path: Path) -> list[str]:
    return column(path, "SELECT citing_id FROM citations WHERE provenance = 's2' ORDER BY 1")


def hourly(path: Path, fakes: ScholarlyFakes, clock: FakeClock, n: int, rounds: Rounds, **kw: object) -> None:
    settings = EnrichSettings(("s2",), fakes.apis(), politeness=FAST, source_citations="include", **kw)
    for _ in range(n):
        clock.advance(hours=1)
        events, said = counts(path)
        fakes.requests.clear()
        rounds.reports.append(asyncio.run(enrich_round(path, settings, tracked=tracked_paper_ids,
                                                       team=team_papers_by_server, clock=clock)))
        after = counts(path)
        rounds.events.append(after[0] - events)
        rounds.said.append(after[1] - said)
        rounds.requests.append(len(fakes.seen("s2")))


def test_a_backlog_of_6000_citers_is_absorbed_within_two_rounds(tracked: Path, clock: FakeClock) -> None:
    """The survey's first answer names 10 citers (its baseline); then Semantic Scholar lists 5,990
    more. The round's bound (5,000 new citations on this 2-page map) cuts the first answer after
    it: the backlog is kept first, so what is left for the next round is news."""
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = citers(1, 10)
    r = Rounds()
    with serve_scholarly(fakes):
        hourly(tracked, fakes, clock, 1, r)
        fakes.s2[SURVEY] += citers(11, 6_000)
        hourly(tracked, fakes, clock, 6, r)
        clock.advance(days=1)  # the next day: nothing of it comes back
        hourly(tracked, fakes, clock, 2, r)
    assert r.said[0] == 10 and r.events[0] == 0  # the baseline
    assert r.said[1:3] == [5_000, 990] and sum(r.said) == 6_000
    assert r.events[1:3] == [1_010, 990] and r.events[3:] == [0] * 6  # 2,000 news in all, then nothing
    assert r.requests[1:3] == [7, 7] and r.requests[3:] == [1] * 6  # then its count only, every round
    assert announced(tracked) == [f"2609.{k:05d}" for k in range(4_001, 6_001)]  # the newest 2,000
    assert r.reports[1].sources["s2"].bounds and not r.reports[2].sources["s2"].bounds


def test_a_backlog_of_10000_is_absorbed_in_one_round_on_a_large_map(tracked: Path, clock: FakeClock) -> None:
    """With the bounds of a map of millions of pages (they never bind), the most Semantic Scholar
    lists of a paper (10,000 citers, 10 pages): before, 2,000 news a round for 5 rounds, each
    re-reading the 10 pages; now 2,000 in the round that names them, and the backlog absorbed."""
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = citers(1, 10)
    r = Rounds()
    far = Rules(FAR, FAR, FAR, FAR)
    with serve_scholarly(fakes):
        hourly(tracked, fakes, clock, 1, r, bounds=far)
        fakes.s2[SURVEY] += citers(11, 10_000)
        hourly(tracked, fakes, clock, 6, r, bounds=far)
        fakes.s2[SURVEY][:0] = citers(10_001, 10_003)  # three new citers (listed first): news, as ever
        hourly(tracked, fakes, clock, 1, r, bounds=far)
    assert r.said[1] == 9_990 and r.events[1] == MAX_NEW_PER_ANSWER == 2_000
    assert r.events[2:7] == [0] * 5 and r.said[2:7] == [0] * 5
    assert r.requests[1] == 11 and r.requests[2:7] == [1] * 5
    assert r.events[7] == 3 and r.reports[1].sources["s2"].discovered == 2_000
    assert announced(tracked)[:1] == ["2609.08001"] and len(announced(tracked)) == 2_003


def test_an_answer_past_its_most_news_absorbs_only_the_oldest(tracked: Path, clock: FakeClock) -> None:
    """1,500 new citers in an answer are all news; 2,500 in the next are 2,000 news (the newest)
    and 500 absorbed; 3 new ones in the next are news again, the same day."""
    fakes = ScholarlyFakes()
    fakes.s2[SURVEY] = citers(1, 10)
    r = Rounds()
    with serve_scholarly(fakes):
        hourly(tracked, fakes, clock, 1, r)
        for first, last in ((11, 1_510), (1_511, 4_010), (4_011, 4_013)):
            fakes.s2[SURVEY] += citers(first, last)
            hourly(tracked, fakes, clock, 1, r)
    assert r.events[1:] == [1_500, 2_000, 3] and r.said[1:] == [1_500, 2_500, 3]
    said = announced(tracked)
    assert "2609.02010" not in said and "2609.02011" in said and len(said) == 3_503
    assert r.reports[2].sources["s2"].discovered == 2_000


def test_ids_sort_by_when_arxiv_gave_them() -> None:
    ids = ["2609.00011", "hep-th/9901001", "0704.0001", "math.GT/0309136", "2412.10400", "1501.00001", "x"]
    assert sorted(ids, key=posted_key) == ["x", "hep-th/9901001", "math.GT/0309136", "0704.0001", "1501.00001",
                                           "2412.10400", "2609.00011"]
