"""The store's shared answer types: frozen dataclasses the query modules return and the
feeds and the bot render. Each concept is defined here once.

What a map page says (the parser's output) is store.pages.model's; the shapes of one question
only (a follow, a digest, a graph answer) stay beside the query that answers it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from mapwatch.store.ids import is_outside_key
from mapwatch.store.records import Provenance as Provenance  # (re-exported: the answers carry it)

NewsOrder = Literal["event", "cited"]  # new citers in event order, or most cited first
# Where a citation is known from (store/records.py `Provenance`), with the name a reader is shown.
PROVENANCE_NAMES: dict[str, str] = {"map": "the map", "openalex": "OpenAlex", "s2": "Semantic Scholar"}


def from_sources(provenances: Iterable[str]) -> Provenance:
    """A citer's provenance from its citations': `map` if a map page names any of them."""
    seen = set(provenances)
    if "map" in seen or not seen:
        return "map"
    return "s2" if "s2" in seen else "openalex"


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
    byline: Byline | None = None  # the citer's authors, when a source named them
    self_cites: tuple[str, ...] = ()  # ids of the cited papers it shares an author with
    # Known at the first read of what it cites (docs/feeds.md, "What new means"), and the
    # citing paper's own date (ISO, "First posted on arXiv" of its page) where known.
    at_first_read: bool = False
    posted: str | None = None
    provenance: Provenance = "map"  # `map` unless only an open source names its citations
    context: CitingContext | None = None  # on a paper's page: what Semantic Scholar says of the citation

    @property
    def self_citation(self) -> bool:
        return bool(self.self_cites)

    @property
    def dated(self) -> str:
        """The instant its entry carries: when it was first seen, or for a citer known at the
        first read, the day the citing paper was first posted where that is known."""
        if self.at_first_read and self.posted:
            return f"{self.posted[:10]}T00:00:00+00:00"
        return self.first_seen


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
    byline: Byline | None = None  # its authors, when a source named them
    self_cites: tuple[str, ...] = ()  # ids of the cited papers it shares an author with
    provenance: Provenance = "map"  # `map` unless only an open source names its citations listed
    context: CitingContext | None = None  # what Semantic Scholar says of its citation of the first of `cites`

    @property
    def self_citation(self) -> bool:
        return bool(self.self_cites)

    @property
    def only_self(self) -> bool:
        """Every paper it is listed for citing shares an author with it (`self:hide` leaves it out)."""
        return bool(self.cites) and {r.id for r in self.cites} <= set(self.self_cites)


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
    byline: Byline | None = None  # its authors, when a source named them (store/questions/authors.py)


@dataclass(frozen=True)
class CitationRow(PaperRow):
    """A paper in a list of citers or references, with when the citation was first seen."""

    first_seen: str = ""
    directions: tuple[str, ...] = ()  # names of its directions (papers with pages only)
    self_citation: bool = False  # it and the paper the list is about share an author
    context: CitingContext | None = None  # what Semantic Scholar says of the citation (alerts only)
    provenance: Provenance = "map"  # where the citation is known from (alerts)


# Semantic Scholar's citation intents as words ("{whose}": "your" in an alert, "its" in a list).
INTENT_WORDS = {"methodology": "uses {whose} method", "background": "background", "result": "compares results"}


def intent_words(intents: Sequence[str], whose: str = "your") -> list[str]:
    """"uses your method", "background", "compares results": the known intents, in that order."""
    return [words.format(whose=whose) for key, words in INTENT_WORDS.items() if key in intents]


@dataclass(frozen=True)
class CitingContext:
    """The sentences in which a citing paper cites another, and whether Semantic Scholar counts
    the citation as influential (table citation_contexts)."""

    sentences: tuple[str, ...]
    intents: tuple[str, ...] = ()
    influential: bool = False


@dataclass(frozen=True)
class Author:
    """An author of a paper, as the open sources name them (store/scholarly)."""

    name: str
    author_id: str | None = None  # OpenAlex author id
    orcid: str | None = None
    institutions: tuple[str, ...] = ()  # names


@dataclass(frozen=True)
class Byline:
    """A paper's authors in order, and what the sources add: where it was published."""

    paper_id: str
    authors: tuple[Author, ...]
    venue: str | None = None
    journal_ref: str | None = None

    def outside_venue(self) -> str | None:
        """Where a citer beyond arXiv was published (its venue, else its journal reference): it is
        named with it, its DOI saying less (docs/enrichment.md, "Citers beyond arXiv"); None for
        an arXiv paper, which its id names."""
        return (self.venue or self.journal_ref) if is_outside_key(self.paper_id) else None

    def short(self, limit: int = 3) -> str:
        """"A. Vaswani, N. Shazeer, N. Parmar et al. (Google Brain)": the first `limit` names,
        "et al." when there are more, and the first author's first institution (another's would
        read as the first author's)."""
        names = [a.name for a in self.authors[:limit]]
        text = ", ".join(names) + (" et al." if len(self.authors) > limit else "")
        first = self.authors[0].institutions[:1] if self.authors else ()
        return f"{text} ({first[0]})" if first else text
