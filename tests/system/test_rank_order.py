"""Direction ranks read from the order index (migration 0043): a database whose ranks were
stored as numbers reads the same ranks after the migration, and a tick writes the rows whose
score or count moved, not the ranks of the papers they pass."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from sqlite_utils import Database

from bench import generate as gen
from bench.livemap import T0, LiveMap
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed
from mapwatch.store.database.migrations import migrations
from mapwatch.store.pages.format import format_page
from mapwatch.store.questions import graph
from mapwatch.store.questions.direction_pagerank import direction_rows, update_direction_ranks
from tests.older_schema import as_today
from tests.system.test_direction_ranks import ROWS, first_update_computes_whole, store_live, whole

SCORES = "SELECT direction_slug, paper_id, score, place, cited_by, computed_at FROM direction_rank_scores"
VIEW = "SELECT direction_slug, paper_id, pagerank, rank, computed_at FROM direction_ranks ORDER BY 1, 2"


def test_ranks_stored_as_numbers_read_the_same_after_0043(tmp_path: Path) -> None:
    live = LiveMap(600, seed=7)
    older = Database(tmp_path / "older.db")
    migrations.apply(older, stop_before="0043_rank_order")
    with as_today(older):  # stored, and the ranks computed, by today's code
        store_live(older, live, list(range(live.size)), T0)
        slugs = [r[0] for r in older.conn.execute("SELECT DISTINCT direction_slug FROM placements ORDER BY 1")]
        rows = [row for slug in slugs for row in direction_rows(older.conn, slug, T0.isoformat(timespec="seconds"))]
    # as migration 0041 left ranks computed before it: the PageRank as the score, whole = total = 1,
    # the drift unknown, a rank each
    stamp = T0.isoformat(timespec="seconds")
    older.conn.executemany("INSERT INTO direction_rank_scores (direction_slug, paper_id, score, rank, computed_at)"
                           " VALUES (?, ?, ?, ?, ?)", rows)
    older.conn.executemany("INSERT INTO direction_rank_totals (direction_slug, whole, total, drift, computed_at)"
                           " VALUES (?, 1.0, 1.0, NULL, ?)", [(slug, stamp) for slug in slugs])
    older.conn.execute("INSERT INTO ranks_state SELECT 1, max(id), (SELECT max(id) FROM events) FROM snapshots")
    older.conn.commit()
    before = older.conn.execute(VIEW).fetchall()
    assert {r[3] for r in before} >= {1, 2, 3} and len(before) == len(rows) > 600  # papers in several directions
    # equal PageRanks, ordered by count and id: the part of the order the new columns must carry
    assert len({(r[0], round(r[2], 12)) for r in before}) < len(before)
    older.close()

    db = open_db(tmp_path / "older.db")
    try:
        assert db.conn.execute(VIEW).fetchall() == before  # every rank and PageRank, to the last bit
        for slug in slugs[:5]:
            top = graph.direction_ranks(db, slug, limit=10).papers
            assert [(r.paper.id, r.rank) for r in top] == [
                (pid, rank) for s, pid, _, rank, _ in sorted(before, key=lambda r: (r[0], r[3])) if s == slug][:10]
        first_update_computes_whole(db, live, tmp_path)
    finally:
        db.close()


def test_a_paper_that_climbs_writes_its_own_row_alone(db, tmp_path: Path) -> None:
    live = LiveMap(1_500, seed=3)
    store_live(db, live, list(range(live.size)), T0)
    update_direction_ranks(db, T0)
    ranks = dict(((s, p), r) for s, p, _, r in db.conn.execute(ROWS).fetchall())
    # the least cited paper of the largest direction gains a citer with a page of its own: its
    # count changes, so its place among the papers of equal PageRank
    slug, size = db.conn.execute("SELECT direction_slug, count(*) FROM direction_rank_scores GROUP BY 1"
                                 " ORDER BY 2 DESC LIMIT 1").fetchone()
    last = graph.direction_ranks(db, slug, limit=size).papers[-1]
    i = live.ids.index(last.paper.id)
    page = live.page(i)
    page = replace(page, cited_by=(page.cited_by or 0) + 40)  # its stated count; no citation named
    now = T0 + timedelta(hours=1)
    data = format_page(page).encode()
    report = ingest_fed(db, iter([FedPage(f"{gen.HOST}/paper/{page.id}/", len(data), 1, data)]), gen.HOST,
                        clock=lambda: now)
    assert report.stored == 1
    before_rows = db.conn.execute(SCORES).fetchall()
    report = update_direction_ranks(db, now)
    after_rows = db.conn.execute(SCORES).fetchall()
    changed = set(after_rows) - set(before_rows)
    assert {pid for _, pid, *_ in changed} == {last.paper.id}  # its rows (one a direction) and no other
    assert report.papers == len(changed) and report.resorted >= 1
    now_ranks = dict(((s, p), r) for s, p, _, r in db.conn.execute(ROWS).fetchall())
    passed = [key for key, r in now_ranks.items() if key[0] == slug and r != ranks[key]]
    assert len(passed) > 10  # the papers it passed moved down a place, unwritten
    assert db.conn.execute(ROWS).fetchall() == whole(db, tmp_path, now)


def test_a_push_reads_the_joined_papers_citers_not_the_direction(db) -> None:
    """The citers of the papers that joined a direction are read from the citations index, each
    looked up among the direction's papers: not the direction's every placement probed for
    them, the plan SQLite chose by itself (47 ms a direction at 1,000,000 papers)."""
    live = LiveMap(1_500, seed=3)
    store_live(db, live, list(range(live.size)), T0)
    update_direction_ranks(db, T0)
    now = T0 + timedelta(hours=1)
    first = live.size
    for j in range(150):  # several a direction: with three ids or more in the list SQLite chose the other plan
        live.add_paper(now.timestamp() - 3_000 + j)
    store_live(db, live, [i for i in range(live.size) if i >= first or live.version[i]], now)
    ran: list[str] = []
    db.conn.set_trace_callback(ran.append)
    try:
        assert update_direction_ranks(db, now, push_from=0).pushed > 0
    finally:
        db.conn.set_trace_callback(None)
    citers = [sql for sql in dict.fromkeys(ran) if "c.cited_id IN" in sql]
    assert max(sql.count("','") for sql in citers) >= 2, "the pushes read the citers of three joined papers at once"
    for sql in citers:
        plan = [row[3] for row in db.conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
        # Each joined paper's key on its id, then its citers on the citations' index.
        assert plan[0].startswith("SEARCH kd USING COVERING INDEX sqlite_autoindex_paper_keys_1 (id=?)"), plan
        assert plan[1].startswith("SEARCH c USING COVERING INDEX citations_cited_seen (cited_key=?)"), plan
        # Then each citer probed in the direction's placements on both columns (on the primary key
        # or, WITHOUT ROWID since 0050, on placements_direction, which holds the key's columns
        # too): one entry a citer, never the direction's placements walked.
        probes = [line for line in plan if line.startswith(("SEARCH pl ", "SCAN pl "))]
        assert probes and all("direction_slug=?" in line and "paper_id=?" in line for line in probes), plan
        assert plan.index(probes[0]) > 1, plan
