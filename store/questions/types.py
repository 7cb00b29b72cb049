"""The store's shared answer types: frozen dataclasses the query modules return and the
feeds and the bot render. Each concept is defined here once.

What a map page says (the parser's output) is store.pages.model's; the shapes of one question
only (a follow, a digest, a graph answer) stay beside the query that answers it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PaperRef:
    """A paper an answer names; `url` (its map page) and `arxiv_url` where the answer links it."""

    id: str
    title: str
    year: int | None
    url: str | None = None  # map page
    arxiv_url: str | None = None


@dataclass(frozen=True)
class Direction:
    """A research direction of the map; `papers` and `since` where the answer counts them
    (the feeds: papers placed in it, and when its first paper was first seen)."""

    slug: str
    name: str
    area: str
    breadcrumb: str
    url: str | None
    papers: int = 0
    since: str = ""  # the feeds' (store.questions.feed_queries.directions); "" where the answer does not say


@dataclass(frozen=True)
class NewCiter:
    """A feed entry: a paper seen citing papers of a direction (or one paper), from `first_seen` on."""

    citer: PaperRef
    first_seen: str
    first_event_id: int
    cites: tuple[PaperRef, ...]  # the cited papers (of the direction, or the one paper)


@dataclass(frozen=True)
class AlertCiter:
    """A citing paper as a follow's alert or a digest names it: newly added to a direction
    (or newly citing a tracked paper) by the event `event_id`."""

    id: str
    title: str
    year: int | None
    url: str | None  # map page
    arxiv_url: str
    cited_by: int | None
    event_id: int  # the event that added it
    seen_at: str
    cites: tuple[PaperRef, ...]  # the direction's papers it cites (or the tracked paper)


@dataclass(frozen=True)
class PaperRow:
    """A paper as the bot's lists show it."""

    id: str
    title: str
    year: int | None
    url: str | None  # map page
    arxiv_url: str
    cited_by: int | None  # None: no page of its own, so no stated count
    has_page: bool


@dataclass(frozen=True)
class CitationRow(PaperRow):
    """A paper in a list of citers or references, with when the citation was first seen."""

    first_seen: str = ""
    directions: tuple[str, ...] = ()  # names of its directions (papers with pages only)
