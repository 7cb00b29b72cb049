"""Migration 0027_change_rate: each page's change history and change rate; an index of when pages are due."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0027_change_rate"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """What a page's re-check period is made from (store.sources.change_rate, docs/live-map.md,
    "Re-checks by value"): how many checks compared it, how many found it unchanged, the time
    they covered, and, when the site dated its changes (Last-Modified), the time it is known to
    have stayed unchanged; the change rate estimated from them, and the weight it and the page's
    value give its re-checks (the square-root rule). Indexes so a tick asks for the pages due,
    most overdue first, the pages found but never read and the papers without a page, without
    reading every row (store.sources.crawl_plan)."""
    db.executescript(
        """
        ALTER TABLE sources ADD COLUMN checks INTEGER;
        ALTER TABLE sources ADD COLUMN checks_unchanged INTEGER;
        ALTER TABLE sources ADD COLUMN checked_s REAL;
        ALTER TABLE sources ADD COLUMN dated_changes INTEGER;
        ALTER TABLE sources ADD COLUMN unchanged_s REAL;
        ALTER TABLE sources ADD COLUMN change_rate REAL;
        ALTER TABLE sources ADD COLUMN recheck_weight REAL;
        CREATE INDEX sources_next_check ON sources(next_check_at) WHERE next_check_at IS NOT NULL;
        CREATE INDEX sources_unscheduled ON sources(checked_at) WHERE next_check_at IS NULL AND checked_at IS NOT NULL;
        CREATE INDEX sources_unchecked ON sources(paper_id) WHERE checked_at IS NULL;
        CREATE INDEX papers_without_page ON papers(id) WHERE has_page = 0;
        """
    )
