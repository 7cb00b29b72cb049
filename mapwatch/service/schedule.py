"""The refresh schedule of `mapwatch run`: $MAPWATCH_REFRESH parsed into an APScheduler 3.11
trigger, and one job running a tick (mapwatch.service.tick: refresh, publish, then the
deliver and enrich steps).

Coalesced, never two ticks at once, a real misfire grace time, and a failed tick is
logged with its reason while the next one still runs.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from mapwatch.feeds.tick_report import TickResult
from mapwatch.store.clock import utc_now

# defined in the one exception tree (store/errors.py), and importable from here as before
from mapwatch.store.errors import ScheduleError as ScheduleError

if TYPE_CHECKING:
    from apscheduler.events import JobExecutionEvent
    from apscheduler.schedulers.asyncio import AsyncIOScheduler
    from apscheduler.triggers.base import BaseTrigger

    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.metrics import Metrics

log = logging.getLogger("mapwatch.scheduler")

DEFAULT_REFRESH = "1h"
MISFIRE_GRACE_SECONDS = 15 * 60
JOB_ID = "refresh"
_INTERVAL = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


MAX_INTERVAL = timedelta(days=366)  # a longer interval is a typo (and overflows the scheduler's dates)


def parse_schedule(spec: str | None) -> BaseTrigger:
    """An APScheduler trigger for an interval like `1h`, `30m`, `90s`, `1h30m`, `2d`, or a
    5-field cron expression like `*/15 * * * *` (UTC)."""
    from apscheduler.triggers.cron import CronTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    text = (spec or DEFAULT_REFRESH).strip().lower()
    m = _INTERVAL.match(text.replace(" ", ""))
    if m and any(m.groups()):
        d, h, mi, s = (int(g or 0) for g in m.groups())
        seconds = d * 86_400 + h * 3_600 + mi * 60 + s  # whole numbers: no overflow however long
        if seconds <= 0 or seconds > MAX_INTERVAL.total_seconds():
            raise ScheduleError(f"$MAPWATCH_REFRESH: the interval {spec!r} must be longer than 0 s "
                                f"and at most {MAX_INTERVAL.days} days")
        return IntervalTrigger(seconds=seconds, timezone=UTC)
    if len(text.split()) == 5:
        try:
            trigger = CronTrigger.from_crontab(text, timezone=UTC)
            fires = trigger.get_next_fire_time(None, datetime.now(UTC))
        except (ValueError, OverflowError) as e:
            raise ScheduleError(f"$MAPWATCH_REFRESH: the cron expression {spec!r}: {e}") from None
        if fires is None:
            raise ScheduleError(f"$MAPWATCH_REFRESH: the cron expression {spec!r} never fires")
        return trigger
    raise ScheduleError(f"$MAPWATCH_REFRESH: {spec!r} is not a schedule: use an interval like 1h, 30m, 90s "
                        "or a 5-field cron expression like '0 * * * *'")


def _on_job_error(event: JobExecutionEvent) -> None:
    # APScheduler logs the traceback itself (logger "apscheduler"); this is the one-line reason.
    log.error("refresh tick failed: %s: %s", type(event.exception).__name__, event.exception)


def _on_missed(event: JobExecutionEvent) -> None:
    log.warning("refresh tick missed (was due %s)", event.scheduled_run_time)


Job = Callable[[datetime], Awaitable[object]]  # a tick's `run`: called with the time it starts


def start_scheduler(job: Job, trigger: BaseTrigger, *, run_now: bool = True,
                    misfire_grace_time: int = MISFIRE_GRACE_SECONDS, health: Health | None = None,
                    metrics: Metrics | None = None) -> AsyncIOScheduler:
    """Start an AsyncIOScheduler on the running loop with one job (`Tick.run`: each tick calls
    it with the time it starts). Call inside the loop.
    With `health`, each tick's outcome (its error too) is reported to it, for /healthz;
    with `metrics`, counted with its duration and its report's figures, for /metrics."""
    from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MISSED
    from apscheduler.schedulers.asyncio import AsyncIOScheduler

    asyncio.get_running_loop()  # fail loudly outside a loop
    scheduler = AsyncIOScheduler(timezone=UTC)
    scheduler.add_listener(_on_job_error, EVENT_JOB_ERROR)
    scheduler.add_listener(_on_missed, EVENT_JOB_MISSED)
    async def tick() -> None:  # a plain coroutine function, whatever `job` is
        started = time.monotonic()
        try:
            result = await job(utc_now())
        except asyncio.CancelledError:  # the process is stopping mid-tick: say so, no traceback
            log.info("refresh tick interrupted by shutdown")
            return
        except Exception as e:
            if health is not None:
                health.refresh_failed(e)
            if metrics is not None:
                metrics.tick_failed(time.monotonic() - started)
            raise  # logged by _on_job_error
        if health is not None and isinstance(result, TickResult):
            health.refreshed(result)
        if metrics is not None and isinstance(result, TickResult):
            metrics.tick_done(result, time.monotonic() - started)

    first = {"next_run_time": datetime.now(UTC)} if run_now else {}  # None would mean "paused"
    scheduler.add_job(tick, trigger, id=JOB_ID, name="refresh and publish", coalesce=True, max_instances=1,
                      misfire_grace_time=misfire_grace_time, replace_existing=True, **first)
    scheduler.start()
    if health is not None:
        health.next_refresh = lambda: getattr(scheduler.get_job(JOB_ID), "next_run_time", None)
    return scheduler
