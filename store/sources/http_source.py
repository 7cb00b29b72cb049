"""Retrieving pages over HTTP: a polite crawler of the map's website.

Pure retrieval plus link discovery, on the caller's event loop: each page's outcome (a parsed
page, or why there is none) is handed to `emit` as soon as it is known, and nothing is kept after
that, so a crawl's memory does not grow with its budget. Its siblings: crawl_plan (what to fetch),
lastmods (what the sitemaps vouch for), refresh_pipeline (saving), http_client, robots, page_fetch.

The tick's work is one priority queue (crawl_queue says in what order), not a list handed out up
front: the page budget is spent as pages are taken from it, so a paper found on a direction page
or in a new page's links competes for what is left of it in the same tick.

Politeness (docs/live-map.md): robots.txt is read once per tick per host (`urllib.robotparser`),
conditionally (its last body is kept for a 304): `Disallow` is obeyed for mapwatch's User-Agent,
`Crawl-delay` spaces the requests (capped at MAX_CRAWL_DELAY), `Sitemap:` lines are read for
discovery (conditionally too). A robots.txt answered 4xx means no restriction; 5xx, a timeout or
a broken connection means the host is not crawled this tick (reported; stored data is kept).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from datetime import UTC, timedelta
from typing import Any, TypeVar
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from mapwatch.store.ids import normalize_id
from mapwatch.store.pages.model import MapPage

from .crawl_outcomes import (
    Consult,
    CrawlResult,
    Discovered,
    Emit,
    Failed,
    Fetched,
    Forgotten,
    Missing,
    Outcome,
    ResourceSeen,
    Unrecorded,
    Vouched,
)
from .crawl_plan import MAX_FRONTIER, CrawlPlan, conditional_headers, location_parts, page_url, split_source
from .crawl_queue import (
    DIRECTION,
    DUE,
    FOLLOWED,
    NEW,
    RECHECK,
    SEARCH,
    SITEMAP_CHANGED,
    SITEMAP_FULL,
    TRACKED,
    UNSEEN,
    CiterSearch,
    CrawlQueue,
)
from .crawl_schedule import VOUCHED_CEILING, VOUCHED_TRACKED, id_age
from .http_client import ACCEPT, Deadline, Gone, HttpClient, HttpOptions, Retry, user_agent
from .lastmods import Lastmods, direction_stale
from .listed_pages import SitemapsRead, lastmods_said, still_listed
from .page_fetch import fetch_from
from .robots import SiteFiles
from .sitemaps import CLOCK_SKEW

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_DIRECTION_PAGES = 2_000  # direction pages read per tick
# Pages parsed at once, each in a worker thread: parsing (up to ~1 s for a 2 MB page, docs/pages.md,
# "Page formats") never blocks the crawl's event loop, and at most this many bodies are held.
PARSE_THREADS = 2


def _span(d: timedelta) -> str:
    """A clock difference as people say it: 25 minutes, 3.5 hours."""
    minutes = d.total_seconds() / 60
    return f"{minutes:.0f} minutes" if minutes < 120 else f"{minutes / 60:.1f} hours"


class _Crawl(SiteFiles):
    """One tick's crawl of one host; see `crawl`."""

    def __init__(self, session: Any, source: str, plan: CrawlPlan, options: HttpOptions, emit: Emit,
                 consult: Consult, parser: Executor | None = None) -> None:
        self.base, self.template = split_source(source)
        self.host, self.pages_at = urlsplit(self.base).netloc.lower(), f"{self.base}/paper/"
        self.plan = plan
        self.today = plan.now.astimezone(UTC).date()  # the latest date a page may claim (store/pages/page_dates.py)
        self.options = options
        self.emit = emit
        self.result = CrawlResult()
        self.queue = CrawlQueue(options.budget)
        self.seen: set[str] = set()
        self.sitemaps_failed = 0  # sitemaps named but not read this tick
        self.directions_seen: set[str] = set()
        self.active = 0  # items being worked on (they may queue more)
        self.admitted = 0  # pages queued (or kept for the unseen papers' turn)
        self.robots: RobotFileParser | None = None
        self.http = HttpClient(session, self.host, options)
        self.deadline = Deadline(options.deadline)  # the tick's: what is not done by then waits for the next
        self.in_flight: set[str] = set()  # pages being fetched (left for the next tick at the deadline)
        self.parsing, self.parser = asyncio.Semaphore(PARSE_THREADS), parser  # (parser None: the default executor)
        self.citers, self.covering = CiterSearch(self.queue), False  # (covering: store.sources.lastmods)
        self.consult = consult
        self.head, self.tail = location_parts(source)

    async def off_loop(self, fn: Callable[..., T], *args: Any, **kw: Any) -> T:
        """`fn(*args, **kw)` in a worker thread (of `parser`), at most PARSE_THREADS at once."""
        async with self.parsing:
            return await asyncio.get_running_loop().run_in_executor(self.parser, lambda: fn(*args, **kw))

    # --- the queue ---------------------------------------------------------------------

    def allowed(self, url: str) -> bool:
        return self.robots is None or self.robots.can_fetch(user_agent(), url)

    def admit(self, paper_id: str) -> bool:
        """Whether a page may be queued: not queued before this tick, not disallowed."""
        if paper_id in self.seen:
            return False
        self.seen.add(paper_id)
        url = page_url(self.template, self.base, paper_id)
        if not self.allowed(url):
            self.result.robots_skipped += 1
            if len(self.result.robots_skipped_urls) < 20:
                self.result.robots_skipped_urls.append(url)
            return False
        self.admitted += 1
        self.result.planned = min(self.admitted, self.options.budget)  # what this tick can fetch
        return True

    def enqueue(self, paper_id: str, cls: int = DUE) -> None:
        if self.admit(paper_id):
            # A re-check of a page checked before on this host: a quiet tick takes few (QUIET_SHARE).
            recheck = cls == DUE and page_url(self.template, self.base, paper_id) in self.plan.checked
            self.queue.push(cls, "page", paper_id, (RECHECK, 0) if recheck else (0, 0))

    async def found(self, paper_id: str, named_only: bool = True) -> None:
        """A paper linked from a page, a direction page or a sitemap: fetched this tick (budget
        permitting) when the database does not know it. One only a sitemap or a direction
        page names (`named_only`) joins the frontier, which holds at most MAX_FRONTIER."""
        if paper_id in self.plan.known or paper_id in self.seen:
            return
        if named_only and len(self.plan.frontier) + self.result.discovered >= MAX_FRONTIER:
            if not self.result.frontier_full:
                self.result.notes.append(f"{MAX_FRONTIER:,} papers named by sitemaps or direction pages are "
                                         "waiting for their first read: papers named only there are not kept")
            self.result.frontier_full += 1
            return
        if self.admit(paper_id):
            self.queue.stir()
            age = id_age(paper_id)
            self.queue.push(NEW, "page", paper_id, (-age[0], -age[1]))
            self.result.discovered += 1
            await self.emit(Discovered(page_url(self.template, self.base, paper_id), paper_id))

    def enqueue_direction(self, url: str, forced: bool = False) -> None:
        if url in self.directions_seen or len(self.directions_seen) >= MAX_DIRECTION_PAGES:
            return
        if urlsplit(url).netloc.lower() != self.host or not self.allowed(url):
            return
        if not forced and not self.plan.direction_due(url):
            return
        if self.covering and not direction_stale(self.plan, url):  # a believed sitemap names every page
            return
        self.directions_seen.add(url)
        self.queue.push(FOLLOWED if forced or url in self.plan.followed else DIRECTION, "direction", url)

    def id_of(self, url: str) -> str | None:
        """The paper id of a same-host `/paper/<id>/` URL (the sitemaps' usual case, under
        `pages_at`, without a urlsplit per entry)."""
        if not url.startswith(self.pages_at) and (
                (parts := urlsplit(url)).netloc.lower() != self.host or "/paper/" not in parts.path):
            return None
        return normalize_id(url)

    # --- the tick ------------------------------------------------------------------------

    async def run(self) -> CrawlResult:
        try:
            return await self._run()
        finally:
            self.result.requests = self.http.requests
            self.result.statuses = dict(self.http.statuses)

    async def _run(self) -> CrawlResult:
        plan = self.plan
        robots_failure = await self.read_robots()
        sitemaps = await self.read_sitemaps() if robots_failure is None else SitemapsRead()
        skew = timedelta(seconds=self.result.clock_skew or 0)
        if abs(skew) > CLOCK_SKEW:
            self.result.notes.append(f"the clock of {self.host} is {_span(abs(skew))} "
                                     f"{'ahead of' if skew > timedelta(0) else 'behind'} ours (its Date header): "
                                     "its sitemap lastmods are read on our clock")
        compared = sitemaps.compared
        plan.checked.update(compared.checked)
        plan.full |= compared.full
        if compared.unknown:
            await self.emit(Unrecorded({self.head + pid + self.tail: said for pid, said in compared.unknown.items()}))
        lastmods = Lastmods(plan, lastmods_said(plan, sitemaps), lambda pid: page_url(self.template, self.base, pid),
                            skew, dated=sitemaps.dated if sitemaps.files else None)
        if sitemaps.files and lastmods.covering and not self.sitemaps_failed:  # every sitemap read, naming the map
            dropped = {pid for pid in plan.frontier if not still_listed(plan, pid, sitemaps)}
            if dropped:
                self.result.forgotten = len(dropped)
                await self.emit(Forgotten([plan.frontier[pid] for pid in dropped]))
                for pid in dropped:
                    del plan.frontier[pid]
                    plan.known.discard(pid)
                plan.unseen = [pid for pid in plan.unseen if pid not in dropped]
        del sitemaps
        self.result.sitemap_changed = len(lastmods.changed)
        if lastmods.changed:
            self.queue.stir()
        self.covering = lastmods.covering
        for url in plan.directions:
            self.enqueue_direction(url, forced=url in plan.followed)
        # requested all the same: the lastmods' evidence
        audited = lastmods.audit(self.options.budget, self.options.audit_rng)
        self.result.audited = len(audited)
        self.queue.keep_for_audits(len(audited))
        for pid in plan.tracked:
            if not lastmods.vouch(pid, VOUCHED_TRACKED, due=False):
                self.enqueue(pid, TRACKED)
        for _mod, pid in lastmods.changed:
            if pid in plan.known or pid in self.seen:  # a full list read before: after the re-checks (storms)
                self.enqueue(pid, SITEMAP_FULL if pid in plan.full else SITEMAP_CHANGED)
            else:
                await self.found(pid)
        for i, pid in enumerate(plan.unseen):
            if i < plan.unseen_share:
                self.enqueue(pid, UNSEEN)
            elif self.admit(pid):
                self.queue.keep_unseen(pid)
        for pid in audited:  # first among the re-checks: the tick's audits are all asked
            self.enqueue(pid, DUE)
        for pid in plan.due:
            if not lastmods.vouch(pid, VOUCHED_CEILING, due=True):
                self.enqueue(pid, DUE)
        self.result.vouched = lastmods.vouched
        if lastmods.rescheduled:
            await self.emit(Vouched(lastmods.rescheduled))
        del lastmods
        if robots_failure is not None:  # conservative: nothing is requested from this host
            pages = self.queue.drain_pages()
            for pid in pages[:self.options.budget]:
                await self.emit(Failed(page_url(self.template, self.base, pid), pid,
                                       f"not requested: {robots_failure}", requested=False))
            self.result.over_budget = max(0, len(pages) - self.options.budget) + plan.unplanned
            return self.result
        self.queue.spend_before(self.http.requests)  # (robots.txt and the sitemaps: a quiet tick counts them)
        workers = [asyncio.create_task(self.worker()) for _ in range(max(1, self.options.concurrency))]
        gathered = asyncio.gather(*workers)
        # Its outcome retrieved whenever it ends (no "exception was never retrieved" log), also
        # when this crawl is cancelled twice (a shutdown) before the lines below read it.
        gathered.add_done_callback(lambda f: f.cancelled() or f.exception())
        try:
            finished = await self.deadline.wait(gathered)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        left = self.queue.pages_left() + plan.unplanned
        if not finished:
            left += len(self.in_flight)
            self.result.notes.append(self.deadline.note(left))
        self.result.over_budget += left
        return self.result

    async def worker(self) -> None:
        while True:
            if self.citers.due():  # tracked papers' new citers named nowhere yet: the pages with room
                self.result.searched = len(self.plan.roomy)
                for pid in self.plan.roomy:
                    self.enqueue(pid, SEARCH)
            item = self.queue.take()
            if item is None:
                if self.active == 0:  # nothing queued, nothing in flight to queue more: done
                    self.queue.wake.set()
                    return
                self.queue.wake.clear()
                await self.queue.wake.wait()
                continue
            kind, what = item
            self.active += 1
            early = self.citers.taken(kind)
            try:
                if kind == "page":
                    self.in_flight.add(what)
                    outcome = await self.fetch_page(what)
                    if isinstance(outcome, Fetched) and outcome.page is not None:
                        # (a page in a new version that names a paper new to the database stirs the
                        # queue through `found`; one that only re-orders or recounts known papers
                        # does not: the tick stays quiet, crawl_queue.QUIET_SHARE)
                        await self.discover(outcome.page)
                    await self.emit(outcome)
                else:
                    await self.read_direction(what)
            except Exception as e:  # a bug must not hang the crawl
                log.exception("fetching %s failed", what)
                if kind == "page":
                    await self.emit(Failed(page_url(self.template, self.base, what), what, f"internal error: {e}"))
            finally:
                task = asyncio.current_task()
                if task is None or not task.cancelling():  # (cancelled at the deadline: left in flight)
                    self.in_flight.discard(what)
                self.active -= 1
                self.citers.done(early)
                self.queue.wake.set()

    async def discover(self, page: MapPage) -> None:
        for lst in (page.builds_on, page.built_on_by):
            if lst:
                for it in lst.items:
                    if urlsplit(it.url).netloc.lower() == self.host and (pid := normalize_id(it.url)):
                        await self.found(pid, named_only=False)  # (a page names it: stored as a stub)
        if page.id not in self.plan.known and page.builds_on:
            self.citers.named([pid for it in page.builds_on.items if (pid := normalize_id(it.url))])
        if search := self.plan.unlisted_growth(page):  # look for the new citers its page does not name
            self.queue.search(search)
            self.citers.grew(page.id, search)
        for placement in page.placements:
            self.enqueue_direction(placement.url, forced=search > 0)

    # --- pages ---------------------------------------------------------------------------

    async def read_direction(self, url: str) -> None:
        from mapwatch.store.pages import html

        known = self.plan.resources.get(url)
        headers = conditional_headers(known, keep_body=False)
        try:
            resp = await self.http.get_with_retries(url, headers)
        except (Gone, Retry) as e:
            log.info("direction page %s not read: %s", url, getattr(e, "reason", e))
            # Polled again when its interval (grown as for an unchanged page) is over, not every tick.
            await self.emit(ResourceSeen(url, "direction", True, False, known, failed=True))
            return
        self.result.direction_pages += 1
        await self.remember(url, "direction", known, resp, keep_body=False)
        if resp.status == 304 or resp.too_big or not html.is_html(resp.data, resp.content_type):
            return
        for link in await self.off_loop(html.paper_links, resp.data, resp.url):
            if (pid := self.id_of(link)) is not None:
                await self.found(pid)

    async def fetch_page(self, paper_id: str) -> Outcome:
        url = page_url(self.template, self.base, paper_id)
        known = self.plan.validators.get(url)
        alternate = self.plan.alternates.get(url)
        if alternate and urlsplit(alternate).netloc.lower() == self.host and self.allowed(alternate):
            outcome = await fetch_from(self.http, url, alternate, paper_id, known, alternate, self.today, self.off_loop)
            if not isinstance(outcome, Missing):
                return outcome
            known = None  # the alternate is gone: read the page itself (and forget it)
        return await fetch_from(self.http, url, url, paper_id, known, None, self.today, self.off_loop)


