"""Writing parsed pages: one transaction per batch, diffed against what is stored.

History rules (DESIGN.md section 3): both sides of an edge are evidence; papers seen only
in lists become stubs; an older snapshot changes nothing; an identical page writes
nothing; every new edge and every growth of a stated count is an event with a growing id.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlite_utils import Database

from store.model import MapPage


@dataclass(frozen=True)
class SourceInfo:
    """Where a page came from and the validators to skip it next time."""

    location: str
    sha256: str
    size: int | None = None
    mtime_ns: int | None = None
    etag: str | None = None
    last_modified: str | None = None


@dataclass(frozen=True)
class Rejection:
    location: str
    line: int
    reason: str
    sha256: str | None = None

    def __str__(self) -> str:
        where = f"{self.location}:{self.line}" if self.line else self.location
        return f"{where}: {self.reason}"


@dataclass
class SaveResult:
    stored: list[str] = field(default_factory=list)  # paper ids whose page was written
    unchanged: int = 0
    stale: int = 0  # older than what is stored: ignored
    new_citations: int = 0
    new_papers: int = 0

    def add(self, other: SaveResult) -> None:
        self.stored += other.stored
        self.unchanged += other.unchanged
        self.stale += other.stale
        self.new_citations += other.new_citations
        self.new_papers += other.new_papers


def _iso(ts: datetime) -> str:
    return ts.isoformat(timespec="seconds")


def save_pages(db: Database, pages: Sequence[tuple[MapPage, SourceInfo]], now: datetime) -> SaveResult:
    """Store a batch of parsed pages in one transaction."""
    result = SaveResult()
    with db.atomic():
        for page, source in pages:
            _save_one(db, page, source, _iso(now), result)
    return result


def _save_source(db: Database, page_id: str, src: SourceInfo, now: str) -> None:
    db.conn.execute(
        "INSERT INTO sources (location, paper_id, sha256, size, mtime_ns, etag, last_modified, checked_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(location) DO UPDATE SET"
        " paper_id=excluded.paper_id, sha256=excluded.sha256, size=excluded.size,"
        " mtime_ns=excluded.mtime_ns, etag=excluded.etag, last_modified=excluded.last_modified,"
        " checked_at=excluded.checked_at",
        (src.location, page_id, src.sha256, src.size, src.mtime_ns, src.etag, src.last_modified, now),
    )
    db.conn.execute("DELETE FROM ingest_errors WHERE location = ?", (src.location,))


def page_hash(page: MapPage) -> str:
    """A hash of what the page says (not its bytes): reformatting a page is not a change."""
    return hashlib.sha256(repr(page).encode("utf-8", "surrogatepass")).hexdigest()


def _save_one(db: Database, page: MapPage, src: SourceInfo, now: str, result: SaveResult) -> None:
    conn = db.conn
    content_hash = page_hash(page)
    row = conn.execute(
        "SELECT p.has_page, p.data_through, p.cited_by,"
        " (SELECT content_hash FROM snapshots s WHERE s.paper_id = p.id ORDER BY s.id DESC LIMIT 1)"
        " FROM papers p WHERE p.id = ?",
        (page.id,),
    ).fetchone()
    had_page, stored_through, old_count, last_hash = row if row else (0, None, None, None)
    through = page.data_through.isoformat() if page.data_through else None

    if last_hash == content_hash:
        result.unchanged += 1
        _remember_unchanged(db, page.id, src, now)
        return
    if had_page and stored_through and through and through < stored_through:
        result.stale += 1
        _remember_unchanged(db, page.id, src, now)
        return

    cited = page.built_on_by.items if page.built_on_by else ()
    refs = page.builds_on.items if page.builds_on else ()
    year = page.first_posted.year if page.first_posted else None
    conn.execute(
        "INSERT INTO papers (id, title, year, url, arxiv_url, abstract, first_posted, cited_by,"
        " refs_in_map, refs_total, data_through, has_page, first_seen, updated)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET title=excluded.title, year=coalesce(excluded.year, year),"
        " url=coalesce(excluded.url, url), arxiv_url=excluded.arxiv_url, abstract=excluded.abstract,"
        " first_posted=excluded.first_posted, cited_by=excluded.cited_by,"
        " refs_in_map=excluded.refs_in_map, refs_total=excluded.refs_total,"
        " data_through=excluded.data_through, has_page=1, updated=excluded.updated",
        (page.id, page.title, year, page.map_url, page.arxiv_url, page.abstract,
         page.first_posted.isoformat() if page.first_posted else None, page.cited_by,
         page.refs_in_map, page.refs_total, through, now, now),
    )
    if not row:
        result.new_papers += 1
    snapshot_id = conn.execute(
        "INSERT INTO snapshots (paper_id, data_through, cited_by, refs_in_map, refs_total,"
        " citers_listed, refs_listed, content_hash, source, ingested_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (page.id, through, page.cited_by, page.refs_in_map, page.refs_total,
         len(cited), len(refs), content_hash, src.location, now),
    ).lastrowid

    # Directions and placements: the page's current placements replace the stored ones.
    conn.executemany(
        "INSERT INTO directions (slug, name, area, breadcrumb, url, direction_count)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(slug) DO UPDATE SET name=excluded.name,"
        " area=excluded.area, breadcrumb=excluded.breadcrumb, url=excluded.url,"
        " direction_count=coalesce(excluded.direction_count, direction_count)",
        [(p.slug, p.direction, p.area, p.breadcrumb, p.url,
          page.direction_count if i == 0 else None) for i, p in enumerate(page.placements)],
    )
    conn.execute("DELETE FROM placements WHERE paper_id = ?", (page.id,))
    conn.executemany(
        "INSERT OR IGNORE INTO placements (paper_id, direction_slug, position) VALUES (?, ?, ?)",
        [(page.id, p.slug, i + 1) for i, p in enumerate(page.placements)],
    )

    # Papers seen only in lists: stubs.
    listed = [it for it in (*refs, *cited) if it.id != page.id]
    conn.executemany(
        "INSERT OR IGNORE INTO papers (id, title, year, url, has_page, first_seen, updated)"
        " VALUES (?, ?, ?, ?, 0, ?, ?)",
        [(it.id, it.title, it.year, it.url, now, now) for it in listed],
    )

    # Edges from both lists; only those not stored yet come back from RETURNING.
    edges = [(page.id, it.id) for it in refs if it.id != page.id]
    edges += [(it.id, page.id) for it in cited if it.id != page.id]
    new_edges: list[tuple[str, str]] = []
    for chunk in _chunks(list(dict.fromkeys(edges)), 500):
        values = ",".join(["(?, ?, ?, ?)"] * len(chunk))
        params = [v for citing, cited_id in chunk for v in (citing, cited_id, now, snapshot_id)]
        new_edges += conn.execute(
            f"INSERT OR IGNORE INTO citations (citing_id, cited_id, first_seen, snapshot_id)"
            f" VALUES {values} RETURNING citing_id, cited_id",
            params,
        ).fetchall()
    # RETURNING order is not guaranteed: keep the page's order (most cited first).
    order = {edge: i for i, edge in enumerate(edges)}
    new_edges.sort(key=lambda e: order[(e[0], e[1])])
    conn.executemany(
        "INSERT INTO events (kind, paper_id, citing_id, snapshot_id, seen_at)"
        " VALUES ('citation', ?, ?, ?, ?)",
        [(cited_id, citing, snapshot_id, now) for citing, cited_id in new_edges],
    )
    result.new_citations += len(new_edges)

    # Growth of the stated count, with how much of it the page does not list by name.
    if had_page and old_count is not None and page.cited_by is not None and page.cited_by > old_count:
        named = sum(1 for _citing, cited_id in new_edges if cited_id == page.id)
        unlisted = max(0, page.cited_by - old_count - named)
        conn.execute(
            "INSERT INTO events (kind, paper_id, old_count, new_count, unlisted, snapshot_id, seen_at)"
            " VALUES ('count', ?, ?, ?, ?, ?, ?)",
            (page.id, old_count, page.cited_by, unlisted, snapshot_id, now),
        )

    _save_source(db, page.id, src, now)
    result.stored.append(page.id)


def _remember_unchanged(db: Database, page_id: str, src: SourceInfo, now: str) -> None:
    """Record new validators for a page whose content is already stored; write nothing else."""
    stored = db.conn.execute(
        "SELECT sha256, size, mtime_ns, etag, last_modified FROM sources WHERE location = ?",
        (src.location,),
    ).fetchone()
    if stored != (src.sha256, src.size, src.mtime_ns, src.etag, src.last_modified):
        _save_source(db, page_id, src, now)


def _chunks(items: list, size: int) -> list[list]:
    return [items[i:i + size] for i in range(0, len(items), size)]


def record_rejections(db: Database, rejections: Sequence[Rejection], now: datetime) -> None:
    """Remember rejected pages (for stats and /stats). Touches nothing else."""
    if not rejections:
        return
    ts = _iso(now)
    with db.atomic():
        db.conn.executemany(
            "INSERT INTO ingest_errors (location, line, reason, sha256, first_seen, last_seen)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(location) DO UPDATE SET line=excluded.line,"
            " reason=excluded.reason, sha256=excluded.sha256, last_seen=excluded.last_seen",
            [(r.location, r.line, r.reason, r.sha256, ts, ts) for r in rejections],
        )
