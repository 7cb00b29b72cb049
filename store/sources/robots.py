"""robots.txt and the sitemaps, as one tick's crawl reads them (store.sources.http_source's
`_Crawl` takes these methods): each read conditionally, its last body kept for a 304;
robots.txt read with urllib.robotparser for mapwatch's User-Agent (docs/live-map.md,
"Following the live map over HTTP")."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit
from urllib.robotparser import RobotFileParser

from .crawl_outcomes import Consult, CrawlResult, Emit, ResourceSeen
from .crawl_plan import CrawlPlan, Resource, ResourceKind, conditional_headers
from .http_client import CrawlDelay, Deadline, Gone, HttpClient, HttpOptions, Response, Retry, user_agent
from .listed_pages import Listing, SitemapsRead, clear_listing, record_listed
from .sitemaps import MAX_SITEMAP_BYTES, MAX_SITEMAPS, site_clock_skew, sitemap_entries

MAX_ROBOTS_BYTES = 512 * 1024
MAX_KEPT_BODY = 4 * 1024 * 1024  # robots.txt and sitemaps up to this size are kept for a 304



def parse_robots(url: str, data: bytes) -> RobotFileParser:
    """A robots.txt document as a parser: `can_fetch`, `crawl_delay`, `site_maps`."""
    rp = RobotFileParser(url)
    rp.parse([whole_delay(line) for line in data.decode("utf-8", "replace").splitlines()])
    return rp


def whole_delay(line: str) -> str:
    """`Crawl-delay: 0.5` as `Crawl-delay: 1`: urllib.robotparser reads whole seconds only, and
    rounding up keeps to what the site asked."""
    name, sep, value = line.partition(":")
    if sep and name.strip().lower() == "crawl-delay":
        try:
            seconds = float(value.split("#", 1)[0].strip())
        except ValueError:
            return line
        if seconds >= 0 and seconds != int(seconds):
            return f"Crawl-delay: {math.ceil(seconds)}"
    return line


class SiteFiles:
    """The crawl's reading of robots.txt and sitemaps (a base of `_Crawl`, which sets these)."""

    base: str
    host: str
    plan: CrawlPlan
    options: HttpOptions
    emit: Emit
    result: CrawlResult
    http: HttpClient
    deadline: Deadline
    robots: RobotFileParser | None
    sitemaps_failed: int
    off_loop: Callable[..., Awaitable[Any]]
    consult: Consult
    head: str
    tail: str
    allowed: Callable[[str], bool]
    id_of: Callable[[str], str | None]

    async def remember(self, url: str, kind: ResourceKind, known: Resource | None, resp: Response,
                       keep_body: bool) -> bytes | None:
        """Record what was read; returns the body to use (the kept one after a 304)."""
        seen, data = self.seen_resource(url, kind, known, resp, keep_body)
        await self.emit(seen)
        return data

    @staticmethod
    def seen_resource(url: str, kind: ResourceKind, known: Resource | None, resp: Response,
                      keep_body: bool) -> tuple[ResourceSeen, bytes | None]:
        """What to record of what was read, and the body to use (the kept one after a 304)."""
        if resp.status == 304:
            return ResourceSeen(url, kind, True, False, known), known.body if known is not None else None
        sha = hashlib.sha256(resp.data).hexdigest()
        kept = resp.data if keep_body and len(resp.data) <= MAX_KEPT_BODY and not resp.too_big else None
        return ResourceSeen(url, kind, False, known is None or known.sha256 != sha, known,
                            resp.etag, resp.last_modified, sha, kept), resp.data

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

    async def read_sitemaps(self) -> SitemapsRead:
        """What the sitemaps robots.txt names say (indexes followed), each file asked for
        conditionally: a file whose listing is recorded (store.sources.listed_pages) and that
        answers 304 is not read again; one read in full is compared with what it listed before,
        through `consult` (the refresh's writer), and what moved recorded. An index answering
        304 is read from the body kept last time."""
        named = (self.robots.site_maps() or []) if self.robots is not None else []
        pending = [u for u in named if urlsplit(u).netloc.lower() == self.host]
        read = 0
        out = SitemapsRead()
        while pending and read < MAX_SITEMAPS:
            if self.deadline.passed():
                break  # (the pages are then left for the next tick, with a note)
            url = pending.pop(0)
            if not self.allowed(url):
                continue
            read += 1
            known = self.plan.resources.get(url)
            headers = conditional_headers(known, keep_body=True)
            seen: ResourceSeen | None = None
            try:
                resp = await self.http.get_with_retries(url, headers, limit=MAX_SITEMAP_BYTES)
                if self.result.clock_skew is None and (skew := site_clock_skew(resp.date, self.plan.now)) is not None:
                    self.result.clock_skew = skew.total_seconds()
                if resp.status == 304 and known is not None and known.listed is not None:
                    await self.remember(url, "sitemap", known, resp, keep_body=True)
                    out.files[url] = (known.listed, known.dated or 0)  # its pages' lastmods as recorded
                    continue
                seen, data = self.seen_resource(url, "sitemap", known, resp, keep_body=True)
                kind, entries = await self.off_loop(sitemap_entries, data or b"")
            except (Gone, Retry, ValueError) as e:
                reason = e.reason if isinstance(e, (Gone, Retry)) and e.reason else (
                    f"HTTP {e.status}" if isinstance(e, Gone) else str(e))
                self.result.notes.append(f"sitemap {url} not read: {reason}")
                self.sitemaps_failed += 1
                if seen is not None:  # read but not a sitemap: what it listed is not believed any more
                    await self.consult(clear_listing, seen, self.plan.now)
                continue
            if kind == "index":
                if known is not None and known.listed is not None:  # a file of pages before: its listing goes
                    await self.consult(clear_listing, seen, self.plan.now)
                else:
                    await self.emit(seen)
                pending.extend(loc for loc, _mod in entries if urlsplit(loc).netloc.lower() == self.host)
                continue
            listing = Listing(url, {pid: mod for loc, mod in entries if (pid := self.id_of(loc)) is not None}, seen)
            del entries
            compared = await self.consult(record_listed, listing, self.head, self.tail, self.plan.now,
                                          timedelta(seconds=self.result.clock_skew or 0))
            out.files[url] = (len(listing.entries), listing.dated)
            out.parsed.add(url)
            out.compared.add(compared)
        self.result.sitemap_pages = sum(n for n, _dated in out.files.values())
        return out
