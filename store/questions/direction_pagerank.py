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
    `direction_rank_scores`), or whose papers a new citation joins: its PageRank brought up to
    date, its rows rewritten where they changed. A direction of at least `push_from` papers
    that papers only joined is updated by a push from what changed (store/questions/rank_push.py),
    which reads the papers around the change, not the whole direction, and leaves its
    PageRanks within a stated L1 bound of a whole computation; otherwise (a paper left, a small
    direction, the bound or the push's size exceeded, the last whole computation older than
    `whole_every`, the scores not yet in the form a push needs) it is computed whole;
  - another direction of a changed paper (its cited-by count may have moved, which orders
    equal PageRanks): its stored PageRanks kept, the paper's count in its rows brought up to
    date (the order is an index, so nothing else is written);
  - every other direction: its rows kept.
  No state yet (never computed, or by a version before migration 0017): every direction.
  Where every direction was computed whole, the table is the one `compute_direction_ranks`
  would write, but for `computed_at`: when the direction's PageRank was last computed, which a
  direction whose papers and citations did not change keeps (tests/system/test_direction_ranks.py).

Stored (migrations 0041 and 0043): a paper's `score`, its `place` (the score to 12 decimals)
and its cited-by count (`direction_rank_scores`), and a direction's sums
(`direction_rank_totals`); the view `direction_ranks` gives PageRank = score * whole / total
and the rank: the order of the index `direction_rank_scores_order` (place, count, id). A
whole computation stores networkx's PageRank x as the score with whole = total = Σy (so the
view reads x to the last bit); a push stores y / whole and moves total. Within a direction
every score has the same divisor, so the places order the PageRanks whatever total is.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlite_utils import Database

from mapwatch.store.database.rows import named_row, one_column, rows_in_chunks
from mapwatch.store.errors import RankNotConverged
from mapwatch.store.questions.direction_push import (
    PUSH_FROM,
    UPSERT_SCORES,
    WHOLE_EVERY,
    push_direction,
    recount,
)
from mapwatch.store.questions.rank_push import ALPHA, TOL, rank_key, rank_place

MAX_ITER = 100  # networkx's pagerank default, as ALPHA and TOL
Row = tuple[str, str, float, int, str]  # direction_slug, paper_id, pagerank, rank, computed_at
# A row of direction_rank_scores: direction_slug, paper_id, score, place, cited_by, computed_at.
Stored = tuple[str, str, float, float, int, str]


@dataclass(frozen=True)
class RanksReport:
    directions: int    # directions whose PageRank was computed whole
    papers: int        # rows written (for those; and counts written in re-sorted directions)
    full: bool = True  # every direction; else only what changed (update_direction_ranks)
    resorted: int = 0  # directions whose papers' cited-by counts changed (they order equal PageRanks), PageRank kept
    kept: int = 0      # other directions of changed papers: rows kept (no count had changed)
    pushed: int = 0    # directions updated by a push from what changed (not in `directions`)
    bound: float = 0.0  # the largest L1 bound of a pushed direction against a whole computation


@dataclass
class _Changes:
    """What the snapshots and events since the last computation changed, direction by direction."""

    structural: set[str] = field(default_factory=set)
    touched: dict[str, set[str]] = field(default_factory=dict)
    joined: dict[str, set[str]] = field(default_factory=dict)
    left: dict[str, set[str]] = field(default_factory=dict)
    edges: dict[str, set[tuple[str, str]]] = field(default_factory=dict)


def compute_direction_ranks(db: Database, now: datetime) -> RanksReport:
    """PageRank of each direction's papers over the citations among them, stored in
    `direction_ranks`, replacing the previous computation. One direction's subgraph at a time,
    never the whole map."""
    conn = db.conn
    marks = _marks(conn)  # read first: what is stored after it is read again by the next update
    stamp = _stamp(now)
    slugs = one_column(conn, "SELECT DISTINCT direction_slug FROM placements ORDER BY 1")
    rows: list[Stored] = []
    totals: list[tuple[str, float]] = []
    for slug in slugs:
        these, total = _whole(conn, slug, stamp)
        rows += these
        totals.append((slug, total))
    with db.atomic():
        _write(conn, None, rows)
        _write_totals(conn, None, totals, stamp)
        _set_marks(conn, marks)
    return RanksReport(directions=len(slugs), papers=len(rows))


