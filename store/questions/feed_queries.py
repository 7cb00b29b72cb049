"""Read side for feeds and alerts: who newly cites what, and when it was first seen.

Plain frozen dataclasses out; timestamps are the stored ISO 8601 UTC strings.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import date, timedelta

from sqlite_utils import Database

from mapwatch.store.database.paper_keys import EVENT_CITATION
from mapwatch.store.database.rows import fill, named_cursor, named_row, named_rows, one_column, rows_in_chunks, scalar
from mapwatch.store.ids import paper_link
from mapwatch.store.questions.authors import bylines, contexts, with_feed_bylines
from mapwatch.store.questions.direction_push import IN_RANK_ORDER
from mapwatch.store.questions.types import Byline, Direction, NewCiter, PaperRef, from_sources


@dataclass(frozen=True)
class CountGrowth:
    """A page's stated cited-by count grew; `unlisted` of the new citers are not named on it."""

    event_id: int
    old_count: int
    new_count: int
    unlisted: int
    seen_at: str


def _ref(r: sqlite3.Row) -> PaperRef:
    """A paper from a row with the `_PAPER_COLS` columns (and maybe more), read by name."""
    return fill(PaperRef, r, arxiv_url=r["arxiv_url"] or paper_link(r["id"]))


def directions(db: Database) -> list[Direction]:
    """Every direction, with its paper count as of the feed index's last update (store/database/feed_index.py)."""
    rows = named_rows(
        db, "SELECT d.slug, d.name, d.area, d.breadcrumb, d.url, coalesce(st.papers, 0) AS papers,"
        " coalesce(st.since, '1970-01-01T00:00:00+00:00') AS since"
        " FROM directions d LEFT JOIN feed_direction_stats st ON st.direction_slug = d.slug"
        " ORDER BY d.area, d.name, d.slug")
    return [fill(Direction, r) for r in rows]


_PAPER_COLS = "p.id, p.title, p.year, p.url, p.arxiv_url"  # a PaperRef's columns (`_ref`)


def direction_citers(db: Database, slug: str, limit: int = 100) -> list[NewCiter]:
    """Papers seen citing a paper placed in `slug`, newest first (the first import included), as of
    the feed index's last update (store/database/feed_index.py; publish updates it first)."""
    rows = named_rows(
        db, f"SELECT {_PAPER_COLS}, dc.first_seen, dc.first_event_id, dc.at_first_read, p.first_posted"
        " FROM feed_direction_citers dc"
        " JOIN papers p ON p.id = dc.citing_id WHERE dc.direction_slug = ?"
        " ORDER BY dc.first_seen DESC, dc.first_event_id ASC LIMIT ?", (slug, limit))
    if not rows:
        return []
    ids = [r["id"] for r in rows]
    cited: dict[str, list[PaperRef]] = {}
    known_from: dict[str, list[str]] = {}
    marks = ",".join("?" * len(ids))
    for row in named_cursor(
            # CROSS JOIN: from the listed citers' citations (bounded), never from every placement of the direction
            db, f"SELECT c.citing_id, {_PAPER_COLS}, c.provenance FROM citations c"
            " CROSS JOIN placements pl ON pl.paper_id = c.cited_id AND pl.direction_slug = ?"
            f" CROSS JOIN papers p ON p.id = c.cited_id WHERE c.citing_id IN ({marks})"
            " ORDER BY c.citing_id, p.cited_by DESC, p.id", (slug, *ids)):
        cited.setdefault(row["citing_id"], []).append(_ref(row))
        known_from.setdefault(row["citing_id"], []).append(row["provenance"])
    return with_feed_bylines(db, [_new_citer(r, tuple(cited.get(r["id"], ())), known_from.get(r["id"], ()))
                                  for r in rows])


def _new_citer(r: sqlite3.Row, cites: tuple[PaperRef, ...], known_from: Iterable[str]) -> NewCiter:
    """A feed entry from a row with the `_PAPER_COLS` columns, `first_seen`, `first_event_id`,
    `at_first_read` and `first_posted`."""
    return NewCiter(_ref(r), r["first_seen"], r["first_event_id"], cites, at_first_read=bool(r["at_first_read"]),
                    posted=r["first_posted"], provenance=from_sources(known_from))


def paper(db: Database, paper_id: str) -> PaperRef | None:
    row = named_row(db, f"SELECT {_PAPER_COLS} FROM papers p WHERE p.id = ?", (paper_id,))
    return _ref(row) if row else None


