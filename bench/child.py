"""Work run in a child process by `bench.main`, so that its peak memory (ru_maxrss) is its own.

    python -m bench.child ingest DB FOLDER [--force]   -> JSON: seconds, counts
    python -m bench.child floor DB FOLDER              -> JSON: parse and insert seconds
    python -m bench.child crawl DB URL                 -> JSON: an HTTP refresh of the whole map

Each prints one JSON line on stdout.
"""

from __future__ import annotations

import hashlib
import json
import resource
import sqlite3
import sys
import time
from datetime import UTC, datetime

from bench.floor import paper_keys
from mapwatch.store.clock import unix_seconds
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import INGEST_CACHE_KIB, ingest_paths
from mapwatch.store.pages.files import page_files
from mapwatch.store.pages.page_hash import page_hash
from mapwatch.store.pages.parse import parse_page

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def run_ingest(db_path: str, folder: str, force: bool = False) -> dict:
    db = open_db(db_path)
    t0, c0 = time.perf_counter(), time.process_time()
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    report = ingest_paths(db, [folder], clock=lambda: NOW, force=force)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)  # the parse workers, joined by now
    workers_cpu = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    events = db.conn.execute("SELECT count(*) FROM events").fetchone()[0]
    db.close()
    return {"seconds": seconds, "cpu_seconds": cpu + workers_cpu, "writer_cpu_seconds": cpu,
            "workers_cpu_seconds": workers_cpu, "workers_peak_rss_mib": k1.ru_maxrss / 1024,
            "pages_read": report.pages_read, "stored": report.stored,
            "unchanged": report.unchanged, "skipped": report.skipped, "rejected": len(report.rejected),
            "new_citations": report.saved.new_citations, "events_total": events}


