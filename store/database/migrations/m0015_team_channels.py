"""Migration 0015_team_channels: delivery options, forum channels and posts, webhooks."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0015_team_channels"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Where the team talks (docs/bot.md): per track or follow, whether each alert opens a
    discussion thread; in forum channels, the post that holds a citing paper's alerts."""
    db.executescript(
        """
        -- Delivery options of a track or follow (kind + its id); no row: the defaults.
        CREATE TABLE delivery_options (
            kind TEXT NOT NULL CHECK (kind IN ('track', 'follow')),
            item_id INTEGER NOT NULL,
            threads INTEGER NOT NULL DEFAULT 0 CHECK (threads IN (0, 1)),
            PRIMARY KEY (kind, item_id)
        );
        -- Channels chosen for tracks and follows that are forums: each alert there is a post.
        CREATE TABLE forum_channels (
            channel_id INTEGER PRIMARY KEY,
            guild_id INTEGER NOT NULL,
            added_at TEXT NOT NULL
        );
        -- Webhooks that receive a paper's alerts or a direction's follows (Discord or Slack).
        -- The URL is a secret: sealed with a key kept beside the database (store/secret_box.py);
        -- `url_hint` (host and webhook id, no token) is what lists and logs show.
        CREATE TABLE webhooks (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('discord', 'slack')),
            target_kind TEXT NOT NULL CHECK (target_kind IN ('paper', 'direction')),
            target TEXT NOT NULL,
            url_sealed BLOB NOT NULL,
            url_id TEXT NOT NULL,
            url_hint TEXT NOT NULL,
            guild_id INTEGER,
            created_by INTEGER,
            created_at TEXT NOT NULL,
            last_event_id INTEGER NOT NULL DEFAULT 0,
            last_delivery_at TEXT,
            sending_upto INTEGER,
            sending_since TEXT,
            disabled_reason TEXT,
            last_failure TEXT,
            UNIQUE (url_id, target_kind, target)
        );
        -- A forum channel's post (a thread) per citing paper (or per digest period, `citer_id`
        -- 'digest:<mode>:<period>'): later alerts about that paper go there.
        CREATE TABLE forum_posts (
            channel_id INTEGER NOT NULL,
            citer_id TEXT NOT NULL,
            thread_id INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (channel_id, citer_id)
        );
        """
    )