def paper_first_seen(db: Database, paper_id: str) -> str:
    row = named_row(db, "SELECT first_seen FROM papers WHERE id = ?", (paper_id,))
    first_seen: str = row["first_seen"] if row else "1970-01-01T00:00:00+00:00"
    return first_seen


def followed_papers(db: Database) -> list[str]:
    """Papers that get a feed of their own: those with a page or with a citer."""
    # The cited papers' keys first (event_log holds keys), then their ids: one lookup a paper,
    # not one an event.
    return one_column(db, "SELECT id FROM papers WHERE has_page = 1 UNION SELECT k.id FROM paper_keys k"
                          " WHERE k.key IN (SELECT paper_key FROM event_log WHERE citing_key IS NOT NULL) ORDER BY 1")


def with_citation_contexts(db: Database, paper_id: str, citers: list[NewCiter]) -> list[NewCiter]:
    """A paper's citers with what Semantic Scholar says of their citation of it (its page shows it)."""
    said = contexts(db, paper_id, [c.citer.id for c in citers])
    return [replace(c, context=said[c.citer.id]) if c.citer.id in said else c for c in citers]


def paper_citers(db: Database, paper_id: str, limit: int = 100) -> list[NewCiter]:
    me = paper(db, paper_id)
    rows = named_rows(
        db, f"SELECT {_PAPER_COLS}, e.seen_at AS first_seen, e.id AS first_event_id,"
        " coalesce(c.at_first_read, 0) AS at_first_read, p.first_posted, coalesce(c.provenance, 'map') AS provenance"
        f" FROM events e JOIN papers p ON p.id = e.citing_id{EVENT_CITATION}"
        " WHERE e.kind = 'citation' AND e.paper_id = ? ORDER BY e.seen_at DESC, e.id ASC LIMIT ?",
        (paper_id, limit))
    return with_feed_bylines(db, [_new_citer(r, (me,) if me else (), [r["provenance"]]) for r in rows])


def paper_count_growth(db: Database, paper_id: str, limit: int = 100) -> list[CountGrowth]:
    rows = named_rows(
        db, "SELECT id AS event_id, old_count, new_count, unlisted, seen_at FROM events"
        " WHERE kind = 'count' AND paper_id = ? AND unlisted > 0 ORDER BY id DESC LIMIT ?",
        (paper_id, limit))
    return [fill(CountGrowth, r) for r in rows]


def last_event_id(db: Database) -> int:
    return int(scalar(db, "SELECT coalesce(max(id), 0) FROM events"))


def papers_with_pages(db: Database, limit: int = 100) -> list[str]:
    """Ids of papers that have a page, most cited first."""
    return one_column(db, "SELECT id FROM papers WHERE has_page = 1 ORDER BY cited_by DESC, id LIMIT ?", (limit,))


def last_snapshot_id(db: Database) -> int:
    return int(scalar(db, "SELECT coalesce(max(id), 0) FROM snapshots"))


def papers_changed_since(db: Database, last_event_id: int, last_snapshot_id: int) -> set[str]:
    """Papers whose own feed and page differ since those cursors: they gained events, or their
    page was stored again. As with the ETag of a paper built on demand (feeds/serving/ondemand.py), a
    citer's title corrected on the citer's own page shows at the paper's next change (docs/feeds.md,
    "Feeds and web pages"), so a 2% change rebuilds about 2% of the papers, not every paper they cite."""
    return set(one_column(
        db, "SELECT paper_id FROM events WHERE id > :e UNION SELECT paper_id FROM snapshots WHERE id > :s",
        {"e": last_event_id, "s": last_snapshot_id}))


def last_enrichment_id(db: Database) -> int:
    """The newest change of a paper's authors or venue (table enrichment_changes; 0: none)."""
    return int(scalar(db, "SELECT coalesce(max(id), 0) FROM enrichment_changes"))


def papers_enriched_since(db: Database, last_enrichment_id: int) -> set[str]:
    """Papers whose feed or page shows authors that changed since that cursor: the paper itself
    (its page names its authors) and the papers it cites (their feeds and pages list it as a
    citer, with its byline)."""
    changed = set(one_column(db, "SELECT DISTINCT paper_id FROM enrichment_changes WHERE id > ?",
                             (last_enrichment_id,)))
    return changed | _column_in(db, "SELECT cited_id FROM citations WHERE citing_id IN ({})", changed)


# ---------------------------------------------------------------------------- web pages


