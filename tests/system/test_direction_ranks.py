"""The direction ranks updated for what a tick changed are the ranks computed whole.

Real databases: bench/livemap.py's map (pages formatted, parsed and saved as a crawl saves
them), evolving tick by tick, and the hand-built map of tests/graphmap.py. After each update
the table is compared with `compute_direction_ranks` run on a copy of the same database."""

from __future__ import annotations

import itertools
import random
import sqlite3
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from pathlib import Path

import networkx as nx
import pytest
from sqlite_utils import Database

from bench import generate as gen
from bench.livemap import T0, LiveMap
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed, ingest_paths
from mapwatch.store.database.migrations import migrations
from mapwatch.store.questions import graph
from mapwatch.store.questions.direction_pagerank import (
    ALPHA,
    TOL,
    changed_directions,
    compute_direction_ranks,
    direction_rows,
    pagerank,
    update_direction_ranks,
)
from mapwatch.store.questions.rank_push import l1_bound, rank_key
from mapwatch.store.sources.refresh import refresh
from tests.conftest import FakeClock, seed_page, write_page
from tests.graphmap import ID, make_page, store
from tests.older_schema import as_today

ROWS = "SELECT direction_slug, paper_id, pagerank, rank FROM direction_ranks ORDER BY 1, 2"


def store_live(db: Database, live: LiveMap, indexes: list[int], now: datetime) -> None:
    def pages():
        for i in indexes:
            data = live.text(i).encode()
            yield FedPage(f"{gen.HOST}/paper/{live.ids[i]}/", len(data), int(live.version[i]), data)
    report = ingest_fed(db, pages(), gen.HOST, clock=lambda: now)
    assert report.stored == len(indexes)


def live_tick(db: Database, live: LiveMap, now: datetime, new: int, moved: Sequence[int] = (),
              extra: bool = False) -> None:
    """A tick of the live map stored: `new` papers arrive, the `moved` papers are placed in
    another direction (main, or an `extra` one added), and every page that changed is stored."""
    rng = random.Random(now.timestamp())
    before, first = list(live.version), live.size
    for j in range(new):
        live.add_paper(now.timestamp() - 3_000 + j)
    for i in moved:
        if extra:
            live.extra_dirs[i] = (*live.extra_dirs[i], rng.randrange(len(live.dirs)))
        else:
            live.main_dir[i] = rng.randrange(len(live.dirs))
        live.version[i] += 1
    store_live(db, live, [i for i in range(live.size) if i >= first or live.version[i] != before[i]], now)


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
        # papers moved to another direction (main or extra)
        live_tick(db, live, now, 12, rng.sample(range(live.size), 3), extra=not k % 2)
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


# --- Updates by a push (store/questions/rank_push.py): pushed directions are within their
# bound of a whole computation, and computed whole again when the bound or the age is reached.

NX_ERROR = ALPHA / (1 - ALPHA) * TOL  # networkx's own L1 error a paper: its stop rule, n · 10⁻⁶ a step


def drifts(db: Database) -> dict[str, float | None]:
    return dict(db.conn.execute("SELECT direction_slug, drift FROM direction_rank_totals").fetchall())


def totals(db: Database) -> dict[str, tuple[float, float | None, str]]:
    """Each direction's Σy, drift and last whole computation."""
    return {slug: (total, drift, at) for slug, total, drift, at in db.conn.execute(
        "SELECT direction_slug, total, drift, computed_at FROM direction_rank_totals").fetchall()}


