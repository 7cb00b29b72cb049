"""One refresh tick: read a source (a folder or the map over HTTP), store what changed.

A folder is ingested (files unchanged since the last tick are not read). An HTTP source is
crawled politely (store.http_source): tracked papers first, then papers with pages, then
the others, least recently checked first, within a page budget. A failed fetch keeps what
is stored; a response that is not a map page is rejected with its reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mapwatch.store.errors import FetchError
from mapwatch.store.fetch import SEEDS_DIR
from mapwatch.store.graph import compute_direction_ranks
from mapwatch.store.http_source import (
    Failed,
    Fetched,
    HttpOptions,
    Missing,
    NotModified,
    Validators,
    crawl,
    page_url,
    split_source,
)
from mapwatch.store.ids import normalize_id
from mapwatch.store.ingest import BATCH_SIZE, Clock, IngestReport, ingest_paths, log_ingest, utc_now
from mapwatch.store.model import MapPage
from mapwatch.store.save import Rejection, SourceInfo, record_rejections, save_pages
from sqlite_utils import Database

DEFAULT_OPTIONS = HttpOptions()


@dataclass
class RefreshReport(IngestReport):
    """An ingest report, plus what only HTTP sources have. `pages_read` counts files looked
    at or HTTP responses received; `skipped` unchanged files, 304 answers, identical bodies."""

    kind: str = "folder"  # or "http"
    failed: list[Failed] = field(default_factory=list)  # could not be fetched: stored data kept
    missing: int = 0  # HTTP 404/410: no page for that paper
    over_budget: int = 0  # left for a later tick

    @property
    def new_citations(self) -> int:
        return self.saved.new_citations

    def summary(self) -> str:
        s = (f"Read {self.pages_read:,} pages from {self.source}: {self.stored:,} stored, "
             f"{self.unchanged:,} unchanged, {self.saved.stale:,} older than stored, "
             f"{len(self.rejected):,} rejected")
        if self.kind == "http":
            s += (f", {len(self.failed):,} failed (stored data kept), {self.missing:,} without a page, "
                  f"{self.over_budget:,} left for the next tick")
        return s + f". {self.new_citations:,} new citations."


def default_source() -> str:
    import os

    return os.environ.get("MAPWATCH_SOURCE") or str(SEEDS_DIR)


def is_url(source: str) -> bool:
    return source.startswith(("http://", "https://"))


def refresh(
    db: Database,
    source: str | Path,
    *,
    clock: Clock = utc_now,
    priority: Sequence[str] = (),
    options: HttpOptions = DEFAULT_OPTIONS,
) -> RefreshReport:
    """One tick from `source` (a folder/file path or an http(s) URL).

    Synchronous: an HTTP crawl runs its own event loop, so call this from a worker thread
    (asyncio.to_thread) when a loop is already running in the calling thread."""
    source = str(source)
    if is_url(source):
        report = _refresh_http(db, source, clock, priority, options)
    else:
        ingest = ingest_paths(db, [source], clock=clock)
        report = RefreshReport(source=source, kind="folder", pages_read=ingest.pages_read,
                               skipped=ingest.skipped, saved=ingest.saved, rejected=ingest.rejected)
    update_ranks(db, report, clock)
    return report


def update_ranks(db: Database, report: RefreshReport, clock: Clock = utc_now) -> bool:
    """Recompute the stored PageRank within each direction (store.graph) after a tick that
    stored pages, or when none is stored yet. Returns whether it ran."""
    if not report.stored and db.conn.execute("SELECT 1 FROM direction_ranks LIMIT 1").fetchone():
        return False
    compute_direction_ranks(db, clock())
    return True


def crawl_order(db: Database, source: str, priority: Sequence[str] = ()) -> list[str]:
    """Paper ids in fetch order: `priority` (tracked papers), then papers with pages, then
    the others; within each group the least recently checked first. An empty database
    starts from the bundled seeds' papers (and follows their links on the same host)."""
    base, template = split_source(source)
    checked = dict(db.conn.execute("SELECT location, coalesce(checked_at, '') FROM sources"))
    has_page = dict(db.conn.execute("SELECT id, has_page FROM papers"))
    if not has_page:  # an empty database: start from the bundled seeds' papers
        has_page = {pid: 1 for f in sorted(SEEDS_DIR.glob("*.txt")) if (pid := normalize_id(f.stem))}
    first = list(dict.fromkeys(priority))
    skip = set(first)
    rest = sorted((pid for pid in has_page if pid not in skip),
                  key=lambda pid: (not has_page[pid], checked.get(page_url(template, base, pid), ""), pid))
    return first + rest


def _refresh_http(db: Database, source: str, clock: Clock, priority: Sequence[str],
                  options: HttpOptions) -> RefreshReport:
    started = clock()
    validators = {
        loc: Validators(etag, lm, sha)
        for loc, etag, lm, sha in db.conn.execute(
            "SELECT location, etag, last_modified, sha256 FROM sources WHERE location LIKE 'http%'")
    }
    order = crawl_order(db, source, priority)
    try:
        crawled = asyncio.run(crawl(source, order, validators, options=options))
    except ValueError as e:  # a malformed URL
        raise FetchError(f"{source}: {e}") from None
    report = RefreshReport(source=source, kind="http", over_budget=crawled.over_budget)
    batch: list[tuple[MapPage, SourceInfo]] = []
    touched: list[tuple[str, str]] = []
    for out in crawled.outcomes:
        if isinstance(out, Fetched):
            report.pages_read += 1
            info = SourceInfo(out.url, out.sha256, size=out.size, etag=out.etag,
                              last_modified=out.last_modified)
            if out.error is not None:
                report.rejected.append(Rejection(out.url, out.error.line, out.error.reason, out.sha256 or None))
            elif out.page is not None:
                batch.append((out.page, info))
            else:  # identical bytes: keep the new validators
                report.skipped += 1
                _update_validators(db, info)
        elif isinstance(out, NotModified):
            report.pages_read += 1
            report.skipped += 1
        elif isinstance(out, Missing):
            report.missing += 1
        else:
            report.failed.append(out)
        touched.append((out.url, out.paper_id))
    for i in range(0, len(batch), BATCH_SIZE):
        report.saved.add(save_pages(db, batch[i:i + BATCH_SIZE], clock()))
    record_rejections(db, report.rejected, clock())
    _mark_checked(db, touched, clock().isoformat(timespec="seconds"))
    log_ingest(db, report, started, clock())
    return report


def _update_validators(db: Database, info: SourceInfo) -> None:
    with db.atomic():
        db.conn.execute("UPDATE sources SET etag = ?, last_modified = ? WHERE location = ?",
                        (info.etag, info.last_modified, info.location))


def _mark_checked(db: Database, touched: list[tuple[str, str]], now: str) -> None:
    """Remember when each URL was last tried (the crawl order rotates on it)."""
    with db.atomic():
        db.conn.executemany(
            "INSERT INTO sources (location, paper_id, checked_at) VALUES (?, ?, ?)"
            " ON CONFLICT(location) DO UPDATE SET checked_at = excluded.checked_at",
            [(url, pid, now) for url, pid in touched],
        )