def update_direction_ranks(db: Database, now: datetime, *, push_from: int = PUSH_FROM,
                           whole_every: timedelta = WHOLE_EVERY) -> RanksReport:
    """The stored ranks brought up to date with the pages stored since they were computed: only
    the directions those pages can have changed (the module's docstring), every direction when
    that is not known. Afterwards the table is what `compute_direction_ranks` would write, but
    for `computed_at` where a direction's subgraph did not change, and the PageRanks of the
    directions updated by a push (at least `push_from` papers), each within its L1 bound
    (`RanksReport.bound`; the module's docstring). A pushed direction is computed whole again
    once its last whole computation is `whole_every` old.

    One transaction, taken before the first read: no page is stored between what is read and
    what is written (a count read is the count the order then holds)."""
    conn = db.conn
    if _state(conn) == _marks(conn):
        return RanksReport(directions=0, papers=0, full=False)
    with db.atomic():
        marks, state = _marks(conn), _state(conn)
        if state is not None and state[0] <= marks[0] and state[1] <= marks[1]:
            return _update(conn, state, marks, now, push_from, whole_every)
    return compute_direction_ranks(db, now)  # never computed, or the marks are not this history's


def _update(conn: sqlite3.Connection, since: tuple[int, int], marks: tuple[int, int], now: datetime,
            push_from: int, whole_every: timedelta) -> RanksReport:
    stamp = _stamp(now)
    changes = _changes(conn, since, marks)
    structural, touched = changes.structural, changes.touched
    rows: list[Stored] = []
    wholes: list[str] = []
    totals: list[tuple[str, float]] = []
    pushed = 0
    bound = 0.0
    written = 0
    for slug in sorted(structural):
        outcome = None if changes.left.get(slug) else push_direction(
            conn, slug, joined=changes.joined.get(slug, set()), edges=changes.edges.get(slug, set()),
            now=now, push_from=push_from, whole_every=whole_every)
        if outcome is not None:
            rows_written, its_bound = outcome
            written += rows_written
            pushed += 1
            bound = max(bound, its_bound)
            continue
        these, total = _whole(conn, slug, stamp)
        rows += these
        wholes.append(slug)
        if these:
            totals.append((slug, total))
    _write(conn, wholes, rows)
    # a direction computed whole has just written every count as it is now
    counted = recount(conn, {slug: papers for slug, papers in touched.items() if slug not in wholes})
    recounted = {slug: n for slug, n in counted.items() if slug not in structural}
    written += sum(recounted.values())
    resorted = len(recounted)
    _write_totals(conn, wholes, totals, stamp)
    _set_marks(conn, marks)
    return RanksReport(directions=len(wholes), papers=len(rows) + written, full=False,
                       resorted=resorted, kept=len(touched) - len(structural) - resorted, pushed=pushed,
                       bound=bound)


def changed_directions(conn: sqlite3.Connection, since: tuple[int, int],
                       upto: tuple[int, int]) -> tuple[set[str], dict[str, set[str]]]:
    """For the snapshots and events in (since, upto] (each a (snapshot id, event id) pair):
    the directions whose subgraph changed (a paper joined or left, a new citation joins two of
    its papers), and every direction a changed paper is placed in now or was ranked in, with
    those papers."""
    changes = _changes(conn, since, upto)
    return changes.structural, changes.touched


def _changes(conn: sqlite3.Connection, since: tuple[int, int], upto: tuple[int, int]) -> _Changes:
    """`changed_directions`, with the papers that joined and left each direction and the new
    citations within each."""
    out = _Changes()
    papers = one_column(conn, "SELECT DISTINCT paper_id FROM snapshots WHERE id > ? AND id <= ?", (since[0], upto[0]))
    now_in = set(_placements(conn, "placements", papers))
    was_in = set(_placements(conn, "direction_rank_scores", papers))
    for pid, slug in now_in - was_in:
        out.joined.setdefault(slug, set()).add(pid)
    for pid, slug in was_in - now_in:
        out.left.setdefault(slug, set()).add(pid)
    out.structural = set(out.joined) | set(out.left)
    edges = conn.execute("SELECT citing_id, paper_id FROM events WHERE id > ? AND id <= ? AND kind = 'citation'",
                         (since[1], upto[1])).fetchall()
    placed: dict[str, set[str]] = {}
    for pid, slug in _placements(conn, "placements", {pid for edge in edges for pid in edge}):
        placed.setdefault(pid, set()).add(slug)
    for citing, cited in edges:
        for slug in placed.get(citing, set()) & placed.get(cited, set()):
            out.structural.add(slug)
            out.edges.setdefault(slug, set()).add((citing, cited))
    for pid, slug in now_in | was_in:
        out.touched.setdefault(slug, set()).add(pid)
    return out


def direction_rows(conn: sqlite3.Connection, slug: str, stamp: str) -> list[Row]:
    """One direction's rows: its papers by PageRank over the citations among them, equal
    PageRanks (to 12 decimals) by stated cited-by count, then id."""
    return [(slug, pid, score, i, at) for i, (slug, pid, score, _, _, at) in enumerate(_whole(conn, slug, stamp)[0], 1)]


