"""Migration 0003_tracking: tracked papers (/track), title lookups and bot_state."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0003_tracking"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Tracked papers (the bot's /track) and a case-insensitive title index for lookups."""
    db.executescript(
        """
        -- A channel (or a user's DMs) that gets an alert when a paper gains citers.
        CREATE TABLE tracks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL in a DM
            channel_id INTEGER NOT NULL,  -- where alerts go (the DM channel in a DM)
            user_id INTEGER,              -- in a DM: the user alerts go to; NULL in a server
            paper_id TEXT NOT NULL REFERENCES papers(id),
            created_at TEXT NOT NULL,
            created_by INTEGER,           -- the user who ran /track
            last_event_id INTEGER NOT NULL DEFAULT 0,  -- cursor into events: delivered up to here
            last_alert_at TEXT,
            disabled_reason TEXT          -- set when the channel is gone or forbids the bot
        );
        CREATE UNIQUE INDEX tracks_guild_channel_paper
            ON tracks(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), paper_id);
        CREATE INDEX tracks_paper ON tracks(paper_id);
        CREATE INDEX tracks_guild ON tracks(guild_id);
        CREATE INDEX papers_title_nocase ON papers(title COLLATE NOCASE);
        CREATE INDEX directions_name_nocase ON directions(name COLLATE NOCASE);
        -- Lists of citers and references sorted without reading whole rows: most cited
        -- (papers' counts), the map's listing order (the first event of each edge), newest.
        CREATE INDEX papers_id_cited_by ON papers(id, cited_by);
        CREATE INDEX events_edge ON events(paper_id, citing_id, id);
        CREATE INDEX events_citing_edge ON events(citing_id, paper_id, id);
        CREATE INDEX citations_cited_seen ON citations(cited_id, first_seen, citing_id);

        -- Small key/value state of the bot (e.g. the hash of the last synced command set).
        CREATE TABLE bot_state (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated TEXT NOT NULL
        );
        """
    )
