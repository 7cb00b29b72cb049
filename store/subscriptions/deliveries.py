"""One subscription model for tracked papers (table `tracks`) and followed directions (table
`follows`): a place (a channel, or a user's DMs) with a cursor into the event log.

Both kinds are delivered the same way (docs/bot.md, "Alerts"): before posting, `mark_sending`
records which delivery is going out (a "sending" marker in `bot_state`, keyed by the kind's
prefix); once settled, the delivery is recorded `delivered` (Discord accepted it, or a quiet
skip), `failed` (refused for good: the failure is kept and the cursor moves past it) or the
subscription `disable`d (the channel is gone or forbids the bot). Each settling statement
clears the marker in the same transaction. The tables keep their own columns; a `Kind`
names what differs.
"""

from __future__ import annotations

from datetime import datetime

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.subscriptions.bot_state import clear_marker, drop_orphan_markers, mark_state, sending_markers

# Re-exported: callers name the kinds as deliveries.TRACKS / deliveries.FOLLOWS.
from mapwatch.store.subscriptions.kinds import FOLLOWS as FOLLOWS
from mapwatch.store.subscriptions.kinds import KINDS as KINDS
from mapwatch.store.subscriptions.kinds import TRACKS as TRACKS
from mapwatch.store.subscriptions.kinds import Kind as Kind


def markers(db: Database, kind: Kind) -> dict[int, tuple[int, str]]:
    """The kind's deliveries being posted: item id -> (upto event id, first tried at)."""
    return sending_markers(db, kind.marker)


def resend(being_sent: dict[int, tuple[int, str]], item_id: int, cursor: int) -> tuple[int, str] | None:
    """The delivery to send again, exactly as it was (upto, first tried at): one marked as
    being sent past the item's cursor (no answer from Discord, or a crash before the cursor
    moved). None: the next delivery is a new one."""
    upto, since = being_sent.get(item_id, (0, ""))
    return (upto, since) if upto > cursor else None


def mark_sending(db: Database, kind: Kind, item_id: int, upto_event_id: int, now: datetime) -> None:
    """Record, before posting, which delivery is being posted: until it is settled, the
    item's next delivery is this same one (resent with the same nonce)."""
    mark_state(db, f"{kind.marker}{item_id}", str(upto_event_id), now)


def mark_delivered(db: Database, kind: Kind, item_id: int, upto_event_id: int, now: datetime, *,
                   sent: bool = True) -> None:
    """Record a delivery Discord accepted (sent) or a quiet skip (not sent): advance the
    cursor, never backwards; the last-delivery time moves only when a message went out."""
    stamp = f", {kind.delivered_at} = ?" if sent else ""
    params = (upto_event_id, iso(now), item_id) if sent else (upto_event_id, item_id)
    with db.atomic():
        db.conn.execute(f"UPDATE {kind.table} SET last_event_id = max(last_event_id, ?){stamp} WHERE id = ?",
                        params)
        clear_marker(db, kind.marker, item_id)


def mark_failed(db: Database, kind: Kind, item_id: int, upto_event_id: int, failure: str, now: datetime) -> None:
    """Discord refused this delivery for good: record why (shown by /tracked) and move the
    cursor past it, so later events are delivered."""
    with db.atomic():
        db.conn.execute(f"UPDATE {kind.table} SET last_event_id = max(last_event_id, ?), last_failure = ?"
                        " WHERE id = ?", (upto_event_id, f"{iso(now)}: {failure}"[:400], item_id))
        clear_marker(db, kind.marker, item_id)


def disable(db: Database, kind: Kind, item_id: int, reason: str) -> None:
    """The channel is gone or forbids the bot: stop delivering there, and say why in /tracked."""
    with db.atomic():
        db.conn.execute(f"UPDATE {kind.table} SET disabled_reason = ? WHERE id = ?", (reason[:300], item_id))
        clear_marker(db, kind.marker, item_id)


def remove(db: Database, kind: Kind, subject: str, *, guild_id: int | None, channel_id: int,
           dm_user: int | None) -> bool:
    """Delete a subscription to `subject` from one channel or one user's DMs, with the sending
    markers it leaves behind. False if it was not there."""
    with db.atomic():
        cur = db.conn.execute(
            f"DELETE FROM {kind.table} WHERE coalesce(guild_id, 0) = ? AND channel_id = ?"
            f" AND coalesce(user_id, 0) = ? AND {kind.subject} = ?", (guild_id or 0, channel_id, dm_user or 0, subject))
        drop_orphan_markers(db, kind.marker, kind.table)
    return cur.rowcount > 0
