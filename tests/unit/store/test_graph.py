"""Graph questions on a hand-built map with known answers, and on the seeds."""

from __future__ import annotations

import itertools
from datetime import date, timedelta
from pathlib import Path

import networkx as nx
import pytest

from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.errors import DirectionNotFound, PaperNotFound
from mapwatch.store.questions import citation_path, graph, related
from tests.conftest import FakeClock
from tests.graphmap import CITES, ID, NAME, NAMES, build_map, make_page, store


@pytest.fixture
def hand_map(db, clock: FakeClock):
    build_map(db, clock())
    return db


def names(refs) -> list[str]:
    return [NAME[r.id] for r in refs]


# ---------------------------------------------------------------- related


def test_related_orders_by_co_citation_plus_coupling_and_names_the_shared_papers(hand_map) -> None:
    r = related.related(hand_map, ID["A"])
    assert r.paper.id == ID["A"] and r.complete
    got = [(NAME[x.paper.id], x.score, x.co_citations, x.coupling, x.link) for x in r.results]
    assert got == [
        ("B", 5, 3, 2, None),
        ("C", 2, 2, 0, None),
        ("E", 1, 1, 0, "cited by it"),
        ("D", 1, 0, 1, None),
        ("P1", 1, 0, 1, "cites it"),
    ]
    b = r.results[0]
    assert names(b.cited_together_by) == ["P1", "P2", "P5"]
    assert names(b.shared_references) == ["R1", "R2"]
    assert b.paper.title == "Paper B"


def test_related_can_leave_out_direct_citers_and_references(hand_map) -> None:
    r = related.related(hand_map, ID["A"], exclude_direct=True)
    assert [NAME[x.paper.id] for x in r.results] == ["B", "C", "D"]
    assert related.related(hand_map, ID["A"], limit=2).results[1].paper.id == ID["C"]


def test_related_of_an_isolated_paper_is_empty_and_unknown_papers_are_not_found(hand_map) -> None:
    assert related.related(hand_map, ID["Z"]).results == ()
    with pytest.raises(PaperNotFound):
        related.related(hand_map, "9999.99999")


def test_seeds_related_shows_the_shared_citers_and_references(db, seeds_dir: Path, clock: FakeClock) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    for a, b in (("2412.10400", "2507.04136"), ("2507.04136", "2412.10400")):
        top = related.related(db, a).results[0]
        assert top.paper.id == b
        assert {p.id for p in top.cited_together_by} == {"2509.02547", "2605.02913"}
        assert (top.co_citations, top.coupling) == (2, 11)
        assert len(top.shared_references) == 11
    # Accepts URLs like every other question.
    assert related.related(db, "https://arxiv.org/abs/2412.10400v3").paper.id == "2412.10400"


# ---------------------------------------------------------------- path


def step_texts(path: citation_path.CitationPath) -> list[str]:
    return [s.text.replace(s.source.id, NAME[s.source.id]).replace(s.target.id, NAME[s.target.id])
            for s in path.steps]


def test_path_marks_the_direction_of_each_step(hand_map) -> None:
    p = citation_path.citation_path(hand_map, ID["X1"], ID["X4"])
    assert p is not None
    assert step_texts(p) == ["X1 cites X2", "X2 is cited by X3", "X3 cites X4"]
    assert names(p.papers) == ["X1", "X2", "X3", "X4"]
    back = citation_path.citation_path(hand_map, ID["X4"], ID["X1"])
    assert back is not None
    assert step_texts(back) == ["X4 is cited by X3", "X3 cites X2", "X2 is cited by X1"]


def test_path_respects_max_steps_and_says_none_when_there_is_no_chain(hand_map) -> None:
    assert citation_path.citation_path(hand_map, ID["L0"], ID["L7"]) is None  # 7 steps > 6
    p = citation_path.citation_path(hand_map, ID["L0"], ID["L7"], max_steps=7)
    assert p is not None and len(p.steps) == 7
    assert step_texts(p)[:3] == ["L0 cites L1", "L1 is cited by L2", "L2 cites L3"]
    assert citation_path.citation_path(hand_map, ID["A"], ID["Z"]) is None
    assert citation_path.citation_path(hand_map, ID["A"], ID["X1"]) is None
    assert citation_path.citation_path(hand_map, ID["A"], ID["A"]).steps == ()


