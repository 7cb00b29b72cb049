"""Read side: questions about the map, answered as plain frozen dataclasses.

No discord, no feedgen here: the bot, the feeds, `mapwatch ask` and the benchmarks all
use these functions.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from mapwatch.store.errors import BadOption, DirectionNotFound, PaperNotFound
from mapwatch.store.ids import arxiv_url, normalize_id
from mapwatch.store.types import CitationRow, PaperRow
from sqlite_utils import Database


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
    last = c.execute("SELECT finished_at, source FROM ingests ORDER BY id DESC LIMIT 1").fetchone()
    return MapStats(
        papers=papers,
        papers_with_page=with_page,
        citations=c.execute("SELECT count(*) FROM citations").fetchone()[0],
        directions=c.execute("SELECT count(*) FROM directions").fetchone()[0],
        events=c.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0],
        newest_data_through=newest,
        last_ingest_at=last[0] if last else None,
        last_ingest_source=last[1] if last else None,
        pages_rejected_now=c.execute("SELECT count(*) FROM ingest_errors").fetchone()[0],
    )


# ---------------------------------------------------------------------------
# Papers and directions: lookups for the bot, `mapwatch ask` and the benchmarks.
# Every query is index-backed (primary keys, citations_cited, events_paper,
# papers_title_nocase, placements_direction, the FTS index): no full scans.
# ---------------------------------------------------------------------------

AUTOCOMPLETE_LIMIT = 25
CHOICE_MAX = 100  # Discord: choice names and values are at most 100 characters
SORTS = ("cited", "newest")
SEARCH_COUNT_CAP = 2000  # search ranks and counts at most this many matches ("2,000 or more")
_MAX_QUERY_TOKENS = 12
_MAX_TOKEN_CHARS = 64
_MIN_PREFIX_CHARS = 3  # shortest last word autocomplete expands as a prefix
_WORD = re.compile(r"\w+", re.UNICODE)
_MAP_DIRECTION_URL = re.compile(r"^https?://[^/\s]+/(?P<slug>[^?#\s]+?)/?(?:[?#].*)?$")


@dataclass(frozen=True)
class DirectionRow:
    slug: str
    name: str
    area: str
    breadcrumb: str
    url: str | None
    papers: int = 0  # papers placed in it


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
    directions: tuple[DirectionRow, ...]
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


@dataclass(frozen=True)
class DirectionView:
    direction: DirectionRow
    top_papers: tuple[PaperRow, ...]
    newest_citers: tuple[CitationRow, ...]


@dataclass(frozen=True)
class AreaDirections:
    area: str
    directions: tuple[DirectionRow, ...]


@dataclass(frozen=True)
class Choice:
    """An autocomplete choice: `name` shown, `value` sent back (both <= 100 characters)."""

    name: str
    value: str


def _clip(text: str, limit: int = CHOICE_MAX) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def paper_row(r: tuple) -> PaperRow:
    pid, title, year, url, cited_by, has_page = r[:6]
    return PaperRow(pid, title, year, url, arxiv_url(pid), cited_by, bool(has_page))


PAPER_COLS = "p.id, p.title, p.year, p.url, p.cited_by, p.has_page"


def query_words(text: str) -> list[str]:
    """The words of user text, as searches use them (at most 12)."""
    return [w[:_MAX_TOKEN_CHARS] for w in _WORD.findall(text)[:_MAX_QUERY_TOKENS]]


def fts_query(text: str, *, prefix_last: bool = False) -> str | None:
    """User text as a safe FTS5 query: its words, each quoted (AND). None if no words."""
    words = _WORD.findall(text)[:_MAX_QUERY_TOKENS]
    words = [w[:_MAX_TOKEN_CHARS] for w in words]
    if not words:
        return None
    quoted = ['"' + w.replace('"', '""') + '"' for w in words]
    if prefix_last:
        if len(words[-1]) >= _MIN_PREFIX_CHARS:
            quoted[-1] += "*"
        elif len(quoted) > 1:
            # A word still being typed ("reinforcement l"): expanding a 1-2 letter prefix
            # reads the index of every word it starts (tens of ms at 200k papers); wait for more.
            quoted.pop()
    return " ".join(quoted)


def _fts_any(text: str) -> str | None:
    """Words of at least 3 characters, OR-ed: for 'did you mean' suggestions."""
    words = [w[:_MAX_TOKEN_CHARS] for w in _WORD.findall(text) if len(w) >= 3][:_MAX_QUERY_TOKENS]
    if not words:
        return None
    return " OR ".join('"' + w.replace('"', '""') + '"' for w in words)


def _nocase_prefix_bounds(prefix: str) -> tuple[str, str]:
    return prefix, prefix + "\U0010ffff"


def get_paper(db: Database, paper_id: str) -> PaperRow | None:
    r = db.conn.execute(f"SELECT {PAPER_COLS} FROM papers p WHERE p.id = ?", (paper_id,)).fetchone()
    return paper_row(r) if r else None


def suggest_titles(db: Database, text: str, limit: int = 5) -> tuple[str, ...]:
    q = _fts_any(text)
    if not q:
        return ()
    rows = db.conn.execute(
        "SELECT p.title, p.id FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
        " WHERE papers_fts MATCH ? ORDER BY rank LIMIT ?", (q, limit)).fetchall()
    return tuple(f"{t} ({i})" for t, i in rows)


def resolve_paper(db: Database, ref: str) -> PaperRow:
    """An arXiv id, arXiv or map URL, or a title -> the paper. Raises PaperNotFound."""
    text = " ".join(ref.split())
    if not text:
        raise PaperNotFound(ref)
    pid = normalize_id(text) if len(text) <= 300 else None
    if pid:
        found = get_paper(db, pid)
        if found:
            return found
        raise PaperNotFound(pid, suggest_titles(db, text))
    title = text[:1000]
    rows = db.conn.execute(
        f"SELECT {PAPER_COLS} FROM papers p WHERE p.title = ? COLLATE NOCASE"
        " ORDER BY p.has_page DESC, p.cited_by DESC LIMIT 1", (title,)).fetchall()
    if rows:
        return paper_row(rows[0])
    # "Title (id)" as autocomplete shows it, when a client sends the name instead of the value.
    m = re.search(r"\(([^()]+)\)\s*$", title)
    if m and (pid := normalize_id(m.group(1))) and (found := get_paper(db, pid)):
        return found
    q = fts_query(title)
    if q:
        rows = db.conn.execute(
            f"SELECT {PAPER_COLS} FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
            " WHERE papers_fts.title MATCH ? LIMIT 2", (q,)).fetchall()
        if len(rows) == 1:
            return paper_row(rows[0])
    raise PaperNotFound(_clip(text, 200), suggest_titles(db, title))


def listed_paper(r: tuple, directions: dict[str, tuple[str, ...]]) -> CitationRow:
    base = paper_row(r)
    return CitationRow(**base.__dict__, first_seen=r[6], directions=directions.get(base.id, ()))


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


def _rows_in_order(db: Database, keys: list[tuple[str, str]]) -> list[tuple]:
    """Full rows (paper columns + first_seen) for (id, first_seen) pairs, in their order:
    the sort runs on narrow indexes, and only the page shown reads whole rows."""
    if not keys:
        return []
    marks = ",".join("?" * len(keys))
    found = {r[0]: r for r in db.conn.execute(
        f"SELECT {PAPER_COLS} FROM papers p WHERE p.id IN ({marks})", [k for k, _ in keys])}
    return [(*found[k], seen) for k, seen in keys if k in found]


def _check_page(offset: int, limit: int) -> None:
    if offset < 0 or not 1 <= limit <= 100:
        raise BadOption("page out of range")


def citers(db: Database, paper_id: str, *, sort: str = "cited", direction: str | None = None,
           offset: int = 0, limit: int = 10) -> PaperPage:
    """The papers citing `paper_id`: `cited` = most cited first (stated count, then the
    order the map lists them), `newest` = most recently first seen first."""
    if sort not in SORTS:
        raise BadOption(f"sort must be one of: {', '.join(SORTS)}")
    _check_page(offset, limit)
    where = "c.cited_id = :pid"
    if direction:
        where += (" AND EXISTS (SELECT 1 FROM placements pl WHERE pl.paper_id = c.citing_id"
                  " AND pl.direction_slug = :dir)")
    # The map's listing order: the first event of each edge (pages list most cited first).
    pos = ("coalesce((SELECT min(e.id) FROM events e WHERE e.paper_id = c.cited_id"
           " AND e.citing_id = c.citing_id), 1e18)")
    order = (f"(p.cited_by IS NULL), p.cited_by DESC, {pos}, c.citing_id" if sort == "cited"
             else f"c.first_seen DESC, {pos}, c.citing_id")
    params = {"pid": paper_id, "dir": direction, "lim": limit, "off": offset}
    total = db.conn.execute(f"SELECT count(*) FROM citations c WHERE {where}", params).fetchone()[0]
    keys = None
    if sort == "cited" and not direction and total >= WALK_MIN_CITERS:
        keys = most_cited_citers_by_walk(db, paper_id, offset, limit)
    if keys is None:
        # Sort on narrow indexes first, then read the rows of the one page shown.
        keys = db.conn.execute(
            f"SELECT c.citing_id, c.first_seen FROM citations c JOIN papers p ON p.id = c.citing_id"
            f" WHERE {where} ORDER BY {order} LIMIT :lim OFFSET :off", params).fetchall()
    rows = _rows_in_order(db, keys)
    dirs = directions_of(db, [r[0] for r in rows])
    return PaperPage(tuple(listed_paper(r, dirs) for r in rows), offset, limit, total)


WALK_MIN_CITERS = 500  # from this many citers, the first pages come from walking papers by count
_WALK_MAX_ROWS = 20_000  # papers looked at before falling back to sorting every citer


def most_cited_citers_by_walk(db: Database, paper_id: str, offset: int,
                              limit: int) -> list[tuple[str, str]] | None:
    """The (citing_id, first_seen) of `citers(sort="cited")`'s page, found by walking papers
    from the most cited down (index papers_cited_by) and keeping those that cite
    `paper_id`: for a paper with thousands of citers the top ten are reached after a few
    hundred papers, where sorting every citer reads them all. Same order as the sort: the
    stated count, then the map's listing order (first event), then id. None when the walk
    would be long (few of the most cited papers cite it, or the page reaches its citers
    without a stated count): the caller sorts instead."""
    need = offset + limit
    cur = db.conn.execute(
        "SELECT p.id, p.cited_by FROM papers p INDEXED BY papers_cited_by WHERE p.cited_by IS NOT NULL"
        " AND EXISTS (SELECT 1 FROM citations c WHERE c.citing_id = p.id AND c.cited_id = ?)"
        " ORDER BY p.cited_by DESC", (paper_id,))
    picked: list[tuple[str, int]] = []
    for looked, (pid, count) in enumerate(cur, 1):
        if len(picked) >= need and count < picked[-1][1]:
            break  # past the page and past any tie with its last paper
        if looked > _WALK_MAX_ROWS:
            return None
        picked.append((pid, count))
    else:
        if len(picked) < need:
            return None  # the page reaches citers without a stated count
    marks = ",".join("?" * len(picked))
    first = dict(db.conn.execute(
        f"SELECT citing_id, min(id) FROM events WHERE paper_id = ? AND citing_id IN ({marks})"
        " GROUP BY citing_id", (paper_id, *(p for p, _ in picked))).fetchall())
    picked.sort(key=lambda r: (-r[1], first.get(r[0], 1e18), r[0]))
    page = [p for p, _ in picked[offset:need]]
    seen = dict(db.conn.execute(
        "SELECT citing_id, first_seen FROM citations WHERE cited_id = ? AND citing_id IN"
        f" ({','.join('?' * len(page))})",
        (paper_id, *page)).fetchall()) if page else {}
    return [(p, seen[p]) for p in page]


def refs(db: Database, paper_id: str, *, offset: int = 0, limit: int = 10) -> PaperPage:
    """The papers `paper_id` cites, most cited first (as its page lists them)."""
    _check_page(offset, limit)
    params = {"pid": paper_id, "lim": limit, "off": offset}
    rows = _rows_in_order(db, db.conn.execute(
        "SELECT c.cited_id, c.first_seen FROM citations c JOIN papers p ON p.id = c.cited_id"
        " WHERE c.citing_id = :pid ORDER BY (p.cited_by IS NULL), p.cited_by DESC,"
        " coalesce((SELECT min(e.id) FROM events e WHERE e.citing_id = c.citing_id AND e.paper_id = c.cited_id),"
        " 1e18), c.cited_id LIMIT :lim OFFSET :off", params).fetchall())
    total = db.conn.execute("SELECT count(*) FROM citations WHERE citing_id = ?", (paper_id,)).fetchone()[0]
    dirs = directions_of(db, [r[0] for r in rows])
    return PaperPage(tuple(listed_paper(r, dirs) for r in rows), offset, limit, total)


def paper_view(db: Database, paper_id: str, top: int = 5) -> PaperView:
    r = db.conn.execute(
        f"SELECT {PAPER_COLS}, p.abstract, p.first_posted, p.data_through, p.refs_in_map, p.refs_total"
        " FROM papers p WHERE p.id = ?", (paper_id,)).fetchone()
    if not r:
        raise PaperNotFound(paper_id)
    cit = citers(db, paper_id, limit=top)
    ref = refs(db, paper_id, limit=top)
    dirs = tuple(DirectionRow(*d) for d in db.conn.execute(
        "SELECT d.slug, d.name, d.area, d.breadcrumb, d.url FROM placements pl"
        " JOIN directions d ON d.slug = pl.direction_slug WHERE pl.paper_id = ? ORDER BY pl.position",
        (paper_id,)))
    snaps = tuple(Snapshot(*s) for s in db.conn.execute(
        "SELECT data_through, cited_by, ingested_at FROM snapshots WHERE paper_id = ? ORDER BY id",
        (paper_id,)))
    return PaperView(paper_row(r), r[6], r[7], r[8], r[9], r[10], cit.total, ref.total, dirs,
                     cit.items, ref.items, snaps)


def search_papers(db: Database, text: str, *, offset: int = 0, limit: int = 10) -> PaperPage:
    """Full-text search over titles and abstracts, best match first. User text is quoted
    word by word, so no input can break the FTS syntax."""
    _check_page(offset, limit)
    q = fts_query(text)
    if q is None:
        raise BadOption("give at least one word to search for")
    # bm25 ranks at most SEARCH_COUNT_CAP matches, so a query matching most of the map stays fast.
    rows = db.conn.execute(
        f"SELECT {PAPER_COLS}, '' FROM (SELECT rowid, rank FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?) f"
        " JOIN papers p ON p.rowid = f.rowid ORDER BY f.rank LIMIT ? OFFSET ?",
        (q, SEARCH_COUNT_CAP, limit, offset)).fetchall()
    total = db.conn.execute("SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?)",
                            (q, SEARCH_COUNT_CAP)).fetchone()[0]
    dirs = directions_of(db, [r[0] for r in rows])
    return PaperPage(tuple(listed_paper(r, dirs) for r in rows), offset, limit, total)


def _direction_row(r: tuple) -> DirectionRow:
    return DirectionRow(*r)


_DIR_COLS = "d.slug, d.name, d.area, d.breadcrumb, d.url"


def resolve_direction(db: Database, ref: str) -> DirectionRow:
    """A direction's slug, map URL or name -> the direction. Raises DirectionNotFound."""
    text = " ".join(ref.split())[:500]
    if not text:
        raise DirectionNotFound(ref)
    candidates = [text.strip("/")]
    m = _MAP_DIRECTION_URL.match(text)
    if m:
        candidates.append(m.group("slug").strip("/"))
    for slug in candidates:
        r = db.conn.execute(f"SELECT {_DIR_COLS} FROM directions d WHERE d.slug = ?", (slug,)).fetchone()
        if r:
            return _direction_row(r)
    r = db.conn.execute(
        f"SELECT {_DIR_COLS} FROM directions d WHERE d.name = ? COLLATE NOCASE LIMIT 1", (text,)).fetchone()
    if r:
        return _direction_row(r)
    lo, hi = _nocase_prefix_bounds(text)
    rows = db.conn.execute(f"SELECT {_DIR_COLS} FROM directions d WHERE d.name >= ? COLLATE NOCASE"
                           " AND d.name < ? COLLATE NOCASE LIMIT 2", (lo, hi)).fetchall()
    if len(rows) == 1:
        return _direction_row(rows[0])
    words = [w.lower() for w in _WORD.findall(text) if len(w) >= 3]
    names = [n for (n,) in db.conn.execute("SELECT name FROM directions ORDER BY name LIMIT 2000")]
    containing = [n for n in names if text.lower() in n.lower()]
    if len(containing) == 1:
        return resolve_direction(db, containing[0])
    close = difflib.get_close_matches(text, names, n=5, cutoff=0.4)
    if not close and words:
        close = [n for n in names if any(w in n.lower() for w in words)][:5]
    raise DirectionNotFound(_clip(text, 200), tuple(close))


