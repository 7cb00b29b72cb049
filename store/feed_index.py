"""The feeds' index of who newly cites each direction (tables of migration 0009), kept
current from the events and pages stored since its last update, so that publishing a
tick's feeds reads bounded ranges, not every event (README: Feeds).

- A new citation event adds (direction, citer) for the directions its cited paper is
  placed in, unless the citer is already there (events only grow in time, so the first
  one stays the first).
- A page stored again whose placements differ from those the index saw (a paper placed in
  a new direction, or taken out of one) has its citers recomputed in the directions it
  left and joined; the directions' paper counts are recomputed with them.
The first update builds it whole (one pass over the events).
"""

from __future__ import annotations

from sqlite_utils import Database

_FIRSTS = ("SELECT pl.direction_slug, e.citing_id, min(e.seen_at), min(e.id) FROM events e"
           " JOIN placements pl ON pl.paper_id = e.paper_id WHERE e.kind = 'citation'")
_STATS = ("SELECT pl.direction_slug, count(*), min(p.first_seen) FROM placements pl"
          " JOIN papers p ON p.id = pl.paper_id")


def update(db: Database) -> None:
    """Bring the index up to the newest event and page; one transaction."""
    conn = db.conn
    e1 = conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
    s1 = conn.execute("SELECT coalesce(max(id), 0) FROM snapshots").fetchone()[0]
    state = conn.execute("SELECT last_event_id, last_snapshot_id FROM feed_index_state WHERE id = 1").fetchone()
    if state is not None and tuple(state) == (e1, s1):
        return
    with db.atomic():
        if state is None:
            _build(db)
        else:
            _advance(db, state[0], state[1], e1)
        conn.execute("INSERT INTO feed_index_state (id, last_event_id, last_snapshot_id) VALUES (1, ?, ?)"
                     " ON CONFLICT(id) DO UPDATE SET last_event_id = excluded.last_event_id,"
                     " last_snapshot_id = excluded.last_snapshot_id", (e1, s1))


def _build(db: Database) -> None:
    conn = db.conn
    for table in ("feed_direction_citers", "feed_placements", "feed_direction_stats"):
        conn.execute(f"DELETE FROM {table}")
    conn.execute("INSERT INTO feed_placements SELECT paper_id, direction_slug FROM placements")
    conn.execute(f"INSERT INTO feed_direction_citers {_FIRSTS} GROUP BY 1, 2")
    conn.execute(f"INSERT INTO feed_direction_stats {_STATS} GROUP BY 1")


def _advance(db: Database, e0: int, s0: int, e1: int) -> None:
    conn = db.conn
    conn.execute(f"INSERT OR IGNORE INTO feed_direction_citers {_FIRSTS} AND e.id > ? AND e.id <= ? GROUP BY 1, 2",
                 (e0, e1))
    moved = [r[0] for r in conn.execute(
        "SELECT paper_id FROM (SELECT DISTINCT paper_id FROM snapshots WHERE id > ?) s WHERE"
        " EXISTS (SELECT direction_slug FROM placements WHERE paper_id = s.paper_id"
        "         EXCEPT SELECT direction_slug FROM feed_placements WHERE paper_id = s.paper_id)"
        " OR EXISTS (SELECT direction_slug FROM feed_placements WHERE paper_id = s.paper_id"
        "            EXCEPT SELECT direction_slug FROM placements WHERE paper_id = s.paper_id)", (s0,))]
    if not moved:
        return
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS feed_moved (paper_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.feed_moved")
    conn.executemany("INSERT INTO temp.feed_moved VALUES (?)", [(m,) for m in moved])
    slugs = [r[0] for r in conn.execute(
        "SELECT direction_slug FROM placements WHERE paper_id IN (SELECT paper_id FROM temp.feed_moved)"
        " UNION SELECT direction_slug FROM feed_placements WHERE paper_id IN (SELECT paper_id FROM temp.feed_moved)")]
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS feed_slugs (slug TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.feed_slugs")
    conn.executemany("INSERT INTO temp.feed_slugs VALUES (?)", [(s,) for s in slugs])
    conn.execute("CREATE TEMP TABLE IF NOT EXISTS feed_citers (citing_id TEXT PRIMARY KEY)")
    conn.execute("DELETE FROM temp.feed_citers")
    conn.execute("INSERT OR IGNORE INTO temp.feed_citers SELECT citing_id FROM events"
                 " WHERE kind = 'citation' AND paper_id IN (SELECT paper_id FROM temp.feed_moved)")
    conn.execute("DELETE FROM feed_direction_citers WHERE direction_slug IN (SELECT slug FROM temp.feed_slugs)"
                 " AND citing_id IN (SELECT citing_id FROM temp.feed_citers)")
    conn.execute(f"INSERT INTO feed_direction_citers {_FIRSTS}"
                 " AND e.citing_id IN (SELECT citing_id FROM temp.feed_citers)"
                 " AND pl.direction_slug IN (SELECT slug FROM temp.feed_slugs) GROUP BY 1, 2")
    conn.execute("DELETE FROM feed_placements WHERE paper_id IN (SELECT paper_id FROM temp.feed_moved)")
    conn.execute("INSERT INTO feed_placements SELECT paper_id, direction_slug FROM placements"
                 " WHERE paper_id IN (SELECT paper_id FROM temp.feed_moved)")
    conn.execute("DELETE FROM feed_direction_stats WHERE direction_slug IN (SELECT slug FROM temp.feed_slugs)")
    conn.execute(f"INSERT INTO feed_direction_stats {_STATS}"
                 " WHERE pl.direction_slug IN (SELECT slug FROM temp.feed_slugs) GROUP BY 1")
