"""How a paper is read from SQL: the columns every paper query selects and the rows they become.

Shared by the questions (queries, authors, search, autocomplete) and the subscriptions,
so none of them has to import another for these three pieces.
"""

from __future__ import annotations

from typing import Any

from mapwatch.store.ids import arxiv_url
from mapwatch.store.questions.types import CitationRow, PaperRow

PAPER_COLS = "p.id, p.title, p.year, p.url, p.cited_by, p.has_page"


def paper_row(r: tuple[Any, ...]) -> PaperRow:
    """A paper from the first six columns of a `PAPER_COLS` row."""
    pid, title, year, url, cited_by, has_page = r[:6]
    return PaperRow(pid, title, year, url, arxiv_url(pid), cited_by, bool(has_page))


def listed_paper(r: tuple[Any, ...], directions: dict[str, tuple[str, ...]]) -> CitationRow:
    """A citing paper from a `PAPER_COLS` row followed by its first-seen time."""
    base = paper_row(r)
    return CitationRow(**base.__dict__, first_seen=r[6], directions=directions.get(base.id, ()))
