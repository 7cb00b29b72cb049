"""What one refresh tick reports: an ingest report, plus the crawl's own result over HTTP.

Its own module so that refresh, refresh_pipeline and crawl_saver can all fill it in
without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from mapwatch.store.database.ingest import IngestReport
from mapwatch.store.sources.crawl_outcomes import CrawlResult, Failed

SourceKind = Literal["folder", "http"]  # where a tick read its pages


@dataclass
class RefreshReport(IngestReport):
    """An ingest report, plus what only HTTP sources have: the saver's failures and the crawl's
    own `CrawlResult` (robots.txt, sitemaps, budget, requests), held as it is, not copied.
    `pages_read` counts files looked at or HTTP responses received; `skipped` unchanged files,
    304 answers, identical bodies."""

    failed: list[Failed] = field(default_factory=list)  # could not be fetched (the first MAX_LISTED)
    missing: int = 0  # HTTP 404/410: no page for that paper
    failed_total: int = 0  # every failure, listed or not
    rejected_total: int = 0  # HTTP: every rejection (`rejected` lists the first MAX_LISTED)
    not_due: int = 0  # pages known but not due for a re-check this tick: not requested
    crawl: CrawlResult | None = None  # HTTP: what the crawl did besides its pages; None for a folder

    @property
    def kind(self) -> SourceKind:
        return "folder" if self.crawl is None else "http"

    @property
    def requests(self) -> int | None:
        """Requests sent to the site this tick, retries included (None: a folder)."""
        return None if self.crawl is None else self.crawl.requests

    @property
    def notes(self) -> list[str]:
        """What the tick wants said (a capped Crawl-delay, an unreadable sitemap); a folder has none."""
        return [] if self.crawl is None else self.crawl.notes

    @property
    def new_citations(self) -> int:
        return self.saved.new_citations

    @property
    def rejected_count(self) -> int:
        return max(self.rejected_total, len(self.rejected))

    def summary(self) -> str:
        rejected = self.rejected_count
        s = (f"Read {self.pages_read:,} pages from {self.source}: {self.stored:,} stored, "
             f"{self.unchanged:,} unchanged, {self.saved.stale:,} older than stored, "
             f"{rejected:,} rejected")
        if (crawl := self.crawl) is not None:
            s += (f", {max(self.failed_total, len(self.failed)):,} failed (stored data kept), "
                  f"{self.missing:,} without a page, {crawl.robots_skipped:,} skipped by robots.txt, "
                  f"{crawl.over_budget:,} left for the next tick, {self.not_due + crawl.vouched:,} not due yet, "
                  f"{crawl.requests:,} requests sent")
        return s + f". {self.new_citations:,} new citations."
