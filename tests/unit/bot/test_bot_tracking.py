"""Tracks and alerts: cursor from creation, exactly once, isolation, disabling."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.subscriptions import deliveries, tracking
from tests.bot_helpers import CHANNEL, GUILD, USER


def _older_then_track(db, clock, make_older_seeds, n: int = 3):
    ingest_paths(db, [make_older_seeds(n)], clock=clock)
    track, new = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400",
                                    created_by=USER, now=clock())
    assert new
    return track


def test_only_events_after_tracking_are_alerted(db, clock, make_older_seeds) -> None:
    track = _older_then_track(db, clock, make_older_seeds)
    assert track.last_event_id == db.conn.execute("SELECT max(id) FROM events").fetchone()[0]
    assert tracking.pending_alerts(db) == []
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    alerts = tracking.pending_alerts(db)
    assert len(alerts) == 1
    a = alerts[0]
    assert len(a.new_citers) == 3 and a.more == 0
    assert (a.old_count, a.new_count, a.unlisted) == (68, 71, 0)
    # Not delivered (Discord failed): still pending next tick.
    assert len(tracking.pending_alerts(db)) == 1
    deliveries.mark_delivered(db, deliveries.TRACKS, a.track.id, a.upto_event_id, clock())
    assert tracking.pending_alerts(db) == []
    # A restart (new connection) finds nothing either.
    from mapwatch.store.database.db import open_db
    assert tracking.pending_alerts(open_db(db.conn.execute("PRAGMA database_list").fetchone()[2])) == []
    t = tracking.list_tracks(db, guild_id=GUILD, user_id=None)[0]
    assert t.last_alert_at is not None


def test_more_than_limit_says_how_many_more(db, clock, make_older_seeds) -> None:
    _older_then_track(db, clock, make_older_seeds, n=8)
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    a = tracking.pending_alerts(db, limit=5)[0]
    assert len(a.new_citers) == 5 and a.more == 3


def test_tracking_twice_and_untracking(db, clock, seeded) -> None:
    _, new = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400",
                                created_by=USER, now=clock())
    _, again = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=9, paper_id="2412.10400",
                                  created_by=9, now=clock())
    assert new and not again
    assert not tracking.remove_track(db, guild_id=999, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400")
    assert tracking.remove_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400")
    assert not tracking.remove_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400")


def test_servers_and_dms_are_isolated(db, clock, seeded) -> None:
    tracking.add_track(db, guild_id=1, channel_id=10, user_id=5, paper_id="2412.10400", created_by=5, now=clock())
    tracking.add_track(db, guild_id=2, channel_id=20, user_id=5, paper_id="2412.10400", created_by=5, now=clock())
    tracking.add_track(db, guild_id=None, channel_id=30, user_id=5, paper_id="2507.04136", created_by=5, now=clock())
    tracking.add_track(db, guild_id=None, channel_id=40, user_id=6, paper_id="2507.04136", created_by=6, now=clock())
    assert [t.channel_id for t in tracking.list_tracks(db, guild_id=1, user_id=5)] == [10]
    assert [t.channel_id for t in tracking.list_tracks(db, guild_id=2, user_id=5)] == [20]
    assert [t.channel_id for t in tracking.list_tracks(db, guild_id=None, user_id=5)] == [30]
    assert [t.user_id for t in tracking.list_tracks(db, guild_id=None, user_id=6)] == [6]


def test_disabled_track_is_skipped_and_says_why(db, clock, make_older_seeds) -> None:
    track = _older_then_track(db, clock, make_older_seeds)
    deliveries.disable(db, deliveries.TRACKS, track.id, "the channel is gone (404 from Discord)")
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    assert tracking.pending_alerts(db) == []
    assert "404" in (tracking.list_tracks(db, guild_id=GUILD, user_id=None)[0].disabled_reason or "")
    # Tracking it again re-enables it from now on.
    _, new = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400",
                                created_by=USER, now=clock())
    assert new and tracking.pending_alerts(db) == []


def test_tracked_paper_ids_for_refresh_priority(db, clock, seeded) -> None:
    tracking.add_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2507.04136", created_by=3, now=clock())
    t, _ = tracking.add_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2412.10400", created_by=3,
                              now=clock())
    tracking.add_track(db, guild_id=2, channel_id=5, user_id=3, paper_id="2507.04136", created_by=3, now=clock())
    assert tracking.tracked_paper_ids(db) == ["2412.10400", "2507.04136"]
    deliveries.disable(db, deliveries.TRACKS, t.id, "gone")
    assert tracking.tracked_paper_ids(db) == ["2507.04136"]


def test_an_alert_being_sent_is_resent_unchanged_until_delivered(db, clock, make_older_seeds) -> None:
    ingest_paths(db, [make_older_seeds(6)], clock=clock)
    track, _ = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400",
                                  created_by=USER, now=clock())
    clock.advance(days=1)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    first = tracking.pending_alerts(db)[0]
    # then: no answer, or a crash
    deliveries.mark_sending(db, deliveries.TRACKS, track.id, first.upto_event_id, clock())
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    again = tracking.pending_alerts(db)[0]
    # The same alert (same nonce: Discord drops the repeat); only the paper's row is today's,
    # and it knows when it was first tried (older than Discord's nonce memory: looked up first).
    assert replace(again, paper=first.paper, sending_since=None) == first
    assert again.sending_since == (clock.now - timedelta(days=1)).isoformat(timespec="seconds")
    deliveries.mark_delivered(db, deliveries.TRACKS, track.id, again.upto_event_id, clock())
    rest = tracking.pending_alerts(db)[0]
    assert len(rest.new_citers) == 3 and not {c.id for c in rest.new_citers} & {c.id for c in first.new_citers}
    deliveries.mark_sending(db, deliveries.TRACKS, track.id, rest.upto_event_id, clock())
    assert tracking.remove_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id="2412.10400")
    assert db.conn.execute("SELECT count(*) FROM bot_state WHERE key LIKE 'alert-sending:%'").fetchone() == (0,)
