"""Read side: questions about the map, answered as plain frozen dataclasses.

No discord, no feedgen here: the bot, the feeds, `mapwatch ask` and the benchmarks all
use these functions.
"""

from __future__ import annotations

import difflib
import re
import sqlite3
from dataclasses import dataclass
from typing import Literal, get_args

from sqlite_utils import Database

from mapwatch.store.database.rows import fill, named_cursor, named_row, named_rows, scalar
from mapwatch.store.errors import BadChoice, BadOption, DirectionNotFound, PaperNotFound
from mapwatch.store.ids import is_outside_key, normalize_id, paper_key
from mapwatch.store.questions.authors import with_bylines, with_contexts
from mapwatch.store.questions.citers_walk import most_cited_citers_by_walk
from mapwatch.store.questions.fts_text import WORD, fts_any, fts_query
from mapwatch.store.questions.fts_text import query_words as query_words  # bot/commands/papers.py reads it here
from mapwatch.store.questions.paper_rows import (
    PAPER_COLS,
    citers_count_sql,
    named_listed_paper,
    named_paper,
    newest_citations_sql,
    seen_paper,
)
from mapwatch.store.questions.types import CitationRow, Direction, PaperRow


@dataclass(frozen=True)
class MapStats:
    papers: int
    papers_with_page: int
    citations: int
    directions: int
    events: int
    newest_data_through: str | None
    last_ingest_at: str | None
    last_ingest_source: str | None
    pages_rejected_now: int


def map_stats(db: Database) -> MapStats:
    c = db.conn
    papers, with_page, newest = c.execute(
        "SELECT count(*), coalesce(sum(has_page), 0), max(data_through) FROM papers").fetchone()
    last = named_row(c, "SELECT finished_at, source FROM ingests ORDER BY id DESC LIMIT 1")
    return MapStats(
        papers=papers,
        papers_with_page=with_page,
        citations=scalar(c, "SELECT count(*) FROM citation_edges"),
        directions=scalar(c, "SELECT count(*) FROM directions"),
        events=scalar(c, "SELECT coalesce(max(id), 0) FROM events"),
        newest_data_through=newest,
        last_ingest_at=last["finished_at"] if last else None,
        last_ingest_source=last["source"] if last else None,
        pages_rejected_now=scalar(c, "SELECT count(*) FROM ingest_errors"),
    )


def has_papers(db: Database) -> bool:
    """Whether the map holds any paper: `mapwatch run` stores the bundled seeds in a database with none."""
    return bool(scalar(db, "SELECT EXISTS (SELECT 1 FROM papers)"))


# ---------------------------------------------------------------------------
# Papers and directions: lookups for the bot, `mapwatch ask` and the benchmarks.
# Every query is index-backed (primary keys, citations_cited_seen, events_paper,
# papers_title_nocase, placements_direction, the FTS index): no full scans.
# ---------------------------------------------------------------------------

CHOICE_MAX = 100  # Discord: choice names and values are at most 100 characters
CiterSort = Literal["cited", "newest"]  # most cited first, or most recently first seen first
SORTS: tuple[CiterSort, ...] = get_args(CiterSort)
WALK_MIN_CITERS = 500  # from this many citers, the first pages come from walking papers by count
_MAP_DIRECTION_URL = re.compile(r"^https?://[^/\s]+/(?P<slug>[^?#\s]+?)/?(?:[?#].*)?$")


@dataclass(frozen=True)
class Snapshot:
    data_through: str | None
    cited_by: int | None
    ingested_at: str


@dataclass(frozen=True)
class PaperView:
    paper: PaperRow
    abstract: str | None
    first_posted: str | None
    data_through: str | None
    refs_in_map: int | None
    refs_total: int | None
    citers_stored: int
    refs_stored: int
    directions: tuple[Direction, ...]
    top_citers: tuple[CitationRow, ...]
    top_refs: tuple[CitationRow, ...]
    snapshots: tuple[Snapshot, ...]


