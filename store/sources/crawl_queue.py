"""One tick's work, in order: a priority queue of pages and direction pages, and the page budget.

Taken lowest class first: tracked papers, direction pages (followed ones first), papers found
this tick that the database does not know (newest ids first), pages the sitemaps say changed,
the pages a search for a tracked paper's unexplained new citers reads (`SEARCH`, queued only
when the classes before it are done: `CiterSearch`), the unseen papers' share, the pages due
for a re-check; then the other unseen papers (newest first), which a search for a tracked
paper's unlisted citers (`search_credit`) moves ahead of the re-checks; last, the pages the
sitemaps say changed since their last check whose "Built on by" list is full (`SITEMAP_FULL`:
a list of the 30 most cited cannot name a new citer, only its count can move, so a storm of
re-ordered hub lists waits behind every page that can reveal one). Each page taken, a
direction page too, spends one of the budget (a site that answers with a thousand direction
pages cannot keep the tracked papers from being read). A quiet tick (nothing new so far: no
paper new to the database found, no sitemap saying a page changed) takes at most QUIET_SHARE of
the budget in re-checks, and stops them once its routine requests (robots.txt, the sitemaps,
tracked papers, direction pages) and re-checks reach QUIET_LIMIT of it (its audits are always
asked); the rest wait until the tick sees something new (then they go on, since where one new
paper appeared others may have) or for the next tick. A re-checked page in a new version that
names no new paper (its list re-ordered, its counts moved, its new citers already stored) does
not end the quiet: else the changes a quiet tick's re-checks are there to find would let them
take the whole budget. Used by store.sources.http_source, on its event loop (docs/live-map.md).
"""

from __future__ import annotations

import asyncio
import heapq
from collections import deque

from mapwatch.store.sources.crawl_schedule import RECHECK_SHARE

TRACKED, FOLLOWED, DIRECTION, NEW, SITEMAP_CHANGED, SEARCH, UNSEEN, DUE, SITEMAP_FULL = range(9)
MAX_SEARCH = 50  # unseen papers a tracked paper's unlisted new citers move ahead, per tick
# Re-checks a quiet tick takes, a share of the budget: what the re-check periods are planned for
# (crawl_schedule.RECHECK_SHARE), so with the direction pages, robots.txt and the sitemaps a quiet
# tick stays within 10% of its budget.
QUIET_SHARE = RECHECK_SHARE
# ... and a quiet tick's requests in all (robots.txt, the sitemaps, tracked papers, direction pages
# and those re-checks), a share of the budget: the re-checks stop there too.
QUIET_LIMIT = 0.10
RECHECK = 1  # the key (RECHECK, 0) of a DUE page checked before on the host: counted by QUIET_SHARE


