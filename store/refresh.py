"""One refresh tick: read a source (a folder or the map over HTTP), store what changed.

A folder is ingested (files unchanged since the last tick are not read). An HTTP source is
crawled politely (store.http_source): robots.txt first, then tracked papers, pages the
sitemaps say changed since their last check, papers with pages, then the others (least
recently checked first), within a page budget. Pages are saved in batches as they arrive;
each batch also records when its locations were checked, so an interrupted tick keeps its
stored batches and the next one goes on with the pages not yet checked. A failed fetch keeps
what is stored; a response that is not a map page is rejected with its reason.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC
from pathlib import Path

from mapwatch.store.clock import Clock, iso, utc_now
from mapwatch.store.errors import FetchError
from mapwatch.store.files import SEEDS_DIR
from mapwatch.store.graph import compute_direction_ranks
from mapwatch.store.http_client import HttpOptions
from mapwatch.store.http_source import (
    CrawlResult,
    Failed,
    Fetched,
    Missing,
    NotModified,
    Outcome,
    Validators,
    crawl,
    page_url,
    split_source,
)
from mapwatch.store.ids import normalize_id
from mapwatch.store.ingest import BATCH_SIZE, IngestReport, Progress, ingest_paths, log_ingest
from mapwatch.store.model import MapPage
from mapwatch.store.save import Rejection, SourceInfo, record_rejections, save_pages
from sqlite_utils import Database

DEFAULT_OPTIONS = HttpOptions()
MAX_LISTED = 100  # failures and rejections a report lists (all are counted; rejections are stored)


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
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
) -> RefreshReport:
    """One tick from `source` (a folder/file path or an http(s) URL).

    Synchronous: an HTTP crawl runs its own event loop, so call this from a worker thread
    (asyncio.to_thread) when a loop is already running in the calling thread."""
    source = str(source)
    if is_url(source):
        report = _refresh_http(db, source, clock, priority, options, progress, batch_size)
    else:
        ingest = ingest_paths(db, [source], clock=clock, progress=progress)
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
                  options: HttpOptions, progress: Progress | None, batch_size: int) -> RefreshReport:
    """Crawl in a thread of its own (its own event loop) and save here, in the calling thread,
    batch by batch as outcomes arrive: the database connection is only ever used by the thread
    that opened it, and a bounded queue between the two keeps memory flat whatever the budget
    (README, "mapwatch refresh": saving as it goes)."""
    started = clock()
    validators: dict[str, Validators] = {}
    alternates: dict[str, str] = {}
    checked: dict[str, str] = {}
    for loc, etag, lm, sha, text_url, checked_at in db.conn.execute(
            "SELECT location, etag, last_modified, sha256, text_url, checked_at FROM sources"
            " WHERE location LIKE 'http%'"):
        validators[loc] = Validators(etag, lm, sha)
        if text_url:
            alternates[loc] = text_url
        if checked_at:
            checked[loc] = checked_at
    order = crawl_order(db, source, priority)
    report = RefreshReport(source=source, kind="http")
    stats = CrawlResult()
    outcomes: queue.Queue[object] = queue.Queue(maxsize=2 * batch_size)
    holder: dict[str, object] = {}

    async def emit(outcome: Outcome) -> None:
        while True:
            try:
                outcomes.put_nowait(outcome)
                return
            except queue.Full:  # the saver is behind: wait for it (bounded memory)
                await asyncio.sleep(0.005)

    async def main() -> CrawlResult:
        holder["loop"], holder["task"] = asyncio.get_running_loop(), asyncio.current_task()
        return await crawl(source, order, validators, emit, options=options, priority=priority,
                           alternates=alternates, checked=checked, result=stats,
                           today=started.astimezone(UTC).date())

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as e:  # handed to the calling thread
            holder["error"] = e
        finally:
            outcomes.put(_DONE)

    thread = threading.Thread(target=run, name="mapwatch-crawl", daemon=True)
    thread.start()
    saver = _Saver(db, report, clock)
    finished = False
    try:
        done = 0
        while True:
            item = outcomes.get()
            if item is _DONE:
                finished = True
                break
            saver.take(item)  # type: ignore[arg-type]
            done += 1
            if saver.pending >= batch_size:
                saver.flush()
            if progress:
                progress(done, max(done, stats.planned))
        saver.flush()
    finally:
        if not finished:  # interrupted (an error while saving, Ctrl-C): stop the crawl
            loop, task = holder.get("loop"), holder.get("task")
            if loop is not None and task is not None:
                loop.call_soon_threadsafe(task.cancel)  # type: ignore[attr-defined]
            while outcomes.get() is not _DONE:
                pass
        thread.join()
    error = holder.get("error")
    if isinstance(error, ValueError):  # a malformed URL
        raise FetchError(f"{source}: {error}") from None
    if error is not None:
        raise error  # type: ignore[misc]
    report.over_budget = stats.over_budget
    report.robots_skipped = stats.robots_skipped
    report.robots_skipped_urls = list(stats.robots_skipped_urls)
    report.direction_pages = stats.direction_pages
    report.notes = list(stats.notes)
    log_ingest(db, report, started, clock())
    return report


_DONE = object()


class _Saver:
    """Outcomes in, batches stored: pages, rejections, validators and `checked_at` of every
    location tried, one batch at a time. Keeps nothing once a batch is stored (the report
    holds counts and at most MAX_LISTED failures and rejections)."""

    def __init__(self, db: Database, report: RefreshReport, clock: Clock) -> None:
        self.db, self.report, self.clock = db, report, clock
        self.pages: list[tuple[MapPage, SourceInfo]] = []
        self.rejected: list[Rejection] = []
        self.same: list[SourceInfo] = []
        self.touched: list[tuple[str, str]] = []
        self.texts: list[tuple[str | None, str]] = []

    @property
    def pending(self) -> int:
        return len(self.touched)

    def take(self, out: Outcome) -> None:
        report = self.report
        if isinstance(out, Fetched):
            report.pages_read += 1
            info = SourceInfo(out.url, out.sha256, size=out.size, etag=out.etag,
                              last_modified=out.last_modified)
            self.texts.append((out.alternate, out.url))
            if out.error is not None:
                self.rejected.append(Rejection(out.url, out.error.line, out.error.reason, out.sha256 or None))
            elif out.page is not None:
                self.pages.append((out.page, info))
            else:  # identical bytes: keep the new validators
                report.skipped += 1
                self.same.append(info)
        elif isinstance(out, NotModified):
            report.pages_read += 1
            report.skipped += 1
        elif isinstance(out, Missing):
            report.missing += 1
        else:
            report.failed_total += 1
            if len(report.failed) < MAX_LISTED:
                report.failed.append(out)
            if not out.requested:  # not checked: it stays first in line
                return
        self.touched.append((out.url, out.paper_id))

    def flush(self) -> None:
        db, report = self.db, self.report
        if self.pages:
            report.saved.add(save_pages(db, self.pages, self.clock()))
        if self.rejected:
            record_rejections(db, self.rejected, self.clock())
            report.rejected_total += len(self.rejected)
            report.rejected.extend(self.rejected[:max(0, MAX_LISTED - len(report.rejected))])
        now = iso(self.clock())
        with db.atomic():
            db.conn.executemany("UPDATE sources SET etag = ?, last_modified = ? WHERE location = ?",
                                [(i.etag, i.last_modified, i.location) for i in self.same])
            db.conn.executemany(
                "INSERT INTO sources (location, paper_id, checked_at) VALUES (?, ?, ?)"
                " ON CONFLICT(location) DO UPDATE SET checked_at = excluded.checked_at",
                [(url, pid, now) for url, pid in self.touched])
            db.conn.executemany("UPDATE sources SET text_url = ? WHERE location = ?", self.texts)
        self.pages, self.rejected, self.same, self.touched, self.texts = [], [], [], [], []
