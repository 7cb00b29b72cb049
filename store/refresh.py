"""One refresh tick: read a source (a folder or the map over HTTP), store what changed.

A folder is ingested (files unchanged since the last tick are not read). An HTTP source is
crawled politely (store.http_source) as store.crawl_plan plans it: robots.txt first, the
direction pages due, tracked papers (those given and those the database's tracks follow),
papers found during the tick, pages the sitemaps say changed, a share for unseen papers
(newest first), then the pages due for a re-check, within a page budget; what is not due is
not requested. Pages are saved in batches as they arrive; each batch also records when its
locations were checked and when each is due again (store.crawl_schedule: sooner for a page
that changed, later for one that did not), so an interrupted tick keeps its stored batches
and the next one goes on with the pages not yet checked. A failed fetch keeps what is
stored; a response that is not a map page is rejected with its reason.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from mapwatch.store.clock import Clock, iso, utc_now
from mapwatch.store.crawl_plan import CrawlPlan, plan_crawl
from mapwatch.store.crawl_schedule import DIRECTION_BOUNDS, MISSING_BOUNDS, PAGE_BOUNDS, after_check, spread
from mapwatch.store.errors import FetchError
from mapwatch.store.files import SEEDS_DIR
from mapwatch.store.graph import compute_direction_ranks
from mapwatch.store.http_client import HttpOptions
from mapwatch.store.http_source import (
    CrawlResult,
    Discovered,
    Failed,
    Fetched,
    Missing,
    NotModified,
    Outcome,
    ResourceSeen,
    crawl,
)
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
    discovered: int = 0  # papers the database did not know, found this tick
    not_due: int = 0  # pages known but not due for a re-check this tick: not requested
    requests: int | None = None  # HTTP: requests sent to the site this tick (retries included)
    statuses: dict[str, int] = field(default_factory=dict)  # HTTP: responses by status (code, or class: 4xx)
    sitemap_pages: int = 0  # HTTP: paper pages the sitemaps list
    sitemap_changed: int = 0  # of those, changed since their last check
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
                  f"{self.over_budget:,} left for the next tick, {self.not_due:,} not due yet, "
                  f"{self.requests or 0:,} requests sent")
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
    """One tick from `source` (a folder/file path or an http(s) URL). Over HTTP, `priority`
    (paper ids) is fetched first, with the papers the database's tracks follow; every
    scheduling decision is made against `clock` (store.crawl_schedule).

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


def crawl_order(db: Database, source: str, priority: Sequence[str] = (), *, clock: Clock = utc_now,
                budget: int = DEFAULT_OPTIONS.budget) -> list[str]:
    """Paper ids a tick would fetch at `clock()`, in order, before any is found on the way:
    tracked papers (`priority` and the tracks'), unseen papers' share (newest first), the
    pages due (the most overdue first), the other unseen papers. Pages not due are left out;
    an empty database starts from the bundled seeds' papers (store.crawl_plan)."""
    plan = plan_crawl(db, source, clock(), budget, priority)
    share = plan.unseen[:plan.unseen_share]
    return [*plan.tracked, *share, *plan.due, *plan.unseen[plan.unseen_share:]]


