"""Migration 0007_crawl: the text alternate of an HTML page (sources.text_url)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0007_crawl"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """The text alternate an HTML page declares, so later ticks read the page from there
    (store/sources/http_source.py)."""
    db.executescript(
        """
        -- The text alternate an HTML page declares (<link rel="alternate" type="text/markdown">):
        -- later ticks read the page from there (store.http_source). NULL: the page itself.
        ALTER TABLE sources ADD COLUMN text_url TEXT;
        """
    )
