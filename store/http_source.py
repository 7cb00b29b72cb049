"""Retrieving pages over HTTP: a polite crawler of the map's website.

Pure retrieval plus link discovery: each page's outcome (a parsed page, or why there is
none) is handed to `emit` as soon as it is known, and nothing is kept after that, so the
memory a crawl needs does not grow with its budget. Saving is store.refresh's job; the
requests go through store.http_client, robots.txt and sitemaps are read by store.robots
and store.sitemaps.

Politeness (README, "mapwatch refresh"): robots.txt is read once per tick per host
(`urllib.robotparser`): `Disallow` is obeyed for mapwatch's User-Agent, `Crawl-delay` spaces
the requests (capped at MAX_CRAWL_DELAY), `Sitemap:` lines are read for discovery. A
robots.txt answered 4xx means no restriction; 5xx, a timeout or a broken connection means
the host is not crawled this tick (a failure is reported; stored data is kept).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from mapwatch.store.errors import ParseError
from mapwatch.store.http_client import ACCEPT, Deadline, Gone, HttpClient, HttpOptions, Pacer, Retry, user_agent
from mapwatch.store.ids import normalize_id
from mapwatch.store.model import MapPage
from mapwatch.store.parse import parse_document
from mapwatch.store.robots import MAX_ROBOTS_BYTES, parse_robots
from mapwatch.store.sitemaps import MAX_SITEMAP_BYTES, MAX_SITEMAPS, newer, sitemap_entries

log = logging.getLogger(__name__)

DEFAULT_TEMPLATE = "{base}/paper/{id}/"
MAX_DIRECTION_PAGES = 2_000  # direction pages read per tick


@dataclass(frozen=True)
class Validators:
    etag: str | None
    last_modified: str | None
    sha256: str | None


@dataclass(frozen=True)
class Fetched:
    url: str  # the page's location (its URL in the template): what `sources` is keyed on
    paper_id: str
    size: int  # bytes received (the body itself is not kept)
    sha256: str
    etag: str | None
    last_modified: str | None
    page: MapPage | None  # parsed, when it parses
    error: ParseError | None  # why it does not
    alternate: str | None = None  # the text alternate to read this page from next time


@dataclass(frozen=True)
class NotModified:
    url: str
    paper_id: str


@dataclass(frozen=True)
class Missing:
    """404/410: the map has no page for this paper (yet)."""

    url: str
    paper_id: str


@dataclass(frozen=True)
class Failed:
    """Could not be retrieved (after retries): what is stored is kept."""

    url: str
    paper_id: str
    reason: str
    requested: bool = True  # False: not even asked for (robots.txt could not be read)

    def __str__(self) -> str:
        return f"{self.url}: {self.reason}"


Outcome = Fetched | NotModified | Missing | Failed
Emit = Callable[[Outcome], Awaitable[None]]


@dataclass
class CrawlResult:
    """What a crawl did besides its outcomes (those go to `emit`, one by one)."""

    over_budget: int = 0  # ids known but left for a later tick
    planned: int = 0  # pages queued so far (grows as pages and direction pages are read)
    robots_skipped: int = 0  # pages robots.txt disallows: never requested
    robots_skipped_urls: list[str] = field(default_factory=list)  # the first few of them
    sitemap_pages: int = 0  # paper pages the sitemaps list
    sitemap_changed: int = 0  # of those, changed since their last check (fetched first)
    direction_pages: int = 0  # direction pages read
    notes: list[str] = field(default_factory=list)  # e.g. a capped Crawl-delay


def page_url(template: str, base: str, paper_id: str) -> str:
    return template.format(base=base.rstrip("/"), id=paper_id)


def split_source(source: str) -> tuple[str, str]:
    """(base, template) for a source URL: a URL holding `{id}` is the template itself."""
    if "{id}" in source:
        parts = urlsplit(source.replace("{id}", "x"))
        return f"{parts.scheme}://{parts.netloc}", source
    return source.rstrip("/"), DEFAULT_TEMPLATE


class _Crawl:
    """One tick's crawl of one host; see `crawl`."""

    def __init__(self, session: Any, source: str, validators: Mapping[str, Validators],
                 alternates: Mapping[str, str], checked: Mapping[str, str], options: HttpOptions,
                 emit: Emit) -> None:
        self.base, self.template = split_source(source)
        self.host = urlsplit(self.base).netloc.lower()
        self.validators = validators
        self.alternates = alternates
        self.checked = checked
        self.options = options
        self.emit = emit
        self.result = CrawlResult()
        self.queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
        self.seen: set[str] = set()
        self.directions_seen: set[str] = set()
        self.budget = options.budget
        self.robots: RobotFileParser | None = None
        self.http = HttpClient(session, self.host, options)
        self.deadline = Deadline(options.deadline)  # the tick's: what is not done by then waits for the next

    # --- the queue ---------------------------------------------------------------------

    def allowed(self, url: str) -> bool:
        return self.robots is None or self.robots.can_fetch(user_agent(), url)

    def enqueue(self, paper_id: str) -> None:
        if paper_id in self.seen:
            return
        self.seen.add(paper_id)
        url = page_url(self.template, self.base, paper_id)
        if not self.allowed(url):
            self.result.robots_skipped += 1
            if len(self.result.robots_skipped_urls) < 20:
                self.result.robots_skipped_urls.append(url)
            return
        if self.budget <= 0:
            self.result.over_budget += 1
            return
        self.budget -= 1
        self.result.planned += 1
        self.queue.put_nowait(("page", paper_id))

    def enqueue_direction(self, url: str) -> None:
        if url in self.directions_seen or len(self.directions_seen) >= MAX_DIRECTION_PAGES:
            return
        self.directions_seen.add(url)
        if urlsplit(url).netloc.lower() != self.host or not self.allowed(url):
            return
        self.queue.put_nowait(("direction", url))

    def id_of(self, url: str) -> str | None:
        """The paper id of a same-host `/paper/<id>/` URL."""
        parts = urlsplit(url)
        if parts.netloc.lower() != self.host or "/paper/" not in parts.path:
            return None
        return normalize_id(url)

    # --- the tick ------------------------------------------------------------------------

    async def run(self, start_ids: Iterable[str], priority: Sequence[str]) -> CrawlResult:
        robots_failure = await self.read_robots()
        sitemap = await self.read_sitemaps() if robots_failure is None else {}
        for pid in priority:
            self.enqueue(pid)
        changed = sorted(((mod or "", pid) for pid, mod in sitemap.items()
                          if newer(mod, self.checked.get(page_url(self.template, self.base, pid)))),
                         reverse=True)
        self.result.sitemap_changed = len(changed)
        for _mod, pid in changed:
            self.enqueue(pid)
        for pid in start_ids:
            self.enqueue(pid)
        for pid in sitemap:
            self.enqueue(pid)
        del sitemap, changed
        if robots_failure is not None:  # conservative: nothing is requested from this host
            while not self.queue.empty():
                _kind, pid = self.queue.get_nowait()
                await self.emit(Failed(page_url(self.template, self.base, pid), pid,
                                       f"not requested: {robots_failure}", requested=False))
            return self.result
        workers = [asyncio.create_task(self.worker()) for _ in range(max(1, self.options.concurrency))]
        try:
            self.result.over_budget += await self.deadline.join(self.queue, self.result.notes)
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
        return self.result

    async def worker(self) -> None:
        while True:
            kind, what = await self.queue.get()
            try:
                if kind == "page":
                    self.deadline.in_flight.add(what)
                    outcome = await self.fetch_page(what)
                    if isinstance(outcome, Fetched) and outcome.page is not None:
                        self.discover(outcome.page)
                    await self.emit(outcome)
                else:
                    await self.read_direction(what)
            except Exception as e:  # a bug must not hang the crawl
                log.exception("fetching %s failed", what)
                if kind == "page":
                    await self.emit(Failed(page_url(self.template, self.base, what), what, f"internal error: {e}"))
            finally:
                self.deadline.in_flight.discard(what)
                self.queue.task_done()

    def discover(self, page: MapPage) -> None:
        for lst in (page.builds_on, page.built_on_by):
            if lst:
                for it in lst.items:
                    if urlsplit(it.url).netloc.lower() == self.host and (pid := normalize_id(it.url)):
                        self.enqueue(pid)
        for placement in page.placements:
            self.enqueue_direction(placement.url)

    # --- robots.txt and sitemaps -------------------------------------------------------

    async def read_robots(self) -> str | None:
        """Read robots.txt. Returns why it could not be read (the host is then not crawled
        this tick), or None."""
        url = f"{self.base}/robots.txt"
        try:
            # Its own connection: the page requests then start together, in queue order.
            resp = await self.http.get_with_retries(url, {"Connection": "close"}, limit=MAX_ROBOTS_BYTES)
        except Gone as g:
            if 400 <= g.status < 500:  # no robots.txt: no restriction
                return None
            return f"{url} unreadable ({g.reason or f'HTTP {g.status}'}), {self.host} not crawled this tick"
        except Retry as r:
            return f"{url} unreadable ({r.reason}), {self.host} not crawled this tick"
        rp = parse_robots(url, resp.data)
        self.robots = rp
        asked = rp.crawl_delay(user_agent())
        if asked is not None:
            delay = float(asked)
            if delay > self.options.max_crawl_delay:
                self.result.notes.append(f"robots.txt asks for a Crawl-delay of {delay:g} s; "
                                         f"{self.options.max_crawl_delay:g} s used")
                delay = self.options.max_crawl_delay
            self.http.pacer = Pacer(delay)
        return None

    async def read_sitemaps(self) -> dict[str, str | None]:
        """Paper id -> lastmod, from the sitemaps robots.txt names (indexes followed)."""
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
            try:
                resp = await self.http.get_with_retries(url, {}, limit=MAX_SITEMAP_BYTES)
                kind, entries = sitemap_entries(resp.data)
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
        from mapwatch.store import html

        try:
            resp = await self.http.get_with_retries(url, {})
        except (Gone, Retry) as e:
            log.info("direction page %s not read: %s", url, getattr(e, "reason", e))
            return
        self.result.direction_pages += 1
        if resp.too_big or not html.is_html(resp.data, resp.content_type):
            return
        for link in html.paper_links(resp.data, resp.url):
            if (pid := self.id_of(link)) is not None:
                self.enqueue(pid)

    async def fetch_page(self, paper_id: str) -> Outcome:
        url = page_url(self.template, self.base, paper_id)
        known = self.validators.get(url)
        alternate = self.alternates.get(url)
        if alternate and urlsplit(alternate).netloc.lower() == self.host and self.allowed(alternate):
            outcome = await self.fetch_from(url, alternate, paper_id, known, alternate)
            if not isinstance(outcome, Missing):
                return outcome
            known = None  # the alternate is gone: read the page itself (and forget it)
        return await self.fetch_from(url, url, paper_id, known, None)

    async def fetch_from(self, url: str, target: str, paper_id: str, known: Validators | None,
                         alternate: str | None) -> Outcome:
        from mapwatch.store import html

        headers = {}
        if known and known.etag:
            headers["If-None-Match"] = known.etag
        if known and known.last_modified:
            headers["If-Modified-Since"] = known.last_modified
        try:
            resp = await self.http.get_with_retries(target, headers)
        except Gone as g:
            if g.status in (404, 410):
                return Missing(url, paper_id)
            return Failed(url, paper_id, g.reason or f"HTTP {g.status}")
        except Retry as r:
            return Failed(url, paper_id, r.reason)
        if resp.status == 304:
            return NotModified(url, paper_id)
        limit = self.options.max_bytes
        if resp.too_big:
            return Fetched(url, paper_id, len(resp.data), "", resp.etag, resp.last_modified, None,
                           ParseError(f"page over {limit / (1024 * 1024):g} MB, not a map page"), alternate)
        data = resp.data
        sha = hashlib.sha256(data).hexdigest()
        if known and known.sha256 == sha:
            # The same bytes as last time: no need to parse (the caller records the validators).
            return Fetched(url, paper_id, len(data), sha, resp.etag, resp.last_modified, None, None, alternate)
        # (A page without the word "alternate" declares none: no second parse of the document.)
        if alternate is None and b"alternate" in data and html.is_html(data, resp.content_type):
            declared = html.text_alternate_url(data, resp.url)
            if declared and urlsplit(declared).netloc.lower() == self.host:
                alternate = declared
        try:
            page = parse_document(data, url=resp.url, content_type=resp.content_type)
            error = None
        except ParseError as e:
            page, error = None, e
        return Fetched(url, paper_id, len(data), sha, resp.etag, resp.last_modified, page, error, alternate)

    # --- HTTP ------------------------------------------------------------------------------

async def crawl(
    source: str,
    start_ids: Iterable[str],
    validators: Mapping[str, Validators],
    emit: Emit,
    *,
    options: HttpOptions | None = None,
    priority: Sequence[str] = (),
    alternates: Mapping[str, str] | None = None,
    checked: Mapping[str, str] | None = None,
    result: CrawlResult | None = None,
) -> CrawlResult:
    """Crawl one tick: read robots.txt and the sitemaps it names, then fetch the pages of
    `priority`, of the sitemap's pages changed since their last check (`checked`: location ->
    ISO time), of `start_ids`, and of the sitemap's other pages, in that order, plus the
    paper links found on fetched pages and on the direction pages they are placed in (same
    host only), at most `options.budget` pages. Each page's outcome goes to `emit` as soon as
    it is known. `result` (if given) is filled in as the crawl goes, for progress."""
    import aiohttp

    options = options or HttpOptions()
    timeout = aiohttp.ClientTimeout(total=options.timeout)
    headers = {"User-Agent": user_agent(), "Accept": ACCEPT}
    connector = aiohttp.TCPConnector(limit=options.concurrency)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers, connector=connector) as session:
        c = _Crawl(session, source, validators, alternates or {}, checked or {}, options, emit)
        if result is not None:
            c.result = result
        return await c.run(start_ids, priority)


__all__ = ["CrawlResult", "Failed", "Fetched", "Missing", "NotModified", "Validators", "crawl", "page_url",
           "split_source"]
