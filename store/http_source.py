"""Retrieving pages over HTTP: a polite crawler of the map's paper pages.

Pure retrieval plus link discovery: it returns bytes and validators (or why a page could
not be had); parsing results are used only to find more paper links on the same host.
Saving is store.refresh's job.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urljoin, urlsplit

from mapwatch.store.errors import ParseError
from mapwatch.store.ids import normalize_id
from mapwatch.store.model import MapPage
from mapwatch.store.parse import MAX_PAGE_BYTES, parse_page

log = logging.getLogger(__name__)

DEFAULT_TEMPLATE = "{base}/paper/{id}/"
MAX_REDIRECTS = 5


def user_agent() -> str:
    try:
        from importlib.metadata import version

        ver = version("mapwatch")
    except Exception:  # not installed (running from a checkout)
        ver = "0"
    return f"mapwatch/{ver} (citation map follower)"


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


@dataclass(frozen=True)
class Validators:
    etag: str | None
    last_modified: str | None
    sha256: str | None


@dataclass(frozen=True)
class Fetched:
    url: str
    paper_id: str
    size: int  # bytes received (the body itself is not kept)
    sha256: str
    etag: str | None
    last_modified: str | None
    page: MapPage | None  # parsed, when it parses
    error: ParseError | None  # why it does not


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

    def __str__(self) -> str:
        return f"{self.url}: {self.reason}"


Outcome = Fetched | NotModified | Missing | Failed


@dataclass
class CrawlResult:
    outcomes: list[Outcome] = field(default_factory=list)
    over_budget: int = 0  # ids known but left for a later tick


class _Retry(Exception):
    def __init__(self, reason: str, delay: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.delay = delay


def page_url(template: str, base: str, paper_id: str) -> str:
    return template.format(base=base.rstrip("/"), id=paper_id)


def split_source(source: str) -> tuple[str, str]:
    """(base, template) for a source URL: a URL holding `{id}` is the template itself."""
    if "{id}" in source:
        parts = urlsplit(source.replace("{id}", "x"))
        return f"{parts.scheme}://{parts.netloc}", source
    return source.rstrip("/"), DEFAULT_TEMPLATE


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """Retry-After as seconds: delta-seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())


async def crawl(
    source: str,
    start_ids: Iterable[str],
    validators: Mapping[str, Validators],
    *,
    options: HttpOptions | None = None,
) -> CrawlResult:
    """Fetch the pages of `start_ids` (in that order of priority) and of paper links found
    on them that point to the same host, at most `options.budget` pages."""
    import aiohttp

    options = options or HttpOptions()
    base, template = split_source(source)
    host = urlsplit(base).netloc.lower()
    result = CrawlResult()
    queue: asyncio.Queue[str] = asyncio.Queue()
    seen: set[str] = set()
    budget = options.budget

    def enqueue(paper_id: str) -> None:
        nonlocal budget
        if paper_id in seen:
            return
        seen.add(paper_id)
        if budget <= 0:
            result.over_budget += 1
            return
        budget -= 1
        queue.put_nowait(paper_id)

    for pid in start_ids:
        enqueue(pid)

    timeout = aiohttp.ClientTimeout(total=options.timeout)
    headers = {"User-Agent": user_agent(), "Accept": "text/plain, text/markdown;q=0.9, */*;q=0.1"}
    connector = aiohttp.TCPConnector(limit=options.concurrency)
    async with aiohttp.ClientSession(timeout=timeout, headers=headers, connector=connector) as session:

        async def worker() -> None:
            while True:
                paper_id = await queue.get()
                try:
                    url = page_url(template, base, paper_id)
                    outcome = await _fetch_with_retries(session, url, paper_id, validators.get(url), options)
                    result.outcomes.append(outcome)
                    if isinstance(outcome, Fetched) and outcome.page is not None:
                        for linked in _same_host_links(outcome.page, host):
                            enqueue(linked)
                except Exception as e:  # a bug must not hang the crawl
                    log.exception("fetching %s failed", paper_id)
                    result.outcomes.append(Failed(paper_id, paper_id, f"internal error: {e}"))
                finally:
                    queue.task_done()

        workers = [asyncio.create_task(worker()) for _ in range(max(1, options.concurrency))]
        try:
            await queue.join()
        finally:
            for w in workers:
                w.cancel()
            await asyncio.gather(*workers, return_exceptions=True)
    return result


