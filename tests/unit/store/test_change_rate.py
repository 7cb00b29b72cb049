"""Cho and Garcia-Molina's change-rate estimators (store.sources.change_rate), against values
computed by hand."""

from __future__ import annotations

import math

import pytest

from mapwatch.store.sources.change_rate import (
    DAY,
    History,
    estimate,
    rate_from_changes,
    rate_from_dated_changes,
)

HOUR = 3600.0


def test_the_bias_corrected_estimator_of_an_incomplete_history() -> None:
    # -log((X̄ + 0.5) / (n + 0.5)) / I, I in days
    assert rate_from_changes(10, 8, DAY) == pytest.approx(math.log(21 / 17)) == pytest.approx(0.2113090937)
    assert rate_from_changes(4, 0, 2 * DAY) == pytest.approx(math.log(9) / 2) == pytest.approx(1.0986122887)
    assert rate_from_changes(4, 4, DAY) == 0.0  # never changed
    assert rate_from_changes(1, 0, 6 * HOUR) == pytest.approx(math.log(3) * 4)  # finite: one change in one check
    with pytest.raises(ValueError):
        rate_from_changes(0, 0, DAY)


def test_the_estimator_with_known_last_modified_dates() -> None:
    # ((X - 1) - X / (n log(1 - X/n))) / T, T in days
    assert rate_from_dated_changes(10, 2, 20 * DAY) == pytest.approx((1 + 2 / (10 * math.log(5 / 4))) / 20)
    assert rate_from_dated_changes(10, 2, 20 * DAY) == pytest.approx(0.0948142012)
    assert rate_from_dated_changes(3, 3, DAY / 2) == pytest.approx(4.0)  # every check a change: (n - 1) / T
    assert rate_from_dated_changes(5, 0, 5 * DAY) == 0.0
    with pytest.raises(ValueError):
        rate_from_dated_changes(3, 4, DAY)


def test_a_history_adds_up_its_checks_and_picks_its_estimator() -> None:
    assert estimate(History()) is None
    undated = History().after(6 * HOUR, False).after(6 * HOUR, True)
    assert undated == History(2, 1, 12 * HOUR, 0, 6 * HOUR)
    assert estimate(undated) == pytest.approx(4 * math.log(5 / 3)) == pytest.approx(2.0433024951)  # I = 1/4 day
    # The second check's change dated 6 hours before it: known unchanged 1 day + 6 hours.
    dated = History().after(DAY, False).after(DAY, True, since_change_s=6 * HOUR)
    assert dated == History(2, 1, 2 * DAY, 1, 1.25 * DAY)
    assert estimate(dated) == pytest.approx(1 / (2 * math.log(2)) / 1.25) == pytest.approx(0.5770780164)
    # A date outside the interval (before the previous check) dates nothing.
    assert History().after(DAY, True, since_change_s=2 * DAY).dated_changes == 0
    # One check: the incomplete-history estimator, dated or not.
    one = History().after(DAY, True, since_change_s=HOUR)
    assert estimate(one) == pytest.approx(math.log(3))


def test_a_crawl_keeps_each_page_s_history_and_rate(db) -> None:
    """Over HTTP: a page read, re-checked unchanged 7 hours later, then changed and re-checked
    20 hours after that (its interval doubled to 12 hours): 2 checks, 1 unchanged, 27 hours,
    and the estimate from them."""
    import dataclasses
    from datetime import UTC, datetime

    from mapwatch.store.pages.format import format_page
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.sources.refresh import refresh
    from tests import pagegen
    from tests.conftest import FakeClock
    from tests.mapsite import MapSite, serve_site

    pages = pagegen.generate(3).v1
    texts = {p.id: format_page(p) for p in pages}
    clock = FakeClock(datetime(2026, 9, 15, 12, tzinfo=UTC))
    options = HttpOptions(concurrency=2, timeout=2, retries=1, backoff=0.01, budget=100)
    site = MapSite(pages=texts)  # (its sitemap: dates without a time, which vouch for nothing)
    first = pages[0]
    loc = None
    with serve_site(site):
        refresh(db, site.base, clock=clock, options=options)
        loc = f"{site.base}/paper/{first.id}/"
        assert db.conn.execute("SELECT checks, change_rate FROM sources WHERE location = ?", (loc,)).fetchone() \
            == (None, None)
        clock.advance(hours=7)
        refresh(db, site.base, clock=clock, options=options)
        site.swap({**texts, first.id: format_page(dataclasses.replace(first, cited_by=(first.cited_by or 0) + 1))})
        clock.advance(hours=20)
        refresh(db, site.base, clock=clock, options=options)
    row = db.conn.execute("SELECT checks, checks_unchanged, checked_s, dated_changes, unchanged_s, change_rate"
                          " FROM sources WHERE location = ?", (loc,)).fetchone()
    assert row[:5] == (2, 1, 27 * HOUR, 0, 7 * HOUR)
    assert row[5] == pytest.approx(-math.log(1.5 / 2.5) / (13.5 / 24), abs=1e-6)
