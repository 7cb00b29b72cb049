"""Migration 0024_first_read: which citations were there at the cited paper's first read."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0024_first_read"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Which citations were already there when mapwatch first read the cited paper (docs/feeds.md,
    "What new means"), so the feeds' "new in 7 days" counts only those that appeared after, and a
    first import's entries are told apart. Existing citations: at the first read when revealed no
    later than the cited paper's first stored page (or while it has none)."""
    db.executescript(
        """
        -- 1: revealed while the cited paper's first page was read, or before it was ever read.
        ALTER TABLE citations ADD COLUMN at_first_read INTEGER NOT NULL DEFAULT 0;
        UPDATE citations SET at_first_read = 1
            WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.paper_id = citations.cited_id
                              AND s.ingested_at < citations.first_seen);
        -- 1: every citation of this citer into the direction's papers is at a first read.
        ALTER TABLE feed_direction_citers ADD COLUMN at_first_read INTEGER NOT NULL DEFAULT 0;
        -- The feed index is rebuilt whole at the next publish (its day counts then count the new only).
        DELETE FROM feed_index_state;
        """
    )
