"""How a paper is read from SQL: the columns every paper query selects and the rows they become.

Shared by the questions (queries, authors, search, autocomplete) and the subscriptions,
so none of them has to import another for these pieces. `named_paper` and `named_listed_paper`
read a `sqlite3.Row` (store.database.rows) by column name.
"""

from __future__ import annotations

import re
import sqlite3

from mapwatch.store.database.migrations._paper_keys import OUTSIDE_FIRST
from mapwatch.store.ids import paper_link
from mapwatch.store.questions.types import CitationRow, PaperRow

PAPER_COLS = "p.id, p.title, p.year, p.url, p.cited_by, p.has_page"
# A GLOB pattern: a new-style arXiv id.
NEW_STYLE_ID = "'[0-9][0-9][0-9][0-9].[0-9][0-9][0-9][0-9]*'"
# The citers whose key is not their new-style arXiv id (old-style ids, citers beyond arXiv, an id
# written otherwise): the index citations_cited_seen_old (migrations 0046, 0049) holds their
# citations under this very text; change one, change both.
OUTSIDE_CITER = f"c.citing_key >= {OUTSIDE_FIRST}"
# The citations with their papers' ids and keys and the first-seen time as a number (`c`): for
# the reads that filter or sort on the citations' index (the view `citations` gives the time as
# text). Flattened by SQLite into the query that reads it: a paper's id is looked up once, its
# citers' ids on the keys' INTEGER PRIMARY KEY.
KEYED_CITATIONS = ("(SELECT kc.id AS citing_id, kd.id AS cited_id, e.citing_key, kd.key AS cited_key,"
                   " e.first_seen_unix, e.provenance FROM citation_edges e JOIN paper_keys kc ON kc.key = e.citing_key"
                   " JOIN paper_keys kd ON kd.key = e.cited_key)")
# The same without the citer's id, which a read of many citers then sorts on the keys alone.
# Both give the cited paper's key from paper_keys: `c.cited_key IN (...)` reads those keys' rows
# (on the INTEGER PRIMARY KEY), then each one's citers on the index.
CITED_KEYED_CITATIONS = ("(SELECT kd.id AS cited_id, e.citing_key, kd.key AS cited_key, e.first_seen_unix"
                         " FROM citation_edges e JOIN paper_keys kd ON kd.key = e.cited_key)")
_NEW_STYLE = re.compile(r"[0-9]{4}\.[0-9]{4}")  # the same, as a regex (match(): a GLOB's prefix and *)


def citers_count_sql(id_sql: str) -> str:
    """SQL of how many papers cite the paper whose id is the SQL `id_sql`: its key looked up once,
    its entries of the citations' index counted (the view `citations` would also look up each
    citer's id)."""
    return (f"(SELECT count(*) FROM citation_edges n WHERE n.cited_key ="
            f" (SELECT k.key FROM paper_keys k WHERE k.id = {id_sql}))")


def _newest(id_sql: str, dated: str) -> str:
    """The order newest first of the papers with the id `id_sql`: the month of a new-style id,
    else `dated` (its first-posted day, else its year), then the id."""
    month = f"'20' || substr({id_sql}, 1, 2) || '-' || substr({id_sql}, 3, 2)"
    return f"CASE WHEN {id_sql} GLOB {NEW_STYLE_ID} THEN {month} ELSE {dated} END DESC, {id_sql} DESC"


def _posted(alias: str) -> str:
    return f"coalesce({alias}.first_posted, CAST({alias}.year AS TEXT), '')"


def newest_papers_first(alias: str) -> str:
    """NEWEST_PAPERS_FIRST of the papers rows named `alias` (their id, first_posted and year)."""
    return _newest(f"{alias}.id", _posted(alias))


# Papers (`p`) by their own date, the newest first, where they are otherwise alike (the citers a
# first import saw at once): the month of a new-style arXiv id (2507.04136: July 2025; arXiv numbers
# a month's papers in order, so the id descending after it), else the day it was first posted,
# else its year (most citers are known from lists, by id, title and year alone).
NEWEST_PAPERS_FIRST = newest_papers_first("p")


def newest_first_by_id(id_sql: str) -> str:
    """NEWEST_PAPERS_FIRST for the paper whose id is the SQL `id_sql` (`c.citing_id`), with no
    join: a new-style id holds its month, so only an older paper's row is read (its date). A
    sort of a prolific person's or a much cited paper's citers then reads the citations' index
    alone, not a random papers row for each citer (tests/unit/store/test_newest_citers.py)."""
    return _newest(id_sql, f"(SELECT {_posted('o')} FROM papers o WHERE o.id = {id_sql})")


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


