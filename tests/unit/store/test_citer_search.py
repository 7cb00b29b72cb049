"""A tracked paper's new citer named nowhere the tick looked (no sitemap; its direction page
does not list it; the tracked paper's own list is full): the crawl reads the pages whose
"Built on by" list still has room, the most cited first, where a new citer is named, and
stops as soon as every new citer is found. Real HTTP on loopback, real SQLite."""

from __future__ import annotations

import dataclasses

from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import ListedPaper, MapPage
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.subscriptions.tracking import add_track, tracked_paper_ids
from tests import pagegen
from tests.conftest import FakeClock
from tests.mapsite import HOST, MapSite, serve_site
from tests.unit.store.test_crawl_schedule import FAST, T0, fill, grown, new_paper, page_requests


def naming(page: MapPage, citer: MapPage) -> MapPage:
    """A page with room in its list: the new citer is named there."""
    lst = page.built_on_by
    assert lst is not None and lst.shown == lst.total
    item = ListedPaper(id=citer.id, title=citer.title, year=2026, position=lst.shown + 1,
                       url=f"{HOST}/paper/{citer.id}/")
    return dataclasses.replace(page, cited_by=(page.cited_by or 0) + 1, built_on_by=dataclasses.replace(
        lst, shown=lst.shown + 1, total=lst.total + 1, items=(*lst.items, item)))


def start(db, site: MapSite, clock: FakeClock, texts: dict[str, str], tracked: str) -> None:
    fill(db, site, clock, texts)
    add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=tracked, created_by=3, now=clock())
    clock.advance(minutes=30)  # nothing due: no page, no direction page


def test_a_new_citer_named_only_on_a_page_with_room_is_found_in_the_same_tick(db) -> None:
    pages = pagegen.generate(12).v1
    tracked, roomy = pages[0], pages[3]
    texts = {p.id: format_page(p) for p in pages}
    clock = FakeClock(T0)
    # The new paper is placed in a direction nothing known links to, and cites the tracked
    # paper and a page with room; only that page names it.
    citer = new_paper("2609.30001", [tracked.id, roomy.id], None)
    with serve_site(MapSite(pages=texts, sitemap=False)) as site:
        start(db, site, clock, texts, tracked.id)
        site.swap({**texts, tracked.id: format_page(grown(tracked)), roomy.id: format_page(naming(roomy, citer)),
                   citer.id: format_page(citer)})
        site.requests.clear()
        # One request at a time: with more, pages with room already being fetched when the
        # citer is found are read all the same.
        report = refresh(db, site.base, clock=clock, priority=tracked_paper_ids(db),
                         options=dataclasses.replace(FAST, concurrency=1))
        asked = page_requests(site)
    assert asked.index(f"/paper/{tracked.id}/") < asked.index(f"/paper/{roomy.id}/") < asked.index(
        f"/paper/{citer.id}/")
    assert db.conn.execute("SELECT count(*) FROM events WHERE kind = 'citation' AND paper_id = ? AND citing_id = ?",
                           (tracked.id, citer.id)).fetchone() == (1,)
    # Pages with room, the most cited first: the search stopped once the citer was found.
    assert report.stored >= 3 and len(asked) < 1 + 11 + 1


def test_a_search_that_finds_nothing_reads_a_quarter_of_the_budget_at_most_once(db) -> None:
    pages = pagegen.generate(12).v1
    tracked = pages[0]
    texts = {p.id: format_page(p) for p in pages}
    clock = FakeClock(T0)
    with serve_site(MapSite(pages=texts, sitemap=False)) as site:
        start(db, site, clock, texts, tracked.id)
        site.swap({**texts, tracked.id: format_page(grown(tracked))})  # a citer the map names nowhere
        site.requests.clear()
        refresh(db, site.base, clock=clock, priority=tracked_paper_ids(db),
                options=dataclasses.replace(FAST, budget=20))
        first = page_requests(site)
        clock.advance(minutes=10)
        site.requests.clear()
        refresh(db, site.base, clock=clock, priority=tracked_paper_ids(db),
                options=dataclasses.replace(FAST, budget=20))
        second = page_requests(site)
    # The tracked paper, then 20 // 4 = 5 pages with room (11 have room); not again next tick
    # (the count it grew by is stored: nothing unexplained is new).
    assert first[0] == f"/paper/{tracked.id}/" and len(first) == 1 + 5
    assert second == [f"/paper/{tracked.id}/"]


def test_no_search_when_a_new_page_read_this_tick_names_the_tracked_paper(db) -> None:
    pages = pagegen.generate(12).v1
    tracked = pages[0]
    texts = {p.id: format_page(p) for p in pages}
    clock = FakeClock(T0)
    citer = new_paper("2609.30001", [tracked.id], None)
    with serve_site(MapSite(pages=texts)) as site:  # a sitemap: it lists the new paper
        start(db, site, clock, texts, tracked.id)
        site.swap({**texts, tracked.id: format_page(grown(tracked)), citer.id: format_page(citer)})
        site.requests.clear()
        report = refresh(db, site.base, clock=clock, priority=tracked_paper_ids(db), options=FAST)
        asked = page_requests(site)
    assert sorted(asked) == sorted([f"/paper/{tracked.id}/", f"/paper/{citer.id}/"]), asked
    assert report.stored == 2


def test_a_citer_read_before_its_tracked_paper_explains_the_growth() -> None:
    # Pages are fetched several at a time: the new citer's page may be parsed before the
    # tracked paper's. Its growth is then already explained: no search.
    import asyncio

    from mapwatch.store.sources.crawl_queue import SEARCH, CiterSearch, CrawlQueue

    async def run() -> tuple[bool, bool]:
        queue = CrawlQueue(budget=10)
        search = CiterSearch(queue)
        search.named(["2601.00000", "2601.00005"])  # the new page, read first
        search.grew("2601.00000", 1)  # then the tracked paper's page: one more citer
        first = search.due()
        search.grew("2601.00000", 1)  # a second citer nobody named
        queue.push(SEARCH, "page", "2601.00003")
        second = search.due()
        search.named(["2601.00000"])  # found: the search is called off
        return first, second and queue.pages_left() == 0

    assert asyncio.run(run()) == (False, True)