def test_path_lengths_match_networkx_on_every_pair(hand_map) -> None:
    g = nx.Graph()
    g.add_nodes_from(NAMES)
    g.add_edges_from((a, b) for a, bs in CITES.items() for b in bs)
    edges = {(ID[a], ID[b]) for a, bs in CITES.items() for b in bs}
    for a, b in itertools.combinations(NAMES, 2):
        p = citation_path.citation_path(hand_map, ID[a], ID[b])
        try:
            expected = nx.shortest_path_length(g, a, b)
        except nx.NetworkXNoPath:
            expected = None
        if expected is None or expected > 6:
            assert p is None, (a, b)
            continue
        assert p is not None and len(p.steps) == expected, (a, b)
        assert p.papers[0].id == ID[a] and p.papers[-1].id == ID[b]
        for s in p.steps:  # every step is a stored citation, in the stated direction
            edge = (s.source.id, s.target.id) if s.source_cites_target else (s.target.id, s.source.id)
            assert edge in edges


# ---------------------------------------------------------------- rising


def test_rising_orders_by_citers_gained_in_the_window(db, clock: FakeClock) -> None:
    q, s, t = "2201.00001", "2201.00002", "2201.00003"
    c1, c2 = "2201.00011", "2201.00012"
    t0 = date(2026, 9, 1)
    dirs = {q: ["b"], s: ["a"], t: ["a"]}

    def pages(counts: dict[str, int], citers: dict[str, list[str]], through: date):
        return [make_page(p, citers=citers.get(p, []), cited_by=n, through=through, directions=dirs[p])
                for p, n in counts.items()]

    store(db, pages({q: 10, s: 5, t: 3}, {q: [c1]}, t0), clock())
    assert graph.rising(db, clock()).papers == ()  # the first import is the baseline

    clock.advance(days=5)
    store(db, pages({q: 12, s: 9, t: 4}, {q: [c1, c2]}, t0 + timedelta(days=5)), clock())
    r = graph.rising(db, clock())
    assert [(p.paper.id, p.gained, p.count_before, p.count_now) for p in r.papers] == [
        (s, 4, 5, 9), (q, 2, 10, 12), (t, 1, 3, 4)]
    assert [c.id for c in r.papers[1].named_citers] == [c2]
    assert r.days == 30 and r.direction is None

    clock.advance(days=35)
    store(db, pages({q: 12, s: 9, t: 10}, {q: [c1, c2]}, t0 + timedelta(days=40)), clock())
    assert [(p.paper.id, p.gained) for p in graph.rising(db, clock()).papers] == [(t, 6)]
    assert [(p.paper.id, p.gained) for p in graph.rising(db, clock(), days=60).papers] == [
        (t, 7), (s, 4), (q, 2)]
    assert [(p.paper.id, p.gained) for p in graph.rising(db, clock(), days=60, limit=1).papers] == [(t, 7)]

    by_dir = graph.rising(db, clock(), days=60, direction="B")
    assert (by_dir.direction, by_dir.direction_name) == ("area/b", "B")
    assert [p.paper.id for p in by_dir.papers] == [q]
    with pytest.raises(DirectionNotFound):
        graph.rising(db, clock(), direction="nowhere")


def test_seeds_rising_after_an_older_import(db, make_older_seeds, seeds_dir: Path, clock: FakeClock) -> None:
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    clock.advance(days=10)
    ingest_paths(db, [seeds_dir], clock=clock)
    r = graph.rising(db, clock(), days=30)
    got = {p.paper.id: (p.gained, p.count_before, p.count_now, len(p.named_citers)) for p in r.papers}
    assert got == {"2412.10400": (3, 68, 71, 3), "2507.04136": (3, 18, 21, 3)}
    assert [p.paper.id for p in r.papers] == ["2412.10400", "2507.04136"]  # ties: most cited first


# ---------------------------------------------------------------- neighbourhood


def test_neighbourhood_depth_one_with_the_citations_among_its_papers(hand_map) -> None:
    n = graph.neighbourhood(hand_map, ID["A"])
    assert n.center.id == ID["A"] and n.nodes[0].paper.id == ID["A"] and n.nodes[0].depth == 0
    assert set(names(x.paper for x in n.nodes)) == {"A", "P1", "P2", "P3", "P5", "R1", "R2", "R3", "E"}
    assert {(NAME[a], NAME[b]) for a, b in n.edges} == {
        ("P1", "A"), ("P2", "A"), ("P3", "A"), ("P5", "A"),
        ("A", "R1"), ("A", "R2"), ("A", "R3"), ("A", "E"), ("P1", "E")}
    assert not n.truncated
    a = n.nodes[0]
    assert (a.direction_slug, a.direction) == ("area/core", "Core")
    assert {x.paper.id: x.cited_by for x in n.nodes}[ID["R1"]] == 3  # citers stored when no count is stated


def test_neighbourhood_caps_nodes_keeping_the_most_cited(hand_map) -> None:
    n = graph.neighbourhood(hand_map, ID["A"], max_nodes=4)
    assert n.truncated
    assert names(x.paper for x in n.nodes)[0] == "A"
    assert set(names(x.paper for x in n.nodes)) == {"A", "R1", "E", "R2"}  # R1: 3 citers; E, R2: 2
    deep = graph.neighbourhood(hand_map, ID["X1"], depth=2)
    assert {NAME[x.paper.id]: x.depth for x in deep.nodes} == {"X1": 0, "X2": 1, "X3": 2}
    with pytest.raises(ValueError):
        graph.neighbourhood(hand_map, ID["A"], depth=4)


