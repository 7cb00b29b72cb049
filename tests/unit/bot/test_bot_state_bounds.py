"""`bot_state` stays bounded (issue 12, item 11): "sending" markers go when their track or
follow goes, and page-button state is pruned by age and count."""

from __future__ import annotations

from datetime import datetime, timedelta

from mapwatch.bot.interactions import page_args, page_key
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.subscriptions import bot_state, deliveries, follows, tracking
from tests.follow_helpers import RL


def keys(db, prefix: str) -> list[str]:
    return [r[0] for r in db.conn.execute("SELECT key FROM bot_state WHERE key LIKE ? ORDER BY key", (prefix + "%",))]


def test_unfollow_and_untrack_remove_their_sending_markers(db, clock) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    f, _ = follows.add_follow(db, guild_id=1, channel_id=2, user_id=3, direction_slug=RL, created_by=3, now=clock())
    t, _ = tracking.add_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2412.10400", created_by=3,
                              now=clock())
    deliveries.mark_sending(db, deliveries.FOLLOWS, f.id, 10**6, clock())
    deliveries.mark_sending(db, deliveries.TRACKS, t.id, 10**6, clock())
    assert follows.remove_follow(db, guild_id=1, channel_id=2, user_id=3, direction_slug=RL)
    assert keys(db, deliveries.FOLLOWS.marker) == []
    assert tracking.remove_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2412.10400")
    assert keys(db, deliveries.TRACKS.marker) == []


def test_prune_drops_what_is_no_longer_needed_and_keeps_the_rest(db, clock) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    live, _ = follows.add_follow(db, guild_id=1, channel_id=2, user_id=3, direction_slug=RL, created_by=3,
                                 now=clock())
    done, _ = tracking.add_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2412.10400", created_by=3,
                                 now=clock())
    deliveries.mark_sending(db, deliveries.FOLLOWS, live.id, 10**6, clock())  # still to be settled: kept
    # the cursor is already there: dropped
    deliveries.mark_sending(db, deliveries.TRACKS, done.id, done.last_event_id, clock())
    # a track that no longer exists (left by an old version)
    deliveries.mark_sending(db, deliveries.TRACKS, 999, 10**6, clock())
    bot_state.count_refusal(db, "t1e1", clock())  # stale after 30 days
    old = [page_key(db, {"q": "x" * 80, "n": i}, clock()) for i in range(5)]
    clock.advance(days=bot_state.PAGE_STATE_DAYS + 1)
    new = [page_key(db, {"q": "y" * 80, "n": i}, clock()) for i in range(5)]
    assert all(k.startswith("@") for k in old + new)  # long: kept in bot_state
    removed = bot_state.prune_state(db, clock(), page_max=3)
    assert removed == 5 + 2 + 2 + 1
    assert keys(db, deliveries.FOLLOWS.marker) == [f"{deliveries.FOLLOWS.marker}{live.id}"]
    assert keys(db, deliveries.TRACKS.marker) == [] and keys(db, bot_state.REFUSED) == []
    assert [page_args(db, k) for k in old] == [None] * 5  # such buttons say the list expired
    assert sum(page_args(db, k) is not None for k in new) == 3  # at most page_max kept
    assert len(keys(db, bot_state.PAGE_STATE)) == 3
    clock.advance(days=1)
    assert bot_state.prune_state(db, clock(), page_max=3) == 0  # nothing more to drop


def test_prune_bounds_page_state_by_age_at_default_settings(db, clock) -> None:
    for i in range(50):
        page_key(db, {"q": "z" * 80, "n": i}, clock())
        clock.advance(days=1)
    bot_state.prune_state(db, clock())
    ages = [clock() - datetime.fromisoformat(r[0])
            for r in db.conn.execute("SELECT updated FROM bot_state WHERE key LIKE 'page:%'")]
    assert len(ages) == bot_state.PAGE_STATE_DAYS and max(ages) <= timedelta(days=bot_state.PAGE_STATE_DAYS)
