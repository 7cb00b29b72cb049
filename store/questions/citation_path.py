"""/path: the shortest chain of citations between two papers, either direction of citation.

A bidirectional breadth-first search over SQLite (the citations table's two indexes),
expanding the smaller side one level at a time; the work is capped by MAX_PATH_VISITED.

Before a level is read into Python, SQLite is asked for the citations that join it to a
paper the other side has reached (`_meets`): where the two sides meet, that small set is the
answer, and the level's other citations (tens of thousands at a million papers) are never
read. The path found is the one the whole level would give: a paper's parent is the first
joining citation in sorted order either way."""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from mapwatch.store.database.paper_keys import ids_of, stored_keys
from mapwatch.store.database.rows import rows_by_chunk
from mapwatch.store.errors import PathSearchTooLarge
from mapwatch.store.questions.graph import paper_refs, resolve_paper
from mapwatch.store.questions.types import PaperRef

MAX_PATH_VISITED = 50_000  # papers one side of the path search may visit


@dataclass(frozen=True)
class PathStep:
    source: PaperRef  # the step's earlier paper along the chain
    target: PaperRef
    source_cites_target: bool

    @property
    def text(self) -> str:
        verb = "cites" if self.source_cites_target else "is cited by"
        return f"{self.source.id} {verb} {self.target.id}"


@dataclass(frozen=True)
class CitationPath:
    start: PaperRef
    end: PaperRef
    steps: tuple[PathStep, ...]

    @property
    def papers(self) -> tuple[PaperRef, ...]:
        return (self.start, *(s.target for s in self.steps))


# Citations touching papers, both directions: (paper, neighbour, paper_cites_neighbour), each paper
# by its key (paper_keys: no id is read for a row); with the column the neighbour is read from,
# for `within`.
_TOUCHING = (("SELECT citing_key AS paper, cited_key AS neighbour, 1 AS cites FROM citation_edges"
              " WHERE citing_key IN ({})", "cited_key"),
             ("SELECT cited_key AS paper, citing_key AS neighbour, 0 AS cites FROM citation_edges"
              " WHERE cited_key IN ({})", "citing_key"))


def _touching(db: Database, papers: Sequence[int], within: str | None = None) -> Iterator[list[tuple[int, int, int]]]:
    """Per chunk of `papers` (keys), in order: (paper, neighbour, paper_cites_neighbour) for the
    citations touching its papers, both directions; `within` (a JSON array of keys): only those
    whose neighbour is in it, tested in SQLite (made a temporary index once a statement; the
    unary + keeps SQLite from looking up every (paper, key) pair in the key instead of reading
    each paper's citations once). A chunk is read only when its rows are asked for."""
    if within is None:
        sides = [rows_by_chunk(db, sql, papers) for sql, _ in _TOUCHING]
    else:
        sides = [rows_by_chunk(db, f"{sql} AND +{neighbour} IN (SELECT value FROM json_each(?))", papers,
                               after=(within,)) for sql, neighbour in _TOUCHING]
    for cites, cited_by in zip(*sides, strict=True):
        yield [(r["paper"], r["neighbour"], r["cites"]) for r in (*cites, *cited_by)]


class _Papers:
    """The ids of the papers the search has met, by key, each read once when first needed: the
    search runs on keys (SQL reads the citations by key), in the order of the ids where order
    decides (a paper's parent is the first joining citation in the order of its papers' ids)."""

    def __init__(self, db: Database, keys: dict[str, int]) -> None:
        self.conn = db.conn
        self.id = {k: i for i, k in keys.items()}

    def of(self, keys: Iterable[int]) -> dict[int, str]:
        """`self.id`, holding the ids of `keys` (those not read yet read now)."""
        self.id.update(ids_of(self.conn, set(keys) - self.id.keys()))
        return self.id

    def parents(self, frontier: Sequence[int], rows: list[tuple[int, int, int]]) -> dict[int, tuple[int, bool]]:
        """Each neighbour of `rows` (node, neighbour, node_cites_neighbour) with its parent: the
        first row reaching it in the order of (node's id, node_cites_neighbour), as a sort of
        the rows by id gives it; the neighbour cites the node iff the node does not cite it."""
        ids = self.of(frontier)
        rank = {node: 2 * n for n, node in enumerate(sorted(frontier, key=ids.__getitem__))}
        rows.sort(key=lambda r: rank[r[0]] + r[2], reverse=True)
        return {nbr: (node, not node_cites) for node, nbr, node_cites in rows}


