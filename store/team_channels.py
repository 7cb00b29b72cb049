"""Delivery options of tracks and follows that concern where the team talks: a discussion
thread per alert (docs/bot.md). Additive to store.tracking and store.follows: one row per
track or follow in `delivery_options`, absent meaning the defaults."""

from __future__ import annotations

from sqlite_utils import Database

KINDS = ("track", "follow")


def set_threads(db: Database, kind: str, item_id: int, on: bool) -> None:
    """Whether each alert of this track or follow opens a discussion thread."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}")
    with db.atomic():
        db.conn.execute(
            "INSERT INTO delivery_options (kind, item_id, threads) VALUES (?, ?, ?)"
            " ON CONFLICT (kind, item_id) DO UPDATE SET threads = excluded.threads", (kind, item_id, int(on)))


def threads_on(db: Database, kind: str) -> set[int]:
    """The ids of the tracks (or follows) whose alerts open a thread each."""
    return {r[0] for r in db.conn.execute(
        "SELECT item_id FROM delivery_options WHERE kind = ? AND threads = 1", (kind,))}


def has_threads(db: Database, kind: str, item_id: int) -> bool:
    row = db.conn.execute("SELECT threads FROM delivery_options WHERE kind = ? AND item_id = ?",
                          (kind, item_id)).fetchone()
    return bool(row and row[0])
