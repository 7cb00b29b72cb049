"""The alert hold (store/subscriptions/alert_hold.py): while a tick describes its new citers,
every pending-alert query stops at the newest event before the tick; released or expired, the
alerts flow."""

from __future__ import annotations

from datetime import timedelta

from mapwatch.store.clock import utc_now
from mapwatch.store.subscriptions import alert_hold, follows, tracking
from mapwatch.store.subscriptions.alert_hold import deliverable_upto, hold_alerts, release_alerts
from tests.conftest import seed_page
from tests.follow_helpers import SURVEY, grow, start_older, store_pages

HOLD = 4 * 3600.0  # seconds: longer than the clock moves while the pages are stored (an hour each)


def _grown(db, clock) -> int:
    """The survey as it is now, and two more citers; returns the newest event before them."""
    before = alert_hold.newest_event(db)
    store_pages(db, [grow(seed_page(SURVEY), [("2611.00001", "One", 2026), ("2611.00002", "Two", 2026)])], clock)
    assert alert_hold.newest_event(db) > before
    return before


def test_a_hold_stops_alerts_at_the_newest_event_before_it(db, clock) -> None:
    start_older(db, clock)
    tracking.add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=SURVEY, created_by=3, now=clock())
    after = hold_alerts(db, utc_now(), HOLD)  # the pending queries read the time now, as the tick holds
    assert _grown(db, clock) == after
    assert deliverable_upto(db) == after
    assert tracking.pending_alerts(db) == []  # the poll sees nothing while the tick describes the citers
    release_alerts(db)
    [alert] = tracking.pending_alerts(db)
    new = {r[0] for r in db.conn.execute("SELECT citing_id FROM events WHERE id > ? AND paper_id = ?"
                                         " AND kind = 'citation'", [after, SURVEY])}
    assert {c.id for c in alert.new_citers} == new and {"2611.00001", "2611.00002"} <= new
    assert alert.upto_event_id == alert_hold.newest_event(db)


def test_an_expired_hold_holds_nothing(db, clock) -> None:
    start_older(db, clock)
    after = hold_alerts(db, clock(), HOLD)
    _grown(db, clock)
    clock.advance(seconds=HOLD)  # a tick that crashed without releasing it
    assert deliverable_upto(db, clock) == alert_hold.newest_event(db) > after


def test_a_hold_still_on_keeps_its_start(db, clock) -> None:
    start_older(db, clock)
    first = hold_alerts(db, clock(), HOLD)
    _grown(db, clock)
    assert hold_alerts(db, clock() + timedelta(seconds=1), HOLD) == first  # an overlapping tick: no alert slips out


def test_follows_wait_for_the_hold_too(db, clock) -> None:
    start_older(db, clock)
    slug = db.conn.execute("SELECT direction_slug FROM placements WHERE paper_id = ?", [SURVEY]).fetchone()[0]
    follows.add_follow(db, guild_id=1, channel_id=2, user_id=None, direction_slug=slug, created_by=3, now=clock())
    hold_alerts(db, utc_now(), HOLD)
    _grown(db, clock)
    assert [n for n in follows.pending_follow_alerts(db) if n.total] == []
    release_alerts(db)
    [news] = follows.pending_follow_alerts(db)
    assert {"2611.00001", "2611.00002"} <= {c.id for c in news.citers}