# ---------------------------------------------------------------- PageRank


def test_direction_pagerank_is_computed_within_the_direction_and_stored(db, clock: FakeClock) -> None:
    k = {n: f"2301.{i:05d}" for i, n in enumerate(["K1", "K2", "K3", "K4", "O1", "O2", "O3"], 1)}
    cites = {"K2": ["K1"], "K3": ["K1", "K2"], "K4": ["K1", "K3"], "O1": ["K4"], "O2": ["K4"], "O3": ["K4"]}
    store(db, [make_page(k[n], refs=[k[r] for r in cites.get(n, [])],
                         directions=["dir"] if n.startswith("K") else ["other"]) for n in k], clock())
    report = graph.compute_direction_ranks(db, clock())
    assert (report.directions, report.papers) == (2, 7)
    ranks = graph.direction_ranks(db, "dir")
    assert [r.rank for r in ranks.papers] == [1, 2, 3, 4]
    order = [next(n for n in k if k[n] == r.paper.id) for r in ranks.papers]
    assert order[0] == "K1" and order[-1] == "K4"  # the citers outside the direction do not lift K4
    expected = nx.pagerank(nx.DiGraph([(a, b) for a, bs in cites.items() for b in bs if a[0] == b[0] == "K"]))
    assert order == sorted(expected, key=lambda n: -expected[n])
    assert ranks.computed_at == clock().isoformat(timespec="seconds")
    assert sum(r.pagerank for r in ranks.papers) == pytest.approx(1.0)

    clock.advance(days=1)
    graph.compute_direction_ranks(db, clock())  # replaces, never duplicates
    assert db["direction_ranks"].count == 7
    assert graph.direction_ranks(db, "area/other", limit=2).computed_at == clock().isoformat(timespec="seconds")
    assert [r.paper.id for r in graph.direction_ranks(db, "Other").papers] == [k["O1"], k["O2"], k["O3"]]


def test_direction_ranks_before_any_computation_is_empty(hand_map) -> None:
    r = graph.direction_ranks(hand_map, "core")
    assert (r.slug, r.name, r.computed_at, r.papers) == ("area/core", "Core", None, ())


# ---------------------------------------------------------------- count history


def test_count_history_one_point_per_data_through_date(db, make_older_seeds, seeds_dir, clock) -> None:
    ingest_paths(db, [make_older_seeds(5)], clock=clock)
    assert len(graph.count_history(db, "2412.10400")) == 1
    clock.advance(days=1)
    ingest_paths(db, [seeds_dir], clock=clock)
    assert graph.count_history(db, "2412.10400") == (
        graph.CountPoint("2026-09-14", 66), graph.CountPoint("2026-10-14", 71))


def test_refresh_stores_pagerank_after_a_tick_that_stored_pages(db, seeds_dir: Path, clock: FakeClock) -> None:
    from mapwatch.store.sources.refresh import refresh

    def tick() -> None:  # a tick's refresh, then its ranks step (as `mapwatch run` and `mapwatch refresh`)
        refresh(db, seeds_dir, clock=clock)
        graph.update_direction_ranks(db, clock())

    tick()
    r = graph.direction_ranks(db, "lr/reinforcement-learning-for-reasoning")
    assert [p.paper.id for p in r.papers] == ["2412.10400", "2507.04136"]  # 2507.04136 cites 2412.10400
    assert r.computed_at == clock().isoformat(timespec="seconds")
    clock.advance(hours=1)
    tick()  # nothing new stored: the stored ranks stand
    assert graph.direction_ranks(db, "Reinforcement learning for reasoning").computed_at == r.computed_at


def _reference_path_outcome(g: nx.Graph, a: str, b: str, cap: int, max_steps: int = 6) -> int | str | None:
    """The documented rule on networkx's graph: expand the smaller side one whole level at a
    time; a level that reaches the other side ends the search; else give up when a side has
    visited more than `cap` papers. Steps, "limit" or None."""
    if a == b:
        return 0
    dist = [{a: 0}, {b: 0}]
    frontier = [[a], [b]]
    depth = [0, 0]
    while frontier[0] and frontier[1] and depth[0] + depth[1] < max_steps:
        side = 0 if len(frontier[0]) <= len(frontier[1]) else 1
        nxt = sorted({n for node in frontier[side] for n in g[node]} - dist[side].keys())
        meets = [n for n in nxt if n in dist[1 - side]]
        if meets:
            return min(depth[side] + 1 + dist[1 - side][n] for n in meets)
        dist[side].update((n, depth[side] + 1) for n in nxt)
        if len(dist[side]) > cap:
            return "limit"
        depth[side] += 1
        frontier[side] = nxt
    return None