def run_floor(db_path: str, folder: str) -> dict:
    """The floor: read and parse every page, then one raw executemany per table of the rows
    the ingest ends with, into the same schema (same indexes, same FTS triggers)."""
    open_db(db_path).close()  # the schema, exactly as the store creates it
    t0, c0 = time.perf_counter(), time.process_time()
    parsed = []
    for path in page_files([folder]):
        data = path.read_bytes()
        parsed.append((str(path.resolve()), data, parse_page(data)))
    parse_seconds, parse_cpu = time.perf_counter() - t0, time.process_time() - c0

    # Rows, built outside the timed part.
    now = NOW.isoformat(timespec="seconds")
    papers: dict[str, tuple] = {}
    stubs: dict[str, tuple] = {}
    directions: dict[str, tuple] = {}
    snapshots, placements, sources = [], [], []
    edges: dict[tuple[str, str], int] = {}
    for sid, (location, data, page) in enumerate(parsed, 1):
        through = page.data_through.isoformat() if page.data_through else None
        papers[page.id] = (page.id, page.title, page.first_posted.year if page.first_posted else None,
                           page.map_url, page.arxiv_url, page.abstract,
                           page.first_posted.isoformat() if page.first_posted else None, page.cited_by,
                           page.refs_in_map, page.refs_total, through, 1, now, now)
        refs = page.builds_on.items if page.builds_on else ()
        cited = page.built_on_by.items if page.built_on_by else ()
        snapshots.append((sid, page.id, through, page.cited_by, page.refs_in_map, page.refs_total,
                          len(cited), len(refs), page_hash(page), location, now))
        for i, p in enumerate(page.placements):
            directions.setdefault(p.slug, (p.slug, p.direction, p.area, p.breadcrumb, p.url,
                                           page.direction_count if i == 0 else None))
            placements.append((page.id, p.slug, i + 1))
        for it in (*refs, *cited):
            stubs.setdefault(it.id, (it.id, it.title, it.year, it.url, 0, now, now))
        for it in refs:
            edges.setdefault((page.id, it.id), sid)
        for it in cited:
            edges.setdefault((it.id, page.id), sid)
        sources.append((location, page.id, hashlib.sha256(data).hexdigest(), len(data), 0, None, None, now))
    paper_rows = list(papers.values()) + [row for pid, row in stubs.items() if pid not in papers]
    seen = unix_seconds(now)  # citation_edges.first_seen_unix
    key = paper_keys([*papers, *stubs])
    citation_rows = [(key[a], key[b], seen, sid, i) for i, ((a, b), sid) in enumerate(edges.items(), 1)]
    event_rows = [(i, key[b], key[a], sid) for i, ((a, b), sid) in enumerate(edges.items(), 1)]

    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA cache_size = -{INGEST_CACHE_KIB}")  # the ingest's setting: same conditions
    t1, c1 = time.perf_counter(), time.process_time()
    with conn:
        conn.executemany("INSERT INTO papers (id, title, year, url, arxiv_url, abstract, first_posted, cited_by,"
                         " refs_in_map, refs_total, data_through, has_page, first_seen, updated)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", paper_rows)
        conn.executemany("INSERT INTO directions (slug, name, area, breadcrumb, url, direction_count)"
                         " VALUES (?, ?, ?, ?, ?, ?)", list(directions.values()))
        conn.executemany("INSERT INTO snapshots (id, paper_id, data_through, cited_by, refs_in_map, refs_total,"
                         " citers_listed, refs_listed, content_hash, source, ingested_at)"
                         " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", snapshots)
        conn.executemany("INSERT INTO placements (paper_id, direction_slug, position) VALUES (?, ?, ?)",
                         placements)
        conn.executemany("INSERT INTO paper_keys (key, id) VALUES (?, ?)", [(k, i) for i, k in key.items()])
        conn.executemany("INSERT INTO citation_edges (citing_key, cited_key, first_seen_unix, snapshot_id, event_id)"
                         " VALUES (?, ?, ?, ?, ?)", citation_rows)
        conn.executemany("INSERT INTO event_log (id, paper_key, citing_key, snapshot_id)"
                         " VALUES (?, ?, ?, ?)", event_rows)
        conn.execute("INSERT INTO event_batches (first_id, last_id, seen_at) VALUES (1, ?, ?)",
                     (len(event_rows), now))
        conn.executemany("INSERT INTO sources (location, paper_id, sha256, size, mtime_ns, etag,"
                         " last_modified, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", sources)
    insert_seconds, insert_cpu = time.perf_counter() - t1, time.process_time() - c1
    conn.close()
    return {"parse_seconds": parse_seconds, "insert_seconds": insert_seconds,
            "seconds": parse_seconds + insert_seconds, "parse_cpu_seconds": parse_cpu,
            "insert_cpu_seconds": insert_cpu, "cpu_seconds": parse_cpu + insert_cpu, "pages": len(parsed),
            "papers": len(paper_rows),
            "citations": len(citation_rows)}


def run_crawl(db_path: str, base: str) -> dict:
    """One HTTP refresh tick over the whole map (budget unlimited), saving as it goes."""
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.sources.refresh import refresh

    db = open_db(db_path)
    t0, c0 = time.perf_counter(), time.process_time()
    rep = refresh(db, base, clock=lambda: NOW, options=HttpOptions(budget=10**9))
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    db.close()
    return {"seconds": seconds, "cpu_seconds": cpu, "pages_read": rep.pages_read, "stored": rep.stored,
            "not_modified": rep.skipped, "missing": rep.missing, "failed": rep.failed_total,
            "rejected": max(rep.rejected_total, len(rep.rejected)), "new_citations": rep.new_citations,
            "pages_per_s": rep.pages_read / seconds if seconds else 0.0}


def main(argv: list[str]) -> int:
    cmd, db_path, folder, *rest = argv
    if cmd == "ingest":
        out = run_ingest(db_path, folder, force="--force" in rest)
    elif cmd == "floor":
        out = run_floor(db_path, folder)
    elif cmd == "crawl":
        out = run_crawl(db_path, folder)
    else:
        raise SystemExit(f"unknown command {cmd!r}")
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
