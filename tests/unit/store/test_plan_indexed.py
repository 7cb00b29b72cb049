"""A tick's plan read through the indexes (store.sources.crawl_plan `_plan_indexed`, once every
paper with a page was checked over HTTP) is the plan made from every row (`_plan_full`), but for
the validators, last checks and sitemap lastmods (only of the pages planned) and the due list's
length (the budget's)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from mapwatch.store.clock import iso
from mapwatch.store.database.prepared import SourceInfo
from mapwatch.store.database.save import save_pages
from mapwatch.store.pages.format import format_page
from mapwatch.store.sources import crawl_plan as cp
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.subscriptions.tracking import add_track
from tests import pagegen
from tests.conftest import FakeClock
from tests.mapsite import MapSite, serve_site

FAST = HttpOptions(concurrency=2, timeout=2, retries=1, backoff=0.01, budget=1_000)
T0 = datetime(2026, 9, 15, 12, tzinfo=UTC)
FIELDS = ("tracked", "due", "unseen", "unseen_share", "not_due", "known", "frontier", "directions", "followed",
          "counts", "roomy", "full", "pages_checked", "lastmod_believed", "recheck_scale")


@pytest.mark.parametrize("sitemap", [False, True])
def test_the_indexed_plan_is_the_full_plan(db, sitemap: bool) -> None:
    pages = pagegen.generate(40).v1
    texts = {p.id: format_page(p) for p in pages}
    clock = FakeClock(T0)
    lastmod = {pid: iso(T0 - timedelta(days=3)) for pid in texts} if sitemap else {}
    with serve_site(MapSite(pages=texts, sitemap=sitemap, lastmod=lastmod)) as site:
        refresh(db, site.base, clock=clock, priority=sorted(texts), options=FAST)
        add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=pages[0].id, created_by=None, now=clock())
        # Some pages overdue, some never scheduled (an older version's rows), a paper found only
        # on a direction page (the frontier).
        with db.atomic():
            for i, p in enumerate(pages[1:15]):
                db.conn.execute("UPDATE sources SET next_check_at = ? WHERE paper_id = ?",
                                (iso(T0 + timedelta(hours=i)), p.id))
            db.conn.execute("UPDATE sources SET next_check_at = NULL, interval_s = NULL WHERE paper_id = ?",
                            (pages[20].id,))
            db.conn.execute("INSERT INTO sources (location, paper_id) VALUES (?, ?)",
                            (f"{site.base}/paper/2609.99999/", "2609.99999"))
        now = T0 + timedelta(hours=8)
        base, template = cp.split_source(site.base)
        host = cp.urlsplit(base).netloc.lower()
        head, tail = cp._location_parts(template, base)
        pages_with_page = cp.pages_unchecked(db, host, head, tail)
        assert pages_with_page == 40
        full = cp._plan_full(db, site.base, now, 1_000, ())
        fast = cp._plan_indexed(db, host, head, tail, now, 1_000, (), pages_with_page)
        assert cp.plan_crawl(db, site.base, now, 1_000).due == fast.due
        for name in FIELDS:
            assert getattr(fast, name) == getattr(full, name), name
        assert len(fast.due) >= 9 and "2609.99999" in fast.unseen
        for pid in [*fast.tracked, *fast.due]:
            loc = cp.page_url(template, base, pid)
            assert fast.validators[loc] == full.validators[loc]
        if sitemap:  # the pages planned and the audits' pool only: not every page's (the sitemaps' too)
            assert fast.checked.items() <= full.checked.items() and fast.audit_pool and full.audit_pool is None
            assert {cp.page_url(template, base, pid) for pid in fast.audit_pool} <= fast.checked.keys()
            assert fast.listed.items() <= full.listed.items() and set(fast.audit_pool) <= fast.listed.keys()
            assert len(fast.checked) < len(full.checked)
        # The due list holds the budget's (the rest is counted, left for the next tick).
        short = cp._plan_indexed(db, host, head, tail, now, 4, (), pages_with_page)
        if not sitemap:
            assert short.due == full.due[:4 + len(full.tracked)] and short.unplanned == len(full.due) - len(short.due)
        else:
            assert short.due == full.due


def test_a_page_never_checked_over_http_makes_the_full_plan(db) -> None:
    texts = {p.id: format_page(p) for p in pagegen.generate(10).v1}
    clock = FakeClock(T0)
    with serve_site(MapSite(pages=texts)) as site:
        refresh(db, site.base, clock=clock, priority=sorted(texts), options=FAST)
        base, template = cp.split_source(site.base)
        host = cp.urlsplit(base).netloc.lower()
        head, tail = cp._location_parts(template, base)
        assert cp.pages_unchecked(db, host, head, tail) == 10
        assert cp.pages_unchecked(db, host, head, tail) == 10  # (the second time from what held)
        # A page stored from elsewhere (a folder, `mapwatch ingest`), never checked over HTTP:
        # the pages it lists now have one too (stubs given a page keep their rowid).
        page = pagegen.generate(12).v1[11]
        for pid in [it.url.rstrip("/").rsplit("/", 1)[-1] for it in (page.builds_on.items if page.builds_on else ())]:
            db.conn.execute("INSERT OR IGNORE INTO papers (id, title, first_seen, updated) VALUES (?, 'x', 'x', 'x')",
                            (pid,))
        save_pages(db, [(page, SourceInfo("/folder/page.txt", "ab"))], clock())
        assert cp.pages_unchecked(db, host, head, tail) is None
        assert page.id in cp.plan_crawl(db, site.base, clock(), 500).due
    assert dataclasses.is_dataclass(cp.CrawlPlan)


def test_a_crawls_own_pages_keep_the_every_page_checked_answer(db) -> None:
    """A tick whose crawl stores new pages checked them as it stored them: the next plan does
    not join every page with its row again; a page stored from elsewhere makes it."""
    pages = pagegen.generate(12).v1
    texts = {p.id: format_page(p) for p in pages}
    first = {pid: texts[pid] for pid in sorted(texts)[:10]}
    clock = FakeClock(T0)
    joins: list[str] = []
    with serve_site(MapSite(pages=first, sitemap=False)) as site:
        refresh(db, site.base, clock=clock, priority=sorted(first), options=FAST)
        head, tail = cp.location_parts(site.base)
        host = cp.urlsplit(site.base).netloc.lower()
        assert cp.pages_unchecked(db, host, head, tail) == 10
        site.swap(texts)  # two papers more (asked for by id, as a paper found on the way would be)
        clock.advance(hours=1)
        report = refresh(db, site.base, clock=clock, priority=sorted(texts)[10:], options=FAST)
        assert report.saved.paged >= 1 and has_pages(db) == 10 + report.saved.paged
        db.conn.set_trace_callback(lambda sql: joins.append(sql) if "JOIN papers p" in sql and "has_page" in sql
                                   and "count" in sql else None)
        clock.advance(hours=1)
        plan = cp.plan_crawl(db, site.base, clock(), 500)
        assert plan.all_checked and plan.pages_checked == has_pages(db) and joins == []
        page = pages[11] if has_pages(db) == 11 else pagegen.generate(13).v1[12]
        save_pages(db, [(dataclasses.replace(page, id="2609.00001"), SourceInfo("/folder/p.txt", "ab"))], clock())
        assert cp.plan_crawl(db, site.base, clock(), 500).due and len(joins) == 1  # checked again, whole
    db.conn.set_trace_callback(None)


def has_pages(db) -> int:
    return db.conn.execute("SELECT count(*) FROM papers WHERE has_page").fetchone()[0]


NEW_PROCESS = """
import json, sys
from mapwatch.store.database.db import open_db
from mapwatch.store.sources import crawl_plan as cp
db = open_db(sys.argv[1])
joins = []
db.conn.set_trace_callback(lambda sql: joins.append(sql) if "JOIN papers p" in sql else None)
if sys.argv[5] == "rebuilt":  # the file's papers rebuilt (rowids moved): the kept row no longer holds
    db.conn.execute("UPDATE papers SET rowid = rowid + 1000")
