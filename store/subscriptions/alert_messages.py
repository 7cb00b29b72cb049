"""Alerts sent before their citers' authors were known (table `alert_messages`), so the bot
can edit them in place once the authors arrive (docs/bot.md, "Alerts").

A message is recorded only when it named a citer without a byline. `awaiting_authors` gives
those of the last `EDIT_WITHIN` with at least one such citer described since; after an edit,
`edited` keeps the citers still without authors (edited again when they come) or closes the
row. An edit recomposes the same alert (the same subscription and event window) with the same
marker: nothing is ever posted again, and a restart edits at most once more what it had edited.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import named_rows, rows_in_chunks

if TYPE_CHECKING:
    from sqlite_utils import Database

EDIT_WITHIN = timedelta(days=7)  # an alert older than this is left as it was sent
MAX_EDITS_A_ROUND = 50  # messages edited per delivery round (each waits for the pacer)


@dataclass(frozen=True)
class SentAlert:
    """A message sent with citers whose authors were unknown: where it is and what it was about."""

    id: int
    kind: str  # "track" or "follow"
    item_id: int
    after_event_id: int
    upto_event_id: int
    channel_id: int
    message_id: int
    guild_id: int | None
    nonce: str
    missing: tuple[str, ...]


def record_sent(db: Database, kind: str, item_id: int, after: int, upto: int, channel_id: int, message_id: int,
                guild_id: int | None, nonce: str, missing: Sequence[str], now: datetime) -> None:
    """Remember a message that named `missing` citers without their authors (none: nothing kept)."""
    if not missing:
        return
    with db.atomic():
        db.conn.execute(
            "INSERT INTO alert_messages (kind, item_id, after_event_id, upto_event_id, channel_id, message_id,"
            " guild_id, sent_at, nonce, missing) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(channel_id, message_id) DO NOTHING",
            (kind, item_id, after, upto, channel_id, message_id, guild_id, iso(now), nonce,
             json.dumps(list(dict.fromkeys(missing)))))


def with_authors(db: Database, paper_ids: Sequence[str]) -> set[str]:
    """Which of these papers some source named authors for."""
    return {r["paper_id"] for r in rows_in_chunks(
        db, "SELECT DISTINCT paper_id FROM paper_authors WHERE paper_id IN ({})", list(dict.fromkeys(paper_ids)))}


def awaiting_authors(db: Database, now: datetime, limit: int = MAX_EDITS_A_ROUND) -> list[SentAlert]:
    """The messages of the last EDIT_WITHIN still waiting for authors of which some have come."""
    rows = named_rows(db, "SELECT * FROM alert_messages WHERE edited_at IS NULL AND sent_at >= ? ORDER BY id",
                      (iso(now - EDIT_WITHIN),))
    alerts = [SentAlert(r["id"], r["kind"], r["item_id"], r["after_event_id"], r["upto_event_id"], r["channel_id"],
                        r["message_id"], r["guild_id"], r["nonce"], tuple(_ids(r["missing"]))) for r in rows]
    known = with_authors(db, [p for a in alerts for p in a.missing])
    return [a for a in alerts if known & set(a.missing)][:limit]


def edited(db: Database, alert: SentAlert, still_missing: Sequence[str], now: datetime) -> None:
    """The message was edited: keep waiting for the citers still without authors, or close it."""
    with db.atomic():
        if still_missing:
            db.conn.execute("UPDATE alert_messages SET missing = ? WHERE id = ?",
                            (json.dumps(list(still_missing)), alert.id))
        else:
            db.conn.execute("UPDATE alert_messages SET edited_at = ? WHERE id = ?", (iso(now), alert.id))


def forget(db: Database, alert_id: int) -> None:
    """The message is gone (deleted, or the channel): nothing to edit."""
    with db.atomic():
        db.conn.execute("DELETE FROM alert_messages WHERE id = ?", (alert_id,))


def prune(db: Database, now: datetime) -> int:
    """Drop the rows closed, or older than EDIT_WITHIN; how many."""
    with db.atomic():
        return db.conn.execute("DELETE FROM alert_messages WHERE edited_at IS NOT NULL OR sent_at < ?",
                               (iso(now - EDIT_WITHIN),)).rowcount


def _ids(text: str) -> list[str]:
    try:
        value = json.loads(text)
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []
