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
import hashlib
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from datetime import UTC
from typing import Any, TypeVar
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from mapwatch.store.ids import normalize_id
from mapwatch.store.pages.model import MapPage

from .crawl_outcomes import CrawlResult, Discovered, Emit, Failed, Fetched, Missing, Outcome, ResourceSeen, Vouched
from .crawl_plan import CrawlPlan, Resource, conditional_headers, page_url, split_source
from .crawl_queue import (
    DIRECTION,
    DUE,
    FOLLOWED,
    NEW,
    SEARCH,
    SITEMAP_CHANGED,
    TRACKED,
    UNSEEN,
    CiterSearch,
    CrawlQueue,
)
from .crawl_schedule import VOUCHED_CEILING, VOUCHED_TRACKED, id_age
from .http_client import ACCEPT, CrawlDelay, Deadline, Gone, HttpClient, HttpOptions, Response, Retry, user_agent
from .lastmods import Lastmods, direction_stale
from .page_fetch import fetch_from
from .robots import MAX_ROBOTS_BYTES, parse_robots
from .sitemaps import MAX_SITEMAP_BYTES, MAX_SITEMAPS, sitemap_entries

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_DIRECTION_PAGES = 2_000  # direction pages read per tick
# Pages parsed at once, each in a worker thread: parsing (up to ~1 s for a 2 MB page, README,
# "Page formats") never blocks the crawl's event loop, and at most this many bodies are held.
PARSE_THREADS = 2
MAX_KEPT_BODY = 4 * 1024 * 1024  # robots.txt and sitemaps up to this size are kept for a 304


