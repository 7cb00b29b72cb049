"""The alert hold: while a tick of `mapwatch run` asks the open sources about its new citers
(store/scholarly/before_alerts.py), the alerts about them wait, so that they go out naming
their authors (docs/enrichment.md, "Before the alerts").

The hold is one row of `bot_state`: the newest event before the tick (`after`) and a time
(`until`) past which it no longer holds, so a crash mid-tick delays nothing for long. Every
pending-alert query (tracks, follows, people and teams, webhooks, digests) reads its newest
deliverable event from `deliverable_upto`: the newest event, or `after` while a hold is on.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from mapwatch.store.clock import Clock, iso, parse_iso, utc_now
from mapwatch.store.database.rows import scalar
from mapwatch.store.subscriptions.bot_state import delete_state, get_state, set_state

if TYPE_CHECKING:
    from sqlite_utils import Database

HOLD_KEY = "alerts:hold"


def newest_event(db: Database) -> int:
    return int(scalar(db, "SELECT coalesce(max(id), 0) FROM events"))


def hold_alerts(db: Database, now: datetime, seconds: float) -> int:
    """Hold the alerts about events after the newest one now, for at most `seconds`; returns
    that event id. A hold still on (an earlier tick that did not release it) keeps its `after`."""
    held = _hold(db)
    after = held[0] if held is not None and now < held[1] else newest_event(db)
    set_state(db, HOLD_KEY, json.dumps({"after": after, "until": iso(now + timedelta(seconds=seconds))}), now)
    return after


def release_alerts(db: Database) -> None:
    delete_state(db, HOLD_KEY)


def deliverable_upto(db: Database, clock: Clock = utc_now) -> int:
    """The newest event an alert may be about now: the newest event, or the hold's `after`
    while a hold is on."""
    newest = newest_event(db)
    held = _hold(db)
    return min(newest, held[0]) if held is not None and clock() < held[1] else newest


def _hold(db: Database) -> tuple[int, datetime] | None:
    raw = get_state(db, HOLD_KEY)
    if raw is None:
        return None
    try:
        value = json.loads(raw)
        return int(value["after"]), parse_iso(str(value["until"]))
    except (ValueError, KeyError, TypeError):  # not ours: no hold
        return None
