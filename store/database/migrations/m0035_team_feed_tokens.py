"""Migration 0035_team_feed_tokens: every team's feed address made unguessable (160 random bits)."""

from __future__ import annotations

import base64
import secrets
import sqlite3
from datetime import UTC, datetime

from sqlite_utils import Database

NAME = "0035_team_feed_tokens"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """A team's feed address (`/feeds/teams/<feed_slug>.atom`) was its slug and 8 hex digits:
    32 random bits, found in days by a client guessing thousands of addresses a second. Each
    team is given a new one, its slug and 32 base-32 letters (160 bits), as a new team is
    (store.subscriptions.teams.feed_slug: the same rule, kept here as it was when this ran).
    The old address is not kept: it answers 404 like any address no team has, so an old
    address tells a guesser nothing. `feed_renewed_at` says when the address changed, so that
    /team list tells the server to give its readers the new one (docs/feeds.md, "People and
    teams")."""
    now = datetime.now(UTC).isoformat(timespec="seconds")
    db.execute("ALTER TABLE teams ADD COLUMN feed_renewed_at TEXT")
    cur = db.conn.cursor()
    cur.row_factory = sqlite3.Row
    for row in cur.execute("SELECT guild_id, slug FROM teams ORDER BY guild_id, slug").fetchall():
        token = base64.b32encode(secrets.token_bytes(20)).decode("ascii").lower()
        db.execute("UPDATE teams SET feed_slug = ?, feed_renewed_at = ? WHERE guild_id = ? AND slug = ?",
                   (f"{row['slug'][:40].strip('-')}-{token}", now, row["guild_id"], row["slug"]))
