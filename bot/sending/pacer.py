"""Pacing deliveries: a few messages per channel per tick, and a global pace across channels.

Discord allows 50 requests per second per bot in total (and less per channel); a refresh
that brings news to hundreds of channels must not burst past that. `Pacer` is a token
bucket shared by every delivery (alerts, follows, digests): `await pacer.wait()` before
each post. `per_channel` keeps at most a few messages per channel in one tick; the rest
stay pending (their cursors do not move) and go out on the next tick.

No discord import; the clock and sleep are injectable for tests.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable
from typing import TypeVar

T = TypeVar("T")

DEFAULT_RATE = 20.0  # posts per second across all channels: well under Discord's 50 requests/s
DEFAULT_BURST = 5
PER_CHANNEL_PER_TICK = 3


class Pacer:
    """A token bucket: on average at most `rate` acquisitions per second, `burst` at once."""

    def __init__(self, rate: float = DEFAULT_RATE, burst: int = DEFAULT_BURST, *,
                 monotonic: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("rate must be positive and burst at least 1")
        self.rate = rate
        self.burst = burst
        self._monotonic = monotonic
        self._sleep = sleep
        self._tokens = float(burst)
        self._last = monotonic()
        self._lock = asyncio.Lock()

    def _refill(self) -> None:
        now = self._monotonic()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.rate)
        self._last = now

    async def wait(self) -> None:
        """Return when one more post may go out."""
        async with self._lock:
            self._refill()
            while self._tokens < 1.0 - 1e-9:  # (tolerance: float rounding must not loop forever)
                await self._sleep((1.0 - self._tokens) / self.rate)
                self._refill()
            self._tokens = max(0.0, self._tokens - 1.0)


def per_channel(items: Iterable[T], key: Callable[[T], Hashable],
                limit: int = PER_CHANNEL_PER_TICK) -> tuple[list[T], list[T]]:
    """Split `items` (in order) into those to send this tick, at most `limit` per channel
    key, and those left for the next tick."""
    counts: dict[Hashable, int] = {}
    now: list[T] = []
    later: list[T] = []
    for item in items:
        k = key(item)
        if counts.get(k, 0) < limit:
            counts[k] = counts.get(k, 0) + 1
            now.append(item)
        else:
            later.append(item)
    return now, later
