"""One paper's files, built from the database: its Atom feed, its web page and its cited-by
chart. `publish` writes them to disk (tracked papers, or every paper with `--papers all`)
and the feed server builds them on demand (feeds/serving/ondemand.py): the same function, so the
same bytes (docs/feeds.md, "Feeds and web pages").
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from sqlite_utils import Database

from mapwatch.feeds import build, chart, pages
from mapwatch.store.questions import feed_queries
from mapwatch.store.questions.graph import CountPoint, count_history
from mapwatch.store.questions.types import NewCiter

# Part of every on-demand ETag: bump it when the bytes a paper's files are built into change
# (a new layout of the feed or the page), so readers holding an old ETag get the new bytes.
FORMAT_VERSION = 1


def chart_title(paper_id: str) -> str:
    return f"{paper_id}: cited by, as the map stated it"


@dataclass(frozen=True)
class PaperData:
    """What a paper's feed and page are built from (read once for both)."""

    facts: feed_queries.PaperFacts
    first_seen: str
    citers: list[NewCiter]
    growths: list[feed_queries.CountGrowth]


def paper_data(db: Database, paper_id: str, limit: int) -> PaperData | None:
    """None when the paper does not exist."""
    facts = feed_queries.paper_facts(db, paper_id)
    if facts is None:
        return None
    citers = feed_queries.paper_citers(db, paper_id, limit)
    return PaperData(facts, feed_queries.paper_first_seen(db, paper_id), feed_queries.with_citation_contexts(
        db, paper_id, citers), feed_queries.paper_count_growth(db, paper_id, limit))


def paper_feed(data: PaperData, base_url: str) -> bytes:
    """The paper's Atom feed."""
    return build.paper_feed(data.facts.paper, data.first_seen, data.citers, data.growths, base_url)


def chart_history(db: Database, paper_id: str, today: date | None = None) -> tuple[CountPoint, ...]:
    """The points of the paper's chart (dates no page can claim on `today` left out); fewer
    than two: no chart."""
    return count_history(db, paper_id, today=today)


def paper_chart(history: tuple[CountPoint, ...], paper_id: str) -> bytes | None:
    return chart.count_chart_png(history, title=chart_title(paper_id)) if len(history) >= 2 else None


def paper_page(data: PaperData, base_url: str, chart_points: int, has_page: Callable[[str], bool]) -> bytes:
    """The paper's web page (`chart_points` >= 2: its chart lies next to it)."""
    return pages.paper_page(data.facts, data.citers, data.growths, chart_points, base_url, has_page)


class FeedLookup:
    """`has_page` for the pages: whether a paper gets a page of its own, asked of the
    database one id at a time and remembered (a page links only the papers it shows)."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.known: dict[str, bool] = {}

    def prime(self, paper_ids: set[str]) -> None:
        """Ask about these papers at once (the papers a page is about to link)."""
        todo = {p for p in paper_ids if p not in self.known}
        if todo:
            found = feed_queries.have_feeds(self.db, todo)
            self.known.update((p, p in found) for p in todo)

    def __call__(self, paper_id: str) -> bool:
        found = self.known.get(paper_id)
        if found is None:
            found = self.known[paper_id] = feed_queries.has_feed(self.db, paper_id)
        return found