def direction_view(db: Database, slug: str, top: int = 10, newest: int = 5) -> DirectionView:
    r = db.conn.execute(
        f"SELECT {_DIR_COLS}, (SELECT count(*) FROM placements WHERE direction_slug = d.slug)"
        " FROM directions d WHERE d.slug = ?", (slug,)).fetchone()
    if not r:
        raise DirectionNotFound(slug)
    papers = tuple(paper_row(p) for p in db.conn.execute(
        f"SELECT {PAPER_COLS} FROM placements pl JOIN papers p ON p.id = pl.paper_id"
        " WHERE pl.direction_slug = ? ORDER BY (p.cited_by IS NULL), p.cited_by DESC, p.id LIMIT ?",
        (slug, top)))
    # Walk the event log backwards (ids only grow) until enough distinct citers are found.
    rows: list[tuple] = []
    seen: set[str] = set()
    for ev in db.conn.execute(
            f"SELECT {PAPER_COLS}, e.seen_at FROM events e JOIN papers p ON p.id = e.citing_id"
            " WHERE e.kind = 'citation' AND EXISTS (SELECT 1 FROM placements pl WHERE pl.paper_id = e.paper_id"
            " AND pl.direction_slug = ?) ORDER BY e.id DESC LIMIT 2000", (slug,)):
        if ev[0] not in seen:
            seen.add(ev[0])
            rows.append(ev)
            if len(rows) >= newest:
                break
    dirs = directions_of(db, [x[0] for x in rows])
    return DirectionView(_direction_row(r), papers, tuple(listed_paper(x, dirs) for x in rows))


