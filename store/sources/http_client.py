"""The HTTP client of the crawl: GET requests to one host, politely.

Redirects are followed on the same host only (at most MAX_REDIRECTS); a 5xx, a 429, a
timeout or a broken connection is retried with exponential backoff (or after the
Retry-After the server asks for, up to a limit); bodies are read up to a cap; request starts
are spaced by the host's Crawl-delay (docs/live-map.md, "Following the live map over HTTP").
"""

from __future__ import annotations

import asyncio
import functools
import logging
import random
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin, urlsplit

from mapwatch.store.clock import retry_after_seconds
from mapwatch.store.http_body import read_capped
from mapwatch.store.pages.parse import MAX_PAGE_BYTES
from mapwatch.store.settings_table import DEFAULT_TICK_DEADLINE

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
ACCEPT = "text/markdown, text/plain;q=0.9, text/html;q=0.8"
MAX_CRAWL_DELAY = 60.0  # seconds: a longer Crawl-delay is capped (and the report says so)


@functools.cache
def user_agent() -> str:
    """mapwatch's User-Agent, read from the package metadata once per process (robots.txt checks
    ask for it per URL: reading the metadata each time cost 1.4 ms a URL, bench/robots_check.py)."""
    try:
        from importlib.metadata import version

        ver = version("mapwatch")
    except Exception:  # not installed (running from a checkout)
        ver = "0"
    return f"mapwatch/{ver} (citation map follower)"


class Deadline:
    """A tick's deadline (docs/live-map.md, "Following the live map over HTTP"): `seconds` from now (None:
    30 minutes; the commands pass $MAPWATCH_TICK_DEADLINE's). `in_flight`: the pages being fetched."""

    def __init__(self, seconds: float | None) -> None:
        self.seconds = seconds if seconds is not None else DEFAULT_TICK_DEADLINE
        self.at = time.monotonic() + self.seconds
        self.in_flight: set[str] = set()

    def passed(self) -> bool:
        return time.monotonic() >= self.at

    async def wait(self, work: Awaitable[object]) -> bool:
        """Await `work` until the deadline; True when it finished, False when the deadline
        cancelled it (the pages queued and those being fetched, their requests waiting on a
        Retry-After or a Crawl-delay, are then left for the next tick, unchecked)."""
        try:
            await asyncio.wait_for(work, max(0.0, self.at - time.monotonic()))
            return True
        except TimeoutError:
            return False

    def note(self, left: int) -> str:
        return (f"tick deadline of {self.seconds:g} s reached: {left:,} pages left for the next tick "
                "($MAPWATCH_TICK_DEADLINE)")


@dataclass(frozen=True)
class HttpOptions:
    """How politely and how much to fetch in one tick."""

    concurrency: int = 4
    timeout: float = 20.0  # seconds, per request
    retries: int = 3  # extra attempts after a 5xx, a timeout or a broken connection
    backoff: float = 1.0  # seconds, doubled on each retry
    max_retry_after: float = 120.0  # longest Retry-After honoured (seconds)
    budget: int = 500  # pages fetched per tick at most
    max_bytes: int = MAX_PAGE_BYTES
    max_crawl_delay: float = MAX_CRAWL_DELAY
    deadline: float | None = None  # seconds for the whole crawl ($MAPWATCH_TICK_DEADLINE); None: 30 min
    # draws the lastmod audits (store.sources.lastmods); None: the operating system's generator,
    # which a site cannot predict. A seeded one makes a test or a benchmark repeatable.
    audit_rng: random.Random | None = None


