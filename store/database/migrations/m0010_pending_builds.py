"""Migration 0010_pending_builds: the indexes and triggers a bulk load has still to build."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0010_pending_builds"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """What a bulk load (a cold ingest into an empty map, store/database/bulk_load.py) dropped
    and has still to build, written in the transaction that drops it, so an interrupted load
    is finished by the next open."""
    db.executescript(
        """
        -- What a bulk load (a cold ingest into an empty map, store/bulk_load.py) dropped and has
        -- still to build: an index's or trigger's exact SQL from sqlite_master, or a full-text
        -- 'rebuild'. Written in the transaction that drops them; each build deletes its row.
        CREATE TABLE pending_builds (
            seq INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,    -- the index, trigger or full-text table
            kind TEXT NOT NULL CHECK (kind IN ('index', 'trigger', 'fts')),
            sql TEXT NOT NULL,
            owner_pid INTEGER NOT NULL    -- the loading process: builds wait while it lives
        );
        """
    )
