"""What a map page says, as frozen dataclasses: the parser's output and the store's input."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class ListedPaper:
    """One item of a "Builds on" or "Built on by" list."""

    id: str
    title: str
    year: int | None
    position: int  # 1-based, in the page's order (most cited first)
    url: str


@dataclass(frozen=True)
class PaperList:
    """A list as the page states it: the first `shown` of `total` papers."""

    shown: int
    total: int
    items: tuple[ListedPaper, ...]


@dataclass(frozen=True)
class Placement:
    """One line of "Placed in": a breadcrumb ending in a linked direction."""

    breadcrumb: str  # as written, the link replaced by the direction's name
    area: str
    direction: str
    slug: str  # the link's path, e.g. "lr/reinforcement-learning-for-reasoning"
    url: str


@dataclass(frozen=True)
class MapPage:
    id: str
    title: str
    arxiv_url: str | None
    map_url: str | None
    cited_by: int | None
    data_through: date | None
    direction: str | None  # "Placed in <direction>, one of K directions in <area>"
    direction_count: int | None
    area: str | None
    refs_in_map: int | None
    refs_total: int | None
    first_posted: date | None
    placements: tuple[Placement, ...]
    builds_on: PaperList | None  # None: the page has no such section
    built_on_by: PaperList | None
    abstract: str | None
