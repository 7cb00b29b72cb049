"""Reading one page of the map over HTTP: a conditional GET, then what came of it (store.sources.http_source)."""

from __future__ import annotations

import hashlib
from collections.abc import Awaitable, Callable
from datetime import date
from typing import Any
from urllib.parse import urlsplit

from mapwatch.store.errors import ParseError
from mapwatch.store.pages.model import MapPage
from mapwatch.store.pages.parse import parse_document
from mapwatch.store.sources.crawl_outcomes import Failed, Fetched, Missing, NotModified, Outcome
from mapwatch.store.sources.crawl_plan import Validators
from mapwatch.store.sources.http_client import Gone, HttpClient, Retry

OffLoop = Callable[..., Awaitable[Any]]  # runs a blocking call in a worker thread


async def fetch_from(http: HttpClient, url: str, target: str, paper_id: str, known: Validators | None,
                     alternate: str | None, today: date, off_loop: OffLoop) -> Outcome:
    """GET `target` (the page at location `url`, or its text alternate), conditionally on
    what is `known` of it, and say what came of it. `today`: the latest date a page may claim
    (store/pages/page_dates.py), from the tick's clock. Parsing runs through `off_loop` (a worker
    thread), never on the crawl's event loop."""
    from mapwatch.store.pages import html

    headers = {}
    if known and known.etag:
        headers["If-None-Match"] = known.etag
    if known and known.last_modified:
        headers["If-Modified-Since"] = known.last_modified
    try:
        resp = await http.get_with_retries(target, headers)
    except Gone as g:
        if g.status in (404, 410):
            return Missing(url, paper_id)
        return Failed(url, paper_id, g.reason or f"HTTP {g.status}")
    except Retry as r:
        return Failed(url, paper_id, r.reason)
    if resp.status == 304:
        return NotModified(url, paper_id)
    limit = http.options.max_bytes
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
        declared = await off_loop(html.text_alternate_url, data, resp.url)
        if declared and urlsplit(declared).netloc.lower() == http.host:
            alternate = declared
    page: MapPage | None
    error: ParseError | None = None
    try:
        page = await off_loop(parse_document, data, url=resp.url, content_type=resp.content_type, today=today)
    except ParseError as e:
        page, error = None, e
    # The page fetched for a paper is that paper's (docs/live-map.md, "Following the live map over HTTP").
    if page is not None and page.id != paper_id:
        error = ParseError(f"the page is {page.id}'s, fetched for {paper_id}")
        page = None
    return Fetched(url, paper_id, len(data), sha, resp.etag, resp.last_modified, page, error, alternate)
