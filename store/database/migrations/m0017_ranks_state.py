"""Migration 0017_ranks_state: how far the stored direction ranks have read (ranks_state)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0017_ranks_state"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """How far the stored direction ranks have read the snapshots and events, so that a refresh recomputes
    only the directions its pages changed (store/questions/direction_pagerank.py)."""
    db.executescript(
        """
        -- The newest snapshot and event the stored ranks have seen. No row: never computed by
        -- this version, the next update computes every direction.
        CREATE TABLE ranks_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_snapshot_id INTEGER NOT NULL,
            last_event_id INTEGER NOT NULL
        );
        -- The directions a changed paper was ranked in.
        CREATE INDEX direction_ranks_paper ON direction_ranks(paper_id);
        """
    )
