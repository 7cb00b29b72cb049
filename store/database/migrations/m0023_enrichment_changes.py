"""Migration 0023_enrichment_changes: when a paper's authors or venue changed (enrichment_changes)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0023_enrichment_changes"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """When a paper's authors (or venue) changed by what a scholarly source said, so that the
    feeds and pages showing it are built again (feeds/publish_changes.py, the paper files' ETags)."""
    db.executescript(
        """
        -- One row each time a paper's authors, their institutions or its venue changed.
        CREATE TABLE enrichment_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_id TEXT NOT NULL,
            changed_at TEXT NOT NULL
        );
        CREATE INDEX enrichment_changes_paper ON enrichment_changes(paper_id, id);
        -- How far a publish into the folder has read them.
        ALTER TABLE feed_publishes ADD COLUMN last_enrichment_id INTEGER NOT NULL DEFAULT 0;
        """
    )
