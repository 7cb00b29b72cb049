"""The events of a database older than migration 0047, made with today's write path.

Tests of an earlier migration store a map into a database stopped before it (the older
schema), with the code of today. Today's code writes events into `event_log` and reads them
through the view `events` (0047); an older database has the table `events` instead.

- `events_as_today(db)`: for the time of a `with` block, `db`'s events take today's form (0047's
  own step, which touches nothing else); on leaving, the form they had, with every row.
- `events_as_before(db)`: a database of today (0047 applied) brought back to the table `events`
  and without 0047's record, as a version before it left it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import cache

from sqlite_utils import Database

from mapwatch.store.database.migrations import m0047_lean_events, migrations


@cache
def _table_before() -> tuple[str, str]:
    """The events table and its index as the migrations before 0047 leave them (a database in
    memory taken that far): their CREATE statements."""
    mem = Database(memory=True)
    migrations.apply(mem, stop_before=m0047_lean_events.NAME)
    table, index = (sql for (sql,) in mem.execute(
        "SELECT sql FROM sqlite_master WHERE name IN ('events', 'events_paper') ORDER BY type DESC"))
    mem.close()
    return table, index


def events_as_before(db: Database) -> None:
    """The view `events` (0047) back into the table it was, every row and the id sequence kept."""
    conn = db.conn
    (table_sql,) = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()
    assert table_sql.startswith("CREATE VIEW"), "not a database of migration 0047"
    with conn:
        conn.execute("CREATE TEMP TABLE held_events AS SELECT * FROM events")
        (seq,) = conn.execute("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'event_log'").fetchone()
        conn.execute("DROP VIEW events")
        conn.execute("DROP TABLE event_log")
        for create in _table_before():
            conn.execute(create)
        conn.execute("INSERT INTO events SELECT * FROM temp.held_events ORDER BY id")
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'", (seq,))
        conn.execute("INSERT INTO sqlite_sequence (name, seq) SELECT 'events', ? WHERE ? > 0"
                     " AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events')", (seq, seq))
        conn.execute("DROP TABLE temp.held_events")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name = ?", (m0047_lean_events.NAME,))


@contextmanager
def events_as_today(db: Database) -> Iterator[Database]:
    """Within the block, `db` (stopped before 0047) stores and reads events as today's code does."""
    with db.conn:
        m0047_lean_events.migrate(db)
    try:
        yield db
    finally:
        events_as_before(db)
