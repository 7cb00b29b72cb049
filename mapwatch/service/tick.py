"""One tick of `mapwatch run`, made of its parts: `Refresh` (read the source, store what
changed), with the sources enabled the `before_alerts` step (the tick's new citers described
while the alerts about them are held), `Publish` (rewrite the feeds that changed), then the
`deliver` steps (the next refresh's time, the bot's alerts) and last the `enrich` step (start
an enrichment round).
`Tick.run(now)` runs them once; mapwatch.service.schedule runs it on its trigger.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import Executor, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING

from mapwatch.feeds.publish_report import PublishReport
from mapwatch.feeds.tick_report import TickResult
from mapwatch.store.priority import lower_thread_priority
from mapwatch.store.settings_table import DEFAULT_BEFORE_ALERTS, DEFAULT_NICE, DEFAULT_RANKS_WHOLE_EVERY
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh_report import RefreshReport
from mapwatch.store.subscriptions.alert_hold import hold_alerts, release_alerts

if TYPE_CHECKING:
    from sqlite_utils import Database

__all__ = ["AfterRefresh", "Publish", "Refresh", "Threads", "Tick", "TickClock", "TickResult"]

log = logging.getLogger("mapwatch.scheduler")  # the name its lines have always had


AfterRefresh = Callable[[TickResult], Awaitable[None]]  # a deliver or enrich step: this tick's report in
# Ask the open sources about the citers in the events after the given one, before the alerts
# about them go out (mapwatch.service.run.DescribeNewCiters); the tick holds the alerts meanwhile.
BeforeAlerts = Callable[[int, Callable[[], datetime]], Awaitable[None]]
HOLD_MARGIN = 60.0  # seconds a hold outlasts the refresh's deadline and the bound (a crash mid-tick)


class TickClock:
    """The time during a tick that started at `now`: `now`, then as much later as has passed
    since (so a tick run at a given instant stores that instant, and a live one the time)."""

    def __init__(self, now: datetime) -> None:
        self.start, self._started = now, time.monotonic()

    def __call__(self) -> datetime:
        return self.start + timedelta(seconds=time.monotonic() - self._started)


@dataclass(frozen=True)
class Threads:
    """Where a tick's work runs: `writer` (one thread: the tick's connection is opened, used
    and closed there) and `parsers` (the pages' parsing)."""

    writer: Executor
    parsers: Executor


@dataclass(frozen=True)
class Refresh:
    """The first part: read `source` (a folder or an http(s) URL) and store what changed
    (store.sources.refresh), then bring the directions' PageRank up to date with what was
    stored (store/questions/direction_pagerank.py). `priority` gives the papers fetched first
    (run: the tracked ones), read once in the writer thread and handed on in the tick's
    result; `options` how politely and how much to fetch."""

    source: str
    priority: Callable[[Database], Sequence[str]] | None = None
    options: HttpOptions = field(default_factory=HttpOptions)
    whole_every: timedelta = timedelta(seconds=DEFAULT_RANKS_WHOLE_EVERY)  # $MAPWATCH_RANKS_WHOLE_EVERY

    async def __call__(self, db: Database, clock: Callable[[], datetime],
                       threads: Threads) -> tuple[RefreshReport, tuple[str, ...] | None]:
        from mapwatch.store.questions.direction_pagerank import update_direction_ranks
        from mapwatch.store.sources.refresh import refresh_async

        loop = asyncio.get_running_loop()
        tracked = tuple(await loop.run_in_executor(threads.writer, self.priority, db)) if self.priority else None
        report = await refresh_async(db, self.source, writer=threads.writer, parser=threads.parsers,
                                     clock=clock, priority=tracked or (), options=self.options)
        await loop.run_in_executor(threads.writer,
                                   lambda: update_direction_ranks(db, clock(), whole_every=self.whole_every))
        return report, tracked


@dataclass(frozen=True)
class Publish:
    """The second part: write the feeds that changed into `out_dir`, their links under
    `base_url` (feeds.publish). Runs in the writer thread, on the tick's connection."""

    out_dir: str | Path
    base_url: str
    limit: int = 100

    def __call__(self, db: Database, clock: Callable[[], datetime]) -> PublishReport:
        from mapwatch.feeds.publish import publish

        return publish(db, self.out_dir, self.base_url, limit=self.limit, clock=clock)


@dataclass
class Tick:
    """One scheduled run on the running loop: `refresh` then `publish` on the database at
    `db_path`, opened, used and closed by one thread of the tick's own (its crawl on the loop,
    its parsing in threads of their own), all `nice` steps lower in CPU priority (0 or None:
    unchanged; store/priority.py) so the bot's answers and the feed server come first; then
    on the loop the `deliver` steps in order and last `enrich`. A failing step after the
    publish is logged and the next one still runs."""

    db_path: str | Path
    refresh: Refresh
    publish: Publish
    deliver: Sequence[AfterRefresh] = ()
    enrich: AfterRefresh | None = None
    nice: int | None = DEFAULT_NICE
    before_alerts: BeforeAlerts | None = None  # between the refresh and the publish, alerts held
    before_alerts_seconds: float = DEFAULT_BEFORE_ALERTS
    _threads: Threads | None = field(default=None, init=False, repr=False)

    def threads(self) -> Threads:
        """The tick's threads, made at the first tick and kept (ticks never overlap), lowered once."""
        from mapwatch.store.sources.http_source import PARSE_THREADS

        if self._threads is None:
            self._threads = Threads(
                ThreadPoolExecutor(1, thread_name_prefix="mapwatch-refresh",
                                   initializer=lower_thread_priority, initargs=(self.nice,)),
                ThreadPoolExecutor(PARSE_THREADS, thread_name_prefix="mapwatch-parse",
                                   initializer=lower_thread_priority, initargs=(self.nice,)))
        return self._threads

    def close(self) -> None:
        """End the tick's threads (after its last run)."""
        if self._threads is not None:
            self._threads.writer.shutdown()
            self._threads.parsers.shutdown()
            self._threads = None

    async def run(self, now: datetime) -> TickResult:
        """The tick, as at `now` (the time it stores and publishes; see TickClock)."""
        result = await self._refresh_and_publish(TickClock(now))
        r = result.refresh
        log.info("refresh: %s %s", r.summary(), result.publish.summary())
        for failure in [*r.rejected, *r.failed]:
            log.warning("refresh: %s", failure)
        for step in [*self.deliver, *([self.enrich] if self.enrich is not None else [])]:
            try:
                await step(result)
            except Exception as e:
                log.error("after-refresh step %s failed: %s", getattr(step, "__name__", step), e, exc_info=True)
        return result

    async def _refresh_and_publish(self, clock: TickClock) -> TickResult:
        from mapwatch.store.database.db import open_db

        threads = self.threads()
        loop = asyncio.get_running_loop()
        db = await loop.run_in_executor(threads.writer, open_db, self.db_path)
        held: int | None = None
        try:
            if self.before_alerts is not None:
                held = await self._hold(db, clock, threads)
            report, tracked = await self.refresh(db, clock, threads)
            if self.before_alerts is not None and held is not None:
                try:
                    await self.before_alerts(held, clock)
                except Exception as e:  # the alerts go out as they are
                    log.error("before alerts: %s: %s", type(e).__name__, e, exc_info=True)
            published = await loop.run_in_executor(threads.writer, functools.partial(self.publish, db, clock))
        finally:
            if held is not None:
                await asyncio.shield(loop.run_in_executor(threads.writer, release_alerts, db))
            await asyncio.shield(loop.run_in_executor(threads.writer, db.close))  # after any write still under way
        return TickResult(report, published, tracked)

    async def _hold(self, db: Database, clock: TickClock, threads: Threads) -> int | None:
        """Hold the alerts about what this tick stores (store/subscriptions/alert_hold.py) until
        its new citers are described; the newest event before it. None: no hold (logged)."""
        seconds = (self.refresh.options.deadline or 3600.0) + self.before_alerts_seconds + HOLD_MARGIN
        try:
            return await asyncio.get_running_loop().run_in_executor(
                threads.writer, hold_alerts, db, clock(), seconds)
        except Exception as e:  # the database busy or read-only: alerts as they come
            log.warning("before alerts: could not hold the alerts (%s: %s)", type(e).__name__, e)
            return None
