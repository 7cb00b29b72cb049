"""Migration 0004_graph: direction ranks (PageRank per direction) and events by time."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0004_graph"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Each direction's papers ranked by PageRank over the citations among them, computed at
    refresh time; and an index on when events were seen, for /rising's last N days."""
    db.executescript(
        """
        -- PageRank of each direction's papers over the citations among them, computed at
        -- refresh time (store.graph.compute_direction_ranks) and replaced each time.
        CREATE TABLE direction_ranks (
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            paper_id TEXT NOT NULL REFERENCES papers(id),
            pagerank REAL NOT NULL,
            rank INTEGER NOT NULL,        -- 1 = highest PageRank within the direction
            computed_at TEXT NOT NULL,    -- ISO timestamp (UTC)
            PRIMARY KEY (direction_slug, paper_id)
        ) WITHOUT ROWID;
        CREATE INDEX direction_ranks_rank ON direction_ranks(direction_slug, rank);
        -- /rising reads the events of the last N days.
        CREATE INDEX events_seen_at ON events(seen_at);
        """
    )
