"""Where the team talks (docs/bot.md), additive to store.subscriptions.tracking and store.subscriptions.follows: a
discussion thread per alert (`delivery_options`, one row per track or follow, absent meaning
the defaults), and forum channels (`forum_channels`) with their post per citing paper
(`forum_posts`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import named_row, one_column, scalar
from mapwatch.store.subscriptions.kinds import THREAD_KINDS


def set_threads(db: Database, kind: str, item_id: int, on: bool) -> None:
    """Whether each alert of this track or follow opens a discussion thread."""
    if kind not in THREAD_KINDS:
        raise ValueError(f"kind must be one of {THREAD_KINDS}")
    with db.atomic():
        db.conn.execute(
            "INSERT INTO delivery_options (kind, item_id, threads) VALUES (?, ?, ?)"
            " ON CONFLICT (kind, item_id) DO UPDATE SET threads = excluded.threads", (kind, item_id, int(on)))


def threads_on(db: Database, kind: str) -> set[int]:
    """The ids of the tracks (or follows) whose alerts open a thread each."""
    return set(one_column(db, "SELECT item_id FROM delivery_options WHERE kind = ? AND threads = 1", (kind,)))


def has_threads(db: Database, kind: str, item_id: int) -> bool:
    return bool(scalar(db, "SELECT threads FROM delivery_options WHERE kind = ? AND item_id = ?", (kind, item_id)))


# -- forum channels -----------------------------------------------------------------------

def add_forum(db: Database, guild_id: int, channel_id: int, now: datetime) -> None:
    """Remember that a channel chosen for alerts is a forum."""
    with db.atomic():
        db.conn.execute("INSERT OR IGNORE INTO forum_channels (channel_id, guild_id, added_at) VALUES (?, ?, ?)",
                        (channel_id, guild_id, iso(now)))


def forum_channels(db: Database) -> set[int]:
    return set(one_column(db, "SELECT channel_id FROM forum_channels"))


def forum_post(db: Database, channel_id: int, keys: Sequence[str]) -> int | None:
    """The post (thread id) of the first of `keys` (citing papers' ids) that has one in the forum."""
    for key in keys:
        r = named_row(db, "SELECT thread_id FROM forum_posts WHERE channel_id = ? AND citer_id = ?",
                      (channel_id, key))
        if r:
            return int(r["thread_id"])
    return None


def record_forum_post(db: Database, channel_id: int, keys: Sequence[str], thread_id: int, now: datetime) -> None:
    """The post `thread_id` now holds the alerts about `keys` (those without a post yet)."""
    with db.atomic():
        db.conn.executemany(
            "INSERT OR IGNORE INTO forum_posts (channel_id, citer_id, thread_id, created_at) VALUES (?, ?, ?, ?)",
            [(channel_id, k, thread_id, iso(now)) for k in keys])


def forget_forum_post(db: Database, thread_id: int) -> None:
    """A post that is gone (deleted in Discord): the next alert about its papers opens a new one."""
    with db.atomic():
        db.conn.execute("DELETE FROM forum_posts WHERE thread_id = ?", (thread_id,))