def directions_by_area(db: Database) -> tuple[AreaDirections, ...]:
    rows = db.conn.execute(
        f"SELECT {_DIR_COLS}, (SELECT count(*) FROM placements pl WHERE pl.direction_slug = d.slug)"
        " FROM directions d ORDER BY d.area COLLATE NOCASE, d.name COLLATE NOCASE").fetchall()
    areas: dict[str, list[DirectionRow]] = {}
    for r in rows:
        areas.setdefault(r[2], []).append(_direction_row(r))
    return tuple(AreaDirections(a, tuple(ds)) for a, ds in areas.items())


def autocomplete_papers(db: Database, text: str, limit: int = AUTOCOMPLETE_LIMIT) -> tuple[Choice, ...]:
    """Up to 25 choices for a <paper> option: by id prefix, title prefix, then title words."""
    text = " ".join(text.split())[:200]
    limit = min(limit, AUTOCOMPLETE_LIMIT)
    seen: dict[str, tuple] = {}

    def add(rows: list[tuple]) -> None:
        for r in rows:
            if len(seen) < limit:
                seen.setdefault(r[0], r)

    c = db.conn
    if not text:
        add(c.execute(f"SELECT {PAPER_COLS} FROM papers p INDEXED BY papers_cited_by"
                      " WHERE p.cited_by IS NOT NULL ORDER BY p.cited_by DESC LIMIT ?", (limit,)).fetchall())
    else:
        pid = normalize_id(text)
        if pid:
            add(c.execute(f"SELECT {PAPER_COLS} FROM papers p WHERE p.id = ?", (pid,)).fetchall())
        if re.fullmatch(r"[\w.\-/]+", text):
            lo, hi = text, text + "\U0010ffff"
            add(c.execute(f"SELECT {PAPER_COLS} FROM papers p WHERE p.id >= ? AND p.id < ? ORDER BY p.id LIMIT ?",
                          (lo, hi, limit)).fetchall())
        if len(seen) < limit:
            lo, hi = _nocase_prefix_bounds(text)
            add(c.execute(f"SELECT {PAPER_COLS} FROM papers p WHERE p.title >= ? COLLATE NOCASE"
                          " AND p.title < ? COLLATE NOCASE ORDER BY p.title COLLATE NOCASE LIMIT ?",
                          (lo, hi, limit)).fetchall())
        q = fts_query(text, prefix_last=True)
        if q and len(seen) < limit:
            add(c.execute(f"SELECT {PAPER_COLS} FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
                          " WHERE papers_fts.title MATCH ? LIMIT ?", (q, limit)).fetchall())
    out = []
    for pid, title, year, *_ in seen.values():
        if len(pid) > CHOICE_MAX:
            continue
        label = f"{pid} · {title}" + (f" ({year})" if year else "")
        out.append(Choice(_clip(" ".join(label.split())), pid))
    return tuple(out)