async def crawl(
    source: str,
    plan: CrawlPlan,
    emit: Emit,
    *,
    consult: Consult,
    options: HttpOptions | None = None,
    result: CrawlResult | None = None,
    parser: Executor | None = None,
) -> CrawlResult:
    """Crawl one tick as `plan` says (store.sources.crawl_plan): read robots.txt and the sitemaps it
    names, then take from the queue (see the module's docstring) until it is empty or
    `options.budget` pages were taken; papers found on fetched pages and on direction pages
    (same host only) join the queue as they are found. Each outcome goes to `emit` as soon
    as it is known; a sitemap file read in full is compared with what the database recorded of
    it through `consult` (store.sources.listed_pages). `result` (if given) is filled in as the
    crawl goes, for progress. Parsing runs in `parser`'s threads (None: asyncio's default
    executor), never on the loop."""
    import aiohttp

    options = options or HttpOptions()
    timeout = aiohttp.ClientTimeout(total=options.timeout)
    headers = {"User-Agent": user_agent(), "Accept": ACCEPT}
    connector = aiohttp.TCPConnector(limit=options.concurrency)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers, connector=connector) as session:
        c = _Crawl(session, source, plan, options, emit, consult, parser)
        if result is not None:
            c.result = result
        return await c.run()


__all__ = ["PARSE_THREADS", "crawl"]