def _whole(conn: sqlite3.Connection, slug: str, stamp: str) -> tuple[list[Stored], float]:
    """`direction_rows`, and Σy of the direction: the sum that turns PageRanks into the y a push
    updates (y = x · Σy, with Σy = n / (1 − α + α · the dangling papers' PageRank))."""
    # Each paper with its key and its references' keys in one string (paper_keys: the references
    # are told apart by key, no id read for each; a paper no citation names has no key).
    papers = conn.execute(
        "SELECT pl.paper_id, p.cited_by, k.key, (SELECT group_concat(c.cited_key) FROM citation_edges c"
        " WHERE c.citing_key = k.key) FROM placements pl JOIN papers p ON p.id = pl.paper_id"
        " LEFT JOIN paper_keys k ON k.id = pl.paper_id WHERE pl.direction_slug = ?", (slug,)).fetchall()
    members = {pid: cited or 0 for pid, cited, _, _ in papers}
    member_of = {key: pid for pid, _, key, _ in papers if key is not None}
    edges = [(pid, member_of[ref]) for pid, _, _, refs in papers if refs
             for ref in map(int, refs.split(",")) if ref in member_of]
    pr = pagerank(members, edges)
    return ([(slug, pid, pr[pid], rank_place(pr[pid]), members[pid], stamp) for pid in _order(pr, members)],
            _total(pr, edges))


def _total(pr: dict[str, float], edges: Sequence[tuple[str, str]]) -> float:
    """Σy of a direction whose PageRanks are `pr` (y = x · Σy; store/questions/rank_push.py).
    Where a paper is cited by none of the others its y is exactly 1, so Σy is 1 / its PageRank:
    then a paper that joins later uncited (a push gives it y = 1) ties with such papers as a
    whole computation would tie them. Otherwise Σy = n / (1 − α + α · the PageRank of the
    papers citing none of the others), from summing y = 1 + α · y · P."""
    if not pr:
        return 0.0
    cited = {ref for _, ref in edges}
    uncited = [pid for pid in pr if pid not in cited]
    if uncited:
        return 1.0 / pr[min(uncited)]
    citing = {pid for pid, _ in edges}
    dangling = sum(value for pid, value in pr.items() if pid not in citing)
    return len(pr) / (1.0 - ALPHA + ALPHA * dangling)


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


def _order(pr: dict[str, float], cited: dict[str, int]) -> list[str]:
    return sorted(pr, key=lambda p: rank_key(pr[p], cited.get(p, 0), p))


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


def _write(conn: sqlite3.Connection, slugs: Sequence[str] | None, rows: Sequence[Stored]) -> None:
    """Make `rows` the stored rows of the directions `slugs` (None: of every direction): a row
    stored already is updated in place, a new one inserted, a paper's row no longer among them
    deleted."""
    if slugs is None:
        stored = conn.execute("SELECT direction_slug, paper_id FROM direction_rank_scores").fetchall()
    else:
        stored = [(r["direction_slug"], r["paper_id"]) for r in rows_in_chunks(
            conn, "SELECT direction_slug, paper_id FROM direction_rank_scores WHERE direction_slug IN ({})", slugs)]
    keep = {(slug, pid) for slug, pid, *_ in rows}
    conn.executemany("DELETE FROM direction_rank_scores WHERE direction_slug = ? AND paper_id = ?",
                     [key for key in stored if key not in keep])
    conn.executemany(UPSERT_SCORES, rows)


def _write_totals(conn: sqlite3.Connection, slugs: Sequence[str] | None, totals: Sequence[tuple[str, float]],
                  stamp: str) -> None:
    """Make `totals` (direction, Σy) the sums of the directions `slugs` (None: of every
    direction) just computed whole: whole = total = Σy, no drift; a direction of `slugs`
    without a total (no papers left) loses its row."""
    if slugs is None:
        conn.execute("DELETE FROM direction_rank_totals")
    else:
        conn.executemany("DELETE FROM direction_rank_totals WHERE direction_slug = ?", [(slug,) for slug in slugs])
    conn.executemany("INSERT INTO direction_rank_totals (direction_slug, whole, total, drift, computed_at)"
                     " VALUES (?, ?, ?, 0.0, ?)", [(slug, total, total, stamp) for slug, total in totals])


def _placements(conn: sqlite3.Connection, table: str, papers: Iterable[str]) -> list[tuple[str, str]]:
    """(paper, direction) of these papers in `table`: where they are placed (placements) or
    were ranked (direction_rank_scores)."""
    return [(r["paper_id"], r["direction_slug"]) for r in rows_in_chunks(
        conn, f"SELECT paper_id, direction_slug FROM {table} WHERE paper_id IN ({{}})", papers)]


def _stamp(now: datetime) -> str:
    return now.isoformat(timespec="seconds")
