"""Migration 0032_alert_messages: the alerts that went out before their citers' authors were known."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0032_alert_messages"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """An alert, follow post or forum post sent while some of its citers had no byline
    (store/subscriptions/alert_messages.py): where the message is, what it was about (the
    subscription and its event window), and which citers it lacked. When their authors arrive,
    the bot edits the message in place (docs/bot.md, "Alerts"), once; rows older than a week,
    or edited, are pruned."""
    db.executescript(
        """
        CREATE TABLE alert_messages (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,            -- 'track' (a paper, person or team) or 'follow'
            item_id INTEGER NOT NULL,      -- tracks.id or follows.id
            after_event_id INTEGER NOT NULL,  -- the window of events the message was about: (after, upto]
            upto_event_id INTEGER NOT NULL,
            channel_id INTEGER NOT NULL,   -- where the message is (a forum post's: its thread)
            message_id INTEGER NOT NULL,
            guild_id INTEGER,
            sent_at TEXT NOT NULL,
            nonce TEXT NOT NULL,           -- its marker (`ref <nonce>`), kept on the edited message
            missing TEXT NOT NULL,         -- JSON list of the citer ids it named without authors
            edited_at TEXT,
            UNIQUE (channel_id, message_id)
        );
        CREATE INDEX alert_messages_open ON alert_messages(edited_at, sent_at);
        """
    )
