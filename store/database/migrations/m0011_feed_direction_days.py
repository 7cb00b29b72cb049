"""Migration 0011_feed_direction_days: the feed index's citers per direction and day."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0011_feed_direction_days"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Per direction and day, how many citers the feed index gained, so the index page's 7- and
    30-day counts read a month of rows per direction, not every citer (docs/feeds.md, "Feeds and web pages")."""
    db.executescript(
        """
        -- Kept with feed_direction_citers by store/feed_index.py: a citer counts on the day of its first_seen.
        CREATE TABLE feed_direction_days (
            direction_slug TEXT NOT NULL,
            day TEXT NOT NULL,              -- the first 10 characters of first_seen (its UTC date)
            citers INTEGER NOT NULL,
            PRIMARY KEY (direction_slug, day)
        ) WITHOUT ROWID;
        -- The feed index is rebuilt whole at the next publish, counting every day.
        DELETE FROM feed_index_state;
        """
    )
