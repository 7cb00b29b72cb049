"""The push of store/questions/rank_push.py against the exact solution of y = 1 + α · y · P
(a dense linear solve, numpy's) and against networkx's PageRank: the identity it rests on, and
its error bound, on random graphs that gain papers and citations."""

from __future__ import annotations

import random

import networkx as nx
import numpy as np
import pytest

from mapwatch.store.questions.rank_push import ALPHA, TooMuchToPush, l1_bound, push

Graph = dict[str, list[str]]  # paper -> the papers it cites


def exact_y(graph: Graph) -> dict[str, float]:
    """y = 1 · (I − αP)⁻¹, P the row-normalised adjacency (a row of zeros for a dangling paper)."""
    order = sorted(graph)
    index = {p: i for i, p in enumerate(order)}
    p = np.zeros((len(order), len(order)))
    for paper, targets in graph.items():
        for t in targets:
            p[index[paper], index[t]] = 1.0 / len(targets)
    y = np.linalg.solve((np.eye(len(order)) - ALPHA * p).T, np.ones(len(order)))
    return dict(zip(order, map(float, y), strict=True))


def random_graph(rng: random.Random, n: int, dangling: float = 0.2) -> Graph:
    names = [f"p{i:04d}" for i in range(n)]
    return {p: ([] if rng.random() < dangling else sorted(set(rng.sample(names[:i], min(i, rng.randint(1, 6))))))
            for i, p in enumerate(names)}


def grown(rng: random.Random, graph: Graph, joining: int,
          citations: int) -> tuple[Graph, set[str], dict[str, set[str]]]:
    """`graph` with `joining` new papers (citing and cited by old ones) and `citations` new
    citations between old papers (a dangling paper among the citing ones): the new graph, the
    papers that joined, and each old paper's gained targets."""
    new = {p: list(ts) for p, ts in graph.items()}
    old = sorted(graph)
    joined = {f"n{i:03d}" for i in range(joining)}
    gained: dict[str, set[str]] = {}
    for j in sorted(joined):
        new[j] = sorted(set(rng.sample(old, 4)))
        for citer in rng.sample(old, 2):  # an old paper's page now lists the newcomer
            if j not in new[citer]:
                new[citer].append(j)
                gained.setdefault(citer, set()).add(j)
    dangling = [p for p in old if not new[p]]
    for k in range(citations):
        citing = dangling[0] if k == 0 and dangling else rng.choice(old)
        cited = rng.choice([p for p in old if p != citing])
        if cited not in new[citing]:
            new[citing].append(cited)
            gained.setdefault(citing, set()).add(cited)
    return new, joined, gained


def pushed(before: Graph, after: Graph, joined: set[str], gained: dict[str, set[str]], eps: float,
           limit: int = 10**7) -> tuple[dict[str, float], float, float]:
    """The push from `before`'s exact y: every paper's y after it, Σy, and the drift."""
    y0 = exact_y(before)
    result = push(joined=joined, gained=gained, y=y0.__getitem__, outs=after.__getitem__, eps=eps, limit=limit)
    y = {p: result.y.get(p, y0.get(p, 0.0)) for p in after}
    assert sum(y.values()) == pytest.approx(sum(y0.values()) + result.grown, rel=1e-12)
    return y, sum(y.values()), result.drift


def l1(a: dict[str, float], b: dict[str, float]) -> float:
    return sum(abs(a[p] - b[p]) for p in a)


def test_networkx_pagerank_is_y_normalised() -> None:
    """The identity the push rests on, against networkx (dangling papers included)."""
    graph = random_graph(random.Random(1), 300)
    y = exact_y(graph)
    total = sum(y.values())
    g = nx.DiGraph()
    g.add_nodes_from(graph)
    g.add_edges_from((p, t) for p, ts in graph.items() for t in ts)
    pr = nx.pagerank(g, tol=1e-14, max_iter=1000)
    assert l1({p: y[p] / total for p in y}, pr) < 1e-10


@pytest.mark.parametrize("seed", range(6))
def test_a_push_to_a_tiny_residual_is_the_exact_solution(seed: int) -> None:
    rng = random.Random(seed)
    before = random_graph(rng, 250)
    after, joined, gained = grown(rng, before, joining=5, citations=8)
    y, _, drift = pushed(before, after, joined, gained, eps=1e-13)
    assert l1(y, exact_y(after)) < 1e-9
    assert drift < 1e-9


@pytest.mark.parametrize("seed", range(6))
def test_the_error_left_is_within_the_bound_and_the_bound_is_not_idle(seed: int) -> None:
    rng = random.Random(seed)
    before = random_graph(rng, 250)
    after, joined, gained = grown(rng, before, joining=5, citations=8)
    exact = exact_y(after)
    y, total, drift = pushed(before, after, joined, gained, eps=1e-2)
    error = l1(y, exact)
    assert drift > 0 and 1e-6 < error <= drift / (1 - ALPHA) + 1e-9  # residuals were left, and bounded
    exact_total = sum(exact.values())
    normalised = l1({p: y[p] / total for p in y}, {p: exact[p] / exact_total for p in exact})
    assert normalised <= l1_bound(drift, total) + 1e-12


def test_a_joined_paper_alone_gets_its_teleport_and_passes_it_on() -> None:
    before: Graph = {"a": [], "b": ["a"]}
    after: Graph = {"a": [], "b": ["a"], "c": ["a", "b"]}
    y, _, _ = pushed(before, after, {"c"}, {}, eps=1e-15)
    assert y["c"] == 1.0  # cited by none: its y is exactly its teleport term
    assert l1(y, exact_y(after)) < 1e-12


def test_a_citation_from_a_paper_that_cited_none_sends_it_all_there() -> None:
    before: Graph = {"a": [], "b": [], "c": ["a"]}
    after: Graph = {"a": ["b"], "b": [], "c": ["a"]}
    y, _, _ = pushed(before, after, set(), {"a": {"b"}}, eps=1e-15)
    assert l1(y, exact_y(after)) < 1e-12


def test_past_the_limit_the_push_gives_up() -> None:
    rng = random.Random(9)
    before = random_graph(rng, 200)
    after, joined, gained = grown(rng, before, joining=3, citations=3)
    with pytest.raises(TooMuchToPush):
        pushed(before, after, joined, gained, eps=1e-13, limit=10)
