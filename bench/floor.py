"""The fair floor of a cold ingest (issue 14): the least work that stores what mapwatch keeps.

Read each file, take the fields with plain regular expressions (not mapwatch's parser),
and `executemany` the same rows mapwatch keeps into raw sqlite3, in one transaction:
papers (pages and the stubs their lists name), directions, placements, citations, a
citation event per new citation, a snapshot per page, a source row per file, and FTS5 over
titles and abstracts, filled in one statement after the rows (no per-row trigger).

The schema is mapwatch's own, created by `open_db` (every migration), so the floor pays for
the same indexes: papers (id primary key, papers_cited_by, papers_title_nocase,
papers_id_cited_by), snapshots_paper, placements (primary key, placements_direction),
paper_keys (each paper's key), citations (primary key, citations_cited_seen; each with its
event's id), event_log (events_paper)
and their one event_batches row (the events' time), sources (primary key),
directions (primary key). Only the three full-text triggers on papers are dropped.

One process, one core: the floor is the work, not a way of spreading it.

    python -m bench.floor DB FOLDER      -> one JSON line (seconds, CPU seconds, counts)
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sqlite3
import sys
import time
from pathlib import Path

from mapwatch.store.clock import unix_seconds
from mapwatch.store.database.db import open_db
from mapwatch.store.database.migrations._paper_keys import OUTSIDE_FIRST, arxiv_key

NOW = "2026-11-20T12:00:00+00:00"
CACHE_KIB = 131_072  # the ingest's page cache (store/database/ingest.py): the same conditions

_MONTHS = {m: f"{i:02d}" for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), 1)}
TITLE = re.compile(r"^# (.+)$", re.M)
HEADER = re.compile(r"^arXiv: (\S+) · HTML: (\S+)$", re.M)
CITED = re.compile(r"^- Cited by (\d+) papers? in the map \(data through (\d+) (\w+) (\d{4})\)", re.M)
PLACED = re.compile(r"^- Placed in .*?, one of (\d+) directions in ", re.M)
BUILDS = re.compile(r"^- Builds on (\d+) of its (\d+) references", re.M)
POSTED = re.compile(r"^- First posted on arXiv (\d+) (\w+) (\d{4})", re.M)
PLACEMENT = re.compile(r"^- (.+) / \[(.+)\]\((\S+)\)$", re.M)
ITEM = re.compile(r"^- \[(.*)\]\((\S+/paper/(\S+)/)\)(?: \((\d{4})\))?$", re.M)
ABSTRACT = re.compile(r"^## Abstract[^\n]*\n\n(.*)", re.M | re.S)


def _iso(day: str, month: str, year: str) -> str:
    return f"{year}-{_MONTHS[month]}-{int(day):02d}"


def extract(data: bytes) -> tuple:
    """The fields of one page: (id, paper row fields, placements, refs, citers, abstract)."""
    text = data.decode("utf-8")
    title = TITLE.search(text)
    head = HEADER.search(text)
    assert title and head, "not a map page"
    arxiv_url, map_url = head[1], head[2]
    pid = arxiv_url.split("/abs/", 1)[1]
    cited = CITED.search(text)
    builds = BUILDS.search(text)
    posted = POSTED.search(text)
    placed = PLACED.search(text)
    placed_at = text.find("## Placed in")
    builds_at = text.find("## Builds on")
    by_at = text.find("## Built on by")
    abstract_at = text.find("## Abstract")
    end_placed = min(x for x in (builds_at, by_at, abstract_at, len(text)) if x > placed_at)
    placements = [(m[3], m[1], m[2]) for m in PLACEMENT.finditer(text, placed_at, end_placed)]
    refs = ITEM.findall(text, builds_at, by_at if by_at > 0 else abstract_at) if builds_at > 0 else []
    citers = ITEM.findall(text, by_at, abstract_at if abstract_at > 0 else len(text)) if by_at > 0 else []
    abstract = ABSTRACT.search(text, abstract_at) if abstract_at > 0 else None
    return (pid, title[1], arxiv_url, map_url,
            int(cited[1]) if cited else None, _iso(cited[2], cited[3], cited[4]) if cited else None,
            int(placed[1]) if placed else None,
            int(builds[1]) if builds else None, int(builds[2]) if builds else None,
            _iso(*posted.groups()) if posted else None,
            placements, refs, citers, abstract[1].strip() if abstract else None)


def paper_keys(ids: list[str]) -> dict[str, int]:
    """Each id's key, as mapwatch gives them into an empty map (store/database/paper_keys.py): a
    new-style arXiv id its own number, any other the next from OUTSIDE_FIRST on."""
    keys: dict[str, int] = {}
    outside = OUTSIDE_FIRST
    for pid in ids:
        if pid not in keys:
            key = arxiv_key(pid)
            if key is None:
                key, outside = outside, outside + 1
            keys[pid] = key
    return keys


def page_files(folder: str) -> list[str]:
    out = []
    for root, _dirs, names in os.walk(folder):
        out += [os.path.join(root, n) for n in names if n.endswith(".txt")]
    out.sort()
    return out


def run(db_path: str, folder: str) -> dict:
    open_db(db_path).close()  # mapwatch's schema, every migration
    conn = sqlite3.connect(db_path, isolation_level=None)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
    for trigger in ("papers_ai", "papers_ad", "papers_au"):
        conn.execute(f"DROP TRIGGER IF EXISTS [{trigger}]")

    t0, c0 = time.perf_counter(), time.process_time()
    papers: dict[str, tuple] = {}
    stubs: dict[str, tuple] = {}
    directions: dict[str, tuple] = {}
    snapshots, placements, sources = [], [], []
    edges: dict[tuple[str, str], int] = {}
    files = page_files(folder)
    for sid, path in enumerate(files, 1):
        with open(path, "rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
        (pid, title, arxiv_url, map_url, cited_by, through, dir_count, refs_in_map, refs_total, posted,
         placed, refs, citers, abstract) = extract(data)
        sha = hashlib.sha256(data).hexdigest()
        papers[pid] = (pid, title, int(posted[:4]) if posted else None, map_url, arxiv_url, abstract, posted,
                       cited_by, refs_in_map, refs_total, through, 1, NOW, NOW)
        snapshots.append((sid, pid, through, cited_by, refs_in_map, refs_total, len(citers), len(refs),
                          sha, path, NOW))
        for i, (slug_url, crumb, name) in enumerate(placed):
            slug = slug_url.split("/", 3)[-1].strip("/")
            directions.setdefault(slug, (slug, name, crumb.split(" / ")[0], f"{crumb} / {name}", slug_url,
                                         dir_count if i == 0 else None))
            placements.append((pid, slug, i + 1))
        for title_, url, other, year in refs:
            stubs.setdefault(other, (other, title_, int(year) if year else None, url, 0, NOW, NOW))
            edges.setdefault((pid, other), sid)
        for title_, url, other, year in citers:
            stubs.setdefault(other, (other, title_, int(year) if year else None, url, 0, NOW, NOW))
            edges.setdefault((other, pid), sid)
        sources.append((path, pid, sha, st.st_size, st.st_mtime_ns, None, None, NOW))
    paper_rows = list(papers.values())
    stub_rows = [row for pid, row in stubs.items() if pid not in papers]
    seen = unix_seconds(NOW)  # citation_edges.first_seen_unix
    key = paper_keys([*papers, *stubs])
    citation_rows = [(key[a], key[b], seen, sid, i) for i, ((a, b), sid) in enumerate(edges.items(), 1)]
    event_rows = [(i, key[b], key[a], sid) for i, ((a, b), sid) in enumerate(edges.items(), 1)]
    parse_s, parse_cpu = time.perf_counter() - t0, time.process_time() - c0

    t1, c1 = time.perf_counter(), time.process_time()
    conn.execute("BEGIN")
    conn.executemany("INSERT INTO papers (id, title, year, url, arxiv_url, abstract, first_posted, cited_by,"
                     " refs_in_map, refs_total, data_through, has_page, first_seen, updated)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", paper_rows)
    conn.executemany("INSERT INTO papers (id, title, year, url, has_page, first_seen, updated)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?)", stub_rows)
    conn.execute("INSERT INTO papers_fts (rowid, title, abstract) SELECT rowid, title, abstract FROM papers")
    conn.executemany("INSERT INTO directions (slug, name, area, breadcrumb, url, direction_count)"
                     " VALUES (?, ?, ?, ?, ?, ?)", list(directions.values()))
    conn.executemany("INSERT INTO snapshots (id, paper_id, data_through, cited_by, refs_in_map, refs_total,"
                     " citers_listed, refs_listed, content_hash, source, ingested_at)"
                     " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", snapshots)
    conn.executemany("INSERT OR IGNORE INTO placements (paper_id, direction_slug, position) VALUES (?, ?, ?)",
                     placements)
    conn.executemany("INSERT INTO paper_keys (key, id) VALUES (?, ?)", [(k, i) for i, k in key.items()])
    conn.executemany("INSERT INTO citation_edges (citing_key, cited_key, first_seen_unix, snapshot_id, event_id)"
                     " VALUES (?, ?, ?, ?, ?)", citation_rows)
    conn.executemany("INSERT INTO event_log (id, paper_key, citing_key, snapshot_id)"
                     " VALUES (?, ?, ?, ?)", event_rows)
    conn.execute("INSERT INTO event_batches (first_id, last_id, seen_at) VALUES (1, ?, ?)",
                 (len(event_rows), NOW))
    conn.executemany("INSERT INTO sources (location, paper_id, sha256, size, mtime_ns, etag, last_modified,"
                     " checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)", sources)
    conn.execute("COMMIT")
    insert_s, insert_cpu = time.perf_counter() - t1, time.process_time() - c1
    conn.close()
    return {"parse_seconds": parse_s, "insert_seconds": insert_s, "seconds": parse_s + insert_s,
            "parse_cpu_seconds": parse_cpu, "insert_cpu_seconds": insert_cpu, "cpu_seconds": parse_cpu + insert_cpu,
            "pages": len(files), "papers": len(paper_rows) + len(stub_rows), "citations": len(citation_rows),
            "list_items": sum(s[6] + s[7] for s in snapshots)}


ITEMS = 40  # list items per page of section 8's map (issue 14)


def section(b) -> None:
    """Section 8: cold ingest against the fair floor on a map with ~40 list items per page, in
    turn (`--repeat` times each, fresh databases), best of each by CPU."""
    from bench import generate as gen
    from bench.harness import run_child, run_module

    folder = b.work / f"map-{ITEMS}-items"
    t = time.perf_counter()
    manifest = gen.write_map(gen.build_map(b.args.papers, b.args.seed, ITEMS), folder, 1)
    b.r.line(f"map: {manifest['papers']:,} pages, {manifest['citations']:,} citations drawn, ~{ITEMS} list "
             f"items per page; generated in {time.perf_counter() - t:.1f} s")
    floors, colds = [], []
    for _ in range(b.args.repeat):
        for name in ("fair-floor.db", "fair-ingest.db"):
            for suffix in ("", "-wal", "-shm"):
                Path(f"{b.work / name}{suffix}").unlink(missing_ok=True)
        floors.append(run_module("bench.floor", str(b.work / "fair-floor.db"), str(folder)))
        colds.append(run_child("ingest", str(b.work / "fair-ingest.db"), str(folder)))
    b.r.line("runs (wall/CPU s): fair floor " + ", ".join(f"{f['seconds']:.1f}/{f['cpu_seconds']:.1f}"
                                                         for f, _r in floors)
             + "; ingest " + ", ".join(f"{c['seconds']:.1f}/{c['cpu_seconds']:.1f}" for c, _r in colds))
    floor, floor_rss = min(floors, key=lambda f: f[0]["cpu_seconds"])
    cold, rss = min(colds, key=lambda c: c[0]["cpu_seconds"])
    if cold["new_citations"] != floor["citations"] or cold["stored"] != floor["pages"]:
        raise RuntimeError(f"the floor and the ingest stored different maps: {floor} / {cold}")
    wall, cpu = cold["seconds"] / floor["seconds"], cold["cpu_seconds"] / floor["cpu_seconds"]
    b.r.line(f"fair floor (one process): {floor['pages']:,} pages, {floor['list_items'] / floor['pages']:.1f} list "
             f"items per page, {floor['citations']:,} citations: read + regex + rows {floor['parse_seconds']:.2f} s "
             f"+ executemany and FTS {floor['insert_seconds']:.2f} s = {floor['seconds']:.2f} s wall; CPU "
             f"{floor['parse_cpu_seconds']:.2f} + {floor['insert_cpu_seconds']:.2f} = {floor['cpu_seconds']:.2f} s; "
             f"peak {floor_rss / 1024:.0f} MiB")
    b.r.line(f"cold ingest (writer + parse workers): {cold['seconds']:.2f} s wall; CPU {cold['cpu_seconds']:.2f} s "
             f"(writer {cold['writer_cpu_seconds']:.2f} + workers {cold['workers_cpu_seconds']:.2f}); peak "
             f"{rss / 1024:.0f} MiB writer, {cold['workers_peak_rss_mib']:.0f} MiB a worker")
    b.r.line(f"cold ingest / fair floor = {wall:.2f} wall, {cpu:.2f} CPU (the writer's CPU alone: "
             f"{cold['writer_cpu_seconds'] / floor['cpu_seconds']:.2f})")
    b.r.fig("fair_floor", {**floor, "peak_rss_mib": round(floor_rss / 1024)})
    b.r.fig("fair_cold_ingest", {**cold, "peak_rss_mib": round(rss / 1024)})
    b.r.fig("cold_over_fair_floor", {"wall": round(wall, 3), "cpu": round(cpu, 3)})
    b.r.target("cold ingest <= 1.5x the fair floor (~40 items/page)", wall <= 1.5, f"{wall:.2f}x wall, {cpu:.2f}x CPU")


def main(argv: list[str]) -> int:
    db_path, folder = argv
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    print(json.dumps(run(db_path, folder)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
