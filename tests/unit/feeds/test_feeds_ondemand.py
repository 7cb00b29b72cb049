"""Paper feeds and pages on demand: the feed server builds them from the database, with an
ETag from the paper's newest event and page, a 304 that builds nothing, and an LRU bounded
by bytes; publish writes only what it should, and the server sees each new publish."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import aiohttp
import pytest

from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.ondemand import FEED, PAGE, PaperCache
from mapwatch.feeds.serving.server import start_server
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.questions import feed_queries
from mapwatch.store.subscriptions.tracking import add_track
from tests.feedcheck import assert_valid_atom, snapshot
from tests.waiting import async_wait_until

BASE = "http://feeds.example"
RL = "feeds/lr/reinforcement-learning-for-reasoning.atom"
SURVEY, OTHER = "2412.10400", "2507.04136"


async def fetch(session: aiohttp.ClientSession, url: str, etag: str | None = None) -> tuple[int, str, bytes]:
    headers = {"If-None-Match": etag} if etag else {}
    async with session.get(url, headers=headers, allow_redirects=False) as resp:
        return resp.status, resp.headers.get("ETag", ""), await resp.read()


@pytest.fixture
async def served(db, db_path: Path, clock, tmp_path: Path, make_older_seeds):
    """The seeds as they looked before their last 3 citers, published (tracked papers only) and served."""
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, clock=clock)
    cache = PaperCache(db_path, BASE)
    runner, port = await start_server(out, "127.0.0.1", 0, papers=cache)
    async with aiohttp.ClientSession() as session:
        yield out, f"http://127.0.0.1:{port}", session, cache
    await runner.cleanup()


async def test_on_demand_files_equal_the_static_folder_byte_for_byte(db, clock, served, tmp_path: Path) -> None:
    out, base, session, cache = served
    static = tmp_path / "all"
    publish(db, static, BASE, clock=clock, papers="all")
    ids = feed_queries.followed_papers(db)
    assert len(ids) > 50 and not (out / "feeds/papers").exists()  # nothing of the papers on disk
    for pid in ids:
        status, _, body = await fetch(session, f"{base}/feeds/papers/{pid}.atom")
        assert status == 200 and body == (static / f"feeds/papers/{pid}.atom").read_bytes(), pid
        status, _, page = await fetch(session, f"{base}/papers/{pid}/")
        assert status == 200 and page == (static / f"papers/{pid}/index.html").read_bytes(), pid
    assert_valid_atom(body)
    assert cache.renders == 2 * len(ids)


async def test_etag_changes_when_the_paper_gains_a_citer_and_not_otherwise(db, clock, served) -> None:
    _, base, session, _ = served
    ids = feed_queries.followed_papers(db)
    before = {pid: await fetch(session, f"{base}/feeds/papers/{pid}.atom") for pid in ids}
    marks = {pid: feed_queries.paper_mark(db, pid) for pid in ids}
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # the seeds gain their last 3 citers
    unchanged = 0
    for pid in ids:
        status, tag, body = await fetch(session, f"{base}/feeds/papers/{pid}.atom", before[pid][1])
        mark = feed_queries.paper_mark(db, pid)
        assert mark is not None and marks[pid] is not None
        if mark.last_event_id == marks[pid].last_event_id and mark.last_snapshot_id == marks[pid].last_snapshot_id:
            assert status == 304 and tag == before[pid][1], pid
            status, _, body = await fetch(session, f"{base}/feeds/papers/{pid}.atom")
            assert body == before[pid][2]  # and the bytes are indeed those
            unchanged += 1
    assert unchanged > 10
    for pid in (SURVEY, OTHER):
        status, tag, body = await fetch(session, f"{base}/feeds/papers/{pid}.atom", before[pid][1])
        assert status == 200 and tag != before[pid][1]
        assert len(assert_valid_atom(body).entries) == len(assert_valid_atom(before[pid][2]).entries) + 3


async def test_a_matching_conditional_get_builds_nothing(served) -> None:
    _, base, session, cache = served
    url = f"{base}/feeds/papers/{SURVEY}.atom"
    status, tag, _ = await fetch(session, url)
    assert status == 200 and cache.renders == 1
    for _ in range(20):
        assert (await fetch(session, url, tag))[:2] == (304, tag)
        assert (await fetch(session, url, f'"x", W/{tag}'))[0] == 304
    assert cache.renders == 1 and cache.not_modified == 40
    assert (await fetch(session, url))[0] == 200 and cache.renders == 1 and cache.hits == 1  # from the LRU
    status, page_tag, _ = await fetch(session, f"{base}/papers/{SURVEY}/")
    assert status == 200 and page_tag != tag and cache.renders == 2


async def test_missing_papers_are_a_clean_404_and_folders_redirect(served) -> None:
    _, base, session, cache = served
    for path in ("/feeds/papers/9999.99999.atom", "/papers/9999.99999/", "/papers/9999.99999/cited-by.png",
                 f"/papers/{SURVEY}/cited-by.png", "/feeds/papers/..%2f..%2fx.atom", "/papers/a/b/c/"):
        status, _, body = await fetch(session, base + path)
        assert status == 404 and b"Traceback" not in body, path
    status = (await fetch(session, f"{base}/papers/{SURVEY}"))[0]
    assert status == 301
    async with session.get(f"{base}/papers/{SURVEY}", allow_redirects=False) as resp:
        assert resp.headers["Location"] == f"/papers/{SURVEY}/"
    assert cache.renders == 0


def test_the_lru_stays_within_its_byte_bound(db, db_path: Path, clock) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    cache = PaperCache(db_path, BASE, max_bytes=40_000)
    ids = feed_queries.followed_papers(db)
    sizes = []
    for pid in ids:
        answer = cache.get(PAGE, pid)
        assert answer.status == 200
        sizes.append(len(answer.body))
        assert cache.cached_bytes <= 40_000
    assert sum(sizes) > 3 * 40_000 and 0 < len(cache) < len(ids)
    renders = cache.renders
    cache.get(PAGE, ids[0])  # long evicted: built again
    assert cache.renders == renders + 1
    cache.get(PAGE, ids[0])
    assert cache.renders == renders + 1 and cache.hits == 1
    assert cache.get(FEED, "9999.99999").status == 404


def test_a_ticks_publish_writes_directions_index_and_tracked_papers_only(db, clock, tmp_path: Path,
                                                                           make_older_seeds) -> None:
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=OTHER, created_by=3,
              now=datetime(2026, 11, 1, tzinfo=UTC))
    out = tmp_path / "public"
    first = publish(db, out, BASE, clock=clock)
    dirs = [d.slug for d in feed_queries.directions(db)]
    expected = ({f"feeds/{s}.atom" for s in dirs} | {f"directions/{s}/index.html" for s in dirs}
                | {"feeds.opml", "index.html", "style.css", "site.js",
                   f"feeds/papers/{OTHER}.atom", f"papers/{OTHER}/index.html"})
    assert set(first.written) == expected
    assert set(snapshot(out)) == expected
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    second = publish(db, out, BASE, clock=clock)
    expected.add(f"papers/{OTHER}/cited-by.png")  # two snapshots of its page now: its chart
    assert second.incremental and set(second.written) <= expected and second.charts == 1
    assert f"feeds/papers/{OTHER}.atom" in second.written and RL in second.written
    assert set(snapshot(out)) == expected  # still no other paper's file
    assert publish(db, out, BASE, clock=clock).written == []


def test_papers_all_rewrites_only_what_changed(db, clock, tmp_path: Path, make_older_seeds) -> None:
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    out = tmp_path / "all"
    cold = publish(db, out, BASE, clock=clock, papers="all")
    before = snapshot(out)
    assert len(cold.written) == len(before) > 100
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    inc = publish(db, out, BASE, clock=clock, papers="all")
    after = snapshot(out)
    rewritten = {rel for rel in after if rel not in before or after[rel][1] != before[rel][1]}
    assert set(inc.written) == rewritten
    assert {rel for rel in rewritten if before.get(rel, (None,))[0] == after[rel][0]} == set()  # bytes differ
    papers = {rel.split("/")[-1].removesuffix(".atom") for rel in rewritten if rel.startswith("feeds/papers/")}
    assert papers == {SURVEY, OTHER}  # the papers that gained citers, no other
    dirs = feed_queries.directions_of(db, {SURVEY, OTHER})
    allowed = ({f for pid in papers for f in (f"feeds/papers/{pid}.atom", f"papers/{pid}/index.html",
                                              f"papers/{pid}/cited-by.png")}
               | {f"feeds/{s}.atom" for s in dirs} | {f"directions/{s}/index.html" for s in dirs} | {"index.html"})
    assert f"feeds/papers/{SURVEY}.atom" in rewritten and rewritten <= allowed
    assert inc.unchanged >= len(before) - len(allowed)


async def test_the_server_sees_a_new_publish_within_two_seconds(db, clock, served) -> None:
    out, base, session, _ = served
    status, tag, body = await fetch(session, f"{base}/{RL}")
    assert status == 200
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    report = await asyncio.to_thread(publish, db, out, BASE, clock=clock)
    assert RL in report.written
    fresh = (out / RL).read_bytes()

    async def changed() -> tuple[int, str, bytes] | None:
        got = await fetch(session, f"{base}/{RL}", tag)
        return got if got[0] == 200 else None  # 304 while the server has not seen the publish

    _, new_tag, new_body = await async_wait_until(changed, 3, what="the server to serve the new publish",
                                                  interval=0.1)
    assert new_tag != tag and new_body == fresh != body


async def test_etag_changes_when_a_citer_gets_its_authors(db, clock, served) -> None:
    """A citer's authors named by a scholarly source (store/scholarly) change the feeds listing
    it: its cited papers' ETags change and their entries name the authors; other papers' stay."""
    from mapwatch.store.records import AuthorRecord, OpenAlexWork
    from mapwatch.store.scholarly.saved import save_openalex

    _, base, session, _ = served
    citer = db.conn.execute("SELECT citing_id FROM citations WHERE cited_id = ? LIMIT 1", (SURVEY,)).fetchone()[0]
    cited = {r[0] for r in db.conn.execute("SELECT cited_id FROM citations WHERE citing_id = ?", (citer,))}
    ids = feed_queries.followed_papers(db)
    before = {pid: await fetch(session, f"{base}/feeds/papers/{pid}.atom") for pid in ids}
    save_openalex(db, [OpenAlexWork(citer, "W1", (AuthorRecord("Ada Planted"),), None, None)], [citer], clock())
    changed = 0
    for pid in ids:
        status, tag, body = await fetch(session, f"{base}/feeds/papers/{pid}.atom", before[pid][1])
        if pid in cited or pid == citer:
            assert status == 200 and tag != before[pid][1], pid
            changed += pid in cited and b"<name>Ada Planted</name>" in body
        else:
            assert status == 304, pid
    assert changed >= 1 and SURVEY in cited
    # Saving the same again is no change: the ETags stay.
    tag = (await fetch(session, f"{base}/feeds/papers/{SURVEY}.atom"))[1]
    save_openalex(db, [OpenAlexWork(citer, "W1", (AuthorRecord("Ada Planted"),), None, None)], [citer], clock())
    assert (await fetch(session, f"{base}/feeds/papers/{SURVEY}.atom", tag))[0] == 304
