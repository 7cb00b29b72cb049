"""One tick's work, in order: a priority queue of pages and direction pages, and the page budget.

Taken lowest class first: direction pages (followed ones first), tracked papers, papers found
this tick that the database does not know (newest ids first), pages the sitemaps say changed,
the unseen papers' share, the pages due for a re-check; then the other unseen papers (newest
first), which a search for a tracked paper's unlisted citers (`search_credit`) moves ahead of
the re-checks. Direction pages are taken whatever the budget; each page taken spends one.
Used by store.sources.http_source, on its event loop (README, "Following the live map over HTTP").
"""

from __future__ import annotations

import asyncio
import heapq
from collections import deque

FOLLOWED, DIRECTION, TRACKED, NEW, SITEMAP_CHANGED, UNSEEN, DUE = range(7)
MAX_SEARCH = 50  # unseen papers a tracked paper's unlisted new citers move ahead, per tick


class CrawlQueue:
    def __init__(self, budget: int) -> None:
        self.budget = budget  # pages that may still be taken
        self.heap: list[tuple[int, tuple[int, int], int, str, str]] = []
        self.unseen_rest: deque[str] = deque()  # unseen papers past their share, newest first
        self.search_credit = 0  # unseen papers to take before the due re-checks
        self.seq = 0
        self.wake = asyncio.Event()  # set when something is queued (or a worker finishes)

    def push(self, cls: int, kind: str, what: str, key: tuple[int, int] = (0, 0)) -> None:
        """Queue a "page" (a paper id) or a "direction" (a URL) in class `cls`; `key` orders
        a class (then the order of pushing)."""
        self.seq += 1
        heapq.heappush(self.heap, (cls, key, self.seq, kind, what))
        self.wake.set()

    def keep_unseen(self, paper_id: str) -> None:
        self.unseen_rest.append(paper_id)

    def search(self, gained: int) -> None:
        """A tracked paper gained citers its page does not name: move newest unseen papers
        ahead of the re-checks (4 per citer, at most MAX_SEARCH in the tick)."""
        self.search_credit = min(MAX_SEARCH, self.search_credit + 4 * gained)

    def take(self) -> tuple[str, str] | None:
        """The next (kind, what): direction pages whatever the budget, pages while it lasts."""
        if self.heap and self.heap[0][0] <= DIRECTION:
            _c, _k, _s, kind, what = heapq.heappop(self.heap)
            return kind, what
        if self.budget <= 0:
            return None
        top = self.heap[0][0] if self.heap else None
        if self.unseen_rest and (top is None or (top >= DUE and self.search_credit > 0)):
            self.search_credit = max(0, self.search_credit - 1)
            self.budget -= 1
            return "page", self.unseen_rest.popleft()
        if top is None:
            return None
        _c, _k, _s, kind, what = heapq.heappop(self.heap)
        self.budget -= 1
        return kind, what

    def pages_left(self) -> int:
        """Pages queued but not taken (left for a later tick)."""
        return sum(1 for *_x, kind, _w in self.heap if kind == "page") + len(self.unseen_rest)

    def drain_pages(self) -> list[str]:
        """Every page queued, in the order they would be taken (the queue is left empty)."""
        pages = [what for *_x, kind, what in sorted(self.heap) if kind == "page"] + list(self.unseen_rest)
        self.heap.clear()
        self.unseen_rest.clear()
        return pages