class CrawlQueue:
    def __init__(self, budget: int) -> None:
        self.budget = budget  # pages that may still be taken
        self.heap: list[tuple[int, tuple[int, int], int, str, str]] = []
        self.unseen_rest: deque[str] = deque()  # unseen papers past their share, newest first
        self.search_credit = 0  # unseen papers to take before the due re-checks
        self.seq = 0
        self.wake = asyncio.Event()  # set when something is queued (or a worker finishes)
        self.taken_class = DUE  # the class of what `take` gave last
        self.quiet_share = max(1, round(QUIET_SHARE * budget))  # re-checks while nothing changed
        self.quiet_limit = max(1, round(QUIET_LIMIT * budget))  # requests in all while nothing changed
        self.rechecks = 0  # re-checks taken while nothing changed
        self.routine = 0  # tracked papers and direction pages taken (a quiet tick's fixed work)
        self.spent_before = 0  # requests sent before the queue's (robots.txt, sitemaps): `spend_before`
        self.floor = 1  # re-checks a quiet tick always takes (the tick's audits: `keep_for_audits`)
        self.stirred = False  # something changed this tick: re-checks are no longer held back

    def keep_for_audits(self, audits: int) -> None:
        """A quiet tick takes at least this many re-checks (queued first): its audits."""
        self.floor = max(1, audits)

    def spend_before(self, requests: int) -> None:
        """The requests the tick sent before taking from the queue (robots.txt, the sitemaps):
        they count towards QUIET_LIMIT."""
        self.spent_before = requests

    def stir(self) -> None:
        """Something changed this tick (a new paper, a changed page): the re-checks held back by
        QUIET_SHARE may go on."""
        if not self.stirred:
            self.stirred = True
            self.wake.set()

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
        """The next (kind, what) while the budget lasts."""
        if self.budget <= 0:
            return None
        if self._unseen_next():
            self.search_credit = max(0, self.search_credit - 1)
            self.budget -= 1
            self.taken_class = UNSEEN
            return "page", self.unseen_rest.popleft()
        if not self.heap or self._held():
            return None  # (held back: a quiet tick, see QUIET_SHARE)
        if self._capped():
            self.rechecks += 1
        self.taken_class, _k, _s, kind, what = heapq.heappop(self.heap)
        if self.taken_class in (TRACKED, FOLLOWED, DIRECTION):
            self.routine += 1
        self.budget -= 1
        return kind, what

    def _capped(self) -> bool:
        """Whether the next item is a re-check a quiet tick counts (`recheck`, see `push`)."""
        return bool(self.heap) and self.heap[0][0] == DUE and self.heap[0][1][0] == RECHECK and not self.stirred

    def _held(self) -> bool:
        """Whether the next item is a re-check held back: QUIET_SHARE of the budget spent on
        re-checks, or QUIET_LIMIT of it on requests in all, while nothing changed."""
        if not self._capped() or self.rechecks < self.floor:
            return False
        return self.rechecks >= self.quiet_share or \
            self.spent_before + self.routine + self.rechecks >= self.quiet_limit

    def _unseen_next(self) -> bool:
        """Whether the next page comes from the unseen papers past their share: nothing else is
        queued, or only re-checks are and a search moves those papers ahead of them (or they are
        held back in a quiet tick)."""
        top = self.heap[0][0] if self.heap else None
        return bool(self.unseen_rest) and (top is None or top > DUE or (
            top == DUE and (self.search_credit > 0 or self._held())))

    def next_class(self) -> int | None:
        """The class of what `take` would give next (None: nothing queued, or held back)."""
        if self._unseen_next():
            return UNSEEN
        return self.heap[0][0] if self.heap and not self._held() else None

    def drop(self, cls: int) -> int:
        """Take every page of class `cls` out of the queue (not fetched); returns how many."""
        kept = [item for item in self.heap if item[0] != cls]
        dropped = len(self.heap) - len(kept)
        if dropped:
            heapq.heapify(kept)
            self.heap = kept
        return dropped

    def pages_left(self) -> int:
        """Pages queued but not taken (left for a later tick)."""
        return sum(1 for *_x, kind, _w in self.heap if kind == "page") + len(self.unseen_rest)

    def drain_pages(self) -> list[str]:
        """Every page queued, in the order they would be taken (the queue is left empty)."""
        pages = [what for *_x, kind, what in sorted(self.heap) if kind == "page"] + list(self.unseen_rest)
        self.heap.clear()
        self.unseen_rest.clear()
        return pages


class CiterSearch:
    """A tracked paper whose count grew past what its full "Built on by" list names has new
    citers named nowhere on its page. A new page read this tick that builds on it explains one
    each; what is still unexplained once every class before SEARCH is read (and none of those
    pages is still being fetched) sends the crawl to the pages with room in their lists, once a
    tick, and the search is called off as soon as everything is explained."""

    def __init__(self, queue: CrawlQueue) -> None:
        self.queue = queue
        self.unexplained: dict[str, int] = {}  # tracked paper -> new citers not named yet
        self.named_early: dict[str, int] = {}  # paper -> new pages that named it before its growth was seen
        self.started = False
        self.early = 0  # pages being fetched from the classes before SEARCH

    def grew(self, paper_id: str, gained: int) -> None:
        """A tracked paper gained citers its page does not name (new pages read earlier in the
        tick that build on it explain as many)."""
        early = min(gained, self.named_early.pop(paper_id, 0))
        if gained > early:
            self.unexplained[paper_id] = self.unexplained.get(paper_id, 0) + gained - early

    def named(self, builds_on: list[str]) -> None:
        """A page new to the database builds on these papers."""
        for pid in builds_on:
            if self.unexplained.get(pid):
                self.unexplained[pid] -= 1
            else:  # (its tracked paper's page may be read later in the tick)
                self.named_early[pid] = self.named_early.get(pid, 0) + 1
        if self.unexplained and not any(self.unexplained.values()):
            self.unexplained.clear()
            self.queue.drop(SEARCH)

    def taken(self, kind: str) -> bool:
        """Call after each `take`: whether the page taken may name a new citer (its class is
        before SEARCH); pass that to `done` when it is handled."""
        early = kind == "page" and self.queue.taken_class < SEARCH
        self.early += early
        return early

    def done(self, early: bool) -> None:
        self.early -= early

    def due(self) -> bool:
        """Whether the search starts now (then it is started: once a tick)."""
        if self.started or not self.unexplained or self.early:
            return False
        nxt = self.queue.next_class()
        if nxt is not None and nxt < SEARCH:
            return False
        self.started = True
        return True