print(json.dumps([cp.pages_unchecked(db, *sys.argv[2:5]), len(joins)]))
"""


def test_a_new_process_finds_every_page_checked_without_the_join(db_path) -> None:
    """The answer is kept in the database (table crawl_checked): the first plan of another
    process reads that row instead of joining every page with its sources row (a process's
    first tick at 1,000,000 pages: 3.8 s of CPU before)."""
    import json
    import subprocess
    import sys

    from mapwatch.store.database.db import open_db

    texts = {p.id: format_page(p) for p in pagegen.generate(10).v1}
    clock = FakeClock(T0)
    db = open_db(db_path)
    with serve_site(MapSite(pages=texts, sitemap=False)) as site:
        refresh(db, site.base, clock=clock, priority=sorted(texts), options=FAST)
        head, tail = cp.location_parts(site.base)
        host = cp.urlsplit(site.base).netloc.lower()
        assert cp.pages_unchecked(db, host, head, tail) == 10  # as the next tick's plan finds it
    db.close()

    def new_process(how: str) -> list:
        out = subprocess.run([sys.executable, "-c", NEW_PROCESS, str(db_path), host, head, tail, how],
                             capture_output=True, text=True, check=True, timeout=60).stdout
        return json.loads(out)

    assert new_process("as is") == [10, 0]
    assert new_process("rebuilt") == [10, 1]  # found again by the join
