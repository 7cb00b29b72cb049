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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from sqlite_utils import Database

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


# Citations touching papers, both directions: (paper, neighbour, paper_cites_neighbour); with the
# column the neighbour is read from, for `within`.
_TOUCHING = (("SELECT citing_id AS paper, cited_id AS neighbour, 1 AS cites FROM citations WHERE citing_id IN ({})",
              "cited_id"),
             ("SELECT cited_id AS paper, citing_id AS neighbour, 0 AS cites FROM citations WHERE cited_id IN ({})",
              "citing_id"))


def _touching(db: Database, papers: Sequence[str], within: str | None = None) -> Iterator[list[tuple[str, str, int]]]:
    """Per chunk of `papers`, in order: (paper, neighbour, paper_cites_neighbour) for the
    citations touching its papers, both directions; `within` (a JSON array of ids): only those
    whose neighbour is in it, tested in SQLite (made a temporary index once a statement; the
    unary + keeps SQLite from looking up every (paper, id) pair in the key instead of reading
    each paper's citations once). A chunk is read only when its rows are asked for."""
    if within is None:
        sides = [rows_by_chunk(db, sql, papers) for sql, _ in _TOUCHING]
    else:
        sides = [rows_by_chunk(db, f"{sql} AND +{neighbour} IN (SELECT value FROM json_each(?))", papers,
                               after=(within,)) for sql, neighbour in _TOUCHING]
    for cites, cited_by in zip(*sides, strict=True):
        yield [(r["paper"], r["neighbour"], r["cites"]) for r in (*cites, *cited_by)]


def _expand(db: Database, frontier: Sequence[str], seen: dict[str, int],
            cap: int) -> list[tuple[str, str, int]] | None:
    """(node, neighbour, node_cites_neighbour) for every citation touching the frontier, sorted.
    Stops reading (None) as soon as the papers `seen` and the new neighbours pass `cap`: the
    search would give up after this level anyway, and the last level is the largest to read."""
    out: list[tuple[str, str, int]] = []
    new: set[str] = set()
    counted = 0
    for rows in _touching(db, sorted(frontier)):
        out += rows
        if len(seen) + len(out) > cap:  # as many new papers as rows at most: count them only then
            new.update(nbr for _, nbr, _ in out[counted:] if nbr not in seen)
            counted = len(out)
            if len(seen) + len(new) > cap:
                return None
    out.sort()
    return out


def _meets(db: Database, frontier: Sequence[str], reached: dict[str, int]) -> list[tuple[str, str, int]]:
    """(node, neighbour, node_cites_neighbour) for every citation joining the frontier to a
    paper in `reached`, sorted."""
    out = [row for rows in _touching(db, sorted(frontier), json.dumps(list(reached))) for row in rows]
    out.sort()
    return out


def citation_path(db: Database, a: str, b: str, max_steps: int = 6) -> CitationPath | None:
    """The shortest chain of citations from `a` to `b`, ignoring the direction of citation,
    of at most `max_steps` steps; None when there is none. A bidirectional breadth-first
    search over SQL, expanding the smaller side one level at a time: first the level's
    citations to the other side (a meet ends the search), then the whole level;
    PathSearchTooLarge if one side would visit more than MAX_PATH_VISITED papers."""
    start, end = resolve_paper(db, a), resolve_paper(db, b)
    if start.id == end.id:
        return CitationPath(start, end, ())
    # parent[side][node] = (neighbour one step closer to that side's origin, node_cites_neighbour)
    parent: list[dict[str, tuple[str, bool] | None]] = [{start.id: None}, {end.id: None}]
    dist: list[dict[str, int]] = [{start.id: 0}, {end.id: 0}]
    frontier: list[list[str]] = [[start.id], [end.id]]
    depth = [0, 0]
    while frontier[0] and frontier[1] and depth[0] + depth[1] < max_steps:
        side = 0 if len(frontier[0]) <= len(frontier[1]) else 1
        other = 1 - side
        # The first citation (in sorted order) reaching a paper not seen yet is its parent;
        # nbr cites node iff node does not cite nbr.
        joining = _meets(db, frontier[side], dist[other])
        met = {nbr: (node, not node_cites) for node, nbr, node_cites in reversed(joining)}
        meets = sorted(met.keys() - dist[side].keys())
        if meets:
            for nbr in meets:
                dist[side][nbr] = depth[side] + 1
                parent[side][nbr] = met[nbr]
            meet = min(meets, key=lambda n: (dist[other][n], n))
            return _build_path(db, start, end, meet, parent)
        rows = _expand(db, frontier[side], dist[side], MAX_PATH_VISITED)
        if rows is None:
            raise PathSearchTooLarge(start.id, end.id, MAX_PATH_VISITED)
        reached = {nbr: (node, not node_cites) for node, nbr, node_cites in reversed(rows)}
        nxt = sorted(reached.keys() - dist[side].keys())
        for nbr in nxt:
            dist[side][nbr] = depth[side] + 1
            parent[side][nbr] = reached[nbr]
        depth[side] += 1
        frontier[side] = nxt  # no paper of it is the other side's: _meets found none
    return None


def _build_path(db: Database, start: PaperRef, end: PaperRef, meet: str,
                parent: list[dict[str, tuple[str, bool] | None]]) -> CitationPath:
    # Walk from meet back to start, then from meet on to end: (source, target, source_cites_target).
    back: list[tuple[str, str, bool]] = []
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
    names = paper_refs(db, [x for s, t, _ in back for x in (s, t)])
    steps = tuple(PathStep(names[s], names[t], c) for s, t, c in back)
    return CitationPath(start, end, steps)
