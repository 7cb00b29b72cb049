"""A direction's PageRank brought up to date around what changed in its subgraph, without
reading the rest of it: a push of residuals (the "forward push" of local PageRank updates).

The PageRank mapwatch stores (networkx's: damping α, uniform teleport, a dangling paper's rank
spread uniformly) is y / Σy, where y solves

    y = 1 + α · y · P

and P is the subgraph's row-normalised adjacency, a paper citing none of the others having a
row of zeros. (Summing x = y / Σy gives back networkx's equation: the uniform teleport and
dangling terms are both the constant 1 / Σy.) Unlike x, y does not depend on the number of
papers, so a change in the graph changes y only downstream of where it happened:

- a paper that joins has y = 0 and a residual of 1 (its teleport term);
- a citation u → v added changes row u of P: each of u's targets is owed
  α · y_u · (its new share − its old share), a residual;
- a push takes a paper's residual r into its y and passes α · r / out-degree to each paper it
  cites; pushes run until no residual is above `eps`.

What is left unpushed (`drift`, the L1 norm of the residuals dropped) bounds the error: the
exact y* is y + r · (I − αP)⁻¹, whose rows sum to at most 1 / (1 − α), so
‖y − y*‖₁ ≤ drift / (1 − α), and for the normalised vectors
‖y / Σy − y* / Σy*‖₁ ≤ 2 · drift / ((1 − α) · Σy) (docs/graph.md, "Direction ranks updated by a
push").

Pure: the graph is read through the callables given, the caller owns the database."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

ALPHA, TOL = 0.85, 1.0e-6  # networkx's pagerank defaults: damping, tolerance a paper


def rank_place(value: float) -> float:
    """A PageRank or a score to 12 decimals: what orders a direction's papers first (equal
    places by cited-by count, then id). Stored as `direction_rank_scores.place` (migration
    0043 rounds as this does)."""
    return round(value, 12)


def rank_key(pagerank: float, cited: int, pid: str) -> tuple[float, int, str]:
    """A paper's place in its direction: PageRank to 12 decimals, then cited-by count, then id."""
    return -rank_place(pagerank), -cited, pid


@dataclass(frozen=True)
class Pushed:
    """The outcome of a push: the new y of every paper whose y changed (a paper that joined
    among them), how much Σy grew and the residual left unpushed (L1)."""

    y: dict[str, float]
    grown: float
    drift: float


class TooMuchToPush(Exception):
    """The push would touch more than its limit: the caller computes the direction whole."""


def push(*, joined: Iterable[str], gained: Mapping[str, set[str]], y: Callable[[str], float],
         outs: Callable[[str], Sequence[str]], eps: float, limit: int, alpha: float = ALPHA) -> Pushed:
    """The y of a direction's papers after `joined` papers joined it and the papers of
    `gained` gained those targets among their citations within it (`outs` gives a paper's
    targets within the direction as the graph is now, gained ones included; `y` its y as
    stored, a joined paper's being 0). Raises TooMuchToPush past `limit` pushes."""
    new = set(joined)
    residual = dict.fromkeys(new, 1.0)
    for citing, added in gained.items():
        if citing in new:  # its y is 0: nothing of it flowed along its old citations
            continue
        now = outs(citing)
        gained_here = added.intersection(now)
        if not gained_here:
            continue
        before = [t for t in now if t not in gained_here]
        mass = alpha * y(citing)
        if before:
            less = mass * (1.0 / len(now) - 1.0 / len(before))
            for t in before:
                residual[t] = residual.get(t, 0.0) + less
        share = mass / len(now)
        for t in gained_here:
            residual[t] = residual.get(t, 0.0) + share
    grew: dict[str, float] = {}
    queue = deque(p for p, r in residual.items() if abs(r) > eps)
    queued = set(queue)
    pushes = 0
    while queue:
        paper = queue.popleft()
        queued.discard(paper)
        r = residual.pop(paper)
        grew[paper] = grew.get(paper, 0.0) + r
        pushes += 1
        if pushes > limit:
            raise TooMuchToPush(f"more than {limit} pushes")
        targets = outs(paper)
        if not targets:
            continue  # dangling: its share leaves y, as networkx's uniform spread does for x
        share = alpha * r / len(targets)
        for t in targets:
            value = residual[t] = residual.get(t, 0.0) + share
            if abs(value) > eps and t not in queued:
                queue.append(t)
                queued.add(t)
    ys = {p: (0.0 if p in new else y(p)) + d for p, d in grew.items()}
    for paper in new - ys.keys():
        ys[paper] = 0.0
    return Pushed(y=ys, grown=sum(grew.values()), drift=sum(abs(r) for r in residual.values()))


def l1_bound(drift: float, total: float, alpha: float = ALPHA) -> float:
    """The bound on the L1 distance between the PageRank a push left (y / Σy) and the exact
    one of the same graph, from the residual dropped since the last whole computation."""
    return 2.0 * drift / ((1.0 - alpha) * total)
