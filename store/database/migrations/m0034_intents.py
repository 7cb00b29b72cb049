"""Migration 0034_intents: a track or follow that alerts only on citations of one intent."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0034_intents"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """`intent:methodology|background|result` on /track and /follow (docs/bot.md): only the
    citations Semantic Scholar gives that intent are alerted; NULL, every citation."""
    db.executescript(
        """
        ALTER TABLE tracks ADD COLUMN intent TEXT;
        ALTER TABLE follows ADD COLUMN intent TEXT;
        """
    )
