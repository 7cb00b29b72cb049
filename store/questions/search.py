"""/search: full-text search over titles and abstracts, with bounded work per query.

FTS5's bm25 reads the whole index entry of every word it ranks by, to count the papers
holding it: for a word in most of a 1,000,000-paper map that alone costs tens of
milliseconds, however few papers are ranked. So (docs/bot.md, "Commands"):

- each word's number of matching papers is counted up to WORD_SAMPLE, or estimated from
  how far back in storage order its WORD_SAMPLE newest matches reach;
- the candidates are the newest RANK_CANDIDATES papers matching every word (all of them
  when there are no more);
- when the words' counts add up to at most BM25_BUDGET, the candidates are ranked by bm25
  (the same scores as an unbounded `ORDER BY rank`: with at most RANK_CANDIDATES matches
  the order is exactly the unbounded one);
- otherwise, when some of the words are rarer (their counts, rarest first, add up to at
  most BM25_BUDGET), the candidates are ranked by bm25 over those words alone: the common
  words, which weigh least in bm25, only select;
- otherwise (every word is very common) those with every word in the title come first,
  then the most cited.

The total is counted up to SEARCH_COUNT_CAP ("2,000 or more").
"""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.rows import named_rows, scalar
from mapwatch.store.errors import BadOption
from mapwatch.store.questions.authors import papers_by_name, with_bylines
from mapwatch.store.questions.fts_text import fts_query, query_words, quote
from mapwatch.store.questions.paper_rows import PAPER_COLS, named_listed_paper
from mapwatch.store.questions.queries import PaperPage, check_page, directions_of

SEARCH_COUNT_CAP = 2000   # matches counted ("2,000 or more")
RANK_CANDIDATES = 300     # papers ranked at most (the newest matches)
WORD_SAMPLE = 300         # matches of one word read to count or estimate its matches
BM25_BUDGET = 20_000      # index entries bm25 may read to weigh the words (a few ms)


def _count_upto(db: Database, match: str, cap: int, below: int) -> int:
    return int(scalar(
        db.conn, "SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? AND rowid < ? LIMIT ?)",
        (match, below, cap + 1)))


def _newest_matches(db: Database, match: str, n: int) -> list[int]:
    return [r for (r,) in db.conn.execute(
        "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid DESC LIMIT ?", (match, n))]


def _estimate(newest: list[int], top_rowid: int) -> int:
    if len(newest) <= WORD_SAMPLE:
        return len(newest)
    return WORD_SAMPLE * top_rowid // max(1, top_rowid - newest[WORD_SAMPLE - 1] + 1)


def word_matches(db: Database, word: str, top_rowid: int) -> int:
    """How many papers hold `word`: exact up to WORD_SAMPLE, else estimated from the share
    of storage order its WORD_SAMPLE newest matches span."""
    return _estimate(_newest_matches(db, quote(word), WORD_SAMPLE + 1), top_rowid)


