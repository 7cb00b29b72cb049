"""How a paper is read from SQL: the columns every paper query selects and the rows they become.

Shared by the questions (queries, authors, search, autocomplete) and the subscriptions,
so none of them has to import another for these pieces. `named_paper` and `named_listed_paper`
read a `sqlite3.Row` (store.database.rows) by column name.
"""

from __future__ import annotations

import sqlite3

from mapwatch.store.ids import paper_link
from mapwatch.store.questions.types import CitationRow, PaperRow

PAPER_COLS = "p.id, p.title, p.year, p.url, p.cited_by, p.has_page"
# Papers (`p`) by their own date, the newest first, where they are otherwise alike (the citers a
# first import saw at once): the month of a new-style arXiv id (2507.04136: July 2025; arXiv numbers
# a month's papers in order, so the id descending after it), else the day it was first posted,
# else its year (most citers are known from lists, by id, title and year alone).
NEWEST_PAPERS_FIRST = ("CASE WHEN p.id GLOB '[0-9][0-9][0-9][0-9].[0-9][0-9][0-9][0-9]*'"
                       " THEN '20' || substr(p.id, 1, 2) || '-' || substr(p.id, 3, 2)"
                       " ELSE coalesce(p.first_posted, CAST(p.year AS TEXT), '') END DESC, p.id DESC")


def newest_first_by_id(id_sql: str) -> str:
    """NEWEST_PAPERS_FIRST for the paper whose id is the SQL `id_sql` (`c.citing_id`), with no
    join: a new-style id holds its month, so only an older paper's row is read (its date). A
    sort of a prolific person's or a much cited paper's citers then reads the citations' index
    alone, not a random papers row for each citer (tests/unit/store/test_newest_citers.py)."""
    return (f"CASE WHEN {id_sql} GLOB '[0-9][0-9][0-9][0-9].[0-9][0-9][0-9][0-9]*'"
            f" THEN '20' || substr({id_sql}, 1, 2) || '-' || substr({id_sql}, 3, 2)"
            f" ELSE (SELECT coalesce(o.first_posted, CAST(o.year AS TEXT), '') FROM papers o WHERE o.id = {id_sql})"
            f" END DESC, {id_sql} DESC")


def named_paper(r: sqlite3.Row) -> PaperRow:
    """A paper from a row with the `PAPER_COLS` columns (and maybe more), read by name."""
    pid = r["id"]
    return PaperRow(pid, r["title"], r["year"], r["url"], paper_link(pid), r["cited_by"], bool(r["has_page"]))


def named_listed_paper(r: sqlite3.Row, directions: dict[str, tuple[str, ...]]) -> CitationRow:
    """A citing paper from a row with the `PAPER_COLS` columns and `first_seen`, read by name."""
    return seen_paper(r, r["first_seen"], directions)


def seen_paper(r: sqlite3.Row, first_seen: str, directions: dict[str, tuple[str, ...]]) -> CitationRow:
    """A citing (or cited) paper from a row with the `PAPER_COLS` columns, first seen at `first_seen`."""
    base = named_paper(r)
    return CitationRow(**base.__dict__, first_seen=first_seen, directions=directions.get(base.id, ()))

