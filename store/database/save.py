"""Writing parsed pages: one transaction per batch, diffed against what is stored.

History rules (docs/design.md, "2. History rules"): both sides of an edge are evidence; papers seen only
in lists become stubs; an older snapshot changes nothing; an identical page writes
nothing; every new edge and every growth of a stated count is an event with a growing id.
"Older" is judged against a stored date that can be true: one an older version stored from a
page of the future (or from before arXiv) is ignored, so it cannot freeze its paper
(store/pages/page_dates.py).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from itertools import chain
from typing import Any
from urllib.parse import urlsplit

from sqlite_utils import Database

from mapwatch.store.clock import unix_seconds
from mapwatch.store.database.event_batches import record_batch
from mapwatch.store.database.paper_keys import keys_of, stored_keys
from mapwatch.store.database.prepared import Listed, Prepared, SourceInfo, prepare
from mapwatch.store.database.rows import next_ids, rows_in_chunks, scalar
from mapwatch.store.pages.model import MapPage
from mapwatch.store.pages.page_dates import possible_iso
from mapwatch.store.pages.page_hash import HASH_PREFIX


@dataclass(frozen=True)
class Rejection:
    location: str
    line: int
    reason: str
    sha256: str | None = None

    def __str__(self) -> str:
        where = f"{self.location}:{self.line}" if self.line else self.location
        return f"{where}: {self.reason}"


# Directions a host's pages may create. A real map has a few hundred (the seeds' area has 17);
# past this, a page that would place its paper in a direction not stored yet is rejected, so
# pages cannot flood the database, the feeds and the published files with directions.
MAX_DIRECTIONS_PER_HOST = 2_000


@dataclass
class SaveResult:
    stored: list[str] = field(default_factory=list)  # paper ids whose page was written
    unchanged: int = 0
    stale: int = 0  # older than what is stored: ignored
    new_citations: int = 0
    new_papers: int = 0
    paged: int = 0  # papers given a page by this save (new ones, and stubs that had none)
    rejected: list[Rejection] = field(default_factory=list)  # pages refused while saving (nothing stored)

    def add(self, other: SaveResult) -> None:
        self.stored += other.stored
        self.rejected += other.rejected
        self.unchanged += other.unchanged
        self.stale += other.stale
        self.new_citations += other.new_citations
        self.new_papers += other.new_papers
        self.paged += other.paged


def _iso(ts: datetime) -> str:
    return ts.isoformat(timespec="seconds")


def save_pages(db: Database, pages: Sequence[tuple[MapPage, SourceInfo]], now: datetime) -> SaveResult:
    """Store a batch of parsed pages in one transaction.

    The result is exactly that of saving the pages one after the other (same rows, same
    event ids and order); the work is done per batch, a few statements for all its pages.
    """
    return save_prepared(db, [prepare(page, src) for page, src in pages], now)


def save_prepared(db: Database, pages: Sequence[Prepared], now: datetime) -> SaveResult:
    """`save_pages` for pages already turned into rows (`store.database.prepared.prepare`)."""
    result = SaveResult()
    ts = _iso(now)
    with db.atomic():
        for group in _distinct_groups(pages):
            _save_group(db.conn, group, ts, now.date(), result)
    return result


def _distinct_groups(pages: Sequence[Prepared]) -> list[list[Prepared]]:
    """Consecutive runs in which no paper appears twice (a repeat starts a new run)."""
    groups: list[list[Prepared]] = [[]]
    seen: set[str] = set()
    for item in pages:
        if item.id in seen:
            groups.append([])
            seen = set()
        seen.add(item.id)
        groups[-1].append(item)
    return [g for g in groups if g]


_VALIDATORS = SourceInfo._fields[1:]  # sha256, size, mtime_ns, etag, last_modified: columns of `sources` too
ROWS_PER_STATEMENT = 64  # rows an INSERT writes at once (its VALUES list); see _insert


def _insert(conn: sqlite3.Connection, head: str, row: str, rows: Sequence[Sequence[Any]], tail: str = "") -> None:
    """`head VALUES row tail` for every row in order, `ROWS_PER_STATEMENT` rows a statement:
    the same rows as one statement per row (the VALUES rows are inserted in their order, each
    upsert seeing the rows before it), without running the statement's fixed work once per
    row (SQLite's start and end of a statement: for an AUTOINCREMENT table, a read and a
    write of sqlite_sequence)."""
    n = ROWS_PER_STATEMENT
    whole = len(rows) - len(rows) % n
    if whole:
        conn.executemany(f"{head} VALUES {','.join([row] * n)} {tail}",
                         (list(chain.from_iterable(rows[i:i + n])) for i in range(0, whole, n)))
    if whole < len(rows):
        conn.executemany(f"{head} VALUES {row} {tail}", rows[whole:])


def _save_source_rows(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    _insert(conn, "INSERT INTO sources (location, paper_id, sha256, size, mtime_ns, etag, last_modified, checked_at)",
            "(?, ?, ?, ?, ?, ?, ?, ?)", rows,
            "ON CONFLICT(location) DO UPDATE SET"
            " paper_id=excluded.paper_id, sha256=excluded.sha256, size=excluded.size,"
            " mtime_ns=excluded.mtime_ns, etag=excluded.etag, last_modified=excluded.last_modified,"
            " checked_at=excluded.checked_at")
    rows_in_chunks(conn, "DELETE FROM ingest_errors WHERE location IN ({})", [location for location, *_ in rows])


def _save_group(conn: sqlite3.Connection, group: list[Prepared], now: str, today: date,
                result: SaveResult) -> None:
    """Save pages of distinct papers, with the outcome of saving them one by one."""
    # paper -> (has_page, data_through, cited_by, its last snapshot's hash)
    stored = {r["id"]: (r["has_page"], r["data_through"], r["cited_by"], r["last_hash"]) for r in rows_in_chunks(
        conn,
        "SELECT p.id, p.has_page, p.data_through, p.cited_by,"
        " (SELECT content_hash FROM snapshots s WHERE s.paper_id = p.id ORDER BY s.id DESC LIMIT 1) AS last_hash"
        " FROM papers p WHERE p.id IN ({})", [p.id for p in group])}

    room = _DirectionRoom(conn, group)
    # Decide page by page, as a sequential save would.
    accepted: list[Prepared] = []
    upgraded: list[tuple[str, str, str]] = []  # (new hash, paper, legacy hash): same content
    kept: list[Prepared] = []  # unchanged or stale: validators only
    order: list[tuple[bool, Prepared]] = []  # (accepted?, page) in page order
    for p in group:
        had_page, stored_through, _old, last_hash = stored.get(p.id, (0, None, None, None))
        if last_hash == p.hash:
            result.unchanged += 1
        elif last_hash and not last_hash.startswith(HASH_PREFIX) and last_hash == p.legacy:
            # Stored before HASH_FORMAT, same content: unchanged; its hash is rewritten once.
            result.unchanged += 1
            upgraded.append((p.hash, p.id, last_hash))
        elif (had_page and stored_through and p.through and p.through < stored_through
              and possible_iso(stored_through, today)):  # an impossible stored date is no reference
            result.stale += 1
        elif (over := room.take(p)) is not None:
            result.rejected.append(Rejection(p.source.location, 0, over, p.source.sha256 or None))
            continue  # (nothing of it is stored, its validators neither: it is read again)
        else:
            order.append((True, p))
            accepted.append(p)
            continue
        order.append((False, p))
        kept.append(p)

    if upgraded:
        conn.executemany("UPDATE snapshots SET content_hash = ? WHERE paper_id = ? AND content_hash = ?",
                         upgraded)
    if accepted:
        _write_accepted(conn, accepted, stored, now, result)

    # Sources, in page order: every stored page's, and the new validators of the others.
    # location -> its stored validators, in SourceInfo's order (as `validators` below)
    kept_known = {r["location"]: tuple(r[f] for f in _VALIDATORS) for r in rows_in_chunks(
        conn, f"SELECT location, {', '.join(_VALIDATORS)} FROM sources"
              " WHERE location IN ({})", list(dict.fromkeys(p.source.location for p in kept)))}
    source_rows: list[tuple[Any, ...]] = []
    for was_accepted, p in order:
        location, *validators = p.source
        if not was_accepted and kept_known.get(location) == tuple(validators):
            continue
        kept_known[location] = tuple(validators)
        source_rows.append((location, p.id, *validators, now))
    if source_rows:
        _save_source_rows(conn, source_rows)


class _DirectionRoom:
    """How many more directions each host's pages may create (MAX_DIRECTIONS_PER_HOST). The
    stored directions are counted only when a page of the group names one not stored yet."""

    def __init__(self, conn: sqlite3.Connection, group: list[Prepared]) -> None:
        self.conn = conn
        slugs = list({slug for p in group for slug, *_ in p.placements})
        self.known = {r["slug"] for r in rows_in_chunks(conn, "SELECT slug FROM directions WHERE slug IN ({})", slugs)}
        self.per_host: dict[str, int] | None = None

    def take(self, p: Prepared) -> str | None:
        """Why `p` may not be stored (its new directions are over its host's bound), or None;
        the directions of a page that may be stored count from then on."""
        new = {slug: _host(url) for slug, _name, _area, _crumb, url in p.placements if slug not in self.known}
        if not new:
            return None
        if self.per_host is None:
            self.per_host = {}
            for (url,) in self.conn.execute("SELECT url FROM directions"):
                host = _host(url)
                self.per_host[host] = self.per_host.get(host, 0) + 1
        for host in set(new.values()):
            adding = sum(1 for h in new.values() if h == host)
            if self.per_host.get(host, 0) + adding > MAX_DIRECTIONS_PER_HOST:
                return (f"would place its paper in {adding} new direction{'s' * (adding != 1)}: "
                        f"{host or 'its host'} already has {self.per_host.get(host, 0):,} "
                        f"(at most {MAX_DIRECTIONS_PER_HOST:,} a host)")
        for host in new.values():
            self.per_host[host] = self.per_host.get(host, 0) + 1
        self.known.update(new)
        return None


def _host(url: str | None) -> str:
    try:
        return (urlsplit(url).hostname or "") if url else ""
    except ValueError:
        return ""


def _write_accepted(conn: sqlite3.Connection, accepted: list[Prepared], stored: dict[str, tuple[Any, ...]], now: str,
                    result: SaveResult) -> None:
    page_ids = {p.id for p in accepted}

    # Papers seen only in lists: the first listing of a paper with no row yet makes its stub
    # (INSERT OR IGNORE one page after the other). Stubs of papers whose page is in this group
    # are folded into the page's row below instead of written and then overwritten.
    listed: dict[str, Listed] = {}
    first_listed: dict[str, int] = {}  # paper -> the position in the group of the page first listing it
    for i, p in enumerate(accepted):
        for it in p.listed:
            listed_id, _title, _year, _url = it
            if listed_id not in listed:
                listed[listed_id] = it
                first_listed[listed_id] = i

    paper_rows = []
    stubbed_before: set[str] = set()  # ids given a stub by an earlier page of the group
    for i, p in enumerate(accepted):
        year, url = p.year, p.url
        if p.id not in stored and first_listed.get(p.id, i) < i:
            # what the stub would have held: coalesce as the upsert does
            _id, _title, stub_year, stub_url = listed[p.id]
            stubbed_before.add(p.id)
            year = year if year is not None else stub_year
            url = url if url is not None else stub_url
        title, arxiv_url, abstract, posted, cited_by, refs_in_map, refs_total = p.row
        paper_rows.append((p.id, title, year, url, arxiv_url, abstract, posted, cited_by, refs_in_map,
                           refs_total, p.through, now, now))
    _insert(conn, "INSERT INTO papers (id, title, year, url, arxiv_url, abstract, first_posted, cited_by,"
            " refs_in_map, refs_total, data_through, has_page, first_seen, updated)",
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)", paper_rows,
            "ON CONFLICT(id) DO UPDATE SET title=excluded.title, year=coalesce(excluded.year, year),"
            " url=coalesce(excluded.url, url), arxiv_url=excluded.arxiv_url, abstract=excluded.abstract,"
            " first_posted=excluded.first_posted, cited_by=excluded.cited_by,"
            " refs_in_map=excluded.refs_in_map, refs_total=excluded.refs_total,"
            " data_through=excluded.data_through, has_page=1, updated=excluded.updated")
    result.new_papers += sum(1 for p in accepted if p.id not in stored and p.id not in stubbed_before)
    for p in accepted:
        had_page, _through, _count, _hash = stored.get(p.id, (0, None, None, None))
        result.paged += not had_page

    snapshot_ids = _insert_snapshots(conn, accepted, now)

    # Directions: each page's placements overwrite the direction's fields; a stated count
    # is kept until another is stated. Merged here into one upsert per direction.
    directions: dict[str, tuple[Any, ...]] = {}
    stated: dict[str, int | None] = {}  # the count each direction's row holds so far
    placement_rows = []
    for p in accepted:
        for i, (slug, name, area, breadcrumb, durl) in enumerate(p.placements):
            count = p.direction_count if i == 0 else None
            if count is None:
                count = stated.get(slug)
            stated[slug] = count
            directions[slug] = (slug, name, area, breadcrumb, durl, count)
            placement_rows.append((p.id, slug, i + 1))
    conn.executemany(
        "INSERT INTO directions (slug, name, area, breadcrumb, url, direction_count)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(slug) DO UPDATE SET name=excluded.name,"
        " area=excluded.area, breadcrumb=excluded.breadcrumb, url=excluded.url,"
        " direction_count=coalesce(excluded.direction_count, direction_count)",
        list(directions.values()),
    )
    # The page's current placements replace the stored ones (a new paper has none to delete).
    rows_in_chunks(conn, "DELETE FROM placements WHERE paper_id IN ({})", [p.id for p in accepted if p.id in stored])
    _insert(conn, "INSERT OR IGNORE INTO placements (paper_id, direction_slug, position)", "(?, ?, ?)",
            placement_rows)

    _insert(conn, "INSERT OR IGNORE INTO papers (id, title, year, url, has_page, first_seen, updated)",
            "(?, ?, ?, ?, 0, ?, ?)",
            [(*it, now, now) for pid, it in listed.items() if pid not in page_ids])  # a stored paper: ignored

    # Edges from both lists, in page order (most cited first); the first page to show an
    # edge not stored yet reveals it. Only papers stored before this group can have edges.
    # Which of those pages' own edges are stored: primary-key probes (no secondary index needed).
    known, from_sources = _stored_edges(conn, [e for p in accepted if p.id in stored for e in p.edges])
    named_now: list[tuple[int, str, str]] = []
    # Per page, in page order: (its snapshot, its new edges, its count's growth or None).
    news: list[tuple[int, list[tuple[str, str]], tuple[str, int, int, int] | None]] = []
    for p, snapshot_id in zip(accepted, snapshot_ids, strict=True):
        pid = p.id
        new_edges = [e for e in p.edges if e not in known] if known else list(p.edges)
        known.update(new_edges)
        if from_sources:  # a citation only a source named, now named by this page: the map's from now on
            named_now += [(snapshot_id, *e) for e in p.edges if e in from_sources]
            from_sources.difference_update(p.edges)
        result.new_citations += len(new_edges)
        # Growth of the stated count, with how much of it the page does not list by name.
        had_page, _through, old_count, _hash = stored.get(pid, (0, None, None, None))
        grown = None
        if had_page and old_count is not None and p.cited_by is not None and p.cited_by > old_count:
            named = sum(1 for e in new_edges if e[1] == pid)
            grown = (pid, old_count, p.cited_by, max(0, p.cited_by - old_count - named))
        news.append((snapshot_id, new_edges, grown))
        result.stored.append(pid)
    # Known at the cited paper's first read (docs/feeds.md, "What new means"): revealed by the run
    # (an ingest, a refresh tick) that first read its page, or before it was ever read. A run is
    # over when its `ingests` row is written, at its end: a page stored by this run, or by one
    # killed before its end (and so resumed by this one), is this first read, whatever the batches;
    # only a page stored no later than a finished run makes an edge new.
    edge_ids = {pid for _snapshot, edges, _grown in news for edge in edges for pid in edge}
    done = scalar(conn, "SELECT max(finished_at) FROM ingests") if edge_ids else None
    read_before = {r["paper_id"] for r in rows_in_chunks(
        conn, "SELECT DISTINCT paper_id FROM snapshots WHERE paper_id IN ({}) AND ingested_at <= ?",
        list({cited for _snapshot, edges, _grown in news for _citing, cited in edges}), after=(done,))} \
        if done else set()
    # The tables name papers by key (paper_keys): every paper of these rows has one from here on.
    key = keys_of(conn, edge_ids | {grown[0] for _snapshot, _edges, grown in news if grown}
                  | {pid for _snapshot, citing, cited in named_now for pid in (citing, cited)})
    # Each event's id, given here in page order (a page's citations, then its count): a citation
    # holds its event's (citations.event_id).
    first_event = event_id = next_ids(conn, "event_log")
    seen = unix_seconds(now)  # citation_edges.first_seen_unix
    citation_rows: list[tuple[int, int, int, int, int, int]] = []
    event_rows: list[tuple[Any, ...]] = []
    for snapshot_id, edges, grown in news:
        for citing, cited in edges:
            citing_key, cited_key = key[citing], key[cited]
            citation_rows.append((citing_key, cited_key, seen, snapshot_id, 0 if cited in read_before else 1,
                                  event_id))
            event_rows.append((event_id, cited_key, citing_key, snapshot_id))
            event_id += 1
        if grown:
            event_rows.append((event_id, key[grown[0]], *grown[1:], snapshot_id))
            event_id += 1
    citation_rows.sort()  # in key order: the primary key's pages are touched once each (no rowid to keep)
    _insert(conn, "INSERT INTO citation_edges (citing_key, cited_key, first_seen_unix, snapshot_id, at_first_read,"
            " event_id)", "(?, ?, ?, ?, ?, ?)", citation_rows)
    # Its first_seen, and so its feed entry and alert, stay those of the source's news.
    conn.executemany("UPDATE citation_edges SET provenance = 'map', snapshot_id = ? WHERE citing_key = ?"
                     " AND cited_key = ?",
                     [(snapshot, key[citing], key[cited]) for snapshot, citing, cited in named_now])
    _insert_events(conn, event_rows)
    record_batch(conn, first_event, len(event_rows), now)


def _stored_edges(conn: sqlite3.Connection, edges: list[tuple[str, str]],
                  size: int = 400) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """The given (citing, cited) edges that citations holds, looked up by its primary key, and
    those of them only an open source has named (provenance not `map`)."""
    found: set[tuple[str, str]] = set()
    from_sources: set[tuple[str, str]] = set()
    # On the primary key by the papers' keys (paper_keys): one probe an edge, no id looked up.
    key = stored_keys(conn, {pid for edge in edges for pid in edge})
    by_keys = {(key[a], key[b]): (a, b) for a, b in edges if a in key and b in key}
    for r in rows_in_chunks(conn, "SELECT c.citing_key, c.cited_key, c.provenance FROM (VALUES {}) AS v"
                                  " JOIN citation_edges c ON c.citing_key = v.column1 AND c.cited_key = v.column2",
                            list(by_keys), size=size, mark="(?, ?)"):
        edge = by_keys[r["citing_key"], r["cited_key"]]
        found.add(edge)
        if r["provenance"] != "map":
            from_sources.add(edge)
    return found, from_sources


def _insert_snapshots(conn: sqlite3.Connection, accepted: list[Prepared], now: str) -> list[int]:
    """One snapshot per page, in page order; their ids (one statement for the batch: the ids
    an AUTOINCREMENT table gives rows inserted together in one transaction follow each other)."""
    rows = []
    for p in accepted:
        _title, _arxiv_url, _abstract, _posted, _cited_by, refs_in_map, refs_total = p.row
        rows.append((p.id, p.through, p.cited_by, refs_in_map, refs_total, p.citers_listed, p.refs_listed, p.hash,
                     p.source.location, now))
    start = next_ids(conn, "snapshots")
    _insert(conn, "INSERT INTO snapshots (id, paper_id, data_through, cited_by, refs_in_map, refs_total,"
            " citers_listed, refs_listed, content_hash, source, ingested_at)", "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [(start + i, *row) for i, row in enumerate(rows)])
    return [start + i for i in range(len(rows))]


def _insert_events(conn: sqlite3.Connection, rows: list[tuple[Any, ...]]) -> None:
    """Insert events, each with its id: runs of citation events (4-tuples) and count events
    (6-tuples). Their time is their write's (record_batch)."""
    start = 0
    while start < len(rows):
        kind = len(rows[start])
        end = start
        while end < len(rows) and len(rows[end]) == kind:
            end += 1
        if kind == 4:
            _insert(conn, "INSERT INTO event_log (id, paper_key, citing_key, snapshot_id)", "(?, ?, ?, ?)",
                    rows[start:end])
        else:
            conn.executemany("INSERT INTO event_log (id, paper_key, old_count, new_count, unlisted, snapshot_id)"
                             " VALUES (?, ?, ?, ?, ?, ?)", rows[start:end])
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
