"""The feeds' index of who newly cites each direction (tables of migration 0009), kept
current from the events and pages stored since its last update, so that publishing a
tick's feeds reads bounded ranges, not every event (docs/feeds.md, "Feeds and web pages").

- A new citation event adds (direction, citer) for the directions its cited paper is
  placed in, unless the citer is already there (events only grow in time, so the first
  one stays the first).
- A page stored again whose placements differ from those the index saw: a paper placed in
  a new direction brings its citers there (a citer already there keeps the earlier of its
  two first events), reading only that paper's citation events; a paper taken out of a
  direction has its citers recomputed there from their own events. Those directions' paper
  counts are recounted (an index count each). Each costs what changed, not the map's size.
A row is at the first read (`at_first_read` 1) while each citation it stands for was known
when the cited paper was first read; the day counts count the other rows only.
The first update builds it whole (one pass over the events).
"""

from __future__ import annotations

import sqlite3

from sqlite_utils import Database

from mapwatch.store.database.paper_keys import EVENT_CITATION
from mapwatch.store.database.rows import named_row, one_column, scalar

# A citer's row is at the first read (1) while every citation of it into the direction's papers is
# (citations.at_first_read; docs/feeds.md, "What new means"): one new citation makes it new (0).
_FLAG = "min(coalesce(c.at_first_read, 0))"
_FIRSTS = (f"SELECT pl.direction_slug, e.citing_id, min(e.seen_at), min(e.id), {_FLAG} FROM events e"
           f" JOIN placements pl ON pl.paper_id = e.paper_id{EVENT_CITATION} WHERE e.kind = 'citation'")
_STATS = ("SELECT pl.direction_slug, count(*) AS papers, min(p.first_seen) AS since FROM placements pl"
          " JOIN papers p ON p.id = pl.paper_id")


def update(db: Database) -> None:
    """Bring the index up to the newest event and page; one transaction."""
    conn = db.conn
    e1 = scalar(conn, "SELECT coalesce(max(id), 0) FROM events")
    s1 = scalar(conn, "SELECT coalesce(max(id), 0) FROM snapshots")
    state = named_row(conn, "SELECT last_event_id, last_snapshot_id FROM feed_index_state WHERE id = 1")
    if state is not None and (state["last_event_id"], state["last_snapshot_id"]) == (e1, s1):
        return
    with db.atomic():
        if state is None:
            _build(db)
        else:
            _counting(conn, True)
            try:
                _advance(db, state["last_event_id"], state["last_snapshot_id"], e1)
            finally:
                _counting(conn, False)
        conn.execute("INSERT INTO feed_index_state (id, last_event_id, last_snapshot_id) VALUES (1, ?, ?)"
                     " ON CONFLICT(id) DO UPDATE SET last_event_id = excluded.last_event_id,"
                     " last_snapshot_id = excluded.last_snapshot_id", (e1, s1))


