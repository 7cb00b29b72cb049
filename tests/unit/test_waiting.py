"""tests/waiting.py: a wait returns as soon as its condition holds and fails, saying what it
waited for and how long, at its deadline; and every fixed sleep left in tests/ says why."""

from __future__ import annotations

import asyncio
import re
import time
from pathlib import Path

import pytest

from tests.waiting import async_poll, async_wait_until, poll, wait_until

TESTS = Path(__file__).resolve().parents[1]


class Countdown:
    """A condition that holds from its `n`-th look on (then: the value `n`)."""

    def __init__(self, n: int) -> None:
        self.n, self.looks = n, 0

    def __call__(self) -> int:
        self.looks += 1
        return self.n if self.looks >= self.n else 0


def test_returns_the_first_truthy_value_as_soon_as_the_condition_holds() -> None:
    holds = Countdown(3)
    started = time.monotonic()
    assert wait_until(holds, 30, what="the third look", interval=0.01) == 3
    assert time.monotonic() - started < 1 and holds.looks == 3  # 2 intervals, not the 30 s
    assert wait_until(lambda: "now", 30, what="at once") == "now"


def test_fails_at_the_deadline_saying_what_was_awaited_and_how_long() -> None:
    started = time.monotonic()
    with pytest.raises(AssertionError) as failed:
        wait_until(lambda: False, 0.3, what="the port to open", detail=lambda: "log: nothing yet")
    took = time.monotonic() - started
    assert 0.3 <= took < 2
    assert str(failed.value) == "gave up after 0.3 s waiting for the port to open\nlog: nothing yet"


def test_ignored_exceptions_mean_not_yet_and_others_end_the_wait() -> None:
    looks = iter([OSError("refused"), OSError("refused"), "open"])

    def connect() -> str:
        got = next(looks)
        if isinstance(got, BaseException):
            raise got
        return got

    assert wait_until(connect, 30, what="a connection", interval=0.01, ignoring=(OSError,)) == "open"
    with pytest.raises(AssertionError, match=r"waiting for a connection \(last: ConnectionRefusedError: no\)"):
        wait_until(lambda: (_ for _ in ()).throw(ConnectionRefusedError("no")), 0.1, what="a connection",
                   ignoring=(OSError,))
    with pytest.raises(ZeroDivisionError):  # not ignored: at once, not at the deadline
        wait_until(lambda: 1 / 0, 30, what="never")


def test_poll_returns_none_at_the_deadline() -> None:
    assert poll(lambda: 0, 0.1) is None
    assert poll(Countdown(2), 30, interval=0.01) == 2


async def test_the_async_wait_takes_plain_and_awaitable_conditions() -> None:
    holds = Countdown(3)
    started = asyncio.get_running_loop().time()
    assert await async_wait_until(holds, 30, what="the third look", interval=0.01) == 3
    assert await async_wait_until(lambda: asyncio.to_thread(Countdown(1)), 30, what="a thread's answer") == 1
    assert asyncio.get_running_loop().time() - started < 1
    with pytest.raises(AssertionError, match=r"^gave up after 0\.2 s waiting for the alerts to be sent$"):
        await async_wait_until(lambda: asyncio.sleep(0, result=False), 0.2,  # an awaitable "no"
                               what="the alerts to be sent")


async def test_a_look_is_awaited_to_its_end_and_the_deadline_checked_between_looks() -> None:
    looks = Countdown(99)

    async def slow_no() -> int:
        await asyncio.sleep(0.3)  # on purpose: a look longer than the whole wait
        return looks()

    started = asyncio.get_running_loop().time()
    assert await async_poll(slow_no, 0.1) is None
    assert looks.looks == 1 and asyncio.get_running_loop().time() - started >= 0.3
    assert await async_poll(lambda: asyncio.sleep(0.3, result="late yes"), 0.1) == "late yes"  # on purpose: slow


async def test_the_async_wait_lets_other_tasks_run() -> None:
    flag = asyncio.Event()
    asyncio.get_running_loop().call_later(0.05, flag.set)
    assert await async_wait_until(flag.is_set, 30, what="the flag", interval=0.01)


SLEEP = re.compile(r"\b(?:time|asyncio)\.sleep\(")


def test_every_fixed_sleep_in_the_tests_says_why() -> None:
    """A wait for a condition uses tests/waiting.py; a sleep that stays (time passing on
    purpose) carries a comment on its line."""
    bare = []
    for path in sorted(TESTS.rglob("*.py")):
        if "vendor" in path.relative_to(TESTS).parts:
            continue
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if (call := SLEEP.search(line)) and "#" not in line[call.end():]:
                bare.append(f"{path.relative_to(TESTS)}:{n}: {line.strip()}")
    assert not bare, "\n".join(bare)
