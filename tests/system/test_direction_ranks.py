"""The direction ranks updated for what a tick changed are the ranks computed whole.

Real databases: bench/livemap.py's map (pages formatted, parsed and saved as a crawl saves
them), evolving tick by tick, and the hand-built map of tests/graphmap.py. After each update
the table is compared with `compute_direction_ranks` run on a copy of the same database."""

from __future__ import annotations

import random
import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path

import networkx as nx
import pytest
from sqlite_utils import Database

from bench import generate as gen
from bench.livemap import T0, LiveMap
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed, ingest_paths
from mapwatch.store.questions import graph
from mapwatch.store.questions.direction_pagerank import (
    changed_directions,
    compute_direction_ranks,
    direction_rows,
    pagerank,
    update_direction_ranks,
)
from mapwatch.store.sources.refresh import refresh
from tests.conftest import FakeClock, seed_page, write_page
from tests.graphmap import ID, make_page, store

ROWS = "SELECT direction_slug, paper_id, pagerank, rank FROM direction_ranks ORDER BY 1, 2"


def store_live(db: Database, live: LiveMap, indexes: list[int], now: datetime) -> None:
    def pages():
        for i in indexes:
            data = live.text(i).encode()
            yield FedPage(f"{gen.HOST}/paper/{live.ids[i]}/", len(data), int(live.version[i]), data)
    report = ingest_fed(db, pages(), gen.HOST, clock=lambda: now)
    assert report.stored == len(indexes)


def whole(db: Database, tmp_path: Path, now: datetime) -> list[tuple]:
    """The table `compute_direction_ranks` writes on a copy of `db` as it is now."""
    path = tmp_path / "whole.db"
    path.unlink(missing_ok=True)
    out = sqlite3.connect(path)
    db.conn.backup(out)
    out.close()
    copy = open_db(path)
    try:
        compute_direction_ranks(copy, now)
        return copy.conn.execute(ROWS).fetchall()
    finally:
        copy.close()


def stamps(db: Database) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for slug, at in db.conn.execute("SELECT DISTINCT direction_slug, computed_at FROM direction_ranks"):
        out.setdefault(slug, set()).add(at)
    return out


def test_ticks_of_new_papers_and_moved_papers_update_to_the_whole_computation(db, tmp_path: Path) -> None:
    live = LiveMap(1_500, seed=3)
    setup = T0 - timedelta(hours=1)
    store_live(db, live, list(range(live.size)), setup)
    assert compute_direction_ranks(db, setup).directions == 60
    assert whole(db, tmp_path, setup) == db.conn.execute(ROWS).fetchall()
    rng = random.Random(5)
    computed = resorted = 0
    for k in range(1, 5):
        now = T0 + timedelta(hours=k)
        before, first = list(live.version), live.size
        for j in range(12):
            live.add_paper(now.timestamp() - 3_000 + j)
        for i in rng.sample(range(first), 3):  # papers moved to another direction (main or extra)
            if k % 2:
                live.main_dir[i] = rng.randrange(len(live.dirs))
            else:
                live.extra_dirs[i] = (*live.extra_dirs[i], rng.randrange(len(live.dirs)))
            live.version[i] += 1
        changed = [i for i in range(live.size) if i >= first or live.version[i] != before[i]]
        store_live(db, live, changed, now)
        old = stamps(db)
        report = update_direction_ranks(db, now)
        assert not report.full and 0 < report.directions < 60
        computed += report.directions
        resorted += report.resorted
        assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, now)
        new = stamps(db)
        computed_now = {slug for slug, at in new.items() if at == {now.isoformat(timespec="seconds")}}
        assert len(computed_now) == report.directions
        assert all(new[slug] == old[slug] for slug in new.keys() - computed_now)  # re-sorted or kept
        assert update_direction_ranks(db, now + timedelta(minutes=1)) == graph.RanksReport(0, 0, full=False)
    assert resorted > 0 and computed > 0  # both ways of updating were taken


