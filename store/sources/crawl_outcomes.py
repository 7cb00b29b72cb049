"""What a crawl of the map hands over, one outcome at a time (store.sources.http_source -> store.sources.refresh):
a page's outcome (fetched, not modified, missing, failed), a paper found, and what robots.txt,
a sitemap or a direction page said; and the crawl's counts."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from mapwatch.store.errors import ParseError
from mapwatch.store.pages.model import MapPage
from mapwatch.store.sources.crawl_plan import Resource, ResourceKind


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


@dataclass(frozen=True)
class Discovered:
    """A paper the database does not know, found this tick (kept as a page to fetch)."""

    url: str
    paper_id: str


@dataclass(frozen=True)
class ResourceSeen:
    """robots.txt, a sitemap or a direction page was asked for: what to remember of it."""

    location: str
    kind: ResourceKind
    not_modified: bool  # a 304 (or a direction page not read): the stored validators and body still hold
    changed: bool  # different from what was read before (a direction page: its schedule)
    previous: Resource | None
    etag: str | None = None
    last_modified: str | None = None
    sha256: str | None = None
    body: bytes | None = None  # kept for robots.txt and sitemaps (None: not kept)
    failed: bool = False  # a direction page that could not be read: asked for less often


@dataclass(frozen=True)
class Vouched:
    """Pages due for a re-check that a trusted sitemap `lastmod` says did not change since their
    last check: not requested; each is due again at the time given (store.sources.crawl_schedule
    .vouched_until)."""

    pages: list[tuple[str, str]]  # (location, next check)


@dataclass(frozen=True)
class Unrecorded:
    """Pages a sitemap file read in full lists that had no `sources` row when it was compared
    (store.sources.listed_pages): what it lists for each is recorded once a row is stored for it
    this tick (a paper found, a page read)."""

    pages: dict[str, tuple[str | None, str]]  # location -> (lastmod, the sitemap file)


@dataclass(frozen=True)
class Forgotten:
    """Papers only a sitemap had named, never confirmed by a page, that the host's covering
    sitemaps list no longer: their `sources` rows are deleted (if still never checked)."""

    locations: list[str]


Outcome = Fetched | NotModified | Missing | Failed
Emit = Callable[[Outcome | Discovered | ResourceSeen | Vouched | Forgotten | Unrecorded], Awaitable[None]]
# Runs `fn(db, *args)` where the refresh uses its database (its writer thread) and returns what it
# returns: how a crawl compares a sitemap file it read with what the database recorded.
Consult = Callable[..., Awaitable[Any]]


@dataclass
class CrawlResult:
    """What a crawl did besides its outcomes (those go to `emit`, one by one)."""

    over_budget: int = 0  # pages due (or unseen) but left for a later tick
    planned: int = 0  # pages queued so far, at most the budget (grows as pages and direction pages are read)
    robots_skipped: int = 0  # pages robots.txt disallows: never requested
    robots_skipped_urls: list[str] = field(default_factory=list)  # the first few of them
    sitemap_pages: int = 0  # paper pages the sitemaps list
    sitemap_changed: int = 0  # of those, changed since their last check (fetched first)
    vouched: int = 0  # pages due (or tracked) not requested: a trusted lastmod says they did not change
    audited: int = 0  # pages a trusted lastmod vouched for, requested all the same, drawn at random
    forgotten: int = 0  # papers only a sitemap had named that it lists no longer (their rows deleted)
    frontier_full: int = 0  # papers named by a sitemap or direction page, not kept: MAX_FRONTIER reached
    searched: int = 0  # pages with room queued to look for tracked papers' unnamed new citers
    direction_pages: int = 0  # direction pages read (a 304 included)
    discovered: int = 0  # papers the database did not know, found this tick
    # seconds the site's clock is ahead of ours (negative: behind), from a sitemap's Date header
    # (store.sources.sitemaps.site_clock_skew); None: not measured this tick
    clock_skew: float | None = None
    requests: int = 0  # requests sent to the site (robots.txt, sitemaps, pages, retries, redirects)
    # responses by status (store.sources.http_client.status_label)
    statuses: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # e.g. a capped Crawl-delay