def newest_citations_sql(where: str, cols: str, *, reads_citer: bool = False) -> str:
    """SQL of a page of the citations `c` that `where` picks, the newest first: first seen, then
    the citer's own date (`newest_first_by_id`), then the cited paper's id; the columns `cols` of
    `merged` (citing_id, first_seen, cited_id); named parameters :lim, :off and :n (= lim + off).
    `where` names `c.cited_id`, and `c.citing_id` only with `reads_citer`.

    A new-style id's date is its month, so among new-style citers that order is the citing id's,
    and their key's (a column of the citations index, in the same order: migration 0049): that
    part is sorted (or, for one cited paper, walked on the index) without computing a date, or
    reading an id, for every row. The others (old-style ids, citers beyond arXiv: few) are
    sorted by their dates, read from the partial index of those citers alone
    (citations_cited_seen_old), not by testing every citer's id. Each part's first :n are
    merged, and only their citers' ids read."""
    part = ("SELECT c.citing_key, c.first_seen_unix, c.cited_id FROM {src} c WHERE ({where}) AND {cond}"
            " ORDER BY c.first_seen_unix DESC, {order}, c.cited_id LIMIT :n")
    new = part.format(src=KEYED_CITATIONS if reads_citer else CITED_KEYED_CITATIONS, where=where,
                      cond=f"c.citing_key < {OUTSIDE_FIRST}", order="c.citing_key DESC")
    old = part.format(src=KEYED_CITATIONS, where=where, cond=OUTSIDE_CITER, order=newest_first_by_id("c.citing_id"))
    merged = (f"SELECT k.id AS citing_id, {seen_text('parts.first_seen_unix')} AS first_seen, parts.first_seen_unix,"
              f" parts.cited_id FROM (SELECT * FROM ({new}) UNION ALL SELECT * FROM ({old})) AS parts"
              " JOIN paper_keys k ON k.key = parts.citing_key")
    return (f"SELECT {cols} FROM ({merged}) AS merged"
            f" ORDER BY merged.first_seen_unix DESC, {newest_first_by_id('merged.citing_id')}, merged.cited_id"
            " LIMIT :lim OFFSET :off")


def seen_text(column: str) -> str:
    """SQL of a time in Unix seconds (`citation_edges.first_seen_unix`) as the database's
    timestamps are written (store/clock.py's `iso`): what the view `citations` shows."""
    return f"strftime('%Y-%m-%dT%H:%M:%S+00:00', {column}, 'unixepoch')"


def seen_seconds(text: str) -> str:
    """SQL of a stored timestamp or a day (YYYY-MM-DD: its midnight, UTC) in Unix seconds, to
    compare with `citation_edges.first_seen_unix` on its index."""
    return f"CAST(strftime('%s', {text}) AS INTEGER)"


def newest_papers_sql(ids: list[str], limit: int) -> tuple[str, list[str | int]]:
    """SQL and parameters of the `limit` newest (NEWEST_PAPERS_FIRST) of the papers `ids`, each
    with PAPER_COLS. A new-style id's date is its month, so of those only the `limit` greatest
    ids are read; the others' rows (old-style ids, beyond arXiv: few) are read to be dated.
    A prolific person's card reads a dozen papers rows, not one for each of their papers."""
    new = [i for i in ids if _NEW_STYLE.match(i)]
    old = [i for i in ids if not _NEW_STYLE.match(i)]
    cols = f"{PAPER_COLS}, p.first_posted"
    parts: list[str] = []
    params: list[str | int] = []
    if new:
        parts.append(f"SELECT * FROM (SELECT {cols} FROM papers p WHERE p.id IN ({','.join('?' * len(new))})"
                     " ORDER BY p.id DESC LIMIT ?)")
        params += [*new, limit]
    if old:
        parts.append(f"SELECT {cols} FROM papers p WHERE p.id IN ({','.join('?' * len(old))})")
        params += old
    if not parts:
        parts.append(f"SELECT {cols} FROM papers p WHERE 0")
    return (f"SELECT * FROM ({' UNION ALL '.join(parts)}) AS merged"
            f" ORDER BY {newest_papers_first('merged')} LIMIT ?", [*params, limit])
