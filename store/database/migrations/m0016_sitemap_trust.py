"""Migration 0016_sitemap_trust: whether a host's sitemap lastmods are believed (sitemap_trust)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0016_sitemap_trust"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Whether a host's sitemap `lastmod`s are believed (docs/freshness.md): while they are, a
    page they say did not change is not re-checked for weeks; pages re-checked anyway verify
    them, and a host whose lastmods missed changes is not believed for a week."""
    db.executescript(
        """
        CREATE TABLE sitemap_trust (
            host TEXT PRIMARY KEY,
            -- Since the last verdict (halved past 1,000): pages re-checked that a lastmod said
            -- were unchanged, and of those, pages that had changed all the same.
            compared INTEGER NOT NULL DEFAULT 0,
            missed INTEGER NOT NULL DEFAULT 0,
            distrusted_until TEXT,                -- lastmods not believed before this time (NULL: believed)
            reason TEXT,                          -- why they were last distrusted
            updated_at TEXT NOT NULL
        );
        """
    )
