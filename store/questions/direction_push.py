"""A direction's stored ranks brought up to date by a push (store/questions/rank_push.py) from
what a tick changed in it, for store/questions/direction_pagerank.py's update: the papers the
residual reaches and their citations are read, not the whole direction; the rows whose score
or rank moved are written, and the direction's totals (`direction_rank_totals`).

A push is refused (the caller computes the direction whole) where the direction has fewer
than `push_from` papers, its scores are not in the form a push needs (never computed whole
since migration 0041), its last whole computation is `whole_every` old, the push would take
more than PUSH_LIMIT pushes a paper, or its L1 bound would pass networkx's own tolerance,
n · 10⁻⁶ (docs/graph.md, "Direction ranks updated by a push").

`resort_direction` puts back the papers whose cited-by count moved in a direction whose papers
and citations did not (a count orders equal PageRanks), by the binary search a push's
re-sort uses."""

from __future__ import annotations

import bisect
import sqlite3
from collections.abc import Callable
from datetime import datetime, timedelta

from mapwatch.store.database.rows import named_row, one_column, rows_in_chunks, scalar
from mapwatch.store.questions.rank_push import TOL, TooMuchToPush, l1_bound, push, rank_key
from mapwatch.store.settings_table import DEFAULT_RANKS_WHOLE_EVERY

PUSH_FROM = 2_000  # a direction of fewer papers is computed whole when it changes (cheap, exact)
PUSH_EPS = 1.0e-4  # a residual of at most this (in y, where every paper's y is at least 1) stays unpushed
PUSH_LIMIT = 20    # pushes a paper of the direction, at most, before it is computed whole instead
WHOLE_EVERY = timedelta(seconds=DEFAULT_RANKS_WHOLE_EVERY)  # $MAPWATCH_RANKS_WHOLE_EVERY's default: a day


def push_direction(conn: sqlite3.Connection, slug: str, *, joined: set[str], edges: set[tuple[str, str]],
                   recounted: set[str], now: datetime, push_from: int = PUSH_FROM,
                   whole_every: timedelta = WHOLE_EVERY) -> tuple[int, float] | None:
    """Bring `slug` up to date by a push from what changed in it, where papers `joined` it and
    the citations `edges` were added among its papers (no paper left it), the `recounted`
    papers' cited-by counts possibly changed; write its rows: the number written, and the L1
    bound of its PageRanks now. None, having written nothing, where it must be computed whole
    instead (the module's docstring)."""
    totals = named_row(conn, "SELECT whole, total, drift, computed_at FROM direction_rank_totals"
                             " WHERE direction_slug = ?", (slug,))
    if totals is None or totals["drift"] is None:
        return None
    if datetime.fromisoformat(totals["computed_at"]) + whole_every <= now:
        return None
    stored = _stored_order(conn, slug)
    size = len(stored)
    if size < push_from:
        return None
    whole, total, drift = float(totals["whole"]), float(totals["total"]), float(totals["drift"])
    gained: dict[str, set[str]] = {}
    for citing, cited in edges:
        gained.setdefault(citing, set()).add(cited)
    for citer in rows_in_chunks(conn, "SELECT c.citing_id, c.cited_id FROM citations c JOIN placements pl"
                                " ON pl.paper_id = c.citing_id AND pl.direction_slug = ? WHERE c.cited_id IN ({})",
                                joined, (slug,)):
        gained.setdefault(citer["citing_id"], set()).add(citer["cited_id"])
    outs: dict[str, list[str]] = {}

    def targets(pid: str) -> list[str]:
        if pid not in outs:
            outs[pid] = one_column(conn, "SELECT c.cited_id FROM citations c JOIN placements pl ON pl.paper_id ="
                                         " c.cited_id AND pl.direction_slug = ? WHERE c.citing_id = ?", (slug, pid))
        return outs[pid]

    ys: dict[str, float] = {}

    def y(pid: str) -> float:  # read once a paper (the push asks again for the papers it grew)
        if pid not in ys:
            score = stored_score(conn, slug, pid)
            if score is None:
                raise TooMuchToPush(f"{pid} has no score in {slug}")  # not the graph the scores are of
            ys[pid] = score * whole
        return ys[pid]

    try:
        result = push(joined=joined, gained=gained, y=y, outs=targets, eps=PUSH_EPS, limit=PUSH_LIMIT * size)
    except TooMuchToPush:
        return None
    total += result.grown
    drift += result.drift
    bound = l1_bound(drift, total)
    if bound > (size + len(joined)) * TOL or min(result.y.values(), default=1.0) <= 0.0:
        return None
    scores = {pid: value / whole for pid, value in result.y.items()}
    written = _place(conn, slug, stored, scores, recounted, whole / total, now.isoformat(timespec="seconds"))
    conn.execute("UPDATE direction_rank_totals SET total = ?, drift = ? WHERE direction_slug = ?",
                 (total, drift, slug))
    return written, bound


