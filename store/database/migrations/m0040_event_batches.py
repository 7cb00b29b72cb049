"""Migration 0040_event_batches: the events of each write, as one row of ids and its time, in
place of an index of every event by its time (issue 44)."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.migrations._event_runs import FILL_BATCHES

NAME = "0040_event_batches"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """`/rising` reads the events of the last N days. It found them through `events_seen_at`, an
    index holding every event's time (612 bytes a paper at 30,000 papers). The events one write
    stores have consecutive ids and one `seen_at`, so a row per write (its first and last id, its
    time) finds the same events through a few hundred rows. Filled here from the events stored,
    one row per run of consecutive ids with the same `seen_at`; then the index is dropped."""
    db.executescript(
        """
        CREATE TABLE event_batches (
            first_id INTEGER PRIMARY KEY,   -- the first event id of a write
            last_id INTEGER NOT NULL,       -- its last: the ids between are its events (or deleted since)
            seen_at TEXT NOT NULL           -- the seen_at of every one of them
        );
        CREATE INDEX event_batches_seen_at ON event_batches(seen_at);
        """
        + FILL_BATCHES
        + "DROP INDEX IF EXISTS events_seen_at;"
    )