class Retry(Exception):
    """A failure worth retrying (5xx, 429, a timeout, a broken connection); `delay`: as asked."""

    def __init__(self, reason: str, delay: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


class Gone(Exception):
    """A fetch ended without a body worth reading: the outcome is known."""

    def __init__(self, status: int, reason: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class Response:
    status: int  # 200 or 304
    url: str  # after redirects
    data: bytes
    too_big: bool
    content_type: str | None
    etag: str | None
    last_modified: str | None
    date: str | None = None  # the Date header: the site's clock when it answered




class CrawlDelay:
    """Spaces the starts of requests to one host by `delay` seconds (Crawl-delay)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.delay = delay
        self._next = 0.0
        self._lock = asyncio.Lock()

    async def wait(self) -> None:
        if self.delay <= 0:
            return
        async with self._lock:
            now = time.monotonic()
            if now < self._next:
                await asyncio.sleep(self._next - now)
            self._next = time.monotonic() + self.delay


COMMON_STATUSES = frozenset({200, 301, 302, 303, 304, 307, 308, 400, 401, 403, 404, 410, 429, 500, 502, 503, 504})


def status_label(status: int) -> str:
    """A response's status as counted: the code when common, else its class (`4xx`): a
    hostile site cannot grow the set of labels."""
    if status in COMMON_STATUSES:
        return str(status)
    return f"{status // 100}xx" if 100 <= status < 600 else "other"


class HttpClient:
    """GETs to one host through an aiohttp session, with the retries and limits of `options`."""

    def __init__(self, session: Any, host: str, options: HttpOptions) -> None:
        self.session = session
        self.host = host
        self.options = options
        self.crawl_delay = CrawlDelay()  # replaced once robots.txt names a Crawl-delay
        self.requests = 0  # requests sent (each redirect hop and each retry counts)
        self.statuses: dict[str, int] = {}  # responses by status_label (for the metrics)

    async def get_with_retries(self, url: str, headers: dict[str, str], limit: int | None = None) -> Response:
        attempt = 0
        while True:
            try:
                await self.crawl_delay.wait()
                return await self.get(url, headers, limit or self.options.max_bytes)
            except Retry as r:
                if attempt >= self.options.retries:
                    raise Retry(f"{r.reason} (after {attempt + 1} attempts)") from None
                delay = r.delay if r.delay is not None else self.options.backoff * (2 ** attempt)
                if delay > self.options.max_retry_after:
                    raise Retry(f"{r.reason}; asked to wait {delay:.0f} s, more than allowed") from None
                attempt += 1
                log.info("retrying %s in %.1f s: %s", url, delay, r.reason)
                await asyncio.sleep(delay)

    async def get(self, url: str, headers: dict[str, str], limit: int) -> Response:
        import aiohttp

        target = url
        try:
            for _hop in range(MAX_REDIRECTS + 1):
                self.requests += 1
                async with self.session.get(target, headers=headers, allow_redirects=False) as resp:
                    status = resp.status
                    label = status_label(status)
                    self.statuses[label] = self.statuses.get(label, 0) + 1
                    if status in (301, 302, 303, 307, 308):
                        target = urljoin(target, resp.headers.get("Location", ""))
                        if urlsplit(target).netloc.lower() != self.host:
                            raise Gone(status, f"redirected to another host ({urlsplit(target).netloc})")
                        continue
                    if status == 304:
                        return Response(304, target, b"", False, None, None, None, resp.headers.get("Date"))
                    if status == 429:
                        raise Retry("HTTP 429 Too Many Requests",
                                     retry_after_seconds(resp.headers.get("Retry-After")))
                    if status == 503 and resp.headers.get("Retry-After"):
                        raise Retry("HTTP 503", retry_after_seconds(resp.headers.get("Retry-After")))
                    if status >= 500:
                        raise Retry(f"HTTP {status}")
                    if status != 200:
                        raise Gone(status)
                    if resp.content_length is not None and resp.content_length > limit:
                        data, too_big = b"", True
                    else:
                        data = await read_capped(resp, limit)
                        too_big = len(data) > limit
                    return Response(200, target, data, too_big, resp.headers.get("Content-Type"),
                                     resp.headers.get("ETag"), resp.headers.get("Last-Modified"),
                                     resp.headers.get("Date"))
            raise Gone(0, "too many redirects")
        except TimeoutError:
            raise Retry(f"timed out after {self.options.timeout:g} s") from None
        except aiohttp.ClientPayloadError as e:
            raise Retry(f"body cut off ({short(e)})") from None
        except aiohttp.ClientError as e:
            raise Retry(f"connection failed ({short(e)})") from None


def short(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:200]