def _refresh_http(db: Database, source: str, clock: Clock, priority: Sequence[str],
                  options: HttpOptions, progress: Progress | None, batch_size: int) -> RefreshReport:
    """Crawl in a thread of its own (its own event loop) and save here, in the calling thread,
    batch by batch as outcomes arrive: the database connection is only ever used by the thread
    that opened it, and a bounded queue between the two keeps memory flat whatever the budget
    (README, "mapwatch refresh": saving as it goes)."""
    started = clock()
    plan = plan_crawl(db, source, started, options.budget, priority)
    report = RefreshReport(source=source, kind="http")
    stats = CrawlResult()
    outcomes: queue.Queue[object] = queue.Queue(maxsize=2 * batch_size)
    holder: dict[str, object] = {}

    async def emit(outcome: Outcome | Discovered | ResourceSeen) -> None:
        while True:
            try:
                outcomes.put_nowait(outcome)
                return
            except queue.Full:  # the saver is behind: wait for it (bounded memory)
                await asyncio.sleep(0.005)

    async def main() -> CrawlResult:
        holder["loop"], holder["task"] = asyncio.get_running_loop(), asyncio.current_task()
        return await crawl(source, plan, emit, options=options, result=stats)

    def run() -> None:
        try:
            asyncio.run(main())
        except BaseException as e:  # handed to the calling thread
            holder["error"] = e
        finally:
            outcomes.put(_DONE)

    thread = threading.Thread(target=run, name="mapwatch-crawl", daemon=True)
    thread.start()
    saver = _Saver(db, report, clock, plan)
    finished = False
    try:
        done = 0
        while True:
            item = outcomes.get()
            if item is _DONE:
                finished = True
                break
            if not saver.take(item):  # type: ignore[arg-type]
                continue  # not a page: nothing to count
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
    report.discovered = stats.discovered
    report.not_due = plan.not_due
    report.requests = stats.requests
    report.statuses = dict(stats.statuses)
    report.sitemap_pages = stats.sitemap_pages
    report.sitemap_changed = stats.sitemap_changed
    report.notes = list(stats.notes)
    log_ingest(db, report, started, clock())
    return report


_DONE = object()


