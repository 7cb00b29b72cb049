"""Migration 0009_feed_index: the feed index of who newly cites each direction."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0009_feed_index"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """The feed index: who newly cites each direction, the placements it was built from and
    each direction's paper count, kept by each publish (store/database/feed_index.py) so a
    direction's feed and page read a bounded range instead of every event."""
    db.executescript(
        """
        -- Who newly cites each direction, kept current by each publish (store/feed_index.py) so a
        -- direction's feed, page and the index read a bounded range instead of every event.
        CREATE TABLE feed_direction_citers (
            direction_slug TEXT NOT NULL,
            citing_id TEXT NOT NULL,
            first_seen TEXT NOT NULL,       -- its first citation event of a paper placed there
            first_event_id INTEGER NOT NULL,
            PRIMARY KEY (direction_slug, citing_id)
        ) WITHOUT ROWID;
        CREATE INDEX feed_direction_citers_newest
            ON feed_direction_citers(direction_slug, first_seen DESC, first_event_id);
        -- The placements the index was built from (a page that moves a paper is seen against them).
        CREATE TABLE feed_placements (
            paper_id TEXT NOT NULL,
            direction_slug TEXT NOT NULL,
            PRIMARY KEY (paper_id, direction_slug)
        ) WITHOUT ROWID;
        CREATE TABLE feed_direction_stats (
            direction_slug TEXT PRIMARY KEY,
            papers INTEGER NOT NULL,        -- papers placed in it
            since TEXT NOT NULL             -- first_seen of its first paper
        );
        CREATE TABLE feed_index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_event_id INTEGER NOT NULL,
            last_snapshot_id INTEGER NOT NULL
        );
        """
    )