def resort_direction(conn: sqlite3.Connection, slug: str, recounted: set[str]) -> int:
    """Put back where their keys go now the `recounted` papers of `slug`, a direction whose
    papers and citations did not change but whose papers' cited-by counts may have (a count
    changes only with its paper's page); the other papers keep their order. Only the ranks
    that moved are written: their number."""
    totals = named_row(conn, "SELECT whole, total FROM direction_rank_totals WHERE direction_slug = ?", (slug,))
    if totals is None:  # never ranked: no rows to order
        return 0
    scale = float(totals["whole"]) / float(totals["total"])
    return _place(conn, slug, _stored_order(conn, slug), {}, recounted, scale, "")


# A paper's row of direction_rank_scores written, new or not: (slug, paper, score, rank, computed_at).
UPSERT_SCORES = ("INSERT INTO direction_rank_scores (direction_slug, paper_id, score, rank, computed_at)"
                 " VALUES (?, ?, ?, ?, ?) ON CONFLICT (direction_slug, paper_id) DO UPDATE SET"
                 " score = excluded.score, rank = excluded.rank, computed_at = excluded.computed_at")


def stored_score(conn: sqlite3.Connection, slug: str, pid: str) -> float | None:
    """A paper's stored score in a direction (None: not ranked there)."""
    score = scalar(conn, "SELECT score FROM direction_rank_scores WHERE direction_slug = ? AND paper_id = ?",
                   (slug, pid))
    return None if score is None else float(score)


def _stored_order(conn: sqlite3.Connection, slug: str) -> list[str]:
    """The direction's papers by their stored rank (the rank index alone)."""
    return one_column(conn, "SELECT paper_id FROM direction_rank_scores WHERE direction_slug = ? ORDER BY rank",
                      (slug,))


def _place(conn: sqlite3.Connection, slug: str, stored: list[str], scores: dict[str, float], recounted: set[str],
           scale: float, stamp: str) -> int:
    """Write a direction's new `scores` (stamped `stamp`) and the ranks that moved: each paper
    whose score or cited-by count changed is taken out of the `stored` order and put back where
    its key goes now (binary search over the others, read as compared: a score, and a cited-by
    count only where two PageRanks tie); PageRank = score * `scale`. The number of rows
    written."""
    moving = scores.keys() | (recounted & set(stored))
    keys: dict[str, tuple[float, _Count, str]] = {}
    counts: dict[str, int] = {}

    def count(pid: str) -> int:
        if pid not in counts:
            counts[pid] = scalar(conn, "SELECT cited_by FROM papers WHERE id = ?", (pid,)) or 0
        return counts[pid]

    def key(pid: str) -> tuple[float, _Count, str]:
        if pid not in keys:
            score = scores.get(pid)
            if score is None:
                score = stored_score(conn, slug, pid) or 0.0
            rounded, _, _ = rank_key(score * scale, 0, pid)
            keys[pid] = (rounded, _Count(pid, count), pid)
        return keys[pid]

    order = [pid for pid in stored if pid not in moving]
    for pid in sorted(moving, key=key):
        order.insert(bisect.bisect_left(order, key(pid), key=key), pid)
    was = {pid: i for i, pid in enumerate(stored, 1)}
    upserts = [(slug, pid, scores[pid], i, stamp) for i, pid in enumerate(order, 1) if pid in scores]
    moves = [(i, slug, pid) for i, pid in enumerate(order, 1) if pid not in scores and was.get(pid) != i]
    conn.executemany(UPSERT_SCORES, upserts)
    conn.executemany("UPDATE direction_rank_scores SET rank = ? WHERE direction_slug = ? AND paper_id = ?", moves)
    return len(upserts) + len(moves)


class _Count:
    """A paper's cited-by count in a rank key (a higher count first), read from `papers` only
    when two keys' PageRanks tie and a comparison reaches it."""

    __slots__ = ("pid", "read")

    def __init__(self, pid: str, read: Callable[[str], int]) -> None:
        self.pid, self.read = pid, read

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Count) and self.read(self.pid) == other.read(other.pid)

    def __lt__(self, other: _Count) -> bool:
        return self.read(self.pid) > other.read(other.pid)

    __hash__ = None  # type: ignore[assignment]

