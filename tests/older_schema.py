"""The events and citations of a database older than migrations 0047 to 0049, made with today's
write path.

Tests of an earlier migration store a map into a database stopped before it (the older
schema), with the code of today. Today's code writes events into `event_log` (0047) and
citations into `citation_edges` (0048), both naming papers by `paper_keys` (0049), and reads
them through the views `events` and `citations`; an older database has the tables `events` and
`citations` instead.

- `as_today(db)`: for the time of a `with` block, `db`'s events and citations take today's form
  (0047's to 0049's own steps, which touch nothing else); on leaving, the form they had (the
  same statements), with every row.
- `beside_generated_map(tmp_path, stop_before)`: a database stopped before a migration, with
  tests/compact_answers.py's generated map (today's version) attached as `src` to copy from.
- `as_before(db)`: a database of today brought back to the tables `events` and `citations` as the
  migrations before 0047 leave them, and without 0047's to 0049's records, as a version before
  them left it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from pathlib import Path

from sqlite_utils import Database

from mapwatch.store.database.migrations import (
    m0047_lean_events,
    m0048_citation_seconds,
    m0049_paper_keys,
    migrations,
)
from tests import compact_answers as ca

# The objects 0047 to 0049 replace: the tables first, then their indexes.
_REPLACED = ("events", "citations", "events_paper", "citations_cited_seen", "citations_cited_seen_old")


def _statements(db: Database) -> list[str]:
    """The CREATE statements of `db`'s objects among _REPLACED, tables first."""
    rows = dict(db.execute(f"SELECT name, sql FROM sqlite_master WHERE name IN ({','.join('?' * len(_REPLACED))})",
                           _REPLACED).fetchall())
    return [rows[name] for name in _REPLACED if name in rows]


@cache
def _before() -> tuple[str, ...]:
    """The statements as the migrations before 0047 leave them (a database in memory taken that far)."""
    mem = Database(memory=True)
    migrations.apply(mem, stop_before=m0047_lean_events.NAME)
    statements = tuple(_statements(mem))
    mem.close()
    return statements


def _back(db: Database, statements: Sequence[str]) -> None:
    """The views `events` and `citations` back into the tables `statements` make, every row and
    the events' id sequence kept; no `paper_keys`."""
    conn = db.conn
    kinds = dict(conn.execute("SELECT name, type FROM sqlite_master WHERE name IN ('events', 'citations')").fetchall())
    assert kinds == {"events": "view", "citations": "view"}, "not a database of migrations 0047 to 0049"
    with conn:
        conn.execute("CREATE TEMP TABLE held_events AS SELECT * FROM events")
        conn.execute("CREATE TEMP TABLE held_citations AS SELECT * FROM citations")
        (seq,) = conn.execute("SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'event_log'").fetchone()
        for drop in ("VIEW events", "TABLE event_log", "VIEW citations", "TABLE citation_edges", "TABLE paper_keys"):
            conn.execute(f"DROP {drop}")
        for create in statements:
            conn.execute(create)
        conn.execute("INSERT INTO events SELECT * FROM temp.held_events ORDER BY id")
        conn.execute("INSERT INTO citations SELECT * FROM temp.held_citations ORDER BY citing_id, cited_id")
        conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = 'events'", (seq,))
        conn.execute("INSERT INTO sqlite_sequence (name, seq) SELECT 'events', ? WHERE ? > 0"
                     " AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'events')", (seq, seq))
        conn.execute("DROP TABLE temp.held_events")
        conn.execute("DROP TABLE temp.held_citations")
        conn.execute("DELETE FROM _sqlite_migrations WHERE name IN (?, ?, ?)",
                     (m0047_lean_events.NAME, m0048_citation_seconds.NAME, m0049_paper_keys.NAME))


def as_before(db: Database) -> None:
    """`db` (0047 to 0049 applied) as the migrations before 0047 leave it."""
    _back(db, _before())


@contextmanager
def as_today(db: Database) -> Iterator[Database]:
    """Within the block, `db` (stopped before 0047) stores and reads events and citations as
    today's code does."""
    had = _statements(db)
    with db.conn:
        m0047_lean_events.migrate(db)
        m0048_citation_seconds.migrate(db)
        m0049_paper_keys.migrate(db)
    try:
        yield db
    finally:
        _back(db, had)


def beside_generated_map(tmp_path: Path, stop_before: str) -> Database:
    """`tmp_path`/older.db at the migration before `stop_before`, with the generated map of
    tests/compact_answers.py (read twice by this version) attached as `src`."""
    ca.build("generated", tmp_path).close()
    db = Database(tmp_path / "older.db")
    migrations.apply(db, stop_before=stop_before)
    db.conn.execute("ATTACH ? AS src", (str(tmp_path / "generated.db"),))
    return db
