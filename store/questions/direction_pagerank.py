"""PageRank within each direction, stored in `direction_ranks`: every direction, or only those
the pages stored since the last computation can have changed.

A direction's rows are a function of its subgraph alone: its papers (placements), the
citations among them (rank flows from citing to cited) and, to order equal PageRanks, its
papers' stated cited-by counts. The graph is built in a canonical order (papers and citations
sorted by id), so the same subgraph gives the same floats whenever it is computed.

- `compute_direction_ranks`: every direction; the table replaced (the default; a first run).
- `update_direction_ranks` (each refresh): what changed since the last computation is read from
  the snapshots and citation events past `ranks_state` (a stored page writes both in the
  transaction that stores it, whoever stores it: a refresh, `mapwatch ingest`):
  - a direction a changed paper joined or left (its placements now against its rows in
    `direction_ranks`), or whose papers a new citation joins: PageRank computed again, its rows
    rewritten;
  - another direction of a changed paper (its cited-by count may have moved, which orders
    equal PageRanks): its stored PageRanks re-sorted with the counts now, the ranks that
    moved rewritten;
  - every other direction: its rows kept.
  No state yet (never computed, or by a version before migration 0017): every direction.
  The table is then the one `compute_direction_ranks` would write, but for `computed_at`: when
  the direction's PageRank was last computed, which a direction whose papers and citations did
  not change keeps (tests/system/test_direction_ranks.py).
"""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlite_utils import Database

from mapwatch.store.database.rows import named_row, one_column, rows_in_chunks
from mapwatch.store.errors import RankNotConverged

ALPHA, TOL, MAX_ITER = 0.85, 1.0e-6, 100  # networkx's pagerank defaults
Row = tuple[str, str, float, int, str]  # direction_slug, paper_id, pagerank, rank, computed_at


@dataclass(frozen=True)
class RanksReport:
    directions: int    # directions whose PageRank was computed
    papers: int        # rows written (for those; and ranks moved in re-sorted directions)
    full: bool = True  # every direction; else only what changed (update_direction_ranks)
    resorted: int = 0  # directions re-ordered by new cited-by counts, PageRank kept
    kept: int = 0      # other directions of changed papers: rows kept (their order had not moved)


def compute_direction_ranks(db: Database, now: datetime) -> RanksReport:
    """PageRank of each direction's papers over the citations among them, stored in
    `direction_ranks`, replacing the previous computation. One direction's subgraph at a time,
    never the whole map."""
    conn = db.conn
    marks = _marks(conn)  # read first: what is stored after it is read again by the next update
    stamp = _stamp(now)
    slugs = one_column(conn, "SELECT DISTINCT direction_slug FROM placements ORDER BY 1")
    rows = [row for slug in slugs for row in direction_rows(conn, slug, stamp)]
    with db.atomic():
        _write(conn, None, rows)
        _set_marks(conn, marks)
    return RanksReport(directions=len(slugs), papers=len(rows))


def update_direction_ranks(db: Database, now: datetime) -> RanksReport:
    """The stored ranks brought up to date with the pages stored since they were computed: only
    the directions those pages can have changed (the module's docstring), every direction when
    that is not known. Afterwards the table is what `compute_direction_ranks` would write, but
    for `computed_at` where a direction's subgraph did not change (the module's docstring).

    One transaction, taken before the first read: no page is stored between what is read and
    what is written (a re-sort compares the counts it reads with the order stored)."""
    conn = db.conn
    if _state(conn) == _marks(conn):
        return RanksReport(directions=0, papers=0, full=False)
    with db.atomic():
        marks, state = _marks(conn), _state(conn)
        if state is not None and state[0] <= marks[0] and state[1] <= marks[1]:
            return _update(conn, state, marks, _stamp(now))
    return compute_direction_ranks(db, now)  # never computed, or the marks are not this history's


def _update(conn: sqlite3.Connection, since: tuple[int, int], marks: tuple[int, int], stamp: str) -> RanksReport:
    structural, touched = changed_directions(conn, since, marks)
    rows: list[Row] = []
    for slug in sorted(structural):
        rows += direction_rows(conn, slug, stamp)
    moves: list[tuple[int, str, str]] = []
    resorted = 0
    for slug in sorted(touched.keys() - structural):
        moved = _resorted(conn, slug, touched[slug])
        moves += moved
        resorted += bool(moved)
    _write(conn, sorted(structural), rows)
    conn.executemany("UPDATE direction_ranks SET rank = ? WHERE direction_slug = ? AND paper_id = ?", moves)
    _set_marks(conn, marks)
    return RanksReport(directions=len(structural), papers=len(rows) + len(moves), full=False,
                       resorted=resorted, kept=len(touched) - len(structural) - resorted)


