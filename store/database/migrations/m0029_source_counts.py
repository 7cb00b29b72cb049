"""Migration 0029_source_counts: a source's citation count of a paper when its citers were last read in full."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0029_source_counts"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """What Semantic Scholar said a paper's citation count was when its citers were last read in
    full, and when: a round that finds the same count asks one request instead of reading every
    page of citers again (store/scholarly/enrich.py, docs/enrichment.md, "Citations the map
    does not name")."""
    db.executescript(
        """
        ALTER TABLE discovery_asked ADD COLUMN citation_count INTEGER;
        ALTER TABLE discovery_asked ADD COLUMN read_at TEXT;
        """
    )
