"""/citers and /paper take a paper's most cited citers from a walk down the papers by count
when it has many citers; the walk must give exactly the page the full sort gives."""

from __future__ import annotations

import pytest

from bench import generate as gen
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.questions import citers_walk, queries
from tests.conftest import FakeClock

SORTED = ("SELECT c.citing_id, c.first_seen FROM citations c JOIN papers p ON p.id = c.citing_id"
          " WHERE c.cited_id = :pid ORDER BY (p.cited_by IS NULL), p.cited_by DESC,"
          " coalesce((SELECT min(e.id) FROM events e WHERE e.paper_id = c.cited_id"
          " AND e.citing_id = c.citing_id), 1e18), c.citing_id LIMIT :lim OFFSET :off")


@pytest.fixture(scope="module")
def synthetic(tmp_path_factory):
    from mapwatch.store.database.db import open_db

    db = open_db(tmp_path_factory.mktemp("walk") / "m.db")
    m = gen.build_map(2000, seed=3)
    pages = [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)]
    clock = FakeClock()
    for i in range(0, len(pages), 500):
        save_pages(db, pages[i:i + 500], clock())
    yield db
    db.close()


def test_the_walk_gives_the_sorted_page(synthetic) -> None:
    db = synthetic
    top = [r[0] for r in db.conn.execute(
        "SELECT cited_id FROM citations GROUP BY cited_id ORDER BY count(*) DESC LIMIT 12")]
    assert db.conn.execute("SELECT count(*) FROM citations WHERE cited_id = ?", (top[0],)).fetchone()[0] > 100
    walked = 0
    for pid in top:
        for offset, limit in ((0, 5), (0, 10), (10, 10), (40, 25), (90, 10)):
            got = citers_walk.most_cited_citers_by_walk(db, pid, offset, limit)
            want = db.conn.execute(SORTED, {"pid": pid, "lim": limit, "off": offset}).fetchall()
            if got is not None:
                walked += 1
                assert got == [tuple(r) for r in want], (pid, offset, limit)
    assert walked >= 40  # the walk did answer most of these pages


def test_citers_answers_the_same_either_way(synthetic, monkeypatch) -> None:
    db = synthetic
    pid = db.conn.execute("SELECT cited_id FROM citations GROUP BY cited_id ORDER BY count(*) DESC").fetchone()[0]
    walked = [queries.citers(db, pid, offset=o, limit=10) for o in (0, 10, 20)]
    monkeypatch.setattr(queries, "WALK_MIN_CITERS", 10**9)  # force the full sort
    sorted_ = [queries.citers(db, pid, offset=o, limit=10) for o in (0, 10, 20)]
    assert walked == sorted_


def test_citers_without_a_stated_count_fall_back_to_the_sort(db, seeds_dir, clock) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    # 2412.10400's citers are mostly papers without a page of their own (no stated count).
    assert citers_walk.most_cited_citers_by_walk(db, "2412.10400", 0, 10) is None
    page = queries.citers(db, "2412.10400")
    assert [p.id for p in page.items][:2] == ["2507.04136", "2509.02547"]