def changed_directions(conn: sqlite3.Connection, since: tuple[int, int],
                       upto: tuple[int, int]) -> tuple[set[str], dict[str, set[str]]]:
    """For the snapshots and events in (since, upto] (each a (snapshot id, event id) pair):
    the directions whose subgraph changed (a paper joined or left, a new citation joins two of
    its papers), and every direction a changed paper is placed in now or was ranked in, with
    those papers."""
    papers = one_column(conn, "SELECT DISTINCT paper_id FROM snapshots WHERE id > ? AND id <= ?", (since[0], upto[0]))
    now_in = set(_placements(conn, "placements", papers))
    was_in = set(_placements(conn, "direction_ranks", papers))
    structural = {slug for _, slug in now_in ^ was_in}
    edges = conn.execute("SELECT citing_id, paper_id FROM events WHERE id > ? AND id <= ? AND kind = 'citation'",
                         (since[1], upto[1])).fetchall()
    placed: dict[str, set[str]] = {}
    for pid, slug in _placements(conn, "placements", {pid for edge in edges for pid in edge}):
        placed.setdefault(pid, set()).add(slug)
    for citing, cited in edges:
        structural |= placed.get(citing, set()) & placed.get(cited, set())
    touched: dict[str, set[str]] = {}
    for pid, slug in now_in | was_in:
        touched.setdefault(slug, set()).add(pid)
    return structural, touched


def direction_rows(conn: sqlite3.Connection, slug: str, stamp: str) -> list[Row]:
    """One direction's rows: its papers by PageRank over the citations among them, equal
    PageRanks (to 12 decimals) by stated cited-by count, then id."""
    papers = conn.execute(  # each paper with its references in one string (arXiv ids: no \x1f)
        "SELECT pl.paper_id, p.cited_by, (SELECT group_concat(c.cited_id, char(31)) FROM citations c"
        " WHERE c.citing_id = pl.paper_id) FROM placements pl JOIN papers p ON p.id = pl.paper_id"
        " WHERE pl.direction_slug = ?", (slug,)).fetchall()
    members = {pid: cited or 0 for pid, cited, _ in papers}
    edges = [(pid, ref) for pid, _, refs in papers if refs for ref in refs.split("\x1f") if ref in members]
    pr = pagerank(members, edges)
    return [(slug, pid, pr[pid], i + 1, stamp) for i, pid in enumerate(_order(pr, members))]


def pagerank(nodes: Iterable[str], edges: Sequence[tuple[str, str]]) -> dict[str, float]:
    """PageRank (damping 0.85, uniform teleport and dangling weights, tolerance 1e-6 a node, at
    most 100 power iterations) of the graph of `nodes` and `edges` (distinct, between nodes):
    the same floats as networkx's `pagerank` of that graph built in sorted order (nodes, then
    edges), whatever order they are given in (tests/system/test_direction_ranks.py). The same steps as
    networkx's, on a sparse matrix built from the edges' indexes at once instead of through a
    graph of Python objects (several times faster on a direction of 20,000 papers)."""
    import numpy as np
    import scipy as sp

    order = sorted(nodes)
    n = len(order)
    if n == 0:
        return {}
    index = {pid: i for i, pid in enumerate(order)}
    row = np.fromiter((index[a] for a, _ in edges), dtype=np.int64, count=len(edges))
    col = np.fromiter((index[b] for _, b in edges), dtype=np.int64, count=len(edges))
    by_key = np.lexsort((col, row))  # the sorted graph's edge order: by citing, then cited
    a = sp.sparse.coo_array((np.ones(len(edges)), (row[by_key], col[by_key])), shape=(n, n),
                            dtype=float).asformat("csr")
    s = a.sum(axis=1)
    s[s != 0] = 1.0 / s[s != 0]
    a = sp.sparse.dia_array((s.T, 0), shape=a.shape).tocsr() @ a
    x = np.repeat(1.0 / n, n)
    p = np.repeat(1.0 / n, n)
    dangling = np.where(s == 0)[0]
    for _ in range(MAX_ITER):
        last = x
        x = ALPHA * (x @ a + sum(x[dangling]) * p) + (1 - ALPHA) * p  # builtin sum, as networkx's
        if np.absolute(x - last).sum() < n * TOL:
            return dict(zip(order, map(float, x), strict=True))
    raise RankNotConverged(f"PageRank did not converge in {MAX_ITER} iterations ({n} papers)")


def _key(pagerank: float, cited: int, pid: str) -> tuple[float, int, str]:
    """A paper's place in its direction: PageRank to 12 decimals, then cited-by count, then id."""
    return -round(pagerank, 12), -cited, pid


