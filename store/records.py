"""What a scholarly source says of a paper, as bounded, cleaned records (pure), and where a
citation is known from (`Provenance`).

Every string comes from a source that is not trusted more than a map page: names and titles are
stripped of control characters and clipped, lists are cut to a bound, ids must have the shape
their registry gives them, so nothing a source says can flood the database or a message.

It sits at the store's top, below every room: the sources' readers and savers
(store/scholarly/) make these records and the questions (store/questions/) read ids and names
with them, neither climbing into the other.
A person's ids (ORCID, OpenAlex author) are checked by store/person_ids.py, which the questions
about people use too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from mapwatch.store.one_line import one_line

MAX_AUTHORS = 100  # authors kept per paper (a consortium paper may list thousands)
MAX_NAME_CHARS = 200  # an author's or an institution's name
MAX_INSTITUTIONS = 5  # per author on a paper
MAX_TEXT_CHARS = 1_000  # a comment, a journal reference, a venue's name
MAX_CONTEXTS = 5  # citing sentences kept per citation
MAX_CONTEXT_CHARS = 1_000
MAX_CATEGORIES = 20
MAX_TITLE_CHARS = 1_000  # a citer's title, as map pages bound theirs

# Where a citation is known from: a map page, or only an open source (docs/enrichment.md,
# "Citations the map does not name").
Provenance = Literal["map", "openalex", "s2"]

_OPENALEX_WORK = re.compile(r"^(?:https?://openalex\.org/)?(W\d{1,15})$", re.I)
_OPENALEX_INSTITUTION = re.compile(r"^(?:https?://openalex\.org/)?(I\d{1,15})$", re.I)
_ROR = re.compile(r"^(?:https?://ror\.org/)?(0[a-z0-9]{6}\d{2})$")
_COUNTRY = re.compile(r"^[A-Z]{2}$")
_DOI = re.compile(r"^(?:https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/\S{1,200})$", re.I)
_CATEGORY = re.compile(r"^[A-Za-z-]{1,20}(?:\.[A-Za-z-]{1,20})?$")
_SPACE = re.compile(r"\s+")


def clean(text: object, limit: int = MAX_NAME_CHARS) -> str:
    """`text` as one line of printable characters (controls and format characters such as bidi
    overrides turned into spaces), at most `limit` characters. (Mentions are the senders'
    concern: every message from stored text is sent with no mention allowed.)"""
    return one_line(text, limit)


def _match(pattern: re.Pattern[str], value: object, upper: bool = True) -> str | None:
    m = pattern.match(value.strip()) if isinstance(value, str) else None
    if not m:
        return None
    return m.group(1).upper() if upper else m.group(1).lower()


def openalex_work(value: object) -> str | None:
    return _match(_OPENALEX_WORK, value)


def openalex_institution(value: object) -> str | None:
    return _match(_OPENALEX_INSTITUTION, value)


def ror(value: object) -> str | None:
    return _match(_ROR, value, upper=False)


def country(value: object) -> str | None:
    return value if isinstance(value, str) and _COUNTRY.match(value) else None


def doi(value: object) -> str | None:
    """A DOI in lower case (DOIs are case-insensitive), from its URL or bare form."""
    return _match(_DOI, value, upper=False)


def category(value: object) -> str | None:
    return value if isinstance(value, str) and _CATEGORY.match(value) else None


@dataclass(frozen=True)
class Institution:
    name: str
    id: str | None = None  # OpenAlex institution id (I136199984)
    ror: str | None = None  # 03vek6s52
    country: str | None = None  # ISO 3166-1 alpha-2


@dataclass(frozen=True)
class AuthorRecord:
    """An author of a paper, in the paper's order."""

    name: str
    author_id: str | None = None  # OpenAlex author id
    orcid: str | None = None
    institutions: tuple[Institution, ...] = ()


@dataclass(frozen=True)
class ArxivRecord:
    """arXiv's record of a paper (its API's Atom entry)."""

    paper_id: str
    title: str
    authors: tuple[AuthorRecord, ...]
    primary_category: str | None
    categories: tuple[str, ...]
    published: str | None  # the first version's date-time (ISO)
    updated: str | None  # the latest version's
    doi: str | None
    journal_ref: str | None
    comments: str | None


@dataclass(frozen=True)
class OpenAlexWork:
    """OpenAlex's work for an arXiv paper: its id, authors with ids and institutions, venue."""

    paper_id: str
    work_id: str
    authors: tuple[AuthorRecord, ...]
    venue: str | None
    doi: str | None


@dataclass(frozen=True)
class FoundCiter:
    """A paper a source says cites a map paper: its key, and its title and year as the source
    gives them (a stub until its map page is read; docs/enrichment.md, "Citations the map does not
    name", and "Citers beyond arXiv")."""

    citing_id: str  # its arXiv id, or for a citer beyond arXiv its DOI's or OpenAlex work's key (store/ids.py)
    title: str | None = None
    year: int | None = None
    work: OpenAlexWork | None = None  # OpenAlex's work, when OpenAlex named it (its id; for a citer
    # beyond arXiv also its authors, venue and DOI, all that is known of it)


@dataclass(frozen=True)
class CitationContext:
    """What Semantic Scholar says of one citation: the sentences, intents, influence."""

    citing_id: str
    cited_id: str
    contexts: tuple[str, ...]
    intents: tuple[str, ...]
    is_influential: bool


def authors(items: list[AuthorRecord]) -> tuple[AuthorRecord, ...]:
    """The first MAX_AUTHORS authors with a name."""
    return tuple(a for a in items if a.name)[:MAX_AUTHORS]
