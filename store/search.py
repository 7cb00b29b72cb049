"""/search: full-text search over titles and abstracts, with bounded work per query.

FTS5's bm25 reads the whole index entry of every word it ranks by, to count the papers
holding it: for a word in most of a 1,000,000-paper map that alone costs tens of
milliseconds, however few papers are ranked. So (README, "/search"):

- each word's number of matching papers is counted up to WORD_SAMPLE, or estimated from
  how far back in storage order its WORD_SAMPLE newest matches reach;
- the candidates are the newest RANK_CANDIDATES papers matching every word (all of them
  when there are no more);
- when the words' counts add up to at most BM25_BUDGET, the candidates are ranked by bm25
  (the same scores as an unbounded `ORDER BY rank`: with at most RANK_CANDIDATES matches
  the order is exactly the unbounded one);
- otherwise (the query has very common words) those with every word in the title come
  first, then the most cited.

The total is counted up to SEARCH_COUNT_CAP ("2,000 or more").
"""

from __future__ import annotations

from mapwatch.store.errors import BadOption
from mapwatch.store.fts_text import fts_query, query_words, quote
from mapwatch.store.queries import PAPER_COLS, PaperPage, check_page, directions_of, listed_paper
from sqlite_utils import Database

SEARCH_COUNT_CAP = 2000   # matches counted ("2,000 or more")
RANK_CANDIDATES = 300     # papers ranked at most (the newest matches)
WORD_SAMPLE = 300         # matches of one word read to count or estimate its matches
BM25_BUDGET = 60_000      # index entries bm25 may read to weigh the words (about 5 ms)


def _count_upto(db: Database, match: str, cap: int) -> int:
    return int(db.conn.execute("SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?)",
                               (match, cap + 1)).fetchone()[0])


def _newest_matches(db: Database, match: str, n: int) -> list[int]:
    return [r for (r,) in db.conn.execute(
        "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid DESC LIMIT ?", (match, n))]


def word_matches(db: Database, word: str, top_rowid: int) -> int:
    """How many papers hold `word`: exact up to WORD_SAMPLE, else estimated from the share
    of storage order its WORD_SAMPLE newest matches span."""
    newest = _newest_matches(db, quote(word), WORD_SAMPLE + 1)
    if len(newest) <= WORD_SAMPLE:
        return len(newest)
    return WORD_SAMPLE * top_rowid // max(1, top_rowid - newest[WORD_SAMPLE - 1] + 1)


def ranked_rowids(db: Database, text: str) -> tuple[list[int], int]:
    """The rowids of the papers matching every word of `text`, best first (at most
    RANK_CANDIDATES), and how many match (up to SEARCH_COUNT_CAP + 1). See the docstring."""
    q = fts_query(text)
    if q is None:
        raise BadOption("give at least one word to search for")
    conn = db.conn
    candidates = _newest_matches(db, q, RANK_CANDIDATES + 1)
    if not candidates:
        return [], 0
    total = len(candidates) if len(candidates) <= RANK_CANDIDATES else _count_upto(db, q, SEARCH_COUNT_CAP)
    candidates = candidates[:RANK_CANDIDATES]
    low = candidates[-1]
    top_rowid = conn.execute("SELECT max(rowid) FROM papers").fetchone()[0] or 0
    words = list(dict.fromkeys(w.lower() for w in query_words(text)))
    if sum(word_matches(db, w, top_rowid) for w in words) <= BM25_BUDGET:
        return [r for (r,) in conn.execute(
            "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? AND rowid >= ? ORDER BY rank", (q, low))], total
    in_title = {r for (r,) in conn.execute(
        "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? AND rowid >= ?", ("title : (" + q + ")", low))}
    counts = dict(conn.execute(
        f"SELECT rowid, coalesce(cited_by, -1) FROM papers WHERE rowid IN ({','.join('?' * len(candidates))})",
        candidates).fetchall())
    return sorted(candidates, key=lambda r: (r not in in_title, -counts.get(r, -1), -r)), total


def search_papers(db: Database, text: str, *, offset: int = 0, limit: int = 10) -> PaperPage:
    """Full-text search over titles and abstracts, best match first. User text is quoted
    word by word, so no input can break the FTS syntax."""
    check_page(offset, limit)
    ranked, total = ranked_rowids(db, text)
    page = ranked[offset:offset + limit]
    found = {r[0]: r for r in db.conn.execute(
        f"SELECT p.rowid, {PAPER_COLS}, '' FROM papers p WHERE p.rowid IN ({','.join('?' * len(page))})", page)}
    rows = [found[r][1:] for r in page if r in found]
    dirs = directions_of(db, [r[0] for r in rows])
    return PaperPage(tuple(listed_paper(r, dirs) for r in rows), offset, limit, min(total, SEARCH_COUNT_CAP))
