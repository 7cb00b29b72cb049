"""Migration 0022_webhook_no_answer: webhooks whose receiver does not answer."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0022_webhook_no_answer"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Webhooks whose receiver does not answer: since when, and for how many delivery rounds in a
    row (bot/sending/delivery_webhooks.py disables one after 24 h of them)."""
    db.executescript(
        """
        ALTER TABLE webhooks ADD COLUMN no_answer_since TEXT;
        ALTER TABLE webhooks ADD COLUMN no_answer_rounds INTEGER NOT NULL DEFAULT 0;
        """
    )
