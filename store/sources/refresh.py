"""One refresh tick: read a source (a folder or the map over HTTP), store what changed.

A folder is ingested (files unchanged since the last tick are not read). An HTTP source is
crawled politely (store.sources.http_source) as store.sources.crawl_plan plans it: robots.txt first, the
direction pages due, tracked papers (the `priority` the caller gives),
papers found during the tick, pages the sitemaps say changed, a share for unseen papers
(newest first), then the pages due for a re-check, within a page budget; what is not due is
not requested. Pages are saved in batches as they arrive (store.sources.refresh_pipeline: the crawl on
the event loop, one writer for the database, store.sources.crawl_saver's batches); each batch also records when its
locations were checked and when each is due again (store.sources.crawl_schedule: sooner for a page
that changed, later for one that did not), so an interrupted tick keeps its stored batches
and the next one goes on with the pages not yet checked. A failed fetch keeps what is
stored; a response that is not a map page is rejected with its reason.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from pathlib import Path

from sqlite_utils import Database

from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.database.batch_saver import Progress
from mapwatch.store.database.ingest import BATCH_SIZE, ingest_paths
from mapwatch.store.sources.crawl_plan import plan_crawl
from mapwatch.store.sources.crawl_saver import MAX_LISTED, CrawlSaver
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh_pipeline import refresh_http
from mapwatch.store.sources.refresh_report import RefreshReport

DEFAULT_OPTIONS = HttpOptions()
__all__ = ["DEFAULT_OPTIONS", "MAX_LISTED", "CrawlSaver", "RefreshReport", "crawl_order",
           "is_url", "refresh", "refresh_async"]


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
    (paper ids: the caller's, e.g. the tracked papers) is fetched first; every scheduling
    decision is made against `clock` (store.sources.crawl_schedule). The directions' ranks
    are the caller's next step (store/questions/direction_pagerank.py `update_direction_ranks`:
    `mapwatch run`'s tick and `mapwatch refresh` take it).

    Synchronous, for the command line: `refresh_async` run to completion on a new event
    loop, its batches stored in turn on the loop's thread. Called from inside a running
    loop, that loop runs on one worker thread (which then uses `db`) and the caller blocks
    until it ends; from a coroutine, await `refresh_async` instead."""
    tick = refresh_async(db, source, writer=None, clock=clock, priority=priority, options=options,
                         progress=progress, batch_size=batch_size)
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(tick)
    with ThreadPoolExecutor(1, thread_name_prefix="mapwatch-refresh") as pool:
        return pool.submit(asyncio.run, tick).result()


async def refresh_async(
    db: Database,
    source: str | Path,
    *,
    writer: Executor | None,
    parser: Executor | None = None,
    clock: Clock = utc_now,
    priority: Sequence[str] = (),
    options: HttpOptions = DEFAULT_OPTIONS,
    progress: Progress | None = None,
    batch_size: int = BATCH_SIZE,
) -> RefreshReport:
    """`refresh` on the running event loop (`mapwatch run`'s tick). Every use of `db` runs in
    `writer` (one thread: the one that opened `db`; None: this thread, blocking the loop), so
    the loop is never blocked by the database: the crawl runs on the loop, its pages are parsed
    in `parser` (None: asyncio's default executor), and its batches are stored by the writer
    while the crawl goes on (store.sources.refresh_pipeline)."""
    source = str(source)
    loop = asyncio.get_running_loop()
    if not is_url(source):
        def folder() -> RefreshReport:
            return _refresh_folder(db, source, clock, progress)
        return folder() if writer is None else await loop.run_in_executor(writer, folder)
    return await refresh_http(db, source, clock, priority, options, progress, batch_size,
                              report=RefreshReport(source=source), writer=writer, parser=parser)


def _refresh_folder(db: Database, source: str, clock: Clock, progress: Progress | None) -> RefreshReport:
    ingest = ingest_paths(db, [source], clock=clock, progress=progress)
    return RefreshReport(source=source, pages_read=ingest.pages_read,
                         skipped=ingest.skipped, saved=ingest.saved, rejected=ingest.rejected)


def crawl_order(db: Database, source: str, priority: Sequence[str] = (), *, clock: Clock = utc_now,
                budget: int = DEFAULT_OPTIONS.budget) -> list[str]:
    """Paper ids a tick would fetch at `clock()`, in order, before any is found on the way:
    tracked papers (`priority`), unseen papers' share (newest first), the
    pages due (the most overdue first), the other unseen papers. Pages not due are left out;
    an empty database starts from the bundled seeds' papers (store.sources.crawl_plan)."""
    plan = plan_crawl(db, source, clock(), budget, priority)
    share = plan.unseen[:plan.unseen_share]
    return [*plan.tracked, *share, *plan.due, *plan.unseen[plan.unseen_share:]]
