"""Migration 0006_delivery_failures: deliveries Discord refused for good, recorded."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0006_delivery_failures"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """A delivery Discord refused for good (a 4xx other than 403, 404 and 429, three times):
    recorded with its HTTP status, Discord's code and message, and passed over (docs/bot.md, "Alerts")."""
    db.executescript(
        """
        -- The last delivery Discord refused for good: "<when>: HTTP <status>, Discord error <code>: <message>".
        ALTER TABLE tracks ADD COLUMN last_failure TEXT;
        ALTER TABLE follows ADD COLUMN last_failure TEXT;
        -- A digest period Discord refused for good: recorded (sent 0) with the reason, not retried.
        ALTER TABLE digests ADD COLUMN failure TEXT;
        """
    )