def _same_host_links(page: MapPage, host: str) -> list[str]:
    lists = [lst.items for lst in (page.builds_on, page.built_on_by) if lst]
    found = []
    for items in lists:
        for it in items:
            if urlsplit(it.url).netloc.lower() == host:
                pid = normalize_id(it.url)
                if pid:
                    found.append(pid)
    return found


async def _fetch_with_retries(session, url: str, paper_id: str, known: Validators | None,
                              options: HttpOptions) -> Outcome:
    attempt = 0
    while True:
        try:
            return await _fetch_once(session, url, paper_id, known, options)
        except _Retry as r:
            if attempt >= options.retries:
                return Failed(url, paper_id, f"{r.reason} (after {attempt + 1} attempts)")
            delay = r.delay if r.delay is not None else options.backoff * (2 ** attempt)
            if delay > options.max_retry_after:
                return Failed(url, paper_id, f"{r.reason}; asked to wait {delay:.0f} s, more than allowed")
            attempt += 1
            log.info("retrying %s in %.1f s: %s", url, delay, r.reason)
            await asyncio.sleep(delay)


async def _fetch_once(session, url: str, paper_id: str, known: Validators | None,
                      options: HttpOptions) -> Outcome:
    import aiohttp

    headers = {}
    if known and known.etag:
        headers["If-None-Match"] = known.etag
    if known and known.last_modified:
        headers["If-Modified-Since"] = known.last_modified
    host = urlsplit(url).netloc.lower()
    target = url
    try:
        for _hop in range(MAX_REDIRECTS + 1):
            async with session.get(target, headers=headers, allow_redirects=False) as resp:
                status = resp.status
                if status in (301, 302, 303, 307, 308):
                    target = urljoin(target, resp.headers.get("Location", ""))
                    if urlsplit(target).netloc.lower() != host:
                        return Failed(url, paper_id, f"redirected to another host ({urlsplit(target).netloc})")
                    continue
                if status == 304:
                    return NotModified(url, paper_id)
                if status in (404, 410):
                    return Missing(url, paper_id)
                if status == 429:
                    raise _Retry("HTTP 429 Too Many Requests",
                                 retry_after_seconds(resp.headers.get("Retry-After")))
                if status == 503 and resp.headers.get("Retry-After"):
                    raise _Retry("HTTP 503", retry_after_seconds(resp.headers.get("Retry-After")))
                if status >= 500:
                    raise _Retry(f"HTTP {status}")
                if status != 200:
                    return Failed(url, paper_id, f"HTTP {status}")
                if resp.content_length is not None and resp.content_length > options.max_bytes:
                    data = b""
                    too_big = True
                else:
                    data = await _read_capped(resp, options.max_bytes)
                    too_big = len(data) > options.max_bytes
                etag = resp.headers.get("ETag")
                last_modified = resp.headers.get("Last-Modified")
                break
        else:
            return Failed(url, paper_id, "too many redirects")
    except TimeoutError:
        raise _Retry(f"timed out after {options.timeout:g} s") from None
    except aiohttp.ClientPayloadError as e:
        raise _Retry(f"body cut off ({_short(e)})") from None
    except aiohttp.ClientError as e:
        raise _Retry(f"connection failed ({_short(e)})") from None

    if too_big:
        return Fetched(url, paper_id, len(data), "", etag, last_modified, None,
                       ParseError(f"page over {options.max_bytes / (1024 * 1024):g} MB, not a map page"))
    sha = hashlib.sha256(data).hexdigest()
    if known and known.sha256 == sha:
        # The same bytes as last time: no need to parse (the caller records the validators).
        return Fetched(url, paper_id, len(data), sha, etag, last_modified, None, None)
    try:
        page = parse_page(data)
        error = None
    except ParseError as e:
        page, error = None, e
    return Fetched(url, paper_id, len(data), sha, etag, last_modified, page, error)


async def _read_capped(resp, limit: int) -> bytes:
    """The body, or its first limit+1 bytes when it is longer. A body cut off before its
    announced length raises aiohttp.ClientPayloadError."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = await resp.content.read(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def _short(e: BaseException) -> str:
    text = str(e).strip() or type(e).__name__
    return text.splitlines()[0][:200]
