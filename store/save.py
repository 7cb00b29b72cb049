"""Writing parsed pages: one transaction per batch, diffed against what is stored.

History rules (docs/design.md, "History rules"): both sides of an edge are evidence; papers seen only
in lists become stubs; an older snapshot changes nothing; an identical page writes
nothing; every new edge and every growth of a stated count is an event with a growing id.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields, is_dataclass
from datetime import date, datetime

from mapwatch.store.model import ListedPaper, MapPage, PaperList
from sqlite_utils import Database


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
    """Store a batch of parsed pages in one transaction.

    The result is exactly that of saving the pages one after the other (same rows, same
    event ids and order); the work is done per batch, a few statements for all its pages.
    """
    result = SaveResult()
    ts = _iso(now)
    with db.atomic():
        for group in _distinct_groups(pages):
            _save_group(db.conn, group, ts, result)
    return result


def _distinct_groups(
        pages: Sequence[tuple[MapPage, SourceInfo]]) -> list[list[tuple[MapPage, SourceInfo]]]:
    """Consecutive runs in which no paper appears twice (a repeat starts a new run)."""
    groups: list[list[tuple[MapPage, SourceInfo]]] = [[]]
    seen: set[str] = set()
    for item in pages:
        if item[0].id in seen:
            groups.append([])
            seen = set()
        seen.add(item[0].id)
        groups[-1].append(item)
    return [g for g in groups if g]


def _save_source_rows(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    conn.executemany(
        "INSERT INTO sources (location, paper_id, sha256, size, mtime_ns, etag, last_modified, checked_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(location) DO UPDATE SET"
        " paper_id=excluded.paper_id, sha256=excluded.sha256, size=excluded.size,"
        " mtime_ns=excluded.mtime_ns, etag=excluded.etag, last_modified=excluded.last_modified,"
        " checked_at=excluded.checked_at",
        rows,
    )
    conn.executemany("DELETE FROM ingest_errors WHERE location = ?", [(r[0],) for r in rows])


HASH_FORMAT = "mapwatch-page/1"
HASH_PREFIX = "page/1:"  # stored hashes of this format start so; older ones are 64 hex digits


def page_hash(page: MapPage) -> str:
    """A hash of what the page says (not its bytes): reformatting a page is not a change.

    It is the sha256 of a canonical encoding: the page's fields as JSON with sorted keys,
    under a format version (`HASH_FORMAT`). Fields that are None, or equal to their declared
    default, are left out, so a field added to the model with a default changes no hash
    (README, "The database"). Stored as `HASH_PREFIX` + the hex digest."""
    text = '{"format":"' + HASH_FORMAT + '","page":' + canonical_json(page) + "}"
    return HASH_PREFIX + hashlib.sha256(text.encode("ascii")).hexdigest()


def legacy_page_hash(page: MapPage) -> str:
    """The hash of databases written before `HASH_FORMAT`: the sha256 of the page's repr (as
    the model had it then, spelled out in `_legacy_repr`), to recognise an unchanged page."""
    return hashlib.sha256(_legacy_repr(page).encode("utf-8", "surrogatepass")).hexdigest()


_REQUIRED = object()
# Per dataclass: ((JSON key, name, default or _REQUIRED), ...) in sorted key order.
_SPECS: dict[type, tuple[tuple[str, str, object], ...]] = {}
_str = json.encoder.encode_basestring_ascii  # type: ignore[attr-defined]


def _spec(cls: type) -> tuple[tuple[str, str, object], ...]:
    if not is_dataclass(cls):
        raise TypeError(f"cannot hash a {cls.__name__} in a page")
    spec = []
    for f in fields(cls):
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = _REQUIRED
        spec.append((_str(f.name) + ":", f.name, default))
    _SPECS[cls] = out = tuple(sorted(spec))
    return out


def canonical_json(value: object) -> str:
    """`value` as JSON text, exactly `json.dumps(plain, sort_keys=True, separators=(",", ":"))`
    of its plain form: a dataclass as an object without its None fields and those equal to
    their default, tuples and lists as arrays, dates as ISO text. Written out directly, as
    building the plain form first costs twice as much on a page with long lists."""
    kind = type(value)
    if kind is str:
        return _str(value)
    if value is None:
        return "null"
    if kind is bool:
        return "true" if value else "false"
    if kind is int:
        return int.__repr__(value)
    if kind is tuple or kind is list:
        return "[" + ",".join([canonical_json(x) for x in value]) + "]"  # type: ignore[attr-defined]
    if kind is float:
        return _finite(value)  # type: ignore[arg-type]
    if isinstance(value, date):
        return '"' + value.isoformat() + '"'
    parts = []
    for key, name, default in _SPECS.get(kind) or _spec(kind):
        x = getattr(value, name)
        if x is None or (default is not _REQUIRED and x == default):
            continue
        kx = type(x)  # the common kinds inline: this runs for every field of every list item
        parts.append(key + (_str(x) if kx is str else int.__repr__(x) if kx is int else canonical_json(x)))
    return "{" + ",".join(parts) + "}"


def _finite(x: float) -> str:
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError(f"cannot hash {x!r}")
    return float.__repr__(x)


def _tuple_repr(parts: list[str]) -> str:
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def _list_repr(lst: PaperList | None) -> str:
    if lst is None:
        return "None"
    items = _tuple_repr([
        f"ListedPaper(id={it.id!r}, title={it.title!r}, year={it.year!r}, position={it.position!r},"
        f" url={it.url!r})" for it in lst.items])
    return f"PaperList(shown={lst.shown!r}, total={lst.total!r}, items={items})"


def _fast_page_repr(p: MapPage) -> str:
    placements = _tuple_repr([
        f"Placement(breadcrumb={x.breadcrumb!r}, area={x.area!r}, direction={x.direction!r},"
        f" slug={x.slug!r}, url={x.url!r})" for x in p.placements])
    return (
        f"MapPage(id={p.id!r}, title={p.title!r}, arxiv_url={p.arxiv_url!r}, map_url={p.map_url!r},"
        f" cited_by={p.cited_by!r}, data_through={p.data_through!r}, direction={p.direction!r},"
        f" direction_count={p.direction_count!r}, area={p.area!r}, refs_in_map={p.refs_in_map!r},"
        f" refs_total={p.refs_total!r}, first_posted={p.first_posted!r}, placements={placements},"
        f" builds_on={_list_repr(p.builds_on)}, built_on_by={_list_repr(p.built_on_by)},"
        f" abstract={p.abstract!r})")


_legacy_repr = _fast_page_repr

def _chunked_query(conn: sqlite3.Connection, sql: str, keys: Sequence[str], size: int = 500) -> list[tuple]:
    """Run `sql` (with one `{}` for a list of placeholders) over `keys` in chunks."""
    rows: list[tuple] = []
    for i in range(0, len(keys), size):
        chunk = keys[i:i + size]
        rows += conn.execute(sql.format(",".join("?" * len(chunk))), chunk).fetchall()
    return rows


def _save_group(conn: sqlite3.Connection, group: list[tuple[MapPage, SourceInfo]], now: str,
                result: SaveResult) -> None:
    """Save pages of distinct papers, with the outcome of saving them one by one."""
    ids = [page.id for page, _src in group]
    stored = {row[0]: row[1:] for row in _chunked_query(
        conn,
        "SELECT p.id, p.has_page, p.data_through, p.cited_by,"
        " (SELECT content_hash FROM snapshots s WHERE s.paper_id = p.id ORDER BY s.id DESC LIMIT 1)"
        " FROM papers p WHERE p.id IN ({})", ids)}

    # Decide page by page, as a sequential save would.
    accepted: list[tuple[MapPage, SourceInfo, str, str | None]] = []  # page, source, hash, through
    upgraded: list[tuple[str, str, str]] = []  # (new hash, paper, legacy hash): same content
    kept_sources: list[tuple[MapPage, SourceInfo]] = []  # unchanged or stale: validators only
    order: list[tuple[int, int]] = []  # (0, index in accepted) | (1, index in kept_sources)
    for page, src in group:
        content_hash = page_hash(page)
        had_page, stored_through, _old, last_hash = stored.get(page.id, (0, None, None, None))
        through = page.data_through.isoformat() if page.data_through else None
        if last_hash == content_hash:
            result.unchanged += 1
        elif last_hash and not last_hash.startswith(HASH_PREFIX) and last_hash == legacy_page_hash(page):
            # Stored before HASH_FORMAT, same content: unchanged; its hash is rewritten once.
            result.unchanged += 1
            upgraded.append((content_hash, page.id, last_hash))
        elif had_page and stored_through and through and through < stored_through:
            result.stale += 1
        else:
            order.append((0, len(accepted)))
            accepted.append((page, src, content_hash, through))
            continue
        order.append((1, len(kept_sources)))
        kept_sources.append((page, src))

    if upgraded:
        conn.executemany("UPDATE snapshots SET content_hash = ? WHERE paper_id = ? AND content_hash = ?",
                         upgraded)
    if accepted:
        _write_accepted(conn, accepted, stored, now, result)

    # Sources, in page order: every stored page's, and the new validators of the others.
    kept_known = {row[0]: row[1:] for row in _chunked_query(
        conn, "SELECT location, sha256, size, mtime_ns, etag, last_modified FROM sources"
              " WHERE location IN ({})", list(dict.fromkeys(src.location for _p, src in kept_sources)))}
    source_rows: list[tuple] = []
    for kind, i in order:
        page, src = (accepted[i][0], accepted[i][1]) if kind == 0 else kept_sources[i]
        validators = (src.sha256, src.size, src.mtime_ns, src.etag, src.last_modified)
        if kind == 1 and kept_known.get(src.location) == validators:
            continue
        kept_known[src.location] = validators
        source_rows.append((src.location, page.id, *validators, now))
    if source_rows:
        _save_source_rows(conn, source_rows)


def _write_accepted(conn: sqlite3.Connection, accepted: list[tuple[MapPage, SourceInfo, str, str | None]],
                    stored: dict[str, tuple], now: str, result: SaveResult) -> None:
    page_ids = {page.id for page, *_rest in accepted}

    # Papers seen only in lists: the first listing of a paper with no row yet makes its stub
    # (INSERT OR IGNORE one page after the other). Stubs of papers whose page is in this group
    # are folded into the page's row below instead of written and then overwritten.
    listed: dict[str, ListedPaper] = {}
    for page, *_rest in accepted:
        for lst in (page.builds_on, page.built_on_by):
            if lst is not None:
                for it in lst.items:
                    if it.id != page.id and it.id not in listed:
                        listed[it.id] = it
    candidates = [pid for pid in listed if pid not in page_ids]
    existing = {row[0] for row in _chunked_query(conn, "SELECT id FROM papers WHERE id IN ({})", candidates)}

    paper_rows = []
    stubbed_before: set[str] = set()  # ids given a stub by an earlier page of the group
    listed_so_far: set[str] = set()
    for page, _src, _hash, through in accepted:
        year = page.first_posted.year if page.first_posted else None
        url = page.map_url
        if page.id not in stored and page.id in listed_so_far:
            stub = listed[page.id]  # what the stub would have held: coalesce as the upsert does
            stubbed_before.add(page.id)
            year = year if year is not None else stub.year
            url = url if url is not None else stub.url
        paper_rows.append((page.id, page.title, year, url, page.arxiv_url, page.abstract,
                           page.first_posted.isoformat() if page.first_posted else None, page.cited_by,
                           page.refs_in_map, page.refs_total, through, now, now))
        for lst in (page.builds_on, page.built_on_by):
            if lst is not None:
                listed_so_far.update(it.id for it in lst.items if it.id != page.id)
    conn.executemany(
        "INSERT INTO papers (id, title, year, url, arxiv_url, abstract, first_posted, cited_by,"
        " refs_in_map, refs_total, data_through, has_page, first_seen, updated)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)"
        " ON CONFLICT(id) DO UPDATE SET title=excluded.title, year=coalesce(excluded.year, year),"
        " url=coalesce(excluded.url, url), arxiv_url=excluded.arxiv_url, abstract=excluded.abstract,"
        " first_posted=excluded.first_posted, cited_by=excluded.cited_by,"
        " refs_in_map=excluded.refs_in_map, refs_total=excluded.refs_total,"
        " data_through=excluded.data_through, has_page=1, updated=excluded.updated",
        paper_rows,
    )
    result.new_papers += sum(1 for page, *_rest in accepted
                             if page.id not in stored and page.id not in stubbed_before)

    snapshot_ids: list[int] = []
    for page, src, content_hash, through in accepted:
        cited = page.built_on_by.items if page.built_on_by else ()
        refs = page.builds_on.items if page.builds_on else ()
        snapshot_ids.append(conn.execute(
            "INSERT INTO snapshots (paper_id, data_through, cited_by, refs_in_map, refs_total,"
            " citers_listed, refs_listed, content_hash, source, ingested_at)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (page.id, through, page.cited_by, page.refs_in_map, page.refs_total,
             len(cited), len(refs), content_hash, src.location, now),
        ).lastrowid or 0)

    # Directions: each page's placements overwrite the direction's fields; a stated count
    # is kept until another is stated. Merged here into one upsert per direction.
    directions: dict[str, list] = {}
    placement_rows = []
    for page, *_rest in accepted:
        for i, p in enumerate(page.placements):
            count = page.direction_count if i == 0 else None
            previous = directions.get(p.slug)
            if count is None and previous is not None:
                count = previous[5]
            directions[p.slug] = [p.slug, p.direction, p.area, p.breadcrumb, p.url, count]
            placement_rows.append((page.id, p.slug, i + 1))
    conn.executemany(
        "INSERT INTO directions (slug, name, area, breadcrumb, url, direction_count)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(slug) DO UPDATE SET name=excluded.name,"
        " area=excluded.area, breadcrumb=excluded.breadcrumb, url=excluded.url,"
        " direction_count=coalesce(excluded.direction_count, direction_count)",
        list(directions.values()),
    )
    # The page's current placements replace the stored ones.
    conn.executemany("DELETE FROM placements WHERE paper_id = ?", [(page.id,) for page, *_rest in accepted])
    conn.executemany("INSERT OR IGNORE INTO placements (paper_id, direction_slug, position) VALUES (?, ?, ?)",
                     placement_rows)

    conn.executemany(
        "INSERT OR IGNORE INTO papers (id, title, year, url, has_page, first_seen, updated)"
        " VALUES (?, ?, ?, ?, 0, ?, ?)",
        [(it.id, it.title, it.year, it.url, now, now) for pid, it in listed.items()
         if pid not in page_ids and pid not in existing],
    )

    # Edges from both lists, in page order (most cited first); the first page to show an
    # edge not stored yet reveals it.
    known = set(_chunked_query(conn, "SELECT citing_id, cited_id FROM citations WHERE citing_id IN ({})",
                               list(page_ids)))
    known.update(_chunked_query(conn, "SELECT citing_id, cited_id FROM citations WHERE cited_id IN ({})",
                                list(page_ids)))
    citation_rows = []
    event_rows: list[tuple] = []
    for (page, *_rest), snapshot_id in zip(accepted, snapshot_ids, strict=True):
        edges = [(page.id, it.id) for it in (page.builds_on.items if page.builds_on else ()) if it.id != page.id]
        edges += [(it.id, page.id) for it in (page.built_on_by.items if page.built_on_by else ()) if it.id != page.id]
        new_edges = [e for e in dict.fromkeys(edges) if e not in known]
        if len(new_edges) != len(edges):  # a repeated edge takes the place of its last mention
            last = {e: i for i, e in enumerate(edges)}
            new_edges.sort(key=last.__getitem__)
        known.update(new_edges)
        named = sum(1 for e in new_edges if e[1] == page.id)
        citation_rows += [(citing, cited_id, now, snapshot_id) for citing, cited_id in new_edges]
        event_rows += [(cited_id, citing, snapshot_id, now) for citing, cited_id in new_edges]
        result.new_citations += len(new_edges)
        # Growth of the stated count, with how much of it the page does not list by name.
        had_page, _through, old_count, _hash = stored.get(page.id, (0, None, None, None))
        if had_page and old_count is not None and page.cited_by is not None and page.cited_by > old_count:
            unlisted = max(0, page.cited_by - old_count - named)
            event_rows.append((page.id, old_count, page.cited_by, unlisted, snapshot_id, now, None))
        result.stored.append(page.id)
    conn.executemany("INSERT INTO citations (citing_id, cited_id, first_seen, snapshot_id) VALUES (?, ?, ?, ?)",
                     citation_rows)
    _insert_events(conn, event_rows)


def _insert_events(conn: sqlite3.Connection, rows: list[tuple]) -> None:
    """Insert events in order: runs of citation events (4-tuples) and count events (7-tuples)."""
    start = 0
    while start < len(rows):
        kind = len(rows[start])
        end = start
        while end < len(rows) and len(rows[end]) == kind:
            end += 1
        if kind == 4:
            conn.executemany("INSERT INTO events (kind, paper_id, citing_id, snapshot_id, seen_at)"
                             " VALUES ('citation', ?, ?, ?, ?)", rows[start:end])
        else:
            conn.executemany("INSERT INTO events (kind, paper_id, old_count, new_count, unlisted, snapshot_id,"
                             " seen_at) VALUES ('count', ?, ?, ?, ?, ?, ?)", [r[:6] for r in rows[start:end]])
        start = end


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
