"""Migration 0028_listed_lastmods: what the sitemaps list, kept, so a sitemap that did not change is not read again."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0028_listed_lastmods"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Each page's `lastmod` as a sitemap lists it, and which sitemap file lists it; each sitemap
    file's count of the pages it lists and of those with a date-time lastmod. A tick then asks for
    each sitemap file conditionally and reads only those that changed; the pages of the others
    keep what was recorded (store.sources.listed_pages, docs/live-map.md, "Sitemaps read as they
    change"). Indexes: the pages a file listed (to compare it when it changes), and the listed
    pages by their last check (the audits' oldest), and the pages read from a text alternate."""
    db.executescript(
        """
        ALTER TABLE sources ADD COLUMN listed_lastmod TEXT;
        ALTER TABLE sources ADD COLUMN listed_in TEXT;
        ALTER TABLE crawl_resources ADD COLUMN listed INTEGER;
        ALTER TABLE crawl_resources ADD COLUMN dated INTEGER;
        CREATE INDEX sources_listed_in ON sources(listed_in) WHERE listed_in IS NOT NULL;
        CREATE INDEX sources_listed_checked ON sources(checked_at, location) WHERE listed_in IS NOT NULL;
        CREATE INDEX sources_text_url ON sources(location) WHERE text_url IS NOT NULL;
        """
    )
