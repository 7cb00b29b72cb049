"""The refresh schedule: $MAPWATCH_REFRESH, job settings, and a failing tick that is logged
while the next one still runs."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

import pytest
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from mapwatch.service.schedule import JOB_ID, ScheduleError, parse_schedule, start_scheduler
from mapwatch.service.tick import Tick, TickResult
from mapwatch.store.pages.files import SEEDS_DIR
from tests.waiting import async_wait_until


@pytest.mark.parametrize(("spec", "seconds"), [(None, 3600), ("1h", 3600), ("30m", 1800), ("90s", 90),
                                               ("1h30m", 5400), ("2d", 172800), (" 45M ", 2700)])
def test_intervals(spec, seconds) -> None:
    trigger = parse_schedule(spec)
    assert isinstance(trigger, IntervalTrigger) and trigger.interval == timedelta(seconds=seconds)


def test_cron_expression() -> None:
    trigger = parse_schedule("*/15 6-18 * * mon-fri")
    assert isinstance(trigger, CronTrigger)
    assert {f.name: str(f) for f in trigger.fields}["minute"] == "*/15"


@pytest.mark.parametrize("spec", ["hourly", "0s", "1x", "* * *", "61 * * * *", "-5m"])
def test_bad_schedules_say_what_is_accepted(spec) -> None:
    with pytest.raises(ScheduleError):
        parse_schedule(spec)


async def test_a_failing_tick_is_logged_and_the_next_runs(caplog) -> None:
    calls: list[int] = []
    second = asyncio.Event()

    async def job() -> None:
        calls.append(len(calls))
        if len(calls) == 1:
            raise RuntimeError("source down")
        second.set()

    caplog.set_level(logging.ERROR, logger="mapwatch.scheduler")
    scheduler = start_scheduler(job, IntervalTrigger(seconds=0.2), run_now=True)
    try:
        job_obj = scheduler.get_job(JOB_ID)
        assert job_obj.coalesce is True and job_obj.max_instances == 1 and job_obj.misfire_grace_time >= 60
        await asyncio.wait_for(second.wait(), 15)
    finally:
        scheduler.shutdown(wait=False)
    assert len(calls) >= 2
    assert "refresh tick failed: RuntimeError: source down" in caplog.text


async def test_tick_refreshes_publishes_then_runs_hooks_even_after_a_failing_one(
        tmp_path: Path, caplog) -> None:
    seen: list[TickResult] = []

    async def broken(result: TickResult) -> None:
        raise ValueError("alert channel gone")

    async def record(result: TickResult) -> None:
        seen.append(result)

    tick = Tick(tmp_path / "m.db", str(SEEDS_DIR), tmp_path / "public", "http://x", [broken, record])
    caplog.set_level(logging.INFO, logger="mapwatch.scheduler")
    result = await tick()
    assert seen == [result]
    assert result.refresh.stored == 2 and result.refresh.new_citations == 111
    assert "feeds/lr/reinforcement-learning-for-reasoning.atom" in result.publish.written
    assert "after-refresh step broken failed: alert channel gone" in caplog.text


async def test_tick_with_a_missing_source_fails_with_its_reason(tmp_path: Path) -> None:
    from mapwatch.store.errors import FetchError

    tick = Tick(tmp_path / "m.db", str(tmp_path / "nowhere"), tmp_path / "public", "http://x")
    with pytest.raises(FetchError, match="no such file or folder"):
        await tick()


async def test_scheduled_tick_with_a_missing_source_logs_why_then_recovers(tmp_path: Path, caplog) -> None:
    import shutil

    source = tmp_path / "pages"
    done = asyncio.Event()

    async def after(result: TickResult) -> None:
        done.set()

    tick = Tick(tmp_path / "m.db", str(source), tmp_path / "public", "http://x", [after])
    caplog.set_level(logging.ERROR, logger="mapwatch.scheduler")
    scheduler = start_scheduler(tick, IntervalTrigger(seconds=0.3), run_now=True)
    try:
        await async_wait_until(lambda: "refresh tick failed" in caplog.text, 15, what="the failed tick to be logged")
        shutil.copytree(SEEDS_DIR, source)  # the source comes back: the next tick succeeds
        await asyncio.wait_for(done.wait(), 15)
    finally:
        scheduler.shutdown(wait=False)
    assert f"refresh tick failed: FetchError: {source}: no such file or folder" in caplog.text
    assert (tmp_path / "public/feeds/lr/reinforcement-learning-for-reasoning.atom").exists()


async def test_a_failing_tick_is_one_line_in_the_services_log(capsys) -> None:
    """Besides its one-line reason, a failed tick logged the scheduler's 30-line traceback
    (issue 30, item 11): with the logging `serve` and `run` set up, it is one line."""
    from mapwatch.log_format import configure
    from mapwatch.store.environment import Environment, installed

    second = asyncio.Event()
    calls: list[int] = []

    async def job() -> None:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("source down")
        second.set()

    root = logging.getLogger()
    saved = (root.level, list(root.handlers))
    with installed(Environment.read({})):
        configure("INFO", "text")
        try:
            scheduler = start_scheduler(job, IntervalTrigger(seconds=0.2), run_now=True)
            try:
                await asyncio.wait_for(second.wait(), 15)
            finally:
                scheduler.shutdown(wait=False)
        finally:
            root.setLevel(saved[0])
            root.handlers[:] = saved[1]
            for name in ("apscheduler", "apscheduler.executors"):
                logging.getLogger(name).setLevel(logging.NOTSET)
    err = capsys.readouterr().err
    assert "refresh tick failed: RuntimeError: source down" in err  # the failure really happened
    assert "Traceback" not in err and len([line for line in err.splitlines() if "source down" in line]) == 1, err
