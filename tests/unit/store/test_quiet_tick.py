"""A quiet tick (nothing changed) takes at most QUIET_SHARE of its budget in re-checks
(store.sources.crawl_queue); a change seen in the tick lets the rest go on."""

from __future__ import annotations

from mapwatch.store.sources.crawl_queue import (
    DIRECTION,
    DUE,
    QUIET_LIMIT,
    QUIET_SHARE,
    RECHECK,
    TRACKED,
    UNSEEN,
    CrawlQueue,
)
from mapwatch.store.sources.crawl_schedule import RECHECK_SHARE


def _queue(budget: int, rechecks: int, first_checks: int = 0) -> CrawlQueue:
    q = CrawlQueue(budget)
    for i in range(first_checks):
        q.push(DUE, "page", f"first-{i}")
    for i in range(rechecks):
        q.push(DUE, "page", f"re-{i}", (RECHECK, 0))
    return q


def _drain(q: CrawlQueue) -> list[str]:
    out = []
    while (item := q.take()) is not None:
        out.append(item[1])
    return out


def test_a_quiet_tick_takes_its_share_of_re_checks_and_no_more() -> None:
    assert QUIET_SHARE == RECHECK_SHARE == 0.08
    q = _queue(3_600, 2_000)
    taken = _drain(q)
    assert len(taken) == 288  # 8% of 3,600
    assert q.pages_left() == 2_000 - 288  # left for the next tick
    assert len(_drain(_queue(10, 50))) == 1  # at least one


def test_a_change_lets_the_re_checks_go_on() -> None:
    q = _queue(3_600, 2_000)
    assert len(_drain(q)) == 288
    q.stir()  # a page read in a new version, a new paper found
    assert len(_drain(q)) == 2_000 - 288


def test_first_checks_and_unseen_papers_are_not_held() -> None:
    q = _queue(1_000, 500, first_checks=100)
    for i in range(30):
        q.keep_unseen(f"unseen-{i}")
    taken = _drain(q)
    assert [t for t in taken if t.startswith("first-")] == [f"first-{i}" for i in range(100)]
    assert len([t for t in taken if t.startswith("re-")]) == 80
    assert len([t for t in taken if t.startswith("unseen-")]) == 30  # read although the re-checks wait
    assert q.next_class() is None and q.pages_left() == 500 - 80 and UNSEEN < DUE


def test_a_quiet_tick_stops_its_re_checks_at_a_tenth_of_the_budget_in_all() -> None:
    """robots.txt and the sitemaps (before the queue), 20 tracked papers and 60 direction pages
    come first: the re-checks take what is left of 10% of the budget (279 of 3,600, not 288)."""
    assert QUIET_LIMIT == 0.10
    q = _queue(3_600, 2_000)
    for i in range(20):
        q.push(TRACKED, "page", f"tracked-{i}")
    for i in range(60):
        q.push(DIRECTION, "direction", f"/d{i}/")
    q.spend_before(1)  # robots.txt
    taken = _drain(q)
    assert len(taken) == 360 - 1 and len([t for t in taken if t.startswith("re-")]) == 360 - 1 - 20 - 60
    q.stir()
    assert len(_drain(q)) == 2_000 - 279  # something new: the rest go on
