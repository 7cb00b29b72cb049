"""Papers' integer keys (`paper_keys`, migration 0049): what the big tables hold in place of
text ids. How a key is made: store/database/migrations/_paper_keys.py."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from mapwatch.store.database.migrations._paper_keys import OUTSIDE_FIRST, arxiv_key
from mapwatch.store.database.rows import scalar


def _split(ids: Iterable[str]) -> tuple[dict[str, int], set[str]]:
    """The keys of the new-style arXiv ids among `ids` (their own numbers), and the other ids."""
    keys: dict[str, int] = {}
    others: set[str] = set()
    for pid in ids:
        key = arxiv_key(pid)
        if key is None:
            others.add(pid)
        else:
            keys[pid] = key
    return keys, others


def _looked_up(conn: sqlite3.Connection, ids: set[str]) -> dict[str, int]:
    """The stored keys of `ids` (those paper_keys holds), on its unique index."""
    if not ids:
        return {}
    return dict(conn.execute("SELECT k.id, k.key FROM json_each(?) j CROSS JOIN paper_keys k ON k.id = j.value",
                             (json.dumps(sorted(ids)),)).fetchall())


def keys_of(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, int]:
    """Each id's key, the ones not stored yet given one (in the caller's transaction). A new-style
    arXiv id is its own key; another id's is looked up, or the next from OUTSIDE_FIRST on."""
    keys, others = _split(ids)
    conn.executemany("INSERT OR IGNORE INTO paper_keys (key, id) VALUES (?, ?)", [(k, i) for i, k in keys.items()])
    found = _looked_up(conn, others)
    new = sorted(others - found.keys())
    if new:
        start = max(int(scalar(conn, "SELECT coalesce(max(key), 0) FROM paper_keys")) + 1, OUTSIDE_FIRST)
        conn.executemany("INSERT INTO paper_keys (key, id) VALUES (?, ?)", [(start + n, i) for n, i in enumerate(new)])
        found.update((i, start + n) for n, i in enumerate(new))
    return {**keys, **found}


def key_of(conn: sqlite3.Connection, paper_id: str) -> int:
    """`paper_id`'s key, given one if it has none yet."""
    return keys_of(conn, [paper_id])[paper_id]


# The citation `c` (a row of citation_edges, or none) that the event `e` (a row of the view
# `events`) is about, on its primary key. A LEFT JOIN of the view `citations` would be read whole:
# SQLite does not flatten a view that is a join into the right side of a LEFT JOIN.
EVENT_CITATION = (" LEFT JOIN citation_edges c"
                  " ON c.citing_key = (SELECT k.key FROM paper_keys k WHERE k.id = e.citing_id)"
                  " AND c.cited_key = (SELECT k.key FROM paper_keys k WHERE k.id = e.paper_id)")


def ids_of(conn: sqlite3.Connection, keys: Iterable[int]) -> dict[int, str]:
    """Each key's id, read on paper_keys' INTEGER PRIMARY KEY (the keys as one JSON array: an IN
    list of thousands is sorted into a temporary index first, this is read in order)."""
    return dict(conn.execute("SELECT k.key, k.id FROM json_each(?) j CROSS JOIN paper_keys k ON k.key = j.value",
                             (json.dumps(sorted(set(keys))),)).fetchall())


def stored_keys(conn: sqlite3.Connection, ids: Iterable[str]) -> dict[str, int]:
    """The keys of those of `ids` a citation or event can name, given none (a read): a new-style
    arXiv id's is its own number, any other's looked up (none: nothing names it)."""
    keys, others = _split(ids)
    return {**keys, **_looked_up(conn, others)}
