"""The HTTP refresh as one pipeline on the running event loop: crawl -> batches -> one writer.

The crawl (store.sources.http_source) runs on the loop; each outcome it emits is taken into the current
batch (store.sources.crawl_saver) right there, and a full batch is handed to the writer: `writer`, one
thread that alone uses the database (`mapwatch run`), or None, the calling thread itself
(`mapwatch refresh`: the loop waits while a batch is stored). With a writer thread the crawl
goes on while a batch is stored; a second full batch waits for the first to be stored, so at
most two batches are held whatever the budget (bounded memory, docs/live-map.md,
"Following the live map over HTTP"), and each batch is committed on its own: a process killed
mid-tick keeps the batches stored.

A batch that cannot be stored stops the crawl and its error is raised. Cancelled (a shutdown),
the crawl stops and the batch being stored is waited for, so the database is never used by two
threads at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import urlsplit

from sqlite_utils import Database

from mapwatch.store.clock import Clock
from mapwatch.store.database.batch_saver import Progress
from mapwatch.store.database.ingest import log_ingest
from mapwatch.store.errors import FetchError
from mapwatch.store.sources.crawl_outcomes import (
    CrawlResult,
    Discovered,
    Forgotten,
    Outcome,
    ResourceSeen,
    Unrecorded,
    Vouched,
)
from mapwatch.store.sources.crawl_plan import location_parts, plan_crawl, split_source
from mapwatch.store.sources.crawl_saver import CrawlBatch, CrawlSaver
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.http_source import crawl
from mapwatch.store.sources.plan_counts import kept_checked
from mapwatch.store.sources.sitemap_trust import record_evidence

if TYPE_CHECKING:
    from mapwatch.store.sources.refresh_report import RefreshReport

T = TypeVar("T")


class _Writer:
    """Runs the database work: in `executor` (one thread), or here when it is None."""

    def __init__(self, executor: Executor | None) -> None:
        self.executor = executor

    async def __call__(self, fn: Callable[..., T], *args: object) -> T:
        if self.executor is None:
            return fn(*args)
        return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)


class _Batches:
    """Outcomes in (on the loop), batches out to the writer, one write at a time, in order."""

    def __init__(self, saver: CrawlSaver, write: _Writer, batch_size: int, progress: Progress | None,
                 stats: CrawlResult) -> None:
        self.saver, self.write, self.batch_size = saver, write, batch_size
        self.progress, self.stats = progress, stats
        self.done = 0
        self.writing: asyncio.Future[None] | None = None  # the batch being stored (writer thread)
        self.turn = asyncio.Lock()  # one emit at a time hands a batch over
        self.error: BaseException | None = None  # a batch that could not be stored
        self.crawl: asyncio.Task[CrawlResult] | None = None

    async def emit(self, out: Outcome | Discovered | ResourceSeen | Vouched | Forgotten | Unrecorded) -> None:
        if self.error is not None:
            return  # the crawl is being stopped
        if not self.saver.take(out):
            return  # not a page: nothing to count
        self.done += 1
        if self.saver.pending >= self.batch_size:
            async with self.turn:
                if self.saver.pending >= self.batch_size and self.error is None:
                    await self.hand_over()
        if self.progress:
            self.progress(self.done, max(self.done, self.stats.planned))

    async def hand_over(self) -> None:
        """Store the current batch: wait for the previous one, then start this one."""
        await self.settle()
        if self.error is not None:
            return
        batch = self.saver.cut()
        if self.write.executor is None:
            try:
                self.saver.store(batch)
            except Exception as e:
                self.error = e
                self.failed()
        else:
            self.writing = asyncio.ensure_future(self.write(self._stored, batch))
            self.writing.add_done_callback(lambda w: None if w.cancelled() or w.exception() is None else self.failed())

    def _stored(self, batch: CrawlBatch) -> None:
        try:
            self.saver.store(batch)
        except BaseException as e:
            self.error = e  # (set in the writer thread; read on the loop once the write is done)
            raise

    async def settle(self) -> None:
        """Wait for the batch being stored, even when cancelled meanwhile (cancellation is
        raised once it is stored); its failure stops the crawl."""
        writing, self.writing = self.writing, None
        if writing is None:
            return
        cancelled = False
        while not writing.done():
            try:
                await asyncio.wait({writing})
            except asyncio.CancelledError:
                cancelled = True
        if writing.exception() is not None:
            self.failed()
        if cancelled:
            raise asyncio.CancelledError

    def failed(self) -> None:
        if self.crawl is not None and not self.crawl.done():
            self.crawl.cancel()

    async def run(self, crawling: Awaitable[CrawlResult]) -> None:
        self.crawl = asyncio.ensure_future(crawling)
        try:
            try:
                await self.crawl
            except asyncio.CancelledError:
                if self.error is None:
                    raise
            except Exception:
                if self.error is None:
                    raise
            if self.error is None:
                async with self.turn:
                    await self.hand_over()  # the last batch
        except BaseException:
            if self.crawl is not None and not self.crawl.done():
                self.crawl.cancel()  # (e.g. Ctrl-C in the calling thread)
                await asyncio.wait({self.crawl})
            raise
        finally:
            await self.settle()
        if self.error is not None:
            raise self.error


async def refresh_http(db: Database, source: str, clock: Clock, priority: Sequence[str], options: HttpOptions,
                       progress: Progress | None, batch_size: int, *, report: RefreshReport,
                       writer: Executor | None, parser: Executor | None = None) -> RefreshReport:
    """Crawl `source` as store.sources.crawl_plan plans it and store what the crawl finds, batch by
    batch as it arrives; `report` is filled in and returned."""
    write = _Writer(writer)
    started = clock()
    plan = await write(plan_crawl, db, source, started, options.budget, priority, options.audit_rng)
    stats = report.crawl = CrawlResult()
    saver = CrawlSaver(db, report, clock, plan)
    batches = _Batches(saver, write, batch_size, progress, stats)
    try:
        async def consult(fn: Callable[..., T], *args: object) -> T:
            return await write(fn, db, *args)

        await batches.run(crawl(source, plan, batches.emit, consult=consult, options=options, result=stats,
                                parser=parser))
    except ValueError as e:
        if e is batches.error:
            raise
        raise FetchError(f"{source}: {e}") from None  # a malformed URL
    report.not_due = plan.not_due
    if plan.all_checked:  # the pages this crawl stored were checked: the next plan need not check them all
        await write(kept_checked, db, *location_parts(source), plan.pages_checked, report.saved.paged)
    if note := await write(record_evidence, db, urlsplit(split_source(source)[0]).netloc.lower(),
                           saver.lastmod_compared, saver.lastmod_missed, started):
        stats.notes.append(note)
    await write(log_ingest, db, report, started, clock())
    return report
