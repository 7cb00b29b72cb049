"""Sitemaps read as they change (store.sources.listed_pages, migration 0028): what each sitemap
file lists is recorded, a file answering 304 is not read again and its pages' lastmods still
count, a file that changed is compared with what it listed, and a page it says changed stays
due until it is read. Real HTTP on loopback (tests/mapsite.py), real SQLite, an injected clock."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

from mapwatch.store.clock import iso
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import MapPage
from mapwatch.store.sources.crawl_outcomes import ResourceSeen
from mapwatch.store.sources.crawl_plan import plan_crawl
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.listed_pages import Listing, record_listed
from mapwatch.store.sources.refresh import refresh
from tests import pagegen
from tests.conftest import FakeClock
from tests.mapsite import MapSite, serve_site

T0 = datetime(2026, 9, 15, 12, tzinfo=UTC)
FAST = HttpOptions(concurrency=2, timeout=2, retries=1, backoff=0.01, budget=300)
OLD = iso(T0 - timedelta(days=3))


def _urlset(base: str, lastmods: dict[str, str]) -> bytes:
    urls = "".join(f"<url><loc>{base}/paper/{pid}/</loc><lastmod>{mod}</lastmod></url>\n"
                   for pid, mod in lastmods.items())
    return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
            f"{urls}</urlset>\n").encode()


def _two_files(site: MapSite, lastmods: dict[str, str]) -> None:
    """The sitemap as two files of 15 pages each (`/sm-a.xml`, `/sm-b.xml`), served with ETags."""
    ids = sorted(lastmods)
    index = ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/'
             f'sitemap/0.9">\n<sitemap><loc>{site.base}/sm-a.xml</loc></sitemap>\n'
             f"<sitemap><loc>{site.base}/sm-b.xml</loc></sitemap>\n</sitemapindex>\n")
    site.extra["/sitemap.xml"] = (index.encode(), "application/xml")
    site.extra["/sm-a.xml"] = (_urlset(site.base, {p: lastmods[p] for p in ids[:15]}), "application/xml")
    site.extra["/sm-b.xml"] = (_urlset(site.base, {p: lastmods[p] for p in ids[15:]}), "application/xml")


def _map() -> tuple[list[MapPage], dict[str, str], dict[str, str], FakeClock]:
    """30 pages, their texts, their lastmods (3 days old), a clock at T0."""
    pages = pagegen.generate(30).v1
    texts = {p.id: format_page(p) for p in pages}
    return pages, texts, dict.fromkeys(texts, OLD), FakeClock(T0)


def _statuses(site: MapSite) -> dict[str, int]:
    return dict(zip(site.paths_requested(), site.statuses, strict=True))


def test_a_file_answering_304_is_not_read_again_and_a_changed_one_names_only_what_moved(db) -> None:
    pages, texts, lastmods, clock = _map()
    with serve_site(MapSite(pages=texts)) as site:
        _two_files(site, lastmods)
        refresh(db, site.base, clock=clock, options=FAST)
        recorded = dict(db.conn.execute("SELECT location, listed FROM crawl_resources WHERE kind = 'sitemap'"
                                        " AND listed IS NOT NULL"))
        assert recorded == {f"{site.base}/sm-a.xml": 15, f"{site.base}/sm-b.xml": 15}
        assert db.conn.execute("SELECT count(*) FROM sources WHERE listed_in IS NOT NULL").fetchone()[0] == 30

        # An hour on, nothing changed: both files answer 304, and still speak for their 30 pages.
        clock.advance(hours=1)
        site.requests.clear()
        site.statuses.clear()
        quiet = refresh(db, site.base, clock=clock, options=FAST)
        st = _statuses(site)
        assert st["/sm-a.xml"] == st["/sm-b.xml"] == 304
        assert quiet.crawl.sitemap_pages == 30 and quiet.crawl.sitemap_changed == 0

        # One page of the second file changes, and its lastmod says so.
        changed = sorted(texts)[20]
        grown = dataclasses.replace(next(p for p in pages if p.id == changed), cited_by=999)
        site.swap({**texts, changed: format_page(grown)})
        clock.advance(hours=1)
        lastmods[changed] = iso(clock() - timedelta(minutes=30))
        _two_files(site, lastmods)
        site.requests.clear()
        site.statuses.clear()
        busy = refresh(db, site.base, clock=clock, options=FAST)
        st = _statuses(site)
        assert st["/sm-a.xml"] == 304 and st["/sm-b.xml"] == 200
        assert busy.crawl.sitemap_changed == 1 and busy.crawl.sitemap_pages == 30
        assert f"/paper/{changed}/" in st and busy.stored == 1
        row = db.conn.execute("SELECT listed_lastmod, listed_in FROM sources WHERE paper_id = ?", (changed,)).fetchone()
        assert row == (lastmods[changed], f"{site.base}/sm-b.xml")
    assert db.conn.execute("SELECT cited_by FROM papers WHERE id = ?", (changed,)).fetchone()[0] == 999


def test_a_page_a_file_says_changed_stays_due_until_it_is_read(db) -> None:
    """The tick that reads the changed file cannot read the page (it has no page budget left);
    the next tick, the file answering 304, reads it all the same."""
    pages, texts, lastmods, clock = _map()
    with serve_site(MapSite(pages=texts)) as site:
        _two_files(site, lastmods)
        refresh(db, site.base, clock=clock, options=FAST)
        changed = sorted(texts)[3]
        site.swap({**texts, changed: format_page(dataclasses.replace(pages[3], cited_by=777))})
        clock.advance(hours=1)
        lastmods[changed] = iso(clock() - timedelta(minutes=30))
        _two_files(site, lastmods)
        site.requests.clear()
        starved = refresh(db, site.base, clock=clock, options=dataclasses.replace(FAST, budget=0))
        assert f"/paper/{changed}/" not in site.paths_requested() and starved.stored == 0
        assert starved.crawl.sitemap_changed == 1
        assert changed in plan_crawl(db, site.base, clock(), 300).due  # due at once, left for the next tick

        clock.advance(hours=1)
        site.requests.clear()
        site.statuses.clear()
        later = refresh(db, site.base, clock=clock, options=FAST)
        st = _statuses(site)
        assert st["/sm-a.xml"] == 304 and st[f"/paper/{changed}/"] == 200 and later.stored == 1
        assert later.crawl.sitemap_changed == 1  # (from the lastmod recorded, the file not read again)


def test_comparing_a_file_records_what_moved_what_left_and_its_validators_together(db) -> None:
    head, tail = "https://map.example/paper/", "/"
    now = T0
    with db.atomic():
        db.conn.executemany(
            "INSERT INTO sources (location, paper_id, checked_at, listed_lastmod, listed_in, next_check_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [(f"{head}{pid}{tail}", pid, iso(now - timedelta(hours=2)), OLD, "https://map.example/s1.xml",
              iso(now + timedelta(days=9))) for pid in ("2601.00001", "2601.00002", "2601.00003")])
    seen = ResourceSeen("https://map.example/s1.xml", "sitemap", False, True, None, '"v2"', None, "ab", None)
    entries = {"2601.00001": OLD,  # as recorded
               "2601.00002": iso(now - timedelta(minutes=20)),  # moved, after the check: changed
               "2601.00004": iso(now - timedelta(minutes=20))}  # no row yet; 2601.00003 is gone
    out = record_listed(db, Listing("https://map.example/s1.xml", entries, seen), head, tail, now)
    assert out.changed == {"2601.00002": entries["2601.00002"]} and out.moved.keys() == {"2601.00002"}
    assert out.unknown == {"2601.00004": (entries["2601.00004"], "https://map.example/s1.xml")}
    assert out.dropped == {"2601.00003"}
    rows = {pid: (mod, listed_in, next_at) for pid, mod, listed_in, next_at in db.conn.execute(
        "SELECT paper_id, listed_lastmod, listed_in, next_check_at FROM sources")}
    assert rows["2601.00002"] == (entries["2601.00002"], "https://map.example/s1.xml", iso(now))  # due at once
    assert rows["2601.00003"][:2] == (None, None)
    assert rows["2601.00001"][2] == iso(now + timedelta(days=9))  # untouched
    assert db.conn.execute("SELECT etag, listed, dated FROM crawl_resources WHERE location = ?",
                           ("https://map.example/s1.xml",)).fetchone() == ('"v2"', 3, 3)
