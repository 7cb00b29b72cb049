"""Waiting in tests: on a condition, with a deadline, never for a fixed time.

- `wait_until(predicate, timeout, what="...")` calls `predicate()` every `interval` seconds
  (0.05 by default) and returns its first truthy value as soon as there is one. At the
  deadline it raises `AssertionError("gave up after 15 s waiting for <what>")`, with
  `detail()` (say, the log's tail) and the last ignored exception appended.
- `async_wait_until(...)`, the same on the running event loop; the predicate may return an
  awaitable (`lambda: asyncio.to_thread(pending, db)`). Each look is awaited to its end (a
  thread cannot be cut short): the deadline is checked between looks, so a look that may
  hang bounds itself (a socket timeout).
- `poll(...)` / `async_poll(...)`: the same wait, returning None at the deadline instead of
  failing, for a test that goes on either way (kill a process once it stored 50 pages, or
  at the deadline, whichever comes first).

`ignoring=(OSError,)` counts those exceptions from the predicate as "not yet" (a port not
open yet); any other exception, an `AssertionError` included, ends the wait at once, so a
predicate can assert that the process it waits on is still running.

A fixed sleep stays only where the passing time is what a test is about (nothing may happen
meanwhile, a fake server answering slowly); each says why in a comment on its line
(tests/unit/test_waiting.py checks that)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

T = TypeVar("T")

INTERVAL = 0.05  # seconds between two looks at the condition


def _failure(what: str, timeout: float, last: BaseException | None,
             detail: Callable[[], object] | None) -> AssertionError:
    message = f"gave up after {timeout:g} s waiting for {what}"
    if last is not None:
        message += f" (last: {type(last).__name__}: {last})"
    if detail is not None:
        message += f"\n{detail()}"
    return AssertionError(message)


def poll(predicate: Callable[[], T], timeout: float, *, interval: float = INTERVAL,
         ignoring: tuple[type[BaseException], ...] = ()) -> T | None:
    """`predicate()`'s first truthy value within `timeout` seconds, or None."""
    value, _ = _poll(predicate, timeout, interval, ignoring)
    return value


def _poll(predicate: Callable[[], T], timeout: float, interval: float,
          ignoring: tuple[type[BaseException], ...]) -> tuple[T | None, BaseException | None]:
    deadline = time.monotonic() + timeout
    last: BaseException | None = None
    while True:
        try:
            value = predicate()
        except ignoring as e:
            last = e
        else:
            if value:
                return value, None
        left = deadline - time.monotonic()
        if left <= 0:
            return None, last
        time.sleep(min(interval, left))  # the poll interval


def wait_until(predicate: Callable[[], T], timeout: float, *, what: str, interval: float = INTERVAL,
               ignoring: tuple[type[BaseException], ...] = (), detail: Callable[[], object] | None = None) -> T:
    """`predicate()`'s first truthy value; AssertionError naming `what` after `timeout` seconds."""
    value, last = _poll(predicate, timeout, interval, ignoring)
    if not value:
        raise _failure(what, timeout, last, detail)
    return value


async def async_poll(predicate: Callable[[], T | Awaitable[T]], timeout: float, *, interval: float = INTERVAL,
                     ignoring: tuple[type[BaseException], ...] = ()) -> T | None:
    """`predicate()`'s first truthy value (awaited if need be) within `timeout` seconds, or None."""
    value, _ = await _async_poll(predicate, timeout, interval, ignoring)
    return value


async def _async_poll(predicate: Callable[[], T | Awaitable[T]], timeout: float, interval: float,
                      ignoring: tuple[type[BaseException], ...]) -> tuple[T | None, BaseException | None]:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    last: BaseException | None = None
    while True:
        try:
            got = predicate()
            if inspect.isawaitable(got):
                got = await got  # to its end: a thread cannot be cut short anyway
        except ignoring as e:
            last = e
        else:
            if got:
                return cast(T, got), None
        left = deadline - loop.time()
        if left <= 0:
            return None, last
        await asyncio.sleep(min(interval, left))  # the poll interval


async def async_wait_until(predicate: Callable[[], T | Awaitable[T]], timeout: float, *, what: str,
                           interval: float = INTERVAL, ignoring: tuple[type[BaseException], ...] = (),
                           detail: Callable[[], object] | None = None) -> T:
    """`predicate()`'s first truthy value (awaited if need be); AssertionError naming `what`
    after `timeout` seconds."""
    value, last = await _async_poll(predicate, timeout, interval, ignoring)
    if not value:
        raise _failure(what, timeout, last, detail)
    return value
