"""The audits of believed sitemap `lastmod`s (store.sources.lastmods): a fixed number each tick,
1% of the budget, half at random and half the vouched pages checked longest ago, so every
vouched page is audited within a bound (docs/live-map.md, "Believed lastmods, verified")."""

from __future__ import annotations

import dataclasses
import math
import random
from datetime import UTC, datetime, timedelta

import pytest

from mapwatch.store.clock import iso
from mapwatch.store.pages.format import format_page
from mapwatch.store.sources.crawl_plan import CrawlPlan
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.lastmods import AUDIT_SHARE, Lastmods, audit_size
from mapwatch.store.sources.refresh import refresh
from tests import pagegen
from tests.conftest import FakeClock
from tests.mapsite import MapSite, serve_site

T0 = datetime(2026, 9, 15, 12, tzinfo=UTC)


def test_the_sample_is_one_percent_of_the_budget_at_least_one() -> None:
    assert AUDIT_SHARE == 0.01
    assert [audit_size(b) for b in (1, 50, 149, 150, 500, 3_600, 10_000)] == [1, 1, 1, 2, 5, 36, 100]


def _plan(n: int, now: datetime) -> tuple[CrawlPlan, dict[str, str | None]]:
    """`n` pages checked an hour before `now`, each vouched for by a lastmod three days old."""
    plan = CrawlPlan(now=now)
    sitemap: dict[str, str | None] = {}
    for i in range(n):
        pid = f"2601.{i:05d}"
        plan.checked[pid] = iso(now - timedelta(hours=1))
        sitemap[pid] = iso(now - timedelta(days=3))
    return plan, sitemap


@pytest.mark.parametrize(("n", "budget"), [(1_000, 3_600), (300, 500), (40, 100), (7, 3_600), (500, 150)])
def test_each_tick_audits_the_sample_and_every_vouched_page_within_the_bound(n: int, budget: int) -> None:
    """N vouched pages, budget B: audit_size(B) audits a tick (all N when fewer), and every page is
    audited within ceil(N / (size - size // 2)) ticks (the half that goes to the longest unchecked)."""
    size = min(audit_size(budget), n)
    bound = math.ceil(n / (size - size // 2))
    rng = random.Random(7)
    now = T0
    plan, sitemap = _plan(n, now)
    last_audit: dict[str, int] = {}
    gaps: list[int] = []
    for k in range(1, 3 * bound + 1):
        now += timedelta(hours=1)
        tick = dataclasses.replace(plan, now=now, vouched_same=set())
        picked = Lastmods(tick, sitemap, lambda pid: pid).audit(budget, rng)
        assert len(picked) == size == len(set(picked))
        for pid in picked:
            gaps.append(k - last_audit.get(pid, 0))
            last_audit[pid] = k
            plan.checked[pid] = iso(now)  # an audit is a check
        if k == bound:
            assert len(last_audit) == n, f"{n - len(last_audit)} vouched pages not audited in {bound} ticks"
    assert max(gaps) <= bound


def test_half_the_sample_is_drawn_at_random() -> None:
    """The random half differs from seed to seed; the longest-unchecked half does not (here: no ties)."""
    now = T0
    plan, sitemap = _plan(1_000, now)
    for i, pid in enumerate(sorted(plan.checked)):
        plan.checked[pid] = iso(now - timedelta(hours=2, minutes=i))  # all different: no ties
    draws = [set(Lastmods(dataclasses.replace(plan, vouched_same=set()), sitemap, lambda p: p)
                 .audit(3_600, random.Random(seed))) for seed in (1, 2)]
    oldest = set(sorted(plan.checked, key=plan.checked.__getitem__)[:18])
    assert all(oldest <= d and len(d) == 36 for d in draws)
    assert draws[0] - oldest != draws[1] - oldest


def test_a_quiet_tick_asks_exactly_the_sample(db) -> None:
    """Over HTTP: 30 pages vouched for, a budget of 300 (3 audits): each quiet tick requests 3
    pages, and every page is requested within ceil(30 / 2) = 15 ticks."""
    texts = {p.id: format_page(p) for p in pagegen.generate(30).v1}
    clock = FakeClock(T0)
    options = HttpOptions(concurrency=2, timeout=2, retries=1, backoff=0.01, budget=300,
                          audit_rng=random.Random(1))
    site = MapSite(pages=texts, lastmod={pid: iso(T0 - timedelta(days=3)) for pid in texts})
    with serve_site(site):
        refresh(db, site.base, clock=clock, options=options)
        seen: set[str] = set()
        for k in range(15):
            clock.advance(hours=1)
            site.requests.clear()
            report = refresh(db, site.base, clock=clock, options=options)
            asked = [p for p in site.paths_requested() if p.startswith("/paper/")]
            assert report.crawl is not None and report.crawl.audited == 3
            if k:  # (the first tick after the first read also re-reads its direction pages)
                assert len(asked) == 3, asked
            seen.update(asked)
        assert len(seen) == 30
