"""Tracks and follows are one subscription model (issue 22, item 2): the same functions mark a
delivery as being sent, delivered, failed or disabled on either table, with the same outcome,
and keep the documented columns and `bot_state` keys of each."""

from __future__ import annotations

import pytest

from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.subscriptions import deliveries, follows, tracking
from mapwatch.store.subscriptions.deliveries import FOLLOWS, KINDS, TRACKS
from tests.follow_helpers import RL


def _add(db, kind: deliveries.Kind, clock) -> int:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    if kind is TRACKS:
        t, _ = tracking.add_track(db, guild_id=1, channel_id=2, user_id=3, paper_id="2412.10400", created_by=3,
                                  now=clock())
        return t.id
    f, _ = follows.add_follow(db, guild_id=1, channel_id=2, user_id=3, direction_slug=RL, created_by=3, now=clock())
    return f.id


def _row(db, kind: deliveries.Kind, item_id: int) -> tuple:
    return db.conn.execute(f"SELECT last_event_id, {kind.delivered_at}, last_failure, disabled_reason"
                           f" FROM {kind.table} WHERE id = ?", (item_id,)).fetchone()


def test_the_kinds_keep_their_tables_columns_and_marker_keys() -> None:
    assert (TRACKS.table, TRACKS.marker, TRACKS.delivered_at) == ("tracks", "alert-sending:", "last_alert_at")
    assert (FOLLOWS.table, FOLLOWS.marker, FOLLOWS.delivered_at) == ("follows", "follow-sending:", "last_delivery_at")


@pytest.mark.parametrize("kind", KINDS, ids=lambda k: k.table)
def test_one_set_of_functions_settles_either_kind(db, clock, kind) -> None:
    item = _add(db, kind, clock)
    deliveries.mark_sending(db, kind, item, 10**6, clock())
    assert {k: v[0] for k, v in deliveries.markers(db, kind).items()} == {item: 10**6}
    start = _row(db, kind, item)[0]
    deliveries.mark_delivered(db, kind, item, start + 1, clock(), sent=False)  # a quiet skip: no delivery time
    assert _row(db, kind, item)[:2] == (start + 1, None)
    assert deliveries.markers(db, kind) == {}
    deliveries.mark_delivered(db, kind, item, 10**6, clock())
    assert _row(db, kind, item)[0] == 10**6 and _row(db, kind, item)[1] is not None
    deliveries.mark_delivered(db, kind, item, 3, clock())  # never backwards
    assert _row(db, kind, item)[0] == 10**6
    deliveries.mark_sending(db, kind, item, 10**6 + 5, clock())
    deliveries.mark_failed(db, kind, item, 10**6 + 5, "refused: 50035", clock())
    cursor, _at, failure, disabled = _row(db, kind, item)
    assert cursor == 10**6 + 5 and failure.endswith(": refused: 50035") and disabled is None
    assert deliveries.markers(db, kind) == {}
    deliveries.mark_sending(db, kind, item, 10**6 + 9, clock())
    deliveries.disable(db, kind, item, "the channel is gone")
    assert _row(db, kind, item)[3] == "the channel is gone" and deliveries.markers(db, kind) == {}