def _build(db: Database) -> None:
    conn = db.conn
    for table in ("feed_direction_citers", "feed_placements", "feed_direction_stats", "feed_direction_days"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute("INSERT INTO feed_placements SELECT paper_id, direction_slug FROM placements")
    conn.execute(f"INSERT INTO feed_direction_citers {_FIRSTS} GROUP BY 1, 2")
    conn.execute(f"INSERT INTO feed_direction_stats {_STATS} GROUP BY 1")
    conn.execute(f"INSERT INTO feed_direction_days {_DAYS} GROUP BY 1, 2")


# While the index advances, each row it adds, moves or drops is counted on its day (temporary
# triggers of this connection: the table has no other writer). Only new citers count: a row at
# the first read is not counted, and counts from the moment it turns new.
_DAYS = ("SELECT direction_slug, substr(first_seen, 1, 10), count(*) FROM feed_direction_citers"
         " WHERE at_first_read = 0")
_PLUS = ("INSERT INTO feed_direction_days SELECT new.direction_slug, substr(new.first_seen, 1, 10), 1"
         " WHERE new.at_first_read = 0 ON CONFLICT DO UPDATE SET citers = citers + 1;")
_MINUS = ("UPDATE feed_direction_days SET citers = citers - 1"
          " WHERE direction_slug = old.direction_slug AND day = substr(old.first_seen, 1, 10)"
          " AND old.at_first_read = 0;")
_COUNTERS = {"feed_days_ai": f"AFTER INSERT ON main.feed_direction_citers BEGIN {_PLUS} END",
             "feed_days_ad": f"AFTER DELETE ON main.feed_direction_citers BEGIN {_MINUS} END",
             "feed_days_au": ("AFTER UPDATE OF first_seen, at_first_read ON main.feed_direction_citers"
                              f" BEGIN {_MINUS} {_PLUS} END")}


def _counting(conn: sqlite3.Connection, on: bool) -> None:
    for name, body in _COUNTERS.items():
        sql = f"CREATE TEMP TRIGGER IF NOT EXISTS {name} {body}" if on else f"DROP TRIGGER IF EXISTS temp.{name}"
        conn.execute(sql)


def _advance(db: Database, e0: int, s0: int, e1: int) -> None:
    conn = db.conn
    # A citer already there keeps its first event; a new citation of it makes its row new.
    conn.execute(f"INSERT INTO feed_direction_citers {_FIRSTS} AND e.id > ? AND e.id <= ? GROUP BY 1, 2"
                 " ON CONFLICT (direction_slug, citing_id) DO UPDATE SET at_first_read = 0"
                 " WHERE excluded.at_first_read = 0 AND at_first_read = 1", (e0, e1))
    # The (paper, direction) pairs a page stored again joined or left, against what the index saw
    # (NOT INDEXED: the new snapshots by their id range, never a walk of every paper's).
    _temp(conn, "feed_joined", "paper_id TEXT, slug TEXT, PRIMARY KEY (paper_id, slug)")
    _temp(conn, "feed_left", "paper_id TEXT, slug TEXT, PRIMARY KEY (paper_id, slug)")
    conn.execute("INSERT INTO temp.feed_joined SELECT pl.paper_id, pl.direction_slug"
                 " FROM (SELECT DISTINCT paper_id FROM snapshots NOT INDEXED WHERE id > ?) s"
                 " CROSS JOIN placements pl ON pl.paper_id = s.paper_id"
                 " WHERE NOT EXISTS (SELECT 1 FROM feed_placements f WHERE f.paper_id = pl.paper_id"
                 "                   AND f.direction_slug = pl.direction_slug)", (s0,))
    conn.execute("INSERT INTO temp.feed_left SELECT f.paper_id, f.direction_slug"
                 " FROM (SELECT DISTINCT paper_id FROM snapshots NOT INDEXED WHERE id > ?) s"
                 " CROSS JOIN feed_placements f ON f.paper_id = s.paper_id"
                 " WHERE NOT EXISTS (SELECT 1 FROM placements pl WHERE pl.paper_id = f.paper_id"
                 "                   AND pl.direction_slug = f.direction_slug)", (s0,))
    joined = scalar(conn, "SELECT count(*) FROM temp.feed_joined")
    left = scalar(conn, "SELECT count(*) FROM temp.feed_left")
    if not joined and not left:
        return
    if left:  # the citers of a paper that left: recomputed in that direction from their own events
        _temp(conn, "feed_pairs", "slug TEXT, citing_id TEXT, PRIMARY KEY (slug, citing_id)")
        conn.execute("INSERT OR IGNORE INTO temp.feed_pairs SELECT l.slug, e.citing_id FROM temp.feed_left l"
                     " CROSS JOIN events e ON e.paper_id = l.paper_id WHERE e.kind = 'citation'")
        conn.execute("DELETE FROM feed_direction_citers WHERE (direction_slug, citing_id) IN"
                     " (SELECT slug, citing_id FROM temp.feed_pairs)")
        # (their citations by the primary key, each with its event's id: citations.event_id)
        conn.execute(f"INSERT INTO feed_direction_citers SELECT t.slug, c.citing_id, min(e.seen_at), min(e.id), {_FLAG}"
                     " FROM temp.feed_pairs t CROSS JOIN citations c ON c.citing_id = t.citing_id"
                     " CROSS JOIN placements pl ON pl.paper_id = c.cited_id AND pl.direction_slug = t.slug"
                     " CROSS JOIN events e ON e.id = c.event_id WHERE e.id <= ? GROUP BY 1, 2", (e1,))
    # The citers of a paper that joined: their row in that direction starts at the earlier of
    # the row they had (from the direction's other papers) and their first event citing it.
    conn.execute(f"INSERT INTO feed_direction_citers SELECT j.slug, e.citing_id, min(e.seen_at), min(e.id), {_FLAG}"
                 f" FROM temp.feed_joined j CROSS JOIN events e ON e.paper_id = j.paper_id{EVENT_CITATION}"
                 " WHERE e.kind = 'citation' AND e.id <= ? GROUP BY 1, 2"
                 " ON CONFLICT (direction_slug, citing_id) DO UPDATE SET"
                 " first_seen = min(first_seen, excluded.first_seen),"
                 " first_event_id = min(first_event_id, excluded.first_event_id),"
                 " at_first_read = min(at_first_read, excluded.at_first_read)", (e1,))
    conn.execute("DELETE FROM feed_placements WHERE (paper_id, direction_slug) IN"
                 " (SELECT paper_id, slug FROM temp.feed_left)")
    conn.execute("INSERT INTO feed_placements SELECT paper_id, slug FROM temp.feed_joined")
    _restat(db)


def _restat(db: Database) -> None:
    """Paper counts of the directions papers joined or left (an index count each); the first
    paper's first_seen from the papers that joined, recomputed whole where one left."""
    conn = db.conn
    slugs = one_column(conn, "SELECT slug FROM temp.feed_joined UNION SELECT slug FROM temp.feed_left")
    for slug in slugs:
        papers = scalar(conn, "SELECT count(*) FROM placements WHERE direction_slug = ?", (slug,))
        old = named_row(conn, "SELECT since FROM feed_direction_stats WHERE direction_slug = ?", (slug,))
        lost = conn.execute("SELECT 1 FROM temp.feed_left WHERE slug = ? LIMIT 1", (slug,)).fetchone()
        if not papers:
            conn.execute("DELETE FROM feed_direction_stats WHERE direction_slug = ?", (slug,))
            continue
        if old is None or lost:
            stats = named_row(conn, f"{_STATS} WHERE pl.direction_slug = ?", (slug,))
            assert stats is not None  # an aggregate always has its one row
            since = stats["since"]
        else:
            new = scalar(conn, "SELECT min(p.first_seen) FROM temp.feed_joined j JOIN papers p ON p.id = j.paper_id"
                               " WHERE j.slug = ?", (slug,))
            since = min(old["since"], new) if new is not None else old["since"]
        conn.execute("INSERT INTO feed_direction_stats VALUES (?, ?, ?) ON CONFLICT (direction_slug)"
                     " DO UPDATE SET papers = excluded.papers, since = excluded.since", (slug, papers, since))


def _temp(conn: sqlite3.Connection, name: str, columns: str) -> None:
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {name} ({columns})")
    conn.execute(f"DELETE FROM temp.{name}")
