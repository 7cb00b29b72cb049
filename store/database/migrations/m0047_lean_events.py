"""Migration 0047_lean_events: an event row without the kind and the time its write already
holds (issue 44). `events` becomes a view with the same columns, over `event_log`."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.migrations._event_runs import FILL_BATCHES
from mapwatch.store.database.migrations._refused import Refused
from mapwatch.store.database.migrations._sequence import carry_sequence

NAME = "0047_lean_events"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Each event row repeated two things stored elsewhere: its `kind` (a citation event is the
    one with a citer, a count event the one without) and its `seen_at`, which every event of a
    write shares and `event_batches` (0040) holds once a write. Together 35 of an event's 73
    bytes at 30,000 papers. `event_log` keeps the rest under the same ids and id sequence;
    `events` is a view that gives the kind from `citing_id` and the time from the batch holding
    the id. The batches are made again first, one per run of consecutive ids with the same
    time, so that every event's time is its batch's, exactly. An event that does not fit (a
    citation without a citer, a count with one: no version wrote such) stops the migration
    with its id, before anything changed. The new table names its papers and snapshots without
    a foreign key: a bulk load writes with the checks off (store/database/ingest.py), and what
    it wrote is copied whatever it holds. One transaction: a migration interrupted is rolled
    back and runs again."""
    for (odd,) in db.execute("SELECT id FROM events WHERE (kind = 'citation') != (citing_id IS NOT NULL) LIMIT 1"):
        raise Refused(f"migration {NAME}: event {odd} is a citation event without a citer, or a count event"
                      " with one")
    db.executescript(
        "DELETE FROM event_batches;"
        + FILL_BATCHES
        + """
        CREATE TABLE event_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_id TEXT NOT NULL,                 -- papers.id
            citing_id TEXT,                         -- papers.id: a citation event's citer; none: a count event
            old_count INTEGER,
            new_count INTEGER,
            unlisted INTEGER,
            snapshot_id INTEGER                     -- snapshots.id
        );
        INSERT INTO event_log (id, paper_id, citing_id, old_count, new_count, unlisted, snapshot_id)
            SELECT id, paper_id, citing_id, old_count, new_count, unlisted, snapshot_id FROM events ORDER BY id;
        """
        + carry_sequence("events", "event_log")
        + """
        DROP TABLE events;
        CREATE INDEX events_paper ON event_log(paper_id, id);
        CREATE VIEW events AS
            SELECT l.id, CASE WHEN l.citing_id IS NULL THEN 'count' ELSE 'citation' END AS kind,
                   l.paper_id, l.citing_id, l.old_count, l.new_count, l.unlisted, l.snapshot_id,
                   (SELECT b.seen_at FROM event_batches b WHERE b.first_id <= l.id
                    ORDER BY b.first_id DESC LIMIT 1) AS seen_at
            FROM event_log l;
        """
    )