def test_an_untouched_direction_keeps_its_rows_and_an_emptied_one_loses_them(db, tmp_path: Path,
                                                                             clock: FakeClock) -> None:
    k = {n: f"2301.{i:05d}" for i, n in enumerate(["K1", "K2", "K3", "O1", "O2", "S1"], 1)}
    where = {"K1": ["dir"], "K2": ["dir"], "K3": ["dir"], "O1": ["other"], "O2": ["other"], "S1": ["solo"]}
    refs = {"K2": ["K1"], "K3": ["K1"], "O2": ["O1"]}

    def page(n: str, directions: list[str] | None = None, extra: tuple[str, ...] = ()):
        return make_page(k[n], refs=[k[r] for r in (*refs.get(n, []), *extra)], directions=directions or where[n])

    store(db, [page(n) for n in k], clock())
    first = clock().isoformat(timespec="seconds")
    compute_direction_ranks(db, clock())
    assert stamps(db) == {"area/dir": {first}, "area/other": {first}, "area/solo": {first}}
    other_rows = db.conn.execute("SELECT * FROM direction_ranks WHERE direction_slug = 'area/other'").fetchall()

    clock.advance(hours=1)
    store(db, [page("K2", extra=("K3",))], clock())  # a new citation inside "dir"
    report = update_direction_ranks(db, clock())
    assert (report.directions, report.resorted) == (1, 0)
    assert stamps(db)["area/dir"] == {clock().isoformat(timespec="seconds")}
    assert db.conn.execute("SELECT * FROM direction_ranks WHERE direction_slug = 'area/other'"
                           ).fetchall() == other_rows  # not rewritten: computed_at stays
    assert stamps(db)["area/solo"] == {first}
    assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, clock())

    clock.advance(hours=1)
    store(db, [page("S1", directions=["other"])], clock())  # solo's only paper moves to "other"
    report = update_direction_ranks(db, clock())
    assert report.directions == 2
    assert "area/solo" not in stamps(db)
    assert graph.direction_ranks(db, "area/solo").papers == ()
    assert {r.paper.id for r in graph.direction_ranks(db, "area/other").papers} == {k["O1"], k["O2"], k["S1"]}
    assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, clock())


def test_a_count_that_changes_the_order_of_equal_ranks_moves_only_their_ranks(db, tmp_path: Path,
                                                                                   clock: FakeClock) -> None:
    ids = [ID[n] for n in ("A", "B", "C")]  # no citations: equal PageRanks, ordered by cited-by count
    store(db, [make_page(pid, directions=["eq"], cited_by=3 - i) for i, pid in enumerate(ids)], clock())
    compute_direction_ranks(db, clock())
    assert [r.paper.id for r in graph.direction_ranks(db, "eq").papers] == ids
    before = {r.paper.id: r.pagerank for r in graph.direction_ranks(db, "eq").papers}
    clock.advance(hours=1)
    store(db, [make_page(ids[2], directions=["eq"], cited_by=9)], clock())
    report = update_direction_ranks(db, clock())
    assert (report.directions, report.resorted) == (0, 1)
    after = graph.direction_ranks(db, "eq")
    assert [r.paper.id for r in after.papers] == [ids[2], ids[0], ids[1]]
    assert {r.paper.id: r.pagerank for r in after.papers} == before
    assert after.computed_at == (clock() - timedelta(hours=1)).isoformat(timespec="seconds")  # PageRank kept
    assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, clock())
    clock.advance(hours=1)
    store(db, [make_page(ids[1], directions=["eq"], cited_by=2, through=date(2026, 10, 2))], clock())  # same order
    report = update_direction_ranks(db, clock())
    assert (report.directions, report.resorted, report.kept) == (0, 0, 1)
    assert graph.direction_ranks(db, "eq") == after


def test_several_counts_changed_at_once_reorder_as_a_whole_computation(db, tmp_path: Path,
                                                                       clock: FakeClock) -> None:
    names = ["A", "B", "C", "D", "E", "P1", "P2"]
    counts = {"A": 9, "B": 7, "C": 7, "D": 5, "E": 3, "P1": 2, "P2": 0}  # ties on count: by id
    cites = {"P1": ["A"]}  # A above the others by PageRank; B..P2 equal
    store(db, [make_page(ID[n], refs=[ID[r] for r in cites.get(n, [])], directions=["eq"], cited_by=counts[n])
               for n in names], clock())
    compute_direction_ranks(db, clock())
    for k, change in enumerate([{"P2": 8, "B": 1}, {"E": 7, "C": 7, "D": 0}, {"B": 7, "P2": 7, "A": 0}], 1):
        clock.advance(hours=1)
        counts |= change
        store(db, [make_page(ID[n], refs=[ID[r] for r in cites.get(n, [])], directions=["eq"],
                             cited_by=counts[n], through=date(2026, 10, 1) + timedelta(days=k)) for n in change],
              clock())
        report = update_direction_ranks(db, clock())
        assert report.directions == 0
        assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, clock())
    assert [r.paper.id for r in graph.direction_ranks(db, "eq").papers] == [
        ID[n] for n in ("A", "B", "C", "E", "P2", "P1", "D")]