class _Crawl:
    """One tick's crawl of one host; see `crawl`."""

    def __init__(self, session: Any, source: str, plan: CrawlPlan, options: HttpOptions, emit: Emit,
                 parser: Executor | None = None) -> None:
        self.base, self.template = split_source(source)
        self.host, self.pages_at = urlsplit(self.base).netloc.lower(), f"{self.base}/paper/"
        self.plan = plan
        self.today = plan.now.astimezone(UTC).date()  # the latest date a page may claim (store/pages/page_dates.py)
        self.options = options
        self.emit = emit
        self.result = CrawlResult()
        self.queue = CrawlQueue(options.budget)
        self.seen: set[str] = set()
        self.directions_seen: set[str] = set()
        self.active = 0  # items being worked on (they may queue more)
        self.admitted = 0  # pages queued (or kept for the unseen papers' turn)
        self.robots: RobotFileParser | None = None
        self.http = HttpClient(session, self.host, options)
        self.deadline = Deadline(options.deadline)  # the tick's: what is not done by then waits for the next
        self.in_flight: set[str] = set()  # pages being fetched (left for the next tick at the deadline)
        self.parsing, self.parser = asyncio.Semaphore(PARSE_THREADS), parser  # (parser None: the default executor)
        self.citers, self.covering = CiterSearch(self.queue), False  # (covering: store.sources.lastmods)

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
            self.queue.push(cls, "page", paper_id)

    async def found(self, paper_id: str) -> None:
        """A paper linked from a page or a direction page: fetched this tick (budget
        permitting) when the database does not know it."""
        if paper_id in self.plan.known or paper_id in self.seen:
            return
        if self.admit(paper_id):
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
        sitemap = await self.read_sitemaps() if robots_failure is None else {}
        lastmods = Lastmods(plan, sitemap, lambda pid: page_url(self.template, self.base, pid))
        del sitemap
        self.result.sitemap_changed = len(lastmods.changed)
        self.covering = lastmods.covering
        for url in plan.directions:
            self.enqueue_direction(url, forced=url in plan.followed)
        for pid in plan.tracked:
            if not lastmods.vouch(pid, VOUCHED_TRACKED, due=False):
                self.enqueue(pid, TRACKED)
        for _mod, pid in lastmods.changed:
            if pid in plan.known or pid in self.seen:
                self.enqueue(pid, SITEMAP_CHANGED)
            else:
                await self.found(pid)
        for i, pid in enumerate(plan.unseen):
            if i < plan.unseen_share:
                self.enqueue(pid, UNSEEN)
            elif self.admit(pid):
                self.queue.keep_unseen(pid)
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
            self.result.over_budget = max(0, len(pages) - self.options.budget)
            return self.result
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
        left = self.queue.pages_left()
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
                        await self.found(pid)
        if page.id not in self.plan.known and page.builds_on:
            self.citers.named([pid for it in page.builds_on.items if (pid := normalize_id(it.url))])
        if search := self.plan.unlisted_growth(page):  # look for the new citers its page does not name
            self.queue.search(search)
            self.citers.grew(page.id, search)
        for placement in page.placements:
            self.enqueue_direction(placement.url, forced=search > 0)

    # --- robots.txt and sitemaps -------------------------------------------------------

    async def remember(self, url: str, kind: str, known: Resource | None, resp: Response,
                       keep_body: bool) -> bytes | None:
        """Record what was read; returns the body to use (the kept one after a 304)."""
        if resp.status == 304:
            await self.emit(ResourceSeen(url, kind, True, False, known))
            return known.body if known is not None else None
        sha = hashlib.sha256(resp.data).hexdigest()
        kept = resp.data if keep_body and len(resp.data) <= MAX_KEPT_BODY and not resp.too_big else None
        await self.emit(ResourceSeen(url, kind, False, known is None or known.sha256 != sha, known,
                                     resp.etag, resp.last_modified, sha, kept))
        return resp.data

    async def read_robots(self) -> str | None:
        """Read robots.txt. Returns why it could not be read (the host is then not crawled
        this tick), or None."""
        url = f"{self.base}/robots.txt"
        known = self.plan.resources.get(url)
        headers = conditional_headers(known, keep_body=True)
        try:
            # Its own connection: the page requests then start together, in queue order.
            resp = await self.http.get_with_retries(url, {"Connection": "close", **headers}, limit=MAX_ROBOTS_BYTES)
        except Gone as g:
            if 400 <= g.status < 500:  # no robots.txt: no restriction
                return None
            return f"{url} unreadable ({g.reason or f'HTTP {g.status}'}), {self.host} not crawled this tick"
        except Retry as r:
            return f"{url} unreadable ({r.reason}), {self.host} not crawled this tick"
        data = await self.remember(url, "robots", known, resp, keep_body=True)
        self.robots = rp = await self.off_loop(parse_robots, url, data or b"")
        asked = rp.crawl_delay(user_agent())
        if asked is not None:
            delay = float(asked)
            if delay > self.options.max_crawl_delay:
                self.result.notes.append(f"robots.txt asks for a Crawl-delay of {delay:g} s; "
                                         f"{self.options.max_crawl_delay:g} s used")
                delay = self.options.max_crawl_delay
            self.http.crawl_delay = CrawlDelay(delay)
        return None

    async def read_sitemaps(self) -> dict[str, str | None]:
        """Paper id -> lastmod, from the sitemaps robots.txt names (indexes followed); each
        read conditionally, a 304 read from the body kept last time."""
        named = (self.robots.site_maps() or []) if self.robots is not None else []
        pending = [u for u in named if urlsplit(u).netloc.lower() == self.host]
        read = 0
        found: dict[str, str | None] = {}
        while pending and read < MAX_SITEMAPS:
            if self.deadline.passed():
                break  # (the pages are then left for the next tick, with a note)
            url = pending.pop(0)
            if not self.allowed(url):
                continue
            read += 1
            known = self.plan.resources.get(url)
            headers = conditional_headers(known, keep_body=True)
            try:
                resp = await self.http.get_with_retries(url, headers, limit=MAX_SITEMAP_BYTES)
                data = await self.remember(url, "sitemap", known, resp, keep_body=True)
                kind, entries = await self.off_loop(sitemap_entries, data or b"")
            except (Gone, Retry, ValueError) as e:
                reason = e.reason if isinstance(e, (Gone, Retry)) and e.reason else (
                    f"HTTP {e.status}" if isinstance(e, Gone) else str(e))
                self.result.notes.append(f"sitemap {url} not read: {reason}")
                continue
            for loc, mod in entries:
                if kind == "index":
                    if urlsplit(loc).netloc.lower() == self.host:
                        pending.append(loc)
                elif (pid := self.id_of(loc)) is not None:
                    found[pid] = mod
        self.result.sitemap_pages = len(found)
        return found

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
    options: HttpOptions | None = None,
    result: CrawlResult | None = None,
    parser: Executor | None = None,
) -> CrawlResult:
    """Crawl one tick as `plan` says (store.sources.crawl_plan): read robots.txt and the sitemaps it
    names, then take from the queue (see the module's docstring) until it is empty or
    `options.budget` pages were taken; papers found on fetched pages and on direction pages
    (same host only) join the queue as they are found. Each outcome goes to `emit` as soon
    as it is known. `result` (if given) is filled in as the crawl goes, for progress. Parsing
    runs in `parser`'s threads (None: asyncio's default executor), never on the loop."""
    import aiohttp

    options = options or HttpOptions()
    timeout = aiohttp.ClientTimeout(total=options.timeout)
    headers = {"User-Agent": user_agent(), "Accept": ACCEPT}
    connector = aiohttp.TCPConnector(limit=options.concurrency)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers, connector=connector) as session:
        c = _Crawl(session, source, plan, options, emit, parser)
        if result is not None:
            c.result = result
        return await c.run()


__all__ = ["PARSE_THREADS", "crawl"]
