"""The one progress line on a terminal, for long ingests and crawls: pages, pages/s, what is left."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO


class CrawlProgress:
    """`progress(done, total)` for `store.database.ingest.ingest_paths` and
    `store.sources.refresh.refresh`: a bar on a terminal, redrawn at most every `every` seconds;
    silent elsewhere and for short runs. `total` may grow while the crawl discovers pages."""

    def __init__(self, stream: TextIO | None = None, *, min_total: int = 200, every: float = 0.5,
                 now: Callable[[], float] = time.monotonic, unit: str = "pages") -> None:
        self.stream = stream = stream if stream is not None else sys.stderr
        self.enabled = stream.isatty()
        self.min_total = min_total
        self.every = every
        self.now = now
        self.started: float | None = None
        self.last_draw = float("-inf")
        self.drawn = False
        self.unit = unit

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        t = self.now()
        if self.started is None:
            self.started = t
        if total < self.min_total or (t - self.last_draw < self.every and done != total):
            return
        self.last_draw = t
        self.stream.write("\r" + render(done, total, t - self.started, self.unit))
        self.drawn = True
        self.stream.flush()

    def close(self) -> None:
        """End the line (before the summary is printed)."""
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()
            self.drawn = False


def render(done: int, total: int, seconds: float, unit: str = "pages") -> str:
    """`[#####-----] 1,234/5,000 pages, 87.3 pages/s, 3,766 left (~43 s)` (or papers: `unit`)"""
    total = max(total, done, 1)
    filled = done * 25 // total
    rate = done / seconds if seconds > 0 else 0.0
    left = total - done
    eta = f" (~{left / rate:,.0f} s)" if rate > 0 and left else ""
    return f"[{'#' * filled:<25}] {done:,}/{total:,} {unit}, {rate:,.1f} {unit}/s, {left:,} left{eta}"
