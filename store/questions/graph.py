"""Graph questions, answered on the small part of the map each one needs.

Every function here pulls only the subgraph its question needs from SQLite (a paper's
citers and references, a bounded k-hop neighbourhood, one direction's papers) and caps the
work, so answers stay quick on a map of 200k papers. numpy and scipy are imported only where
an algorithm needs them (PageRank, at refresh time); nothing here loads the whole map.

- `related` (store/questions/related.py): papers most like a paper, by co-citation and
  bibliographic coupling.
- `citation_path` (store/questions/citation_path.py): the shortest chain of citations between two
  papers (either direction).
- `rising`: papers that gained the most citers in the last N days.
- `neighbourhood`: a paper's k-hop neighbourhood, for drawing.
- `compute_direction_ranks` / `update_direction_ranks` (store/questions/direction_pagerank.py) /
  `direction_ranks`: PageRank within each direction, stored (every direction, or those changed).
- `count_history`: a paper's stated cited-by count over its stored snapshots.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from sqlite_utils import Database

from mapwatch.store.clock import utc_now
from mapwatch.store.database.rows import named_rows, rows_in_chunks, scalar
from mapwatch.store.pages.page_dates import possible_iso
from mapwatch.store.questions import queries
from mapwatch.store.questions.direction_pagerank import (  # noqa: F401 (graph's names)
    RanksReport,
    compute_direction_ranks,
    update_direction_ranks,
)
from mapwatch.store.questions.direction_push import IN_RANK_ORDER, PAGERANK
from mapwatch.store.questions.paper_rows import citers_count_sql
from mapwatch.store.questions.types import PaperRef

# Caps on the work one question may do (rows read, papers visited).
MAX_NEIGHBOURHOOD = 500    # hard cap on nodes in a neighbourhood
NAMED_CITERS = 10          # new citers named per rising paper


# ---------------------------------------------------------------------------- lookups


def paper_refs(db: Database, ids: Iterable[str]) -> dict[str, PaperRef]:
    return {pid: PaperRef(pid, title, year) for pid, title, year in rows_in_chunks(
        db, "SELECT id, title, year FROM papers WHERE id IN ({})", dict.fromkeys(ids))}


def resolve_paper(db: Database, ref: str) -> PaperRef:
    """A paper by arXiv id, arXiv or map URL, or title (store.questions.queries.resolve_paper):
    PaperNotFound with the closest titles otherwise."""
    found = queries.resolve_paper(db, ref)
    return PaperRef(found.id, found.title, found.year)


def resolve_direction(db: Database, ref: str) -> tuple[str, str]:
    """(slug, name) of a direction by slug, map URL or name; DirectionNotFound otherwise."""
    found = queries.resolve_direction(db, ref)
    return found.slug, found.name


# ---------------------------------------------------------------------------- rising


@dataclass(frozen=True)
class RisingPaper:
    paper: PaperRef
    gained: int                           # citers gained in the window
    named_citers: tuple[PaperRef, ...]    # new citers named on pages (first NAMED_CITERS)
    count_before: int | None              # stated cited-by count before the window's first growth
    count_now: int | None                 # stated cited-by count now


@dataclass(frozen=True)
class Rising:
    since: str                 # ISO timestamp: the window's start
    days: int
    direction: str | None      # direction slug, when asked for one
    direction_name: str | None
    papers: tuple[RisingPaper, ...]


def rising(db: Database, now: datetime, days: int = 30, direction: str | None = None,
           limit: int = 10) -> Rising:
    """The papers that gained the most citers in the last `days` days.

    Gains are measured between stored versions of pages, so the first import is the
    baseline: a paper's gain is the larger of (a) the growth of its stated cited-by count
    (count events) and (b) the citers newly named on pages read before (citation events from
    a page's second or later snapshot)."""
    if days < 1:
        raise ValueError("days must be at least 1")
    since = (now - timedelta(days=days)).isoformat(timespec="seconds")
    slug = name = None
    join, args = "", [since]
    if direction is not None:
        slug, name = resolve_direction(db, direction)
        join = " CROSS JOIN placements pl ON pl.paper_id = k.id AND pl.direction_slug = ?"
        args = [slug, since]
    conn = db.conn
    grew: dict[str, int] = Counter()
    before: dict[str, int] = {}
    # The events of the period: those of the writes since (event_batches), read by their id
    # ranges, in this order (CROSS JOIN; NOT INDEXED: no index of every event built for it); each
    # event's paper `k` by its key.
    period = ("event_batches b CROSS JOIN event_log e NOT INDEXED ON e.id BETWEEN b.first_id AND b.last_id"
              " CROSS JOIN paper_keys k ON k.key = e.paper_key")
    for pid, old, new in conn.execute(
            f"SELECT k.id, e.old_count, e.new_count FROM {period}{join}"
            " WHERE e.citing_key IS NULL AND b.seen_at >= ? ORDER BY e.id", args):
        grew[pid] += new - old
        before.setdefault(pid, old)
    named: dict[str, list[str]] = {}
    for pid, citing in conn.execute(
            f"SELECT k.id, (SELECT c.id FROM paper_keys c WHERE c.key = e.citing_key) FROM {period}{join}"
            " CROSS JOIN snapshots s ON s.id = e.snapshot_id WHERE e.citing_key IS NOT NULL AND b.seen_at >= ?"
            " AND s.id > (SELECT min(s2.id) FROM snapshots s2 WHERE s2.paper_id = s.paper_id)"
            " ORDER BY e.id DESC", args):
        lst = named.setdefault(pid, [])
        if citing not in lst:
            lst.append(citing)
    gained = {pid: max(grew.get(pid, 0), len(named.get(pid, ()))) for pid in set(grew) | set(named)}
    counts = {pid: c for pid, c in rows_in_chunks(conn, "SELECT id, cited_by FROM papers WHERE id IN ({})", gained)}
    top = sorted((p for p in gained if gained[p] > 0),
                 key=lambda p: (-gained[p], -(counts.get(p) or 0), p))[:limit]
    names = paper_refs(db, [*top, *(c for p in top for c in named.get(p, [])[:NAMED_CITERS])])
    papers = tuple(
        RisingPaper(paper=names[p], gained=gained[p],
                    named_citers=tuple(names[c] for c in named.get(p, [])[:NAMED_CITERS]),
                    count_before=before.get(p), count_now=counts.get(p))
        for p in top)
    return Rising(since=since, days=days, direction=slug, direction_name=name, papers=papers)


# ---------------------------------------------------------------------------- neighbourhood


@dataclass(frozen=True)
class GraphNode:
    paper: PaperRef
    cited_by: int              # stated count, else the citers stored
    direction_slug: str | None  # main direction, None if the paper has no page
    direction: str | None
    depth: int                 # steps from the centre


@dataclass(frozen=True)
class Neighbourhood:
    center: PaperRef
    depth: int
    nodes: tuple[GraphNode, ...]       # the centre first
    edges: tuple[tuple[str, str], ...]  # (citing_id, cited_id) among the nodes
    truncated: bool                    # some neighbours were left out by max_nodes


def _neighbour_ids(db: Database, frontier: Sequence[str], exclude: set[str], limit: int) -> tuple[list[str], bool]:
    """Up to `limit` neighbours of the frontier not in `exclude`, most cited first; and
    whether some were left out."""
    found = {n for (n,) in rows_in_chunks(  # each chunk's keys go to both `{}`
        db, "SELECT cited_id FROM citations WHERE citing_id IN ({})"
        " UNION SELECT citing_id FROM citations WHERE cited_id IN ({})", frontier)}
    found -= exclude
    if len(found) <= limit:
        return sorted(found), False
    ids = list(found)
    weight: dict[str, int] = {pid: w for pid, w in rows_in_chunks(
        db, f"SELECT p.id, max(coalesce(p.cited_by, 0), {citers_count_sql('p.id')})"
        " FROM papers p WHERE p.id IN ({})", ids)}
    ids.sort(key=lambda p: (-weight.get(p, 0), p))
    return ids[:limit], True


def neighbourhood(db: Database, paper_id: str, depth: int = 1, max_nodes: int = 40) -> Neighbourhood:
    """The papers within `depth` citation steps of a paper (either direction), at most
    `max_nodes` of them (the most cited kept at each level), with the citations among them."""
    if not 1 <= depth <= 3:
        raise ValueError("depth must be 1, 2 or 3")
    max_nodes = max(1, min(max_nodes, MAX_NEIGHBOURHOOD))
    center = resolve_paper(db, paper_id)
    level = {center.id: 0}
    frontier = [center.id]
    truncated = False
    for d in range(1, depth + 1):
        if not frontier:
            break
        ids, cut = _neighbour_ids(db, frontier, set(level), max(0, max_nodes - len(level)))
        truncated = truncated or cut
        for n in ids:
            level[n] = d
        frontier = ids
    ids = list(level)
    refs = paper_refs(db, ids)
    info: dict[str, tuple[int, str | None, str | None]] = {}
    for pid, count, slug, name in rows_in_chunks(
            db, f"SELECT p.id, max(coalesce(p.cited_by, 0), {citers_count_sql('p.id')}),"
            " d.slug, d.name FROM papers p"
            " LEFT JOIN placements pl ON pl.paper_id = p.id AND pl.position = 1"
            " LEFT JOIN directions d ON d.slug = pl.direction_slug"
            " WHERE p.id IN ({})", ids):
        info[pid] = (count, slug, name)
    nodes = tuple(GraphNode(refs[p], info[p][0], info[p][1], info[p][2], level[p]) for p in ids)
    members = set(ids)
    edges = [(a, b) for a, b in rows_in_chunks(
        db, "SELECT citing_id, cited_id FROM citations WHERE citing_id IN ({})", ids) if b in members]
    return Neighbourhood(center=center, depth=depth, nodes=nodes, edges=tuple(sorted(edges)), truncated=truncated)


# ---------------------------------------------------------------------------- PageRank per direction


@dataclass(frozen=True)
class RankedPaper:
    paper: PaperRef
    rank: int            # 1 = highest PageRank within the direction
    pagerank: float
    cited_by: int | None  # stated count


@dataclass(frozen=True)
class DirectionRanks:
    slug: str
    name: str
    computed_at: str | None  # None: never computed
    papers: tuple[RankedPaper, ...]


def direction_ranks(db: Database, direction: str, limit: int = 10) -> DirectionRanks:
    """A direction's papers by their stored PageRank (store/questions/direction_pagerank.py);
    `computed_at`: when its PageRank was last computed, whole or by a push (the newest of its rows)."""
    slug, name = resolve_direction(db, direction)
    rows = named_rows(db, f"SELECT s.paper_id, p.title, p.year, {PAGERANK} AS pagerank, p.cited_by"
                          + IN_RANK_ORDER, (slug, limit))
    papers = tuple(RankedPaper(PaperRef(r["paper_id"], r["title"], r["year"]), rank, r["pagerank"], r["cited_by"])
                   for rank, r in enumerate(rows, 1))
    # a push rewrites only the rows whose score moved: the newest of them is the direction's
    newest = scalar(db, "SELECT max(computed_at) FROM direction_rank_scores WHERE direction_slug = ?", (slug,))
    return DirectionRanks(slug=slug, name=name, computed_at=newest if rows else None, papers=papers)


# ---------------------------------------------------------------------------- count history


@dataclass(frozen=True)
class CountPoint:
    data_through: str  # ISO date the page states its data is through
    cited_by: int


def count_history(db: Database, paper_id: str, *, today: date | None = None) -> tuple[CountPoint, ...]:
    """A paper's stated cited-by count over its stored snapshots, oldest first, one point per
    data-through date (the last stored wins). A snapshot whose date no page can claim on
    `today` (default: today in UTC; store/pages/page_dates.py), or whose count is not a number, is
    skipped: what an older version stored unchecked is not drawn."""
    pid = resolve_paper(db, paper_id).id
    return count_points(db.conn.execute(
        "SELECT data_through, cited_by FROM snapshots WHERE paper_id = ? AND data_through IS NOT NULL"
        " AND cited_by IS NOT NULL ORDER BY id", (pid,)), today or utc_now().date())


def count_points(snapshots: Iterable[tuple[str | None, object]], today: date) -> tuple[CountPoint, ...]:
    """`count_history` of (data through, cited by) pairs in the order they were stored (pure: the
    /paper card draws its chart from the snapshots its view already read)."""
    points: dict[str, int] = {}
    for through, cited in snapshots:
        if through is not None and type(cited) is int and possible_iso(through, today):
            points[through] = cited
    return tuple(CountPoint(t, c) for t, c in sorted(points.items()))