def _expand(db: Database, frontier: Sequence[int], seen: dict[int, int], cap: int) -> list[tuple[int, int, int]] | None:
    """(node, neighbour, node_cites_neighbour) for every citation touching the frontier.
    Stops reading (None) as soon as the papers `seen` and the new neighbours pass `cap`: the
    search would give up after this level anyway, and the last level is the largest to read."""
    out: list[tuple[int, int, int]] = []
    new: set[int] = set()
    counted = 0
    for rows in _touching(db, sorted(frontier)):
        out += rows
        if len(seen) + len(out) > cap:  # as many new papers as rows at most: count them only then
            new.update(nbr for _, nbr, _ in out[counted:] if nbr not in seen)
            counted = len(out)
            if len(seen) + len(new) > cap:
                return None
    return out


def _meets(db: Database, frontier: Sequence[int], reached: dict[int, int]) -> list[tuple[int, int, int]]:
    """(node, neighbour, node_cites_neighbour) for every citation joining the frontier to a
    paper in `reached`."""
    return [row for rows in _touching(db, sorted(frontier), json.dumps(sorted(reached))) for row in rows]


def citation_path(db: Database, a: str, b: str, max_steps: int = 6) -> CitationPath | None:
    """The shortest chain of citations from `a` to `b`, ignoring the direction of citation,
    of at most `max_steps` steps; None when there is none. A bidirectional breadth-first
    search over SQL, expanding the smaller side one level at a time: first the level's
    citations to the other side (a meet ends the search), then the whole level;
    PathSearchTooLarge if one side would visit more than MAX_PATH_VISITED papers. It runs on
    the papers' keys (paper_keys); an id is read only where the order of ids decides."""
    start, end = resolve_paper(db, a), resolve_paper(db, b)
    if start.id == end.id:
        return CitationPath(start, end, ())
    keys = stored_keys(db.conn, [start.id, end.id])
    if len(keys) < 2:
        return None  # no citation names one of them
    papers = _Papers(db, keys)
    first, last = keys[start.id], keys[end.id]
    # parent[side][node] = (neighbour one step closer to that side's origin, node_cites_neighbour)
    parent: list[dict[int, tuple[int, bool] | None]] = [{first: None}, {last: None}]
    dist: list[dict[int, int]] = [{first: 0}, {last: 0}]
    frontier: list[list[int]] = [[first], [last]]
    depth = [0, 0]
    while frontier[0] and frontier[1] and depth[0] + depth[1] < max_steps:
        side = 0 if len(frontier[0]) <= len(frontier[1]) else 1
        other = 1 - side
        # The first citation (in the order of the ids) reaching a paper not seen yet is its parent.
        met = papers.parents(frontier[side], _meets(db, frontier[side], dist[other]))
        meets = list(met.keys() - dist[side].keys())
        if meets:
            for nbr in meets:
                dist[side][nbr] = depth[side] + 1
                parent[side][nbr] = met[nbr]
            ids = papers.of(meets)
            meet = min(meets, key=lambda n: (dist[other][n], ids[n]))
            return _build_path(db, start, end, meet, parent, papers)
        rows = _expand(db, frontier[side], dist[side], MAX_PATH_VISITED)
        if rows is None:
            raise PathSearchTooLarge(start.id, end.id, MAX_PATH_VISITED)
        reached = papers.parents(frontier[side], rows)
        nxt = sorted(reached.keys() - dist[side].keys())
        for nbr in nxt:
            dist[side][nbr] = depth[side] + 1
            parent[side][nbr] = reached[nbr]
        depth[side] += 1
        frontier[side] = nxt  # no paper of it is the other side's: _meets found none
    return None


def _build_path(db: Database, start: PaperRef, end: PaperRef, meet: int,
                parent: list[dict[int, tuple[int, bool] | None]], papers: _Papers) -> CitationPath:
    # Walk from meet back to start, then from meet on to end: (source, target, source_cites_target).
    back: list[tuple[int, int, bool]] = []
    node = meet
    while (p := parent[0][node]) is not None:
        prev, node_cites_prev = p
        back.append((prev, node, not node_cites_prev))
        node = prev
    back.reverse()
    node = meet
    while (p := parent[1][node]) is not None:
        nxt, node_cites_next = p
        back.append((node, nxt, node_cites_next))
        node = nxt
    ids = papers.of(x for s, t, _ in back for x in (s, t))
    names = paper_refs(db, [ids[x] for s, t, _ in back for x in (s, t)])
    steps = tuple(PathStep(names[ids[s]], names[ids[t]], c) for s, t, c in back)
    return CitationPath(start, end, steps)