@pytest.mark.parametrize("cap", [15, 60, 400])
def test_path_search_gives_up_exactly_where_the_visit_limit_says(db, clock: FakeClock, monkeypatch, cap: int) -> None:
    """The search stops reading a level as soon as it passes MAX_PATH_VISITED papers; its answers
    (steps, or the limit) are those of expanding whole levels and checking after each."""
    import random

    from bench import generate as gen
    from mapwatch.store.database.save import SourceInfo, save_pages
    from mapwatch.store.errors import PathSearchTooLarge

    m = gen.build_map(300, seed=4, list_items=12)
    save_pages(db, [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)], clock())
    g = nx.Graph(db.conn.execute("SELECT citing_id, cited_id FROM citations").fetchall())
    monkeypatch.setattr(citation_path, "MAX_PATH_VISITED", cap)
    rng = random.Random(cap)
    ids = sorted(g.nodes)
    outcomes = []
    for _ in range(60):
        a, b = rng.choice(ids), rng.choice(ids)
        try:
            p = citation_path.citation_path(db, a, b)
            got: int | str | None = None if p is None else len(p.steps)
        except PathSearchTooLarge:
            got = "limit"
        assert got == _reference_path_outcome(g, a, b, cap), (a, b)
        outcomes.append(got)
    if cap == 15:
        assert "limit" in outcomes  # the limit was really reached
    if cap == 400:
        assert any(isinstance(o, int) and o >= 3 for o in outcomes)


def _reference_path_steps(cites: set[tuple[str, str]], a: str, b: str, max_steps: int = 6) -> list[str] | None:
    """The documented path, step by step, on plain Python sets: whole levels, the smaller side
    first; a paper's parent is the first citation reaching it in sorted (node, neighbour,
    node_cites_neighbour) order; the meet nearest the other side's origin, then the smallest id."""
    if a == b:
        return []
    adj: dict[str, list[tuple[str, int]]] = {}
    for citing, cited in cites:
        adj.setdefault(citing, []).append((cited, 1))
        adj.setdefault(cited, []).append((citing, 0))
    parent: list[dict[str, tuple[str, bool] | None]] = [{a: None}, {b: None}]
    dist: list[dict[str, int]] = [{a: 0}, {b: 0}]
    frontier, depth = [[a], [b]], [0, 0]
    while frontier[0] and frontier[1] and depth[0] + depth[1] < max_steps:
        side = 0 if len(frontier[0]) <= len(frontier[1]) else 1
        rows = sorted((node, nbr, c) for node in frontier[side] for nbr, c in adj.get(node, []))
        first: dict[str, tuple[str, bool]] = {}
        for node, nbr, c in rows:
            first.setdefault(nbr, (node, not c))
        nxt = sorted(first.keys() - dist[side].keys())
        for n in nxt:
            dist[side][n], parent[side][n] = depth[side] + 1, first[n]
        depth[side] += 1
        frontier[side] = nxt
        meets = [n for n in nxt if n in dist[1 - side]]
        if meets:
            meet = min(meets, key=lambda n: (dist[1 - side][n], n))
            steps, node = [], meet
            while (p := parent[0][node]) is not None:
                steps.append((p[0], node, not p[1]))
                node = p[0]
            steps.reverse()
            node = meet
            while (p := parent[1][node]) is not None:
                steps.append((node, p[0], p[1]))
                node = p[0]
            return [f"{s} {'cites' if c else 'is cited by'} {t}" for s, t, c in steps]
    return None


def test_the_path_is_the_one_whole_levels_give_step_by_step(db, clock: FakeClock) -> None:
    """Where the sides meet, the path comes from the citations joining them alone (`_meets`):
    the same steps, parents and meet as reading every citation of the level."""
    import random

    from bench import generate as gen
    from mapwatch.store.database.save import SourceInfo, save_pages

    m = gen.build_map(300, seed=5, list_items=12)
    save_pages(db, [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)], clock())
    cites = set(db.conn.execute("SELECT citing_id, cited_id FROM citations").fetchall())
    ids = sorted({x for edge in cites for x in edge})
    rng = random.Random(5)
    lengths = set()
    for _ in range(80):
        a, b = rng.choice(ids), rng.choice(ids)
        p = citation_path.citation_path(db, a, b)
        want = _reference_path_steps(cites, a, b)
        assert (None if p is None else [s.text for s in p.steps]) == want, (a, b)
        lengths.add(None if want is None else len(want))
    assert {2, 3} <= lengths  # paths long enough to have a meet between two expanded sides
