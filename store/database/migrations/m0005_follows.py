"""Migration 0005_follows: followed directions (/follow), digest settings and digests delivered."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0005_follows"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Followed directions (the bot's /follow), digest settings and the digests delivered;
    a delivery mode and a role on tracked papers too."""
    db.executescript(
        """
        -- /track's delivery mode and the one role its alerts mention (see follows).
        ALTER TABLE tracks ADD COLUMN mode TEXT NOT NULL DEFAULT 'instant'
            CHECK (mode IN ('instant', 'daily', 'weekly'));
        ALTER TABLE tracks ADD COLUMN role_id INTEGER;

        -- A channel (or a user's DMs) that receives a direction's newly added citing papers.
        CREATE TABLE follows (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL in a DM
            channel_id INTEGER NOT NULL,  -- where deliveries go (the DM channel in a DM)
            user_id INTEGER,              -- in a DM: the user deliveries go to; NULL in a server
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            keyword TEXT,                 -- only citing papers whose title contains it (any case); NULL: all
            mode TEXT NOT NULL DEFAULT 'instant' CHECK (mode IN ('instant', 'daily', 'weekly')),
            role_id INTEGER,              -- the one role mentioned in deliveries; NULL: none
            created_at TEXT NOT NULL,
            created_by INTEGER,           -- the user who ran /follow
            last_event_id INTEGER NOT NULL DEFAULT 0,  -- cursor into events: delivered up to here
            last_delivery_at TEXT,        -- the last message that held something from this follow
            disabled_reason TEXT          -- set when the channel is gone or forbids the bot
        );
        CREATE UNIQUE INDEX follows_place_direction
            ON follows(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), direction_slug);
        CREATE INDEX follows_guild ON follows(guild_id);
        CREATE INDEX follows_direction ON follows(direction_slug);

        -- When a server (or a user, in DMs) gets its digests: a local hour in a time zone.
        CREATE TABLE digest_settings (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL: a user's DMs
            user_id INTEGER,              -- in DMs: the user; NULL for a server
            hour INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23),
            timezone TEXT NOT NULL DEFAULT 'UTC',  -- an IANA name, e.g. Europe/Paris
            updated_at TEXT NOT NULL,
            updated_by INTEGER
        );
        CREATE UNIQUE INDEX digest_settings_scope ON digest_settings(coalesce(guild_id, 0), coalesce(user_id, 0));

        -- One row per digest period handled for a channel, written only after Discord
        -- accepted the message (sent 1) or when the period was quiet (sent 0): a period
        -- is never handled twice, so a restart repeats nothing.
        CREATE TABLE digests (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL in a DM
            channel_id INTEGER NOT NULL,
            user_id INTEGER,              -- in a DM: the user; NULL in a server
            mode TEXT NOT NULL CHECK (mode IN ('daily', 'weekly')),
            period TEXT NOT NULL,         -- the scheduled time (ISO 8601 UTC) this digest stands for
            from_event_id INTEGER NOT NULL,  -- events (from_event_id, upto_event_id] were covered
            upto_event_id INTEGER NOT NULL,
            papers INTEGER NOT NULL,      -- tracked papers with something new in it
            directions INTEGER NOT NULL,  -- followed directions with something new in it
            citers INTEGER NOT NULL,      -- new citing papers it counted, over all its sections
            sent INTEGER NOT NULL,        -- 1: a message was posted; 0: a quiet period, nothing sent
            message_id INTEGER,           -- the posted message, when sent
            delivered_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX digests_place_period
            ON digests(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), mode, period);
        """
    )