@dataclass(frozen=True)
class DirectionActivity:
    """How many papers newly cite a direction's papers since two instants, and the newest. Citers
    known at the first read of what they cite are not new (docs/feeds.md, "What new means")."""

    slug: str
    recent: int  # new citers first seen at or after the first instant (e.g. 7 days ago)
    month: int  # new citers first seen at or after the second (e.g. 30 days ago)
    newest: str | None  # first_seen of the newest new citer; None: none since the first read
    known: bool = True  # it has citers (new or known at the first read)


def direction_activity(db: Database, recent_since: str, month_since: str) -> dict[str, DirectionActivity]:
    """Per direction slug, counted as its feed counts entries (a citer once, at its first event), from
    the feed index: whole days from its per-day counts, the day each instant falls in from a range
    of its newest-first index (bounded by a month of days and one day's citers, not by the map).
    The instants are ISO 8601 UTC strings, compared with the stored `seen_at`."""
    recent, month = _SINCE.format(at=":r", day=":rd", next=":rn"), _SINCE.format(at=":m", day=":md", next=":mn")
    rows = db.conn.execute(
        f"SELECT slug, {recent}, {month},"
        # the newest new citer: within the newest day that counted one (bounded by that day's citers)
        " (SELECT max(first_seen) FROM feed_direction_citers WHERE direction_slug = slug AND at_first_read = 0"
        "  AND first_seen >= (SELECT max(day) FROM feed_direction_days WHERE direction_slug = slug AND citers > 0)),"
        " EXISTS (SELECT 1 FROM feed_direction_citers WHERE direction_slug = slug)"
        " FROM (SELECT slug FROM directions)",
        {"r": recent_since, "rd": recent_since[:10], "rn": _next_day(recent_since),
         "m": month_since, "md": month_since[:10], "mn": _next_day(month_since)})
    return {s: DirectionActivity(s, r or 0, m or 0, n, True) for s, r, m, n, known in rows if known}


# Citers first seen at or after {at}: the days after its own, plus its own day's from {at} on.
_SINCE = ("(SELECT coalesce(sum(citers), 0) FROM feed_direction_days WHERE direction_slug = slug AND day > {day})"
          " + (SELECT count(*) FROM feed_direction_citers WHERE direction_slug = slug"
          " AND first_seen >= {at} AND first_seen < {next} AND at_first_read = 0)")


def _next_day(iso: str) -> str:
    """The date after the one `iso` starts with (every timestamp of that day sorts below it)."""
    return (date.fromisoformat(iso[:10]) + timedelta(days=1)).isoformat()


@dataclass(frozen=True)
class LeadPaper:
    paper: PaperRef
    cited_by: int | None  # the count its page states; None without a page
    rank: int | None = None  # PageRank rank within the direction (1 = highest), when listed by it


_LARGE_DIRECTION = 2000  # papers placed: walk the most cited papers of the map, not the direction's own


def direction_leaders(db: Database, slug: str, top: int = 10,
                      placed: int = 0) -> tuple[tuple[LeadPaper, ...], tuple[LeadPaper, ...]]:
    """A direction's most cited papers, and its papers by stored PageRank (empty until computed).
    `placed` (its paper count) picks the plan: a large direction finds its most cited papers
    early in the map's most cited ones; a small one sorts its own."""
    cited: list[sqlite3.Row] = []
    if placed >= _LARGE_DIRECTION:
        cited = named_rows(
            db, f"SELECT {_PAPER_COLS}, p.cited_by FROM papers p INDEXED BY papers_cited_by"
            " CROSS JOIN placements pl ON pl.paper_id = p.id AND pl.direction_slug = ?"
            " WHERE p.cited_by IS NOT NULL ORDER BY p.cited_by DESC, p.id LIMIT ?", (slug, top))
    if len(cited) < top:
        cited = named_rows(
            db, f"SELECT {_PAPER_COLS}, p.cited_by FROM placements pl JOIN papers p ON p.id = pl.paper_id"
            " WHERE pl.direction_slug = ? ORDER BY (p.cited_by IS NULL), p.cited_by DESC, p.id LIMIT ?",
            (slug, top))
    ranked = named_rows(db, f"SELECT {_PAPER_COLS}, p.cited_by" + IN_RANK_ORDER, (slug, top))
    return (tuple(LeadPaper(_ref(r), r["cited_by"]) for r in cited),
            tuple(LeadPaper(_ref(r), r["cited_by"], rank) for rank, r in enumerate(ranked, 1)))


@dataclass(frozen=True)
class PaperFacts:
    paper: PaperRef
    has_page: bool
    cited_by: int | None
    data_through: str | None  # ISO date its page states its data is through
    refs_in_map: int | None
    refs_total: int | None
    first_posted: str | None
    directions: tuple[tuple[str, str], ...]  # (slug, name), main direction first
    byline: Byline | None = None  # its authors, when a source named them


