"""What one refresh tick reports: an ingest report plus what only HTTP sources have.

Its own module so that refresh, refresh_pipeline and crawl_saver can all fill it in
without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mapwatch.store.database.ingest import IngestReport
from mapwatch.store.sources.crawl_outcomes import Failed


@dataclass
class RefreshReport(IngestReport):
    """An ingest report, plus what only HTTP sources have. `pages_read` counts files looked
    at or HTTP responses received; `skipped` unchanged files, 304 answers, identical bodies."""

    kind: str = "folder"  # or "http"
    failed: list[Failed] = field(default_factory=list)  # could not be fetched (the first MAX_LISTED)
    missing: int = 0  # HTTP 404/410: no page for that paper
    over_budget: int = 0  # left for a later tick
    failed_total: int = 0  # every failure, listed or not
    rejected_total: int = 0  # HTTP: every rejection (`rejected` lists the first MAX_LISTED)
    robots_skipped: int = 0  # pages robots.txt disallows: never requested
    robots_skipped_urls: list[str] = field(default_factory=list)  # the first few
    direction_pages: int = 0  # direction pages read to discover papers
    discovered: int = 0  # papers the database did not know, found this tick
    not_due: int = 0  # pages known but not due for a re-check this tick: not requested
    requests: int | None = None  # HTTP: requests sent to the site this tick (retries included)
    statuses: dict[str, int] = field(default_factory=dict)  # HTTP: responses by status (code, or class: 4xx)
    sitemap_pages: int = 0  # HTTP: paper pages the sitemaps list
    sitemap_changed: int = 0  # of those, changed since their last check
    vouched: int = 0  # HTTP: pages not requested because a believed sitemap lastmod says they did not change
    audited: int = 0  # HTTP: pages a believed lastmod vouched for, requested all the same (random audits)
    forgotten: int = 0  # HTTP: papers only a sitemap had named that its sitemaps list no longer
    frontier_full: int = 0  # HTTP: papers named by a sitemap or direction page not kept (too many waiting)
    notes: list[str] = field(default_factory=list)  # e.g. a capped Crawl-delay, an unreadable sitemap

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
        if self.kind == "http":
            s += (f", {max(self.failed_total, len(self.failed)):,} failed (stored data kept), "
                  f"{self.missing:,} without a page, {self.robots_skipped:,} skipped by robots.txt, "
                  f"{self.over_budget:,} left for the next tick, {self.not_due + self.vouched:,} not due yet, "
                  f"{self.requests or 0:,} requests sent")
        return s + f". {self.new_citations:,} new citations."
