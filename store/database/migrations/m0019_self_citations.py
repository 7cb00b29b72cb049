"""Migration 0019_self_citations: `self:hide` on tracks and follows."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0019_self_citations"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """`self:hide` on /track and /follow: leave out the citing papers that share an author with
    the paper (or every paper of the direction) they are delivered for (docs/bot.md, "Alerts")."""
    db.executescript(
        """
        ALTER TABLE tracks ADD COLUMN hide_self INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE follows ADD COLUMN hide_self INTEGER NOT NULL DEFAULT 0;
        """
    )
