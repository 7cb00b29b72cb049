"""Refresh from the map over HTTP: a real aiohttp server on loopback that changes its pages
between ticks and misbehaves (500, 429, timeouts, a truncated body, HTML, 304)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from mapwatch.store.clock import retry_after_seconds
from mapwatch.store.pages.model import MapPage
from mapwatch.store.sources.crawl_plan import split_source
from mapwatch.store.sources.crawl_schedule import id_age
from mapwatch.store.sources.http_client import HttpOptions, user_agent
from mapwatch.store.sources.refresh import crawl_order, refresh
from tests.conftest import older_snapshot, seed_page
from tests.sourceserver import serve_map

FAST = HttpOptions(concurrency=4, timeout=0.5, retries=2, backoff=0.01)
SEEDS = ("2412.10400", "2507.04136")


def clone(page: MapPage, new_id: str) -> MapPage:
    return dataclasses.replace(page, id=new_id, title=f"{page.title} ({new_id})",
                               arxiv_url=f"https://arxiv.org/abs/{new_id}",
                               map_url=f"https://mlsanity.com/paper/{new_id}/")


def count(db, sql: str, *args) -> int:
    return db.conn.execute(sql, args).fetchone()[0]


def test_empty_database_starts_from_the_seeds_then_uses_conditional_get(db, clock) -> None:
    with serve_map() as srv:
        for pid in SEEDS:
            srv.put(seed_page(pid))
        first = refresh(db, srv.base, clock=clock, options=FAST)
        assert first.stored == 2 and first.new_citations == 111 and not first.failed and not first.rejected
        assert sorted(srv.ids_requested()) == sorted(SEEDS)  # links to another host: not followed
        assert all(h["User-Agent"] == user_agent() for _, h in srv.requests)
        assert user_agent().startswith("mapwatch/") and "(citation map follower)" in user_agent()

        srv.requests.clear()
        clock.advance(hours=6)  # a page's first re-check interval (store/sources/crawl_schedule.py)
        second = refresh(db, srv.base, clock=clock, options=FAST)
        # Now every known paper is tried: the two pages answer 304, the 97 others have no page.
        assert second.stored == 0 and second.unchanged == 2 and second.missing == 97 and second.new_citations == 0
        by_id = dict(srv.requests)
        assert by_id["2412.10400"]["If-None-Match"].startswith('"')
        assert by_id["2412.10400"]["If-Modified-Since"] == "Wed, 14 Oct 2026 00:00:00 GMT"
        # Unseen papers' share of the budget comes first, the newest ids first.
        assert srv.ids_requested()[:2] == ["2610.17824", "2609.19970"]
    rows = db.conn.execute("SELECT location, etag FROM sources WHERE sha256 IS NOT NULL ORDER BY 1").fetchall()
    assert [loc.rsplit("/", 2)[1] for loc, _ in rows] == sorted(SEEDS) and all(etag for _, etag in rows)


def test_follows_paper_links_on_the_same_host_only(db, clock) -> None:
    page = seed_page("2507.04136")
    new = clone(seed_page("2412.10400"), "2611.00001")
    with serve_map() as srv:
        linked = dataclasses.replace(page.built_on_by.items[0], id="2611.00001",
                                     url="https://mlsanity.com/paper/2611.00001/", title="New")
        offsite = dataclasses.replace(page.built_on_by.items[1], id="2611.00002",
                                      url="https://elsewhere.example/paper/2611.00002/", title="Elsewhere")
        lst = dataclasses.replace(page.built_on_by, items=(linked, offsite, *page.built_on_by.items[2:]))
        srv.put(dataclasses.replace(page, built_on_by=lst), host_links=True)
        srv.pages["2611.00002"] = b"never fetched"
        srv.put(new, host_links=True)
        report = refresh(db, srv.base, clock=clock, options=FAST)
    asked = srv.ids_requested()
    assert "2611.00001" in asked and "2611.00002" not in asked
    assert count(db, "SELECT has_page FROM papers WHERE id = '2611.00001'") == 1
    assert count(db, "SELECT has_page FROM papers WHERE id = '2611.00002'") == 0
    assert report.stored == 2  # 2507.04136 and the linked 2611.00001; the server has no 2412.10400
    assert not report.failed


def test_misbehaving_server_keeps_what_is_stored(db, clock) -> None:
    ids = [f"2611.0010{i}" for i in range(7)]
    base_page = seed_page("2507.04136")
    with serve_map() as srv:
        for pid in ids:
            srv.put(clone(base_page, pid))
        first = refresh(db, srv.base, clock=clock, priority=ids, options=FAST)
        assert first.stored == 7
        before = {r[0]: r for r in db.conn.execute("SELECT * FROM papers WHERE id LIKE '2611.001%'")}
        snapshots = count(db, "SELECT count(*) FROM snapshots")

        # Every page changes (one more citer), and the server misbehaves on most of them.
        changed = {pid: dataclasses.replace(clone(base_page, pid), cited_by=base_page.cited_by + 1) for pid in ids}
        for page in changed.values():
            srv.put(page)
        srv.script = {
            ids[0]: ["500"],  # recovers on retry
            ids[1]: ["429"],  # Retry-After: 1, then fine
            ids[2]: ["timeout"] * 3,  # never answers in time
            ids[3]: ["truncated"] * 3,  # body cut off every time
            ids[4]: ["html"],  # a challenge page instead of the map page
            ids[5]: ["429-long"],  # asks to wait an hour: give up for this tick
            ids[6]: ["huge"],  # over the size cap
        }
        srv.requests.clear()
        clock.advance(hours=1)
        report = refresh(db, srv.base, clock=clock, priority=ids, options=FAST)

    assert sorted(report.saved.stored) == [ids[0], ids[1]]
    failed = {f.paper_id: f.reason for f in report.failed}
    assert set(failed) == {ids[2], ids[3], ids[5]}
    assert "timed out" in failed[ids[2]] and "3 attempts" in failed[ids[2]]
    assert "cut off" in failed[ids[3]]
    assert "3600" in failed[ids[5]]
    rejected = {r.location.rsplit("/", 2)[1]: r.reason for r in report.rejected}
    assert set(rejected) == {ids[4], ids[6]}
    assert "HTML" in rejected[ids[4]] and "2 MB" in rejected[ids[6]]
    assert srv.ids_requested().count(ids[0]) == 2 and srv.ids_requested().count(ids[1]) == 2
    assert srv.ids_requested().count(ids[2]) == 3  # 1 + 2 retries

    # Nothing stored about the failed and rejected pages changed; their errors are recorded.
    after = {r[0]: r for r in db.conn.execute("SELECT * FROM papers WHERE id LIKE '2611.001%'")}
    for pid in ids[2:]:
        assert after[pid] == before[pid]
    assert count(db, "SELECT count(*) FROM snapshots") == snapshots + 2
    errors = {loc.rsplit("/", 2)[1] for (loc,) in db.conn.execute("SELECT location FROM ingest_errors")}
    assert errors == {ids[4], ids[6]}


def test_pages_changing_between_ticks_make_events_once(db, clock) -> None:
    page = seed_page("2412.10400")
    with serve_map() as srv:
        srv.put(older_snapshot(page, 3))
        refresh(db, srv.base, clock=clock, priority=[page.id], options=dataclasses.replace(FAST, budget=1))
        clock.advance(days=1)
        srv.put(page)
        grown = refresh(db, srv.base, clock=clock, priority=[page.id], options=dataclasses.replace(FAST, budget=1))
        assert grown.stored == 1 and grown.new_citations == 3
        clock.advance(days=1)
        again = refresh(db, srv.base, clock=clock, priority=[page.id], options=dataclasses.replace(FAST, budget=1))
        assert again.stored == 0 and again.unchanged == 1 and again.new_citations == 0
    new = {r[0] for r in db.conn.execute(
        "SELECT citing_id FROM events WHERE kind = 'citation' AND seen_at = '2026-11-02T12:00:00+00:00'")}
    assert new == {it.id for it in page.built_on_by.items[-3:]}


def test_budget_fetches_tracked_papers_first_then_papers_with_pages(db, clock) -> None:
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.pages.files import SEEDS_DIR

    ingest_paths(db, [SEEDS_DIR], clock=clock)
    order = crawl_order(db, "http://map.test", priority=["2203.02155"], clock=clock, budget=3)
    # Budget 3 keeps no share (a quarter, rounded down) for the unseen papers: they come last.
    assert order[0] == "2203.02155" and order[1:3] == list(SEEDS) and len(order) == 99
    with serve_map() as srv:
        for pid in SEEDS:
            srv.put(seed_page(pid))
        report = refresh(db, srv.base, clock=clock, priority=["2203.02155"],
                         options=dataclasses.replace(FAST, budget=3, concurrency=1))
    assert srv.ids_requested() == ["2203.02155", *SEEDS]
    assert report.crawl.over_budget == 96 and report.missing == 1
    # The next tick: the pages just checked are not due; the unseen papers are, newest first.
    after = crawl_order(db, srv.base, clock=clock, budget=3)
    assert len(after) == 96 and not {*SEEDS, "2203.02155"} & set(after)
    assert after[:2] == ["2610.17824", "2609.19970"] and after == sorted(after, key=id_age, reverse=True)


def test_unreachable_source_fails_each_page_and_changes_nothing(db, clock) -> None:
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.pages.files import SEEDS_DIR

    ingest_paths(db, [SEEDS_DIR], clock=clock)
    citations = count(db, "SELECT count(*) FROM citations")
    report = refresh(db, "http://127.0.0.1:9", clock=clock,
                     options=dataclasses.replace(FAST, budget=2, retries=0))
    assert len(report.failed) == 2 and all("connection failed" in f.reason for f in report.failed)
    assert count(db, "SELECT count(*) FROM citations") == citations


@pytest.mark.parametrize(("value", "seconds"), [("1", 1.0), ("120", 120.0), ("Wed, 14 Oct 2026 00:01:00 GMT", 60.0),
                                                ("soon", None), (None, None)])
def test_retry_after_values(value, seconds) -> None:
    assert retry_after_seconds(value, datetime(2026, 10, 14, tzinfo=UTC)) == seconds


def test_source_url_may_be_a_template() -> None:
    assert split_source("https://map.test/") == ("https://map.test", "{base}/paper/{id}/")
    assert split_source("https://map.test/p/{id}.txt") == ("https://map.test", "https://map.test/p/{id}.txt")


def test_redirect_to_another_host_is_not_followed(db, clock) -> None:
    with serve_map() as srv:
        srv.put(seed_page("2507.04136"))
        srv.script = {"2507.04136": ["offsite"]}
        report = refresh(db, srv.base, clock=clock, priority=["2507.04136"],
                         options=dataclasses.replace(FAST, budget=1))
    assert len(report.failed) == 1
    assert "redirected to another host (localhost:9)" in report.failed[0].reason
    assert len(srv.requests) == 1  # not retried: a redirect off the map is not transient