def _order(pr: dict[str, float], cited: dict[str, int]) -> list[str]:
    return sorted(pr, key=lambda p: _key(pr[p], cited.get(p, 0), p))


def _resorted(conn: sqlite3.Connection, slug: str, changed: set[str]) -> list[tuple[int, str, str]]:
    """(rank, slug, paper) for each paper of a direction whose rank moves when its stored
    PageRanks are ordered by the cited-by counts now, where the direction's papers and
    citations did not change and only the `changed` papers' counts can have (a count changes
    only with its paper's page). The stored order is then that of the other papers' keys still:
    each changed paper is taken out and put back where its key goes now, by a binary search
    that reads only the rows it compares with, not the whole direction."""
    stored = [pid for (pid,) in conn.execute(
        "SELECT paper_id FROM direction_ranks WHERE direction_slug = ? ORDER BY rank", (slug,))]
    keys: dict[str, tuple[float, int, str]] = {}

    def key(pid: str) -> tuple[float, int, str]:
        if pid not in keys:
            value, cited = conn.execute(
                "SELECT r.pagerank, p.cited_by FROM direction_ranks r JOIN papers p ON p.id = r.paper_id"
                " WHERE r.direction_slug = ? AND r.paper_id = ?", (slug, pid)).fetchone()
            keys[pid] = _key(value, cited or 0, pid)
        return keys[pid]

    moving = [pid for pid in stored if pid in changed]
    order = [pid for pid in stored if pid not in changed]
    for pid in moving:
        order.insert(bisect.bisect_left(order, key(pid), key=key), pid)
    return [(i + 1, slug, pid) for i, (pid, was) in enumerate(zip(order, stored, strict=True)) if pid != was]


def _marks(conn: sqlite3.Connection) -> tuple[int, int]:
    """The newest snapshot and event ids, read in one statement (one view of the database)."""
    s, e = conn.execute("SELECT (SELECT coalesce(max(id), 0) FROM snapshots),"
                        " (SELECT coalesce(max(id), 0) FROM events)").fetchone()
    return int(s), int(e)


def _state(conn: sqlite3.Connection) -> tuple[int, int] | None:
    """The marks the stored ranks were computed at; None: never computed (by this version)."""
    row = named_row(conn, "SELECT last_snapshot_id, last_event_id FROM ranks_state WHERE id = 1")
    return None if row is None else (int(row["last_snapshot_id"]), int(row["last_event_id"]))


def _set_marks(conn: sqlite3.Connection, marks: tuple[int, int]) -> None:
    conn.execute("INSERT INTO ranks_state (id, last_snapshot_id, last_event_id) VALUES (1, ?, ?)"
                 " ON CONFLICT(id) DO UPDATE SET last_snapshot_id = excluded.last_snapshot_id,"
                 " last_event_id = excluded.last_event_id", marks)


def _write(conn: sqlite3.Connection, slugs: Sequence[str] | None, rows: Sequence[Row]) -> None:
    """Make `rows` the stored rows of the directions `slugs` (None: of every direction): a row
    stored already is updated in place (the rank index changes only where a rank moved), a new
    one inserted, a paper's row no longer among them deleted."""
    if slugs is None:
        stored = conn.execute("SELECT direction_slug, paper_id FROM direction_ranks").fetchall()
    else:
        stored = [(r["direction_slug"], r["paper_id"]) for r in rows_in_chunks(
            conn, "SELECT direction_slug, paper_id FROM direction_ranks WHERE direction_slug IN ({})", slugs)]
    keep = {(slug, pid) for slug, pid, *_ in rows}
    conn.executemany("DELETE FROM direction_ranks WHERE direction_slug = ? AND paper_id = ?",
                     [key for key in stored if key not in keep])
    conn.executemany("INSERT INTO direction_ranks (direction_slug, paper_id, pagerank, rank, computed_at)"
                     " VALUES (?, ?, ?, ?, ?) ON CONFLICT (direction_slug, paper_id) DO UPDATE SET"
                     " pagerank = excluded.pagerank, rank = excluded.rank, computed_at = excluded.computed_at",
                     rows)


def _placements(conn: sqlite3.Connection, table: str, papers: Iterable[str]) -> list[tuple[str, str]]:
    """(paper, direction) of these papers in `table`: where they are placed (placements) or
    were ranked (direction_ranks)."""
    return [(r["paper_id"], r["direction_slug"]) for r in rows_in_chunks(
        conn, f"SELECT paper_id, direction_slug FROM {table} WHERE paper_id IN ({{}})", papers)]


def _stamp(now: datetime) -> str:
    return now.isoformat(timespec="seconds")
