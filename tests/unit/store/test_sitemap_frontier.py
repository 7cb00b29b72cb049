"""Papers only a sitemap names are kept in a bounded form (issue 30, item 5).

Before, every id a sitemap named became a permanent `sources` row: 500,000 made-up ids made
500,001 rows (87 MB), and a later tick with the site down still spent 20 s and 253 MB planning.
Now at most MAX_FRONTIER such papers wait for their first read, and those a covering sitemap
stops listing are forgotten. Real HTTP on loopback, real SQLite, an injected clock."""

from __future__ import annotations

import dataclasses
import gzip
from datetime import UTC, datetime, timedelta

from mapwatch.store.pages.format import format_page
from mapwatch.store.sources.crawl_plan import MAX_FRONTIER
from mapwatch.store.sources.refresh import refresh
from tests import pagegen
from tests.conftest import FakeClock
from tests.mapsite import MapSite, serve_site
from tests.unit.store.test_sitemap_trust import FAST

T0 = datetime(2026, 9, 15, 12, tzinfo=UTC)
NS = '<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


def sitemap(base: str, ids: list[str], lastmod: str) -> bytes:
    urls = "".join(f"<url><loc>{base}/paper/{pid}/</loc><lastmod>{lastmod}</lastmod></url>" for pid in ids)
    return gzip.compress(f"{NS}{urls}</urlset>".encode(), 1)


def rows(db) -> int:
    return db.conn.execute("SELECT count(*) FROM sources").fetchone()[0]


def test_ids_a_covering_sitemap_stops_listing_are_forgotten(db) -> None:
    texts = {p.id: format_page(p) for p in pagegen.generate(20).v1}
    bogus = [f"2001.{i:05d}" for i in range(1_000)]  # no page (404); older ids: read after the real ones
    clock = FakeClock(T0)
    stamp = (T0 - timedelta(days=3)).isoformat(timespec="seconds")
    site = MapSite(pages=texts)
    with serve_site(site):
        site.extra["/sitemap-papers.xml.gz"] = (sitemap(site.base, [*texts, *bogus], stamp), "application/gzip")
        first = refresh(db, site.base, clock=clock, options=dataclasses.replace(FAST, budget=40))
        assert first.stored == 20
        assert rows(db) >= 1_000  # the made-up ids wait for their first read
        clock.advance(hours=1)
        site.extra["/sitemap-papers.xml.gz"] = (sitemap(site.base, list(texts), stamp), "application/gzip")
        again = refresh(db, site.base, clock=clock, options=dataclasses.replace(FAST, budget=40))
    assert again.crawl.forgotten >= 900  # those never read, listed no more
    left = {r[0] for r in db.conn.execute("SELECT paper_id FROM sources WHERE checked_at IS NULL")}
    assert not left & set(bogus), sorted(left & set(bogus))[:5]
    assert {r[0] for r in db.conn.execute("SELECT paper_id FROM sources WHERE paper_id LIKE '2601.%'")} >= set(texts)


def test_at_most_max_frontier_papers_named_only_by_a_sitemap_are_kept(db) -> None:
    texts = {p.id: format_page(p) for p in pagegen.generate(10).v1}
    bogus = [f"20{i // 90_000 + 1:02d}.{i % 90_000:05d}" for i in range(MAX_FRONTIER + 20_000)]
    clock = FakeClock(T0)
    site = MapSite(pages=texts)
    with serve_site(site):
        parts = [bogus[i:i + 40_000] for i in range(0, len(bogus), 40_000)]
        index = "".join(f"<sitemap><loc>{site.base}/s{k}.xml.gz</loc></sitemap>" for k in range(len(parts) + 1))
        site.extra["/sitemap.xml"] = (
            f'<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">{index}</sitemapindex>'.encode(),
            "application/xml")
        site.extra["/s0.xml.gz"] = (sitemap(site.base, list(texts), "2026-09-10"), "application/gzip")
        for k, part in enumerate(parts, 1):
            site.extra[f"/s{k}.xml.gz"] = (sitemap(site.base, part, "2026-09-10"), "application/gzip")
        report = refresh(db, site.base, clock=clock, options=dataclasses.replace(FAST, budget=20))
    # the fault: more named than may wait
    assert report.crawl.frontier_full >= 19_000, (report.crawl.sitemap_pages, report.notes)
    assert rows(db) <= MAX_FRONTIER + len(texts) + 50
    assert any("waiting for their first read" in n for n in report.notes), report.notes
    assert report.stored == 10  # the real pages were read all the same
