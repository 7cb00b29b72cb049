"""The bot's own state, in table `bot_state` (key, value, updated): "sending" markers, refusal
counts, page-button state and single settings, kept bounded by `prune_state`.

A "sending" marker records, before a delivery is posted, which delivery it is (its upto
event id): until the delivery is settled, the next one is this same one, resent with the
same nonce so Discord drops a repeat (store.subscriptions: one prefix per kind, tracks and
follows). The marker keeps the time of the first try (`updated`).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # sqlite_utils loads numpy: `mapwatch --help` must not (tests/system/test_package.py)
    from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import scalar
from mapwatch.store.subscriptions.kinds import KINDS

REFUSED = "refused:"  # key prefix: how often Discord refused a delivery for good (by its nonce)
PAGE_STATE = "page:"  # key prefix: a long page button's state (bot.interactions.page_key)
PAGE_STATE_DAYS = 30  # page buttons older than this say "This list has expired"
PAGE_STATE_MAX = 10_000  # at most this many page-button states are kept (the newest)
REFUSED_DAYS = 30  # a refusal count not touched for this long belongs to a delivery long settled


def get_state(db: Database, key: str) -> str | None:
    return scalar(db, "SELECT value FROM bot_state WHERE key = ?", (key,))  # type: ignore[no-any-return]


def set_state(db: Database, key: str, value: str, now: datetime) -> None:
    with db.atomic():
        db.conn.execute("INSERT INTO bot_state (key, value, updated) VALUES (?, ?, ?)"
                        " ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated = excluded.updated",
                        (key, value, iso(now)))


def delete_state(db: Database, key: str) -> None:
    with db.atomic():
        db.conn.execute("DELETE FROM bot_state WHERE key = ?", (key,))


def mark_state(db: Database, key: str, value: str, now: datetime) -> None:
    """Set a state row; its `updated` time moves only when the value changes."""
    with db.atomic():
        db.conn.execute("INSERT INTO bot_state (key, value, updated) VALUES (?, ?, ?)"
                        " ON CONFLICT(key) DO UPDATE SET updated = CASE WHEN value = excluded.value"
                        " THEN updated ELSE excluded.updated END, value = excluded.value",
                        (key, value, iso(now)))


# -- "sending" markers --------------------------------------------------------------------

def sending_markers(db: Database, prefix: str) -> dict[int, tuple[int, str]]:
    """The markers with this prefix: item id -> (upto event id, first tried at)."""
    return {int(k[len(prefix):]): (int(v), at) for k, v, at in db.conn.execute(
        "SELECT key, value, updated FROM bot_state WHERE key LIKE ?", (prefix + "%",))}


def clear_marker(db: Database, prefix: str, item_id: int) -> None:
    """Drop an item's marker: its delivery is settled (call inside the settling transaction)."""
    db.conn.execute("DELETE FROM bot_state WHERE key = ?", (f"{prefix}{item_id}",))


def drop_orphan_markers(db: Database, prefix: str, table: str) -> None:
    """Drop the markers whose item is no longer in `table` (call inside the removing transaction)."""
    db.conn.execute(f"DELETE FROM bot_state WHERE key LIKE ? AND CAST(substr(key, ?) AS INTEGER)"
                    f" NOT IN (SELECT id FROM {table})", (prefix + "%", len(prefix) + 1))


# -- refusal counts -----------------------------------------------------------------------

def count_refusal(db: Database, nonce: str, now: datetime) -> int:
    """Count one more permanent refusal of the delivery with this nonce; returns the count."""
    with db.atomic():
        n = int(get_state(db, REFUSED + nonce) or 0) + 1
        set_state(db, REFUSED + nonce, str(n), now)
    return n


def clear_refusals(db: Database, nonce: str) -> None:
    """Forget a settled delivery's refusal count (no write when there is none)."""
    if get_state(db, REFUSED + nonce) is None:
        return
    with db.atomic():
        db.conn.execute("DELETE FROM bot_state WHERE key = ?", (REFUSED + nonce,))


# -- bounds -------------------------------------------------------------------------------

def prune_state(db: Database, now: datetime, *, page_days: int = PAGE_STATE_DAYS,
                page_max: int = PAGE_STATE_MAX) -> int:
    """Bound `bot_state`: drop page-button state older than `page_days` (and all but the
    newest `page_max`), "sending" markers whose track or follow is gone, disabled or already
    past them, and stale refusal counts. Returns how many rows were removed."""
    page_cut = iso(now - timedelta(days=page_days))
    refused_cut = iso(now - timedelta(days=REFUSED_DAYS))
    stale_marker = ("key LIKE ? AND NOT EXISTS (SELECT 1 FROM {table} x"
                    " WHERE x.id = CAST(substr(bot_state.key, ?) AS INTEGER) AND x.disabled_reason IS NULL"
                    " AND x.last_event_id < CAST(bot_state.value AS INTEGER))")
    conditions: list[tuple[str, tuple[Any, ...]]] = [
        ("key LIKE ? AND updated < ?", (PAGE_STATE + "%", page_cut)),
        ("key LIKE ? AND key NOT IN (SELECT key FROM bot_state WHERE key LIKE ? ORDER BY updated DESC, key"
         " LIMIT ?)", (PAGE_STATE + "%", PAGE_STATE + "%", page_max)),
        ("key LIKE ? AND updated < ?", (REFUSED + "%", refused_cut)),
    ]
    conditions += [(stale_marker.format(table=k.table), (k.marker + "%", len(k.marker) + 1)) for k in KINDS]
    c = db.conn
    # Read first: a write transaction only when there is something to remove, so pruning
    # does not disturb the commands' own transactions for nothing.
    if not any(scalar(c, f"SELECT EXISTS (SELECT 1 FROM bot_state WHERE {where})", params)
               for where, params in conditions):
        return 0
    n = 0
    with db.atomic():
        for where, params in conditions:
            n += c.execute(f"DELETE FROM bot_state WHERE {where}", params).rowcount
    return n