def autocomplete_directions(db: Database, text: str, limit: int = AUTOCOMPLETE_LIMIT) -> tuple[Choice, ...]:
    """Up to 25 choices for a <direction> option: name prefix first, then names containing it."""
    text = " ".join(text.split())[:200]
    limit = min(limit, AUTOCOMPLETE_LIMIT)
    c = db.conn
    lo, hi = _nocase_prefix_bounds(text)
    rows = c.execute(f"SELECT {_DIR_COLS} FROM directions d WHERE d.name >= ? COLLATE NOCASE"
                     " AND d.name < ? COLLATE NOCASE ORDER BY d.name COLLATE NOCASE LIMIT ?",
                     (lo, hi, limit)).fetchall()
    if len(rows) < limit and text:
        esc = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        more = c.execute(f"SELECT {_DIR_COLS} FROM directions d WHERE (d.name LIKE ? ESCAPE '\\'"
                         " OR d.slug LIKE ? ESCAPE '\\') ORDER BY d.name LIMIT ?",
                         (f"%{esc}%", f"%{esc}%", limit * 2)).fetchall()
        rows += [r for r in more if r not in rows]
    out = []
    for slug, name, area, *_ in rows[:limit]:
        if len(slug) > CHOICE_MAX:
            continue
        out.append(Choice(_clip(f"{name} ({area})"), slug))
    return tuple(out)
