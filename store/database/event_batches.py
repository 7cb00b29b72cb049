"""The events of each write, as one row of `event_batches` (migration 0040): its first and last
event id and the `seen_at` of all of them. A writer gives its events consecutive ids
(rows.next_ids) and records them here in the same transaction; `/rising` reads the events of a
period through these rows (store/questions/graph.py) instead of an index of every event's time.
"""

from __future__ import annotations

import sqlite3

from sqlite_utils import Database


def record_batch(db: Database | sqlite3.Connection, first_id: int, events: int, seen_at: str) -> None:
    """Record the `events` just stored with ids from `first_id` on, all seen at `seen_at`, as one
    row. Nothing for none."""
    if events:
        conn = db.conn if isinstance(db, Database) else db
        conn.execute("INSERT INTO event_batches (first_id, last_id, seen_at) VALUES (?, ?, ?)",
                     (first_id, first_id + events - 1, seen_at))
