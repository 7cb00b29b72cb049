"""One tick of `mapwatch run`: refresh (read the source, store what changed), publish (rewrite
the feeds that changed), then the after-refresh hooks (the bot's deliveries, the next
refresh's time, the enrichment round). mapwatch.service.schedule runs it on its trigger.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mapwatch.feeds.tick_report import TickResult
from mapwatch.store.priority import background_nice, lower_thread_priority

if TYPE_CHECKING:
    from sqlite_utils import Database

__all__ = ["AfterRefresh", "Tick", "TickResult"]

log = logging.getLogger("mapwatch.scheduler")  # the name its lines have always had


AfterRefresh = Callable[[TickResult], Awaitable[None]]


@dataclass
class Tick:
    """One scheduled run on the running loop: the crawl of an HTTP refresh runs on the loop;
    the database work (the refresh's batches, the publish) runs in one thread of its own, its
    parsing in threads of their own, all at a lower CPU priority (`nice` steps, default
    $MAPWATCH_BACKGROUND_NICE or 10; see store/priority.py), so the bot's answers and the feed
    server come first; then the after-refresh hooks on the loop. The tick's connection is
    opened, used and closed by that one thread."""

    db_path: str | Path | None
    source: str
    out_dir: str | Path
    base_url: str
    hooks: Sequence[AfterRefresh] = ()
    limit: int = 100
    priority: Callable[[Database], Sequence[str]] | None = None  # fetched first (refresh adds the tracked papers)
    nice: int | None = None  # CPU priority steps below normal; None: $MAPWATCH_BACKGROUND_NICE, else 10
    _thread: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)  # the writer
    _parsers: ThreadPoolExecutor | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.nice is None:
            self.nice = background_nice()  # a bad value fails here, before the first tick

    def run_sync(self) -> TickResult:
        """The same tick, synchronously, in the calling thread (store.sources.refresh.refresh)."""
        from mapwatch.feeds.publish import publish
        from mapwatch.store.database.db import open_db
        from mapwatch.store.sources.refresh import refresh

        db = open_db(self.db_path)
        try:
            report = refresh(db, self.source, priority=self.priority(db) if self.priority else ())
            published = publish(db, self.out_dir, self.base_url, limit=self.limit)
        finally:
            db.close()
        return TickResult(report, published)

    def _executors(self) -> tuple[ThreadPoolExecutor, ThreadPoolExecutor]:
        from mapwatch.store.sources.http_source import PARSE_THREADS

        if self._thread is None or self._parsers is None:  # kept for every tick (they never overlap), lowered once
            self._thread = ThreadPoolExecutor(1, thread_name_prefix="mapwatch-refresh",
                                              initializer=lower_thread_priority, initargs=(self.nice,))
            self._parsers = ThreadPoolExecutor(PARSE_THREADS, thread_name_prefix="mapwatch-parse",
                                               initializer=lower_thread_priority, initargs=(self.nice,))
        return self._thread, self._parsers

    async def run_async(self) -> TickResult:
        from mapwatch.feeds.publish import publish
        from mapwatch.store.database.db import open_db
        from mapwatch.store.sources.refresh import refresh_async

        writer, parsers = self._executors()
        loop = asyncio.get_running_loop()
        db = await loop.run_in_executor(writer, open_db, self.db_path)
        try:
            tracked = await loop.run_in_executor(writer, self.priority, db) if self.priority else ()
            report = await refresh_async(db, self.source, writer=writer, parser=parsers, priority=tracked)
            published = await loop.run_in_executor(
                writer, functools.partial(publish, db, self.out_dir, self.base_url, limit=self.limit))
        finally:
            await asyncio.shield(loop.run_in_executor(writer, db.close))  # after any write still under way
        return TickResult(report, published)

    async def __call__(self) -> TickResult:
        result = await self.run_async()
        r = result.refresh
        log.info("refresh: %s %s", r.summary(), result.publish.summary())
        for failure in [*r.rejected, *r.failed]:
            log.warning("refresh: %s", failure)
        for hook in self.hooks:
            try:
                await hook(result)
            except Exception as e:
                log.error("after-refresh step %s failed: %s", getattr(hook, "__name__", hook), e, exc_info=True)
        return result