def test_without_a_state_the_update_computes_every_direction(db, clock: FakeClock) -> None:
    store(db, [make_page(ID["A"], directions=["one"]), make_page(ID["B"], refs=[ID["A"]], directions=["two"])],
          clock())
    assert update_direction_ranks(db, clock()).full  # never computed
    db.conn.execute("DELETE FROM ranks_state")  # as after migration 0017: ranks of an older version
    clock.advance(hours=1)
    report = update_direction_ranks(db, clock())
    assert report.full and report.directions == 2
    assert all(at == {clock().isoformat(timespec="seconds")} for at in stamps(db).values())


def test_changed_directions_are_the_changed_papers_directions_then_and_now(db, clock: FakeClock) -> None:
    a, b, c = ID["A"], ID["B"], ID["C"]
    store(db, [make_page(a, directions=["x"]), make_page(b, directions=["x", "y"]),
               make_page(c, directions=["z"])], clock())
    compute_direction_ranks(db, clock())
    since = db.conn.execute("SELECT last_snapshot_id, last_event_id FROM ranks_state").fetchone()
    clock.advance(hours=1)
    # a moves from x to w; b newly cites c (b in x and y, c in z: no direction holds both)
    store(db, [make_page(a, directions=["w"]), make_page(b, refs=[c], directions=["x", "y"])], clock())
    upto = db.conn.execute("SELECT max(id) FROM snapshots").fetchone()[0], \
        db.conn.execute("SELECT max(id) FROM events").fetchone()[0]
    structural, touched = changed_directions(db.conn, tuple(since), upto)
    assert structural == {"area/x", "area/w"}
    assert touched == {"area/x": {a, b}, "area/w": {a}, "area/y": {b}}


def networkx_pagerank(nodes: list[str], edges: list[tuple[str, str]]) -> dict[str, float]:
    g = nx.DiGraph()
    g.add_nodes_from(sorted(nodes))
    g.add_edges_from(sorted(edges))
    return {pid: float(v) for pid, v in nx.pagerank(g).items()} if nodes else {}


@pytest.mark.parametrize(("n", "m"), [(0, 0), (1, 0), (1, 1), (2, 0), (7, 12), (300, 1_200), (2_000, 3_000)])
def test_pagerank_is_networkx_pagerank_of_the_sorted_graph_to_the_last_bit(n: int, m: int) -> None:
    rng = random.Random(n + m)
    nodes = [f"2301.{i:05d}" for i in range(n)]
    edges = list({(rng.choice(nodes), rng.choice(nodes)) for _ in range(m)})  # self-citations too
    want = networkx_pagerank(nodes, edges)
    assert pagerank(nodes, edges) == want
    for _ in range(3):  # the rows in any order (the placements' rowid order moves as pages are stored)
        rng.shuffle(nodes)
        rng.shuffle(edges)
        assert pagerank(nodes, edges) == want


def test_pagerank_of_every_direction_of_a_stored_map_is_networkx_pagerank(db) -> None:
    live = LiveMap(1_000, seed=4)
    store_live(db, live, list(range(live.size)), T0)
    for (slug,) in db.conn.execute("SELECT DISTINCT direction_slug FROM placements").fetchall():
        rows = direction_rows(db.conn, slug, "now")
        nodes = [pid for _, pid, _, _, _ in rows]
        edges = db.conn.execute(
            "SELECT c.citing_id, c.cited_id FROM citations c JOIN placements a ON a.paper_id = c.citing_id"
            " JOIN placements b ON b.paper_id = c.cited_id WHERE a.direction_slug = ? AND b.direction_slug = ?",
            (slug, slug)).fetchall()
        assert {pid: value for _, pid, value, _, _ in rows} == networkx_pagerank(nodes, edges)


def test_a_tick_updates_the_directions_of_pages_another_command_stored(db, seeds_dir: Path, tmp_path: Path,
                                                                      clock: FakeClock) -> None:
    def tick() -> None:  # a tick's refresh, then its ranks step (as `mapwatch run` and `mapwatch refresh`)
        refresh(db, seeds_dir, clock=clock)
        update_direction_ranks(db, clock())

    tick()
    first = clock().isoformat(timespec="seconds")
    assert all(at == {first} for at in stamps(db).values())
    moved = seed_page("2507.04136")
    extra = tmp_path / "extra"
    extra.mkdir()
    # the paper leaves "Reinforcement learning for reasoning" for its other direction only
    write_page(extra, moved.__class__(**{**moved.__dict__, "placements": moved.placements[1:],
                                         "direction": moved.placements[1].direction}))
    clock.advance(hours=1)
    ingest_paths(db, [extra], clock=clock)  # `mapwatch ingest`: no ranks
    clock.advance(hours=1)
    tick()  # stores nothing itself
    r = graph.direction_ranks(db, "lr/reinforcement-learning-for-reasoning")
    assert [p.paper.id for p in r.papers] == ["2412.10400"]
    assert r.computed_at == clock().isoformat(timespec="seconds")
    assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, clock())
