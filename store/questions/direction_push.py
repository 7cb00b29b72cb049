"""A direction's stored ranks brought up to date by a push (store/questions/rank_push.py) from
what a tick changed in it, for store/questions/direction_pagerank.py's update: the papers the
residual reaches and their citations are read, not the whole direction; the rows whose score
moved are written, and the direction's totals (`direction_rank_totals`).

A push is refused (the caller computes the direction whole) where the direction has fewer
than `push_from` papers, its scores are not in the form a push needs (never computed whole
since migration 0041), its last whole computation is `whole_every` old, the push would take
more than PUSH_LIMIT pushes a paper, or its L1 bound would pass networkx's own tolerance,
n · 10⁻⁶ (docs/graph.md, "Direction ranks updated by a push").

No rank is stored (migration 0043): a direction's order is the index
`direction_rank_scores_order` (place, then cited-by count, then id), so a push writes the rows
whose score moved and no other, and `recount` keeps the counts that order equal places."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import datetime, timedelta

from mapwatch.store.database.rows import named_row, one_column, rows_in_chunks, scalar
from mapwatch.store.questions.rank_push import TOL, TooMuchToPush, l1_bound, push, rank_place
from mapwatch.store.settings_table import DEFAULT_RANKS_WHOLE_EVERY

PUSH_FROM = 2_000  # a direction of fewer papers is computed whole when it changes (cheap, exact)
PUSH_EPS = 1.0e-4  # a residual of at most this (in y, where every paper's y is at least 1) stays unpushed
PUSH_LIMIT = 20    # pushes a paper of the direction, at most, before it is computed whole instead
WHOLE_EVERY = timedelta(seconds=DEFAULT_RANKS_WHOLE_EVERY)  # $MAPWATCH_RANKS_WHOLE_EVERY's default: a day


def push_direction(conn: sqlite3.Connection, slug: str, *, joined: set[str], edges: set[tuple[str, str]],
                   now: datetime, push_from: int = PUSH_FROM,
                   whole_every: timedelta = WHOLE_EVERY) -> tuple[int, float] | None:
    """Bring `slug` up to date by a push from what changed in it, where papers `joined` it and
    the citations `edges` were added among its papers (no paper left it); write the rows whose
    score moved: the number written, and the L1 bound of its PageRanks now. None, having
    written nothing, where it must be computed whole instead (the module's docstring). The
    counts of papers whose page changed are `recount`'s."""
    totals = named_row(conn, "SELECT whole, total, drift, computed_at FROM direction_rank_totals"
                             " WHERE direction_slug = ?", (slug,))
    if totals is None or totals["drift"] is None:
        return None
    if datetime.fromisoformat(totals["computed_at"]) + whole_every <= now:
        return None
    size = scalar(conn, "SELECT count(*) FROM direction_rank_scores WHERE direction_slug = ?", (slug,))
    if size < push_from:
        return None
    whole, total, drift = float(totals["whole"]), float(totals["total"]), float(totals["drift"])
    gained: dict[str, set[str]] = {}
    for citing, cited in edges:
        gained.setdefault(citing, set()).add(cited)
    # the joined papers' citers first (their index), each then looked up among the direction's
    # papers: SQLite's own choice read the direction's every placement for each chunk (47 ms a
    # direction at 1,000,000 papers, 9 of a busy tick's 11 s)
    for citer in rows_in_chunks(conn, "SELECT c.citing_id, c.cited_id FROM citations c CROSS JOIN placements pl"
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
    written = write_scores(conn, slug, scores, now.isoformat(timespec="seconds"))
    conn.execute("UPDATE direction_rank_totals SET total = ?, drift = ? WHERE direction_slug = ?",
                 (total, drift, slug))
    return written, bound


# A paper's row of direction_rank_scores written, new or not:
# (slug, paper, score, place, cited-by count, computed_at).
UPSERT_SCORES = ("INSERT INTO direction_rank_scores (direction_slug, paper_id, score, place, cited_by, computed_at)"
                 " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (direction_slug, paper_id) DO UPDATE SET"
                 " score = excluded.score, place = excluded.place, cited_by = excluded.cited_by,"
                 " computed_at = excluded.computed_at")


# A direction's papers in rank order, `LIMIT ?` of them from the first: the order index read
# forwards, the k-th row ranked k (as the view direction_ranks numbers them). Columns from s
# (direction_rank_scores), t (direction_rank_totals) and p (papers); parameters (slug, limit).
IN_RANK_ORDER = (" FROM direction_rank_scores s INDEXED BY direction_rank_scores_order"
                 " JOIN direction_rank_totals t ON t.direction_slug = s.direction_slug"
                 " JOIN papers p ON p.id = s.paper_id"
                 " WHERE s.direction_slug = ? ORDER BY s.place DESC, s.cited_by DESC, s.paper_id LIMIT ?")
PAGERANK = "s.score * (t.whole / t.total)"  # as the view direction_ranks computes it


def stored_score(conn: sqlite3.Connection, slug: str, pid: str) -> float | None:
    """A paper's stored score in a direction (None: not ranked there)."""
    score = scalar(conn, "SELECT score FROM direction_rank_scores WHERE direction_slug = ? AND paper_id = ?",
                   (slug, pid))
    return None if score is None else float(score)


def write_scores(conn: sqlite3.Connection, slug: str, scores: dict[str, float], stamp: str) -> int:
    """Write the papers' new `scores` in `slug` (stamped `stamp`), each with its place and its
    cited-by count now: the rows written. No other row moves (the order is the index's)."""
    counts = cited_by_counts(conn, scores)
    conn.executemany(UPSERT_SCORES, [(slug, pid, score, rank_place(score), counts.get(pid, 0), stamp)
                                     for pid, score in scores.items()])
    return len(scores)


def recount(conn: sqlite3.Connection, touched: dict[str, set[str]]) -> dict[str, int]:
    """Give each `touched` paper's rows (direction: papers) its cited-by count now, which orders
    equal places (a count changes only with its paper's page): the directions where a count
    changed, so their order may have moved, with the rows written in each."""
    counts = cited_by_counts(conn, {pid for papers in touched.values() for pid in papers})
    moved: dict[str, int] = {}
    for slug in sorted(touched):
        cursor = conn.executemany(
            "UPDATE direction_rank_scores SET cited_by = ? WHERE direction_slug = ? AND paper_id = ? AND cited_by != ?",
            [(counts.get(pid, 0), slug, pid, counts.get(pid, 0)) for pid in sorted(touched[slug])])
        if cursor.rowcount > 0:
            moved[slug] = cursor.rowcount
    return moved


def cited_by_counts(conn: sqlite3.Connection, papers: Iterable[str]) -> dict[str, int]:
    """The papers' stated cited-by counts (a paper without one is left out: 0 where it orders)."""
    return {r["id"]: r["cited_by"] for r in rows_in_chunks(
        conn, "SELECT id, cited_by FROM papers WHERE id IN ({}) AND cited_by IS NOT NULL", papers)}