def paper_facts(db: Database, paper_id: str) -> PaperFacts | None:
    row = named_row(
        db, f"SELECT {_PAPER_COLS}, p.has_page, p.cited_by, p.data_through, p.refs_in_map, p.refs_total,"
        " p.first_posted FROM papers p WHERE p.id = ?", (paper_id,))
    if row is None:
        return None
    dirs = tuple((s, n) for s, n in db.conn.execute(
        "SELECT d.slug, d.name FROM placements pl JOIN directions d ON d.slug = pl.direction_slug"
        " WHERE pl.paper_id = ? ORDER BY pl.position, d.slug", (paper_id,)))
    return fill(PaperFacts, row, paper=_ref(row), has_page=bool(row["has_page"]), directions=dirs,
                byline=bylines(db, [paper_id]).get(paper_id))


def papers_with_history(db: Database) -> list[str]:
    """Papers whose page was stored with two data-through dates or more (they get a count chart)."""
    return one_column(
        db, "SELECT paper_id FROM snapshots WHERE data_through IS NOT NULL AND cited_by IS NOT NULL GROUP BY paper_id"
        " HAVING count(DISTINCT data_through) >= 2 ORDER BY paper_id")


# ---------------------------------------------------------------------------- paper feeds on demand


@dataclass(frozen=True)
class PaperMark:
    """What a paper's own feed and page are built from, as of now: its newest event and
    its newest stored page (0: none). Read from one indexed row (docs/feeds.md, "Feeds and web pages")."""

    paper_id: str
    last_event_id: int
    last_snapshot_id: int
    last_enrichment_id: int = 0  # the newest change of its own or a citer's authors (0: none)


def paper_mark(db: Database, paper_id: str) -> PaperMark | None:
    """The paper's mark if it has a feed of its own (a page, or a citer), else None."""
    row = named_row(
        db, "SELECT p.has_page, (SELECT max(id) FROM events WHERE paper_id = p.id) AS last_event_id,"
        " (SELECT max(id) FROM snapshots WHERE paper_id = p.id) AS last_snapshot_id,"
        " EXISTS (SELECT 1 FROM events WHERE paper_id = p.id AND kind = 'citation') AS cited"
        " FROM papers p WHERE p.id = ?", (paper_id,))
    if row is None or not (row["has_page"] or row["cited"]):
        return None
    enriched = scalar(
        db, "SELECT max(id) FROM enrichment_changes WHERE paper_id = ? OR paper_id IN"
        " (SELECT citing_id FROM citations WHERE cited_id = ?)", (paper_id, paper_id))
    return PaperMark(paper_id, row["last_event_id"] or 0, row["last_snapshot_id"] or 0, enriched or 0)


def has_feed(db: Database, paper_id: str) -> bool:
    """True for a paper that gets a feed and a page of its own (as `followed_papers` lists)."""
    return bool(scalar(
        db, "SELECT EXISTS (SELECT 1 FROM papers WHERE id = ? AND has_page = 1)"
        " OR EXISTS (SELECT 1 FROM events WHERE paper_id = ? AND kind = 'citation')",
        (paper_id, paper_id)) == 1)


def _column_in(db: Database, sql: str, ids: set[str]) -> set[str]:
    """The values of `sql`'s one column over `ids` (its `{}`: their placeholders), a chunk at a
    time: one query per 500 ids, not one per id."""
    return {value for (value,) in rows_in_chunks(db, sql, sorted(ids))}


def have_feeds(db: Database, paper_ids: set[str]) -> set[str]:
    """Of these papers, those `has_feed` is true for: one query per 500 ids, not one per id."""
    return _column_in(db, "SELECT p.id FROM papers p WHERE p.id IN ({}) AND (p.has_page = 1"
                          " OR EXISTS (SELECT 1 FROM events e WHERE e.paper_id = p.id AND e.kind = 'citation'))",
                      paper_ids)


def tracked_papers(db: Database) -> list[str]:
    """Papers some channel tracks (/track) that have a feed: their files are published to disk."""
    return [pid for pid in one_column(db, "SELECT DISTINCT paper_id FROM tracks WHERE paper_id IS NOT NULL ORDER BY 1")
            if has_feed(db, pid)]


def directions_of(db: Database, paper_ids: set[str]) -> set[str]:
    """The directions these papers are placed in (their feeds and pages may have changed)."""
    return _column_in(db, "SELECT DISTINCT direction_slug FROM placements WHERE paper_id IN ({})", paper_ids)
