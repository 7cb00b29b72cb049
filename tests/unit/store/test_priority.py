"""Background work at a lower CPU priority ($MAPWATCH_BACKGROUND_NICE, store/priority.py):
`mapwatch run`'s refresh and publish in a thread of their own, lowered once; the loop's thread
keeps its priority; `mapwatch ingest` and `refresh` lower themselves only when asked; a bad
value is a usage error."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import pytest

from mapwatch.cli import build_parser
from mapwatch.cli.run import run_settings
from mapwatch.service.settings import RunSettings
from mapwatch.service.tick import Publish, Refresh, Tick
from mapwatch.store import priority
from mapwatch.store.clock import utc_now
from mapwatch.store.environment import Environment
from mapwatch.store.errors import BadSetting
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.settings_table import DEFAULT_NICE
from tests.system.test_cli_exits import mapwatch

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="a thread has a CPU priority of its own on Linux only")


def thread_nice() -> int:
    return os.getpriority(os.PRIO_PROCESS, threading.get_native_id())


def in_new_thread(fn):  # type: ignore[no-untyped-def]
    out: list[object] = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


@pytest.mark.parametrize(("raw", "expected"), [(None, 10), ("", 10), ("5", 5), (" 0 ", 0), ("19", 19)])
def test_the_setting(raw: str | None, expected: int) -> None:
    env = Environment.read({} if raw is None else {priority.ENV: raw})
    assert env.nice_steps() == expected
    assert env.nice_steps(None) == (None if not (raw or "").strip() else expected)


@pytest.mark.parametrize("raw", ["low", "20", "-1", "2.5"])
def test_a_bad_setting_names_the_variable(raw: str) -> None:
    with pytest.raises(BadSetting, match="MAPWATCH_BACKGROUND_NICE"):  # a setting, not a fetch (issue 22)
        Environment.read({priority.ENV: raw}).nice_steps()


@linux_only
def test_only_the_calling_thread_is_lowered() -> None:
    main_before = thread_nice()

    def lower() -> tuple[int, int, bool]:
        before = thread_nice()
        done = priority.lower_thread_priority(3)
        return before, thread_nice(), done

    before, after, done = in_new_thread(lower)
    assert done and after == min(19, before + 3)
    assert thread_nice() == main_before  # this thread kept its priority
    assert in_new_thread(lambda: priority.lower_thread_priority(0)) is False


@linux_only
def test_lower_priority_if_asked_leaves_it_alone_when_unset() -> None:
    unset = Environment.read({}).nice_steps(None)  # as `ingest` and `refresh` read it
    assert in_new_thread(lambda: (priority.lower_priority_if_asked(unset), thread_nice())) == (False, thread_nice())
    two = Environment.read({priority.ENV: "2"}).nice_steps(None)
    done, nice = in_new_thread(lambda: (priority.lower_priority_if_asked(two), thread_nice()))
    assert done and nice == min(19, thread_nice() + 2)


@linux_only
async def test_each_tick_runs_in_one_lowered_thread_and_the_loop_keeps_its_priority(tmp_path: Path) -> None:
    seen: list[tuple[int, int]] = []  # (thread id, its priority) where the tick reads the database

    def tracked(db: object) -> tuple[str, ...]:  # called by the tick's refresh, in the tick's thread
        seen.append((threading.get_native_id(), thread_nice()))
        return ()

    loop_nice = thread_nice()
    tick = Tick(tmp_path / "m.db", Refresh(str(SEEDS_DIR), priority=tracked), Publish(tmp_path / "public", "http://x"),
                nice=4)
    first = await tick.run(utc_now())
    await tick.run(utc_now())
    assert first.refresh.stored > 0 and (tmp_path / "public" / "feeds.opml").is_file()
    assert len(seen) == 2 and seen[0] == seen[1]  # the same thread, lowered once, not twice
    assert seen[0][0] != threading.get_native_id() and seen[0][1] == min(19, loop_nice + 4)
    assert thread_nice() == loop_nice


def test_run_takes_the_setting_and_refuses_a_bad_one(tmp_path: Path) -> None:
    def settings(nice: str) -> RunSettings:
        args = build_parser().parse_args(["run", "--db", str(tmp_path / "m.db"), "--source", str(SEEDS_DIR)])
        args.environment = Environment.read({priority.ENV: nice})
        return run_settings(args)

    assert settings("7").nice == 7
    assert settings("").nice == DEFAULT_NICE
    with pytest.raises(BadSetting, match="MAPWATCH_BACKGROUND_NICE"):  # a setting, not a fetch (issue 22)
        settings("soon")


@pytest.mark.parametrize("command", ["ingest", "refresh"])
def test_a_bad_setting_is_a_usage_error_before_anything_is_written(tmp_path: Path, command: str) -> None:
    db = tmp_path / "new" / "m.db"
    r = mapwatch(command, "--db", db, env={priority.ENV: "lowest"}, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "MAPWATCH_BACKGROUND_NICE" in lines[0] and "Traceback" not in r.stderr
    assert not db.parent.exists()  # nothing created