def compare_with_whole(db: Database, tmp_path: Path, now: datetime) -> dict[str, float]:
    """Each direction's L1 distance from a whole computation, checked against its allowance:
    its push bound, and networkx's own error in the stored whole computation and in this one
    (3 · α / (1 − α) · n · 10⁻⁶). The same papers are ranked, ranks run 1..n, and a direction's
    top 10 are the whole computation's."""
    mine, theirs = db.conn.execute(ROWS).fetchall(), whole(db, tmp_path, now)
    assert [r[:2] for r in mine] == [r[:2] for r in theirs]
    bounds = {slug: l1_bound(drift, total) for slug, drift, total in db.conn.execute(
        "SELECT direction_slug, drift, total FROM direction_rank_totals WHERE drift IS NOT NULL")}
    distance: dict[str, float] = {}
    size: dict[str, int] = {}
    ranks: dict[str, list[int]] = {}
    tops: dict[str, tuple[set[str], set[str]]] = {}
    for (slug, pid, x, r), (_, _, y, q) in zip(mine, theirs, strict=True):
        distance[slug] = distance.get(slug, 0.0) + abs(x - y)
        size[slug] = size.get(slug, 0) + 1
        ranks.setdefault(slug, []).append(r)
        top = tops.setdefault(slug, (set(), set()))
        top[0].update([pid] if r <= 10 else [])
        top[1].update([pid] if q <= 10 else [])
    for slug, d in distance.items():
        assert d <= bounds[slug] + 3 * NX_ERROR * size[slug], slug
        assert sorted(ranks[slug]) == list(range(1, size[slug] + 1)), slug
        assert tops[slug][0] == tops[slug][1], slug
    # the stored ranks are the order of the stored PageRanks (cited-by count, then id, for
    # equal ones), but where two differ by rounding alone
    rows = db.conn.execute("SELECT r.direction_slug, r.paper_id, r.pagerank, p.cited_by FROM direction_ranks r"
                           " JOIN papers p ON p.id = r.paper_id ORDER BY r.direction_slug, r.rank").fetchall()
    for (slug, pid, x, cited), (next_slug, next_pid, y, next_cited) in itertools.pairwise(rows):
        if slug == next_slug:
            assert rank_key(x, cited or 0, pid) <= rank_key(y, next_cited or 0, next_pid) or abs(x - y) < 1e-11
    return distance


def test_pushed_ticks_stay_within_their_bound_of_the_whole_computation(db, tmp_path: Path) -> None:
    live = LiveMap(1_500, seed=3)
    setup = T0 - timedelta(hours=1)
    store_live(db, live, list(range(live.size)), setup)
    compute_direction_ranks(db, setup)
    assert set(drifts(db).values()) == {0.0}
    rng = random.Random(5)
    pushed = computed = 0
    for k in range(1, 5):
        now = T0 + timedelta(hours=k)
        live_tick(db, live, now, 12, rng.sample(range(live.size), 2))  # papers leave a direction: computed whole
        old = totals(db)
        report = update_direction_ranks(db, now, push_from=0)
        pushed += report.pushed
        computed += report.directions
        new = totals(db)
        moved = {slug for slug in new if slug in old and new[slug][0] != old[slug][0]
                 and new[slug][2] != now.isoformat(timespec="seconds")}  # Σy moved, not computed whole
        assert report.pushed == len(moved)
        assert report.bound == max(l1_bound(new[slug][1], new[slug][0]) for slug in moved)
        distance = compare_with_whole(db, tmp_path, now)
        assert max(distance.values()) > 0  # pushed values are not a whole computation's to the bit
    assert pushed > 20 and computed > 0  # both ways were taken