class _Saver:
    """Outcomes in, batches stored: pages, rejections, validators, `checked_at` and the next
    check (store.crawl_schedule) of every location tried, papers found (kept to fetch later),
    and what robots.txt, the sitemaps and the direction pages said, one batch at a time.
    Keeps nothing once a batch is stored (the report holds counts and at most MAX_LISTED
    failures and rejections). Schedules count from the tick's start (`plan.now`)."""

    def __init__(self, db: Database, report: RefreshReport, clock: Clock, plan: CrawlPlan) -> None:
        self.db, self.report, self.clock, self.now = db, report, clock, plan.now
        self.pages: list[tuple[MapPage, SourceInfo]] = []
        self.rejected: list[Rejection] = []
        self.same: list[SourceInfo] = []
        self.touched: list[tuple[str, str, str]] = []  # (location, paper id, what the check found)
        self.texts: list[tuple[str | None, str]] = []
        self.found: list[tuple[str, str]] = []
        self.resources: list[ResourceSeen] = []

    @property
    def pending(self) -> int:
        return len(self.touched)

    def take(self, out: Outcome | Discovered | ResourceSeen) -> bool:
        """Take an outcome; True for a page's (progress counts those)."""
        report = self.report
        if isinstance(out, Discovered):
            self.found.append((out.url, out.paper_id))
            return False
        if isinstance(out, ResourceSeen):
            self.resources.append(out)
            return False
        found = "same"
        if isinstance(out, Fetched):
            report.pages_read += 1
            info = SourceInfo(out.url, out.sha256, size=out.size, etag=out.etag,
                              last_modified=out.last_modified)
            self.texts.append((out.alternate, out.url))
            if out.error is not None:
                self.rejected.append(Rejection(out.url, out.error.line, out.error.reason, out.sha256 or None))
            elif out.page is not None:
                self.pages.append((out.page, info))
                found = "page"  # changed if the save stores it
            else:  # identical bytes: keep the new validators
                report.skipped += 1
                self.same.append(info)
        elif isinstance(out, NotModified):
            report.pages_read += 1
            report.skipped += 1
        elif isinstance(out, Missing):
            report.missing += 1
            found = "missing"
        else:
            report.failed_total += 1
            if len(report.failed) < MAX_LISTED:
                report.failed.append(out)
            if not out.requested:  # not checked: it stays first in line
                return True
            found = "failed"
        self.touched.append((out.url, out.paper_id, found))
        return True

    def flush(self) -> None:
        db, report = self.db, self.report
        stored: set[str] = set()
        if self.pages:
            saved = save_pages(db, self.pages, self.clock())
            stored = set(saved.stored)
            report.saved.add(saved)
        if self.rejected:
            record_rejections(db, self.rejected, self.clock())
            report.rejected_total += len(self.rejected)
            report.rejected.extend(self.rejected[:max(0, MAX_LISTED - len(report.rejected))])
        now = iso(self.clock())
        with db.atomic():
            db.conn.executemany("INSERT INTO sources (location, paper_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                self.found)
            db.conn.executemany("UPDATE sources SET etag = ?, last_modified = ? WHERE location = ?",
                                [(i.etag, i.last_modified, i.location) for i in self.same])
            db.conn.executemany(
                "INSERT INTO sources (location, paper_id, checked_at) VALUES (?, ?, ?)"
                " ON CONFLICT(location) DO UPDATE SET checked_at = excluded.checked_at",
                [(url, pid, now) for url, pid, _found in self.touched])
            db.conn.executemany("UPDATE sources SET text_url = ? WHERE location = ?", self.texts)
            self._schedule(stored)
            self._remember_resources(now)
        self.pages, self.rejected, self.same, self.touched, self.texts = [], [], [], [], []
        self.found, self.resources = [], []

    def _schedule(self, stored: set[str]) -> None:
        """Each location checked: its next check, sooner when it changed (a new page stored),
        later when not; a failure is tried again after the shortest interval."""
        if not self.touched:
            return
        conn = self.db.conn
        known: dict[str, tuple[int | None, str | None]] = {}
        locations = [url for url, _pid, _f in self.touched]
        for i in range(0, len(locations), 500):
            chunk = locations[i:i + 500]
            marks = ",".join("?" * len(chunk))
            known.update((loc, (interval, changed_at)) for loc, interval, changed_at in conn.execute(
                f"SELECT location, interval_s, changed_at FROM sources WHERE location IN ({marks})", chunk))
        rows = []
        for url, pid, found in self.touched:
            interval, changed_at = known.get(url, (None, None))
            if found == "failed":
                rows.append((interval, iso(self.now + timedelta(seconds=PAGE_BOUNDS.low)), changed_at, url))
                continue
            bounds = MISSING_BOUNDS if found == "missing" else PAGE_BOUNDS
            s = after_check(self.now, interval, found == "page" and pid in stored, changed_at, bounds,
                            early=spread(url))
            rows.append((s.interval_s, s.next_check_at, s.changed_at, url))
        conn.executemany("UPDATE sources SET interval_s = ?, next_check_at = ?, changed_at = ? WHERE location = ?",
                         rows)

    def _remember_resources(self, now: str) -> None:
        """robots.txt, sitemaps, direction pages: validators (and body) after a 200, the
        time of the check, and a direction page's next poll."""
        for r in self.resources:
            prev = r.previous
            interval, next_at, changed_at = None, None, prev.changed_at if prev else None
            if r.kind == "direction":
                s = after_check(self.now, prev.interval_s if prev else None, r.changed, changed_at,
                                DIRECTION_BOUNDS)
                interval, next_at, changed_at = s.interval_s, s.next_check_at, s.changed_at
            elif r.changed:
                changed_at = now
            if r.not_modified:  # a 304 (or a direction page that could not be read): the schedule only
                self.db.conn.execute(
                    "INSERT INTO crawl_resources (location, kind, checked_at, changed_at, next_check_at, interval_s)"
                    " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(location) DO UPDATE SET checked_at = excluded.checked_at,"
                    " changed_at = excluded.changed_at, next_check_at = excluded.next_check_at,"
                    " interval_s = excluded.interval_s", (r.location, r.kind, now, changed_at, next_at, interval))
                continue
            self.db.conn.execute(
                "INSERT INTO crawl_resources (location, kind, etag, last_modified, sha256, body, checked_at,"
                " changed_at, next_check_at, interval_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(location) DO UPDATE SET kind = excluded.kind, etag = excluded.etag,"
                " last_modified = excluded.last_modified, sha256 = excluded.sha256, body = excluded.body,"
                " checked_at = excluded.checked_at, changed_at = excluded.changed_at,"
                " next_check_at = excluded.next_check_at, interval_s = excluded.interval_s",
                (r.location, r.kind, r.etag, r.last_modified, r.sha256, r.body, now, changed_at, next_at, interval))
