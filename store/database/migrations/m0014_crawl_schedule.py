"""Migration 0014_crawl_schedule: when each location is next checked; robots.txt, sitemaps, direction pages."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0014_crawl_schedule"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """When each location of the map is next checked, and what robots.txt, the sitemaps and the
    direction pages said last, so a tick fetches only what is due and asks conditionally
    (docs/live-map.md, "Following the live map over HTTP")."""
    db.executescript(
        """
        -- Per page: when its content last changed, its re-check interval, and when it is due.
        -- A row with checked_at NULL is a page found (on a direction page, in a new page's
        -- links) but not fetched yet.
        ALTER TABLE sources ADD COLUMN changed_at TEXT;
        ALTER TABLE sources ADD COLUMN next_check_at TEXT;
        ALTER TABLE sources ADD COLUMN interval_s INTEGER;
        -- robots.txt, sitemaps and direction pages: their validators, for conditional GETs;
        -- robots.txt and sitemaps keep the body a 304 stands for.
        CREATE TABLE crawl_resources (
            location TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('robots', 'sitemap', 'direction')),
            etag TEXT,
            last_modified TEXT,
            sha256 TEXT,
            body BLOB,
            checked_at TEXT,
            changed_at TEXT,
            next_check_at TEXT,
            interval_s INTEGER
        );
        -- Requests a refresh sent the site (NULL: a folder was read).
        ALTER TABLE ingests ADD COLUMN requests INTEGER;
        """
    )