def _newest_in_ranges(db: Database, match: str, n: int, top_rowid: int, span: int,
                      floor: int) -> tuple[list[int], int]:
    """The newest `n` rowids matching `match` (newest first), read in ascending rowid ranges
    from the top down, each at most twice as wide as the one before: FTS5 walks a query of several
    words forwards a few times faster than backwards, so this is `ORDER BY rowid DESC LIMIT n`
    at a fraction of its cost. `span` is the first range's width (the rarest word's newest
    WORD_SAMPLE matches: at most that many matches in it); nothing matches below `floor`.
    Also returns how many matches the ranges read held, and where they stop (all matches
    lie above it when there are fewer than `n`)."""
    found: list[int] = []
    hi = top_rowid + 1
    while hi > floor and len(found) < n:
        lo = max(floor, hi - span)
        rows = [r for (r,) in db.conn.execute(
            "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? AND rowid >= ? AND rowid < ?", (match, lo, hi))]
        found.extend(reversed(rows))
        # Twice as wide, or narrower when the last range's density says fewer rowids will do.
        need = n - len(found)
        hi, span = lo, max(1, min(2 * span, span * 6 * need // (5 * len(rows)) if rows else 2 * span))
    return found, hi


def rank_words(counts: dict[str, int]) -> list[str]:
    """The words bm25 ranks by: the rarest first, as many as add up to at most BM25_BUDGET
    matches (all of them when they fit; none when even the rarest is over it)."""
    kept: set[str] = set()
    total = 0
    for w in sorted(counts, key=lambda w: counts[w]):
        if total + counts[w] > BM25_BUDGET:
            break
        total += counts[w]
        kept.add(w)
    return [w for w in counts if w in kept]


def ranked_rowids(db: Database, text: str) -> tuple[list[int], int]:
    """The rowids of the papers matching every word of `text`, best first (at most
    RANK_CANDIDATES), and how many match (up to SEARCH_COUNT_CAP + 1). See the docstring."""
    q = fts_query(text)
    if q is None:
        raise BadOption("give at least one word to search for")
    conn = db.conn
    top_rowid = scalar(conn, "SELECT max(rowid) FROM papers") or 0
    samples = {w: _newest_matches(db, quote(w), WORD_SAMPLE + 1)
               for w in dict.fromkeys(w.lower() for w in query_words(text))}
    counts = {w: _estimate(s, top_rowid) for w, s in samples.items()}
    rarest = samples[min(counts, key=lambda w: counts[w])]
    if not rarest:
        return [], 0
    # Every match holds the rarest word: all of them lie above its oldest match when it has
    # few, and its newest WORD_SAMPLE matches give the first range's width otherwise.
    few = len(rarest) <= WORD_SAMPLE
    floor = rarest[-1] if few else 0
    span = top_rowid - (rarest[-1] if few else rarest[WORD_SAMPLE - 1]) + 1
    candidates, below = _newest_in_ranges(db, q, RANK_CANDIDATES + 1, top_rowid, span, floor)
    if not candidates:
        return [], 0
    total = len(candidates)
    if RANK_CANDIDATES < total <= SEARCH_COUNT_CAP and below > floor:  # count on below what was read
        total += _count_upto(db, q, SEARCH_COUNT_CAP - total, below)
    total = min(total, SEARCH_COUNT_CAP + 1)
    candidates = candidates[:RANK_CANDIDATES]
    low = candidates[-1]
    weighed = rank_words(counts)
    if weighed:
        by = q if len(weighed) == len(counts) else " ".join(quote(w) for w in weighed)
        # bm25 is computed on the candidates alone (`+rowid IN` filters before the score; the
        # rarer words alone may match many more papers above `low`), ties in rowid order as
        # `ORDER BY rank` leaves them.
        return [r for (r,) in conn.execute(
            "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? AND rowid >= ?"
            f" AND +rowid IN ({','.join('?' * len(candidates))}) ORDER BY bm25(papers_fts), rowid",
            [by, low, *candidates])], total
    in_title = {r for (r,) in conn.execute(
        "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? AND rowid >= ?", ("title : (" + q + ")", low))}
    counts_cited = dict(conn.execute(
        f"SELECT rowid, coalesce(cited_by, -1) FROM papers WHERE rowid IN ({','.join('?' * len(candidates))})",
        candidates).fetchall())
    return sorted(candidates, key=lambda r: (r not in in_title, -counts_cited.get(r, -1), -r)), total


def search_papers(db: Database, text: str, *, offset: int = 0, limit: int = 10) -> PaperPage:
    """Full-text search over titles and abstracts, best match first; when the text names an
    author (their whole name in any case, or their surname, alone or after an initial or given
    names: `papers_by_name`), their papers come first, newest first (at most RANK_CANDIDATES).
    User text is quoted word by word, so no input can break the FTS syntax."""
    check_page(offset, limit)
    ranked, total = ranked_rowids(db, text)
    total = min(total, SEARCH_COUNT_CAP)
    authored = _rowids(db, papers_by_name(db, text, RANK_CANDIDATES))
    if authored:
        first = set(authored)
        rest = [r for r in ranked if r not in first]
        total = len(authored) + total - (len(ranked) - len(rest))
        ranked = authored + rest
    page = ranked[offset:offset + limit]
    found = {r["rowid"]: r for r in named_rows(
        db, f"SELECT p.rowid, {PAPER_COLS}, '' AS first_seen FROM papers p"
        f" WHERE p.rowid IN ({','.join('?' * len(page))})", page)}
    rows = [found[r] for r in page if r in found]
    dirs = directions_of(db, [r["id"] for r in rows])
    items = with_bylines(db, [named_listed_paper(r, dirs) for r in rows])
    return PaperPage(items, offset, limit, total, len(authored))


def _rowids(db: Database, paper_ids: list[str]) -> list[int]:
    """The papers' rowids, in the order given."""
    if not paper_ids:
        return []
    found = dict(db.conn.execute(
        f"SELECT id, rowid FROM papers WHERE id IN ({','.join('?' * len(paper_ids))})", paper_ids).fetchall())
    return [found[p] for p in paper_ids if p in found]