def test_a_pushed_direction_is_computed_whole_at_its_bound_and_at_its_age(db, tmp_path: Path) -> None:
    live = LiveMap(1_500, seed=4)
    setup = T0 - timedelta(hours=1)
    store_live(db, live, list(range(live.size)), setup)
    compute_direction_ranks(db, setup)

    def tick(k: int, **options) -> graph.RanksReport:
        now = T0 + timedelta(hours=k)
        live_tick(db, live, now, 10)
        return update_direction_ranks(db, now, push_from=0, **options)

    assert tick(1).pushed > 0
    # every direction at its limit (2 · drift / ((1 − α) · Σy) = n · 10⁻⁶) with the 10 papers
    # of the next tick counted in n: any residual that tick's push leaves passes it
    for slug, total in db.conn.execute("SELECT direction_slug, total FROM direction_rank_totals").fetchall():
        n = db.conn.execute("SELECT count(*) FROM direction_rank_scores WHERE direction_slug = ?",
                            (slug,)).fetchone()[0] + 10
        db.conn.execute("UPDATE direction_rank_totals SET drift = ? WHERE direction_slug = ?",
                        (n * TOL * (1 - ALPHA) * total / 2, slug))
    db.conn.commit()
    report = tick(2)
    assert report.pushed == 0 and report.directions > 0
    two = (T0 + timedelta(hours=2)).isoformat(timespec="seconds")
    recomputed = [slug for slug, (_, _, at) in totals(db).items() if at == two]
    assert len(recomputed) == report.directions and all(drifts(db)[slug] == 0.0 for slug in recomputed)
    compare_with_whole(db, tmp_path, T0 + timedelta(hours=2))
    assert tick(3).pushed > 0  # within its bound again
    old = totals(db)
    report = tick(4, whole_every=timedelta(hours=3))
    new = totals(db)
    four = (T0 + timedelta(hours=4)).isoformat(timespec="seconds")
    pushed = {slug for slug in new if new[slug][0] != old[slug][0] and new[slug][2] != four}
    recomputed = {slug for slug in new if new[slug][2] == four}
    assert len(pushed) == report.pushed > 0 and len(recomputed) == report.directions > 0
    # the last whole computation of hour 1 or before is 3 h old at hour 4: none of those was pushed
    assert all(old[slug][2] >= (T0 + timedelta(hours=2)).isoformat(timespec="seconds") for slug in pushed)
    assert any(old[slug][2] < (T0 + timedelta(hours=1)).isoformat(timespec="seconds") for slug in recomputed)
    compare_with_whole(db, tmp_path, T0 + timedelta(hours=4))


def test_ranks_stored_before_0041_read_the_same_and_are_computed_whole_first(tmp_path: Path) -> None:
    live = LiveMap(600, seed=6)
    ref = open_db(tmp_path / "ref.db")
    store_live(ref, live, list(range(live.size)), T0)
    compute_direction_ranks(ref, T0)
    rows = ref.conn.execute("SELECT direction_slug, paper_id, pagerank, rank, computed_at FROM direction_ranks"
                            " ORDER BY 1, 2").fetchall()
    ref.close()
    older = Database(tmp_path / "older.db")
    migrations.apply(older, stop_before="0041_rank_scores")
    with as_today(older):
        store_live(older, live, list(range(live.size)), T0)
    older.conn.executemany("INSERT INTO direction_ranks VALUES (?, ?, ?, ?, ?)", rows)
    older.conn.execute("INSERT INTO ranks_state SELECT 1, max(id), (SELECT max(id) FROM events) FROM snapshots")
    older.conn.commit()
    older.close()
    db = open_db(tmp_path / "older.db")
    try:
        assert db.conn.execute("SELECT direction_slug, paper_id, pagerank, rank, computed_at FROM direction_ranks"
                               " ORDER BY 1, 2").fetchall() == rows  # to the last bit
        assert set(drifts(db).values()) == {None}
        first_update_computes_whole(db, live, tmp_path)
    finally:
        db.close()


def first_update_computes_whole(db: Database, live: LiveMap, tmp_path: Path) -> None:
    """Ten papers arrive an hour after T0 into ranks a migration brought across with their drift
    unknown: the update computes the changed directions whole (no push from scores not in its
    form), and the table is a whole computation's."""
    now = T0 + timedelta(hours=1)
    first = live.size
    for j in range(10):
        live.add_paper(now.timestamp() - 3_000 + j)
    store_live(db, live, list(range(first, live.size)), now)
    report = update_direction_ranks(db, now, push_from=0)
    assert report.pushed == 0 and report.directions > 0
    assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, now)
