"""Migration 0002_feeds: where feeds were last published (feed_publishes)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0002_feeds"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Where feeds were last published and how far they had read the events and pages, so the
    next publish rebuilds only what changed (docs/feeds.md)."""
    db.executescript(
        """
        -- Where feeds were last published, so the next publish rebuilds only what changed.
        CREATE TABLE feed_publishes (
            out_dir TEXT PRIMARY KEY,     -- absolute path of the output folder
            base_url TEXT NOT NULL,       -- the address the feeds' links used
            entry_limit INTEGER NOT NULL, -- entries per feed
            last_event_id INTEGER NOT NULL,  -- events up to this id are in the published feeds
            last_snapshot_id INTEGER NOT NULL,  -- pages stored up to this snapshot id are in them
            published_at TEXT NOT NULL
        );
        """
    )