@dataclass(frozen=True)
class PaperPage:
    """One page of a longer list: `items` from `offset`, out of `total`."""

    items: tuple[CitationRow, ...]
    offset: int
    limit: int
    total: int
    by_author: int = 0  # /search: how many of `total` match an author's name (they come first)


@dataclass(frozen=True)
class DirectionView:
    direction: Direction
    top_papers: tuple[PaperRow, ...]
    newest_citers: tuple[CitationRow, ...]


@dataclass(frozen=True)
class AreaDirections:
    area: str
    directions: tuple[Direction, ...]


def clip(text: str, limit: int = CHOICE_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def nocase_prefix_bounds(prefix: str) -> tuple[str, str]:
    return prefix, prefix + "\U0010ffff"


def get_paper(db: Database, paper_id: str) -> PaperRow | None:
    r = named_row(db, f"SELECT {PAPER_COLS} FROM papers p WHERE p.id = ?", (paper_id,))
    return named_paper(r) if r else None


def suggest_titles(db: Database, text: str, limit: int = 5) -> tuple[str, ...]:
    q = fts_any(text)
    if not q:
        return ()
    rows = db.conn.execute(
        "SELECT p.title, p.id FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
        " WHERE papers_fts MATCH ? ORDER BY rank LIMIT ?", (q, limit)).fetchall()
    return tuple(f"{t} ({i})" for t, i in rows)


def resolve_paper(db: Database, ref: str) -> PaperRow:
    """An arXiv id, arXiv or map URL, a DOI (a citer beyond arXiv, or the journal DOI of an
    arXiv paper), an OpenAlex work id, or a title -> the paper. Raises PaperNotFound."""
    text = " ".join(ref.split())
    if not text:
        raise PaperNotFound(ref)
    pid = paper_key(text) if len(text) <= 300 else None
    if pid:
        found = get_paper(db, pid) or _by_other_key(db, pid)
        if found:
            return found
        raise PaperNotFound(pid, suggest_titles(db, text))
    title = text[:1000]
    rows = named_rows(
        db, f"SELECT {PAPER_COLS} FROM papers p WHERE p.title = ? COLLATE NOCASE"
        " ORDER BY p.has_page DESC, p.cited_by DESC LIMIT 1", (title,))
    if rows:
        return named_paper(rows[0])
    # "Title (id)" as autocomplete shows it, when a client sends the name instead of the value.
    m = re.search(r"\(([^()]+)\)\s*$", title)
    if m and (pid := normalize_id(m.group(1))) and (found := get_paper(db, pid)):
        return found
    q = fts_query(title)
    if q:
        rows = named_rows(
            db, f"SELECT {PAPER_COLS} FROM papers_title_fts t JOIN papers p ON p.rowid = t.rowid"
            " WHERE papers_title_fts MATCH ? LIMIT 2", (q,))
        if len(rows) == 1:
            return named_paper(rows[0])
    raise PaperNotFound(clip(text, 200), suggest_titles(db, title))


def _by_other_key(db: Database, key: str) -> PaperRow | None:
    """The arXiv paper a DOI or OpenAlex work id names, when it is not a stored key: a citer
    beyond arXiv merged into its arXiv version (`paper_aliases`), or the DOI arXiv or OpenAlex
    gives an arXiv paper."""
    if not is_outside_key(key):
        return None
    for sql in ("SELECT paper_id FROM paper_aliases WHERE alias = ?",
                "SELECT paper_id FROM arxiv_records WHERE doi = ?",
                "SELECT paper_id FROM openalex_works WHERE doi = ? OR work_id = ?"):
        pid = scalar(db, sql + " LIMIT 1", [key] * sql.count("?"))
        if pid is not None and (found := get_paper(db, pid)) is not None:
            return found
    return None


def directions_of(db: Database, ids: list[str]) -> dict[str, tuple[str, ...]]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    out: dict[str, list[str]] = {}
    for pid, name in db.conn.execute(
            f"SELECT pl.paper_id, d.name FROM placements pl JOIN directions d ON d.slug = pl.direction_slug"
            f" WHERE pl.paper_id IN ({marks}) ORDER BY pl.paper_id, pl.position", ids):
        out.setdefault(pid, []).append(name)
    return {k: tuple(v) for k, v in out.items()}


def _rows_in_order(db: Database, keys: list[tuple[str, str]]) -> list[tuple[sqlite3.Row, str]]:
    """(paper row, first_seen) for (id, first_seen) pairs, in their order: the sort runs
    on narrow indexes, and only the page shown reads whole rows."""
    if not keys:
        return []
    marks = ",".join("?" * len(keys))
    found = {r["id"]: r for r in named_rows(
        db, f"SELECT {PAPER_COLS} FROM papers p WHERE p.id IN ({marks})", [k for k, _ in keys])}
    return [(found[k], seen) for k, seen in keys if k in found]


def check_page(offset: int, limit: int) -> None:
    if offset < 0 or not 1 <= limit <= 100:
        raise BadOption("page out of range")


def citer_sort(text: str | None) -> CiterSort:
    """A user's sort option (any case; none: `cited`), or BadOption naming the choices."""
    sort = (text or "cited").strip().lower()
    for known in SORTS:
        if sort == known:
            return known
    raise BadChoice("sort", text or "", SORTS)


def citers(db: Database, paper_id: str, *, sort: CiterSort = "cited", direction: str | None = None,
           offset: int = 0, limit: int = 10, authors: bool = True) -> PaperPage:
    """The papers citing `paper_id`: `cited` = most cited first (stated count, then the
    order the map lists them), `newest` = most recently first seen first, those seen at once
    (a first import) by their own date, newest first (NEWEST_PAPERS_FIRST). With `authors`,
    each row carries its byline and whether it is a self-citation (store/questions/authors.py)."""
    if sort not in SORTS:
        raise BadChoice("sort", sort, SORTS)
    check_page(offset, limit)
    where = "c.cited_id = :pid"
    if direction:
        where += (" AND EXISTS (SELECT 1 FROM placements pl WHERE pl.paper_id = c.citing_id"
                  " AND pl.direction_slug = :dir)")
    # The map's listing order: the edge's event (pages list most cited first).
    pos = "coalesce(c.event_id, 1e18)"
    order = f"(p.cited_by IS NULL), p.cited_by DESC, {pos}, c.citing_id"
    params = {"pid": paper_id, "dir": direction, "lim": limit, "off": offset}
    total = scalar(db.conn, f"SELECT count(*) FROM citations c WHERE {where}" if direction
                   else f"SELECT {citers_count_sql(':pid')}", params)
    keys = None
    if sort == "cited" and not direction and total >= WALK_MIN_CITERS:
        keys = most_cited_citers_by_walk(db, paper_id, offset, limit)
    if keys is None and sort == "newest":
        # On the citations' covering index, a papers row read for an old-style citer only.
        keys = db.conn.execute(newest_citations_sql(where, "merged.citing_id, merged.first_seen",
                                                    reads_citer=bool(direction)),
                               {**params, "n": offset + limit}).fetchall()
    if keys is None:
        # Sort on narrow indexes first, then read the rows of the one page shown.
        keys = db.conn.execute(
            f"SELECT c.citing_id, c.first_seen FROM citations c JOIN papers p ON p.id = c.citing_id"
            f" WHERE {where} ORDER BY {order} LIMIT :lim OFFSET :off", params).fetchall()
    rows = _rows_in_order(db, keys)
    dirs = directions_of(db, [r["id"] for r, _ in rows])
    items = tuple(seen_paper(r, seen, dirs) for r, seen in rows)
    if not authors:
        return PaperPage(items, offset, limit, total)
    return PaperPage(with_contexts(db, with_bylines(db, items, paper_id), paper_id), offset, limit, total)


def refs(db: Database, paper_id: str, *, offset: int = 0, limit: int = 10, authors: bool = True) -> PaperPage:
    """The papers `paper_id` cites, most cited first (as its page lists them); with `authors`,
    their bylines and self-citation marks as for `citers`."""
    check_page(offset, limit)
    params = {"pid": paper_id, "lim": limit, "off": offset}
    rows = _rows_in_order(db, db.conn.execute(
        "SELECT c.cited_id, c.first_seen FROM citations c JOIN papers p ON p.id = c.cited_id"
        " WHERE c.citing_id = :pid ORDER BY (p.cited_by IS NULL), p.cited_by DESC,"
        " coalesce(c.event_id, 1e18), c.cited_id LIMIT :lim OFFSET :off", params).fetchall())
    total = scalar(db.conn, "SELECT count(*) FROM citations WHERE citing_id = ?", (paper_id,))
    dirs = directions_of(db, [r["id"] for r, _ in rows])
    items = tuple(seen_paper(r, seen, dirs) for r, seen in rows)
    return PaperPage(with_bylines(db, items, paper_id) if authors else items, offset, limit, total)


def paper_view(db: Database, paper_id: str, top: int = 5) -> PaperView:
    r = named_row(
        db, f"SELECT {PAPER_COLS}, p.abstract, p.first_posted, p.data_through, p.refs_in_map, p.refs_total"
        " FROM papers p WHERE p.id = ?", (paper_id,))
    if not r:
        raise PaperNotFound(paper_id)
    cit = citers(db, paper_id, limit=top, authors=False)
    ref = refs(db, paper_id, limit=top, authors=False)
    dirs = tuple(_direction_row(d) for d in named_rows(
        db, f"SELECT {DIR_COLS} FROM placements pl"
        " JOIN directions d ON d.slug = pl.direction_slug WHERE pl.paper_id = ? ORDER BY pl.position",
        (paper_id,)))
    snaps = tuple(fill(Snapshot, s) for s in named_rows(
        db, "SELECT data_through, cited_by, ingested_at FROM snapshots WHERE paper_id = ? ORDER BY id",
        (paper_id,)))
    # One bylines() read for the card: the paper, its top citers and its top references.
    me, *listed = with_bylines(db, [named_paper(r), *cit.items, *ref.items], paper_id)
    top_citers, top_refs = listed[:len(cit.items)], listed[len(cit.items):]
    return PaperView(me, r["abstract"], r["first_posted"], r["data_through"], r["refs_in_map"], r["refs_total"],
                     cit.total, ref.total, dirs,
                     tuple(c for c in top_citers if isinstance(c, CitationRow)),
                     tuple(c for c in top_refs if isinstance(c, CitationRow)), snaps)


def card_view(db: Database, ref: str, top: int = 5) -> PaperView:
    """/paper: the view of the paper `ref` names, the paper read once when `ref` is a stored key
    (an arXiv id or URL, a DOI); a title (or an alias) is resolved first. Raises PaperNotFound."""
    key = paper_key(" ".join(ref.split()))
    if key is not None:
        try:
            return paper_view(db, key, top)
        except PaperNotFound:
            pass  # not stored under it: resolve_paper knows aliases, and suggests titles
    return paper_view(db, resolve_paper(db, ref).id, top)


def _direction_row(r: sqlite3.Row) -> Direction:
    """A direction from a row of `DIR_COLS` (and maybe `papers`, its count of papers)."""
    return fill(Direction, r)


DIR_COLS = "d.slug, d.name, d.area, d.breadcrumb, d.url"


def resolve_direction(db: Database, ref: str) -> Direction:
    """A direction's slug, map URL or name -> the direction. Raises DirectionNotFound."""
    text = " ".join(ref.split())[:500]
    if not text:
        raise DirectionNotFound(ref)
    candidates = [text.strip("/")]
    m = _MAP_DIRECTION_URL.match(text)
    if m:
        candidates.append(m.group("slug").strip("/"))
    for slug in candidates:
        r = named_row(db, f"SELECT {DIR_COLS} FROM directions d WHERE d.slug = ?", (slug,))
        if r:
            return _direction_row(r)
    r = named_row(db, f"SELECT {DIR_COLS} FROM directions d WHERE d.name = ? COLLATE NOCASE LIMIT 1", (text,))
    if r:
        return _direction_row(r)
    lo, hi = nocase_prefix_bounds(text)
    rows = named_rows(db, f"SELECT {DIR_COLS} FROM directions d WHERE d.name >= ? COLLATE NOCASE"
                      " AND d.name < ? COLLATE NOCASE LIMIT 2", (lo, hi))
    if len(rows) == 1:
        return _direction_row(rows[0])
    words = [w.lower() for w in WORD.findall(text) if len(w) >= 3]
    names = [n for (n,) in db.conn.execute("SELECT name FROM directions ORDER BY name LIMIT 2000")]
    containing = [n for n in names if text.lower() in n.lower()]
    if len(containing) == 1:
        return resolve_direction(db, containing[0])
    close = difflib.get_close_matches(text, names, n=5, cutoff=0.4)
    if not close and words:
        close = [n for n in names if any(w in n.lower() for w in words)][:5]
    raise DirectionNotFound(clip(text, 200), tuple(close))


def direction_view(db: Database, slug: str, top: int = 10, newest: int = 5) -> DirectionView:
    r = named_row(
        db, f"SELECT {DIR_COLS}, (SELECT count(*) FROM placements WHERE direction_slug = d.slug) AS papers"
        " FROM directions d WHERE d.slug = ?", (slug,))
    if not r:
        raise DirectionNotFound(slug)
    papers = tuple(named_paper(p) for p in named_rows(
        db, f"SELECT {PAPER_COLS} FROM placements pl JOIN papers p ON p.id = pl.paper_id"
        " WHERE pl.direction_slug = ? ORDER BY (p.cited_by IS NULL), p.cited_by DESC, p.id LIMIT ?",
        (slug, top)))
    # Walk the event log backwards (ids only grow) until enough distinct citers are found.
    rows: list[sqlite3.Row] = []
    seen: set[str] = set()
    for ev in named_cursor(
            db, f"SELECT {PAPER_COLS}, e.seen_at AS first_seen FROM events e JOIN papers p ON p.id = e.citing_id"
            " WHERE e.kind = 'citation' AND EXISTS (SELECT 1 FROM placements pl WHERE pl.paper_id = e.paper_id"
            " AND pl.direction_slug = ?) ORDER BY e.id DESC LIMIT 2000", (slug,)):
        if ev["id"] not in seen:
            seen.add(ev["id"])
            rows.append(ev)
            if len(rows) >= newest:
                break
    dirs = directions_of(db, [x["id"] for x in rows])
    shown = with_bylines(db, [*papers, *(named_listed_paper(x, dirs) for x in rows)])
    return DirectionView(_direction_row(r), shown[:len(papers)],
                         tuple(c for c in shown[len(papers):] if isinstance(c, CitationRow)))


def directions_by_area(db: Database) -> tuple[AreaDirections, ...]:
    rows = named_rows(
        db, f"SELECT {DIR_COLS}, (SELECT count(*) FROM placements pl WHERE pl.direction_slug = d.slug) AS papers"
        " FROM directions d ORDER BY d.area COLLATE NOCASE, d.name COLLATE NOCASE")
    areas: dict[str, list[Direction]] = {}
    for r in rows:
        areas.setdefault(r["area"], []).append(_direction_row(r))
    return tuple(AreaDirections(a, tuple(ds)) for a, ds in areas.items())


