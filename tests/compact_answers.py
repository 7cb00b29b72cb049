"""Every answer and feed byte a database gives, as one JSON-able value: what the compact schema
(migration 0038, issue 44) must leave exactly as it was.

`answers(db)` asks the query layer what users see (a paper's card and its lists of citers in both
orders and of references, each direction's view, leaders, feed entries and PageRank ranks, the
rising papers) and reads the history (citations, events, snapshots) row by row; `feed_bytes(db)`
publishes every feed and page into a folder and hashes each file.

tests/data/compact_before/ holds what the version before migration 0038 gave for the same maps
(`python -m tests.compact_answers make OUT`, run at that version): its databases (gzipped files)
and its answers; tests/system/test_compact_schema.py migrates the dumps with this version and
compares.
"""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
import json
import subprocess
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from mapwatch.feeds.publish import publish
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.questions import feed_queries, graph, queries
from mapwatch.store.questions.direction_pagerank import compute_direction_ranks

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "data" / "compact_before"
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
FIRST = datetime(2026, 11, 1, 9, 0, tzinfo=UTC)
BASE_URL = "https://feeds.example.org/"
MAPS = ("seeds", "generated")
GENERATED_PAPERS = 160


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, set | frozenset):
        return sorted(_plain(v) for v in value)
    if isinstance(value, datetime):
        return value.isoformat()
    return value


def history(db: Database) -> dict[str, Any]:
    """The history rows, every column that was there before migration 0038."""
    c = db.conn
    return {
        "citations": c.execute("SELECT citing_id, cited_id, first_seen, snapshot_id, at_first_read, provenance"
                               " FROM citations ORDER BY citing_id, cited_id").fetchall(),
        "events": c.execute("SELECT id, kind, paper_id, citing_id, old_count, new_count, unlisted, snapshot_id,"
                            " seen_at FROM events ORDER BY id").fetchall(),
        "snapshots": c.execute("SELECT id, paper_id, data_through, cited_by, refs_in_map, refs_total, citers_listed,"
                               " refs_listed, content_hash, ingested_at FROM snapshots ORDER BY id").fetchall(),
        "papers": c.execute("SELECT id, title, year, cited_by, has_page, first_seen, updated FROM papers"
                            " ORDER BY id").fetchall(),
    }


def answers(db: Database) -> dict[str, Any]:
    """What the query layer answers about every paper and direction of the map."""
    out: dict[str, Any] = {}
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY id")]
    for pid in ids:
        one: dict[str, Any] = {}
        if db.conn.execute("SELECT has_page FROM papers WHERE id = ?", (pid,)).fetchone()[0]:
            one["view"] = queries.paper_view(db, pid)
        for sort in ("cited", "newest"):
            one[f"citers_{sort}"] = queries.citers(db, pid, sort=sort, limit=100)
            one[f"citers_{sort}_page2"] = queries.citers(db, pid, sort=sort, offset=3, limit=4)
        one["refs"] = queries.refs(db, pid, limit=100)
        one["refs_page2"] = queries.refs(db, pid, offset=2, limit=3)
        one["feed_citers"] = feed_queries.paper_citers(db, pid)
        one["count_growth"] = feed_queries.paper_count_growth(db, pid)
        one["mark"] = feed_queries.paper_mark(db, pid)
        one["has_feed"] = feed_queries.has_feed(db, pid)
        out[f"paper {pid}"] = one
    for d in feed_queries.directions(db):
        slug = d.slug
        out[f"direction {slug}"] = {
            "view": queries.direction_view(db, slug),
            "citers": feed_queries.direction_citers(db, slug),
            "leaders": feed_queries.direction_leaders(db, slug),
            "ranks": graph.direction_ranks(db, slug, limit=50),
            "cited_in": [queries.citers(db, pid, direction=slug, limit=20) for pid in ids[:8]],
        }
    out["rising"] = graph.rising(db, NOW, days=60)
    out["stats"] = queries.map_stats(db)
    out["followed"] = feed_queries.followed_papers(db)
    out["changed"] = sorted(feed_queries.papers_changed_since(db, 0, 0))
    return _plain(out)


def feed_bytes(db: Database, out_dir: Path) -> dict[str, str]:
    """Every file a full publish of every paper writes, by its path: the sha256 of its bytes."""
    publish(db, out_dir, BASE_URL, clock=lambda: NOW, full=True, papers="all")
    return {str(p.relative_to(out_dir)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(out_dir.rglob("*")) if p.is_file() and p.name != ".generation"}  # a random token


def everything(db: Database, out_dir: Path) -> dict[str, Any]:
    return {"history": _plain(history(db)), "answers": answers(db), "feeds": feed_bytes(db, out_dir)}


def build(name: str, work: Path) -> Database:
    """The map `name` ingested in two rounds (so it has new citations and counts that grew)
    into a new database, with its PageRank ranks computed."""
    db = open_db(work / f"{name}.db")
    if name == "seeds":
        ingest_paths(db, [ROOT / "seeds" / "2412.10400.txt"], clock=lambda: FIRST)
        ingest_paths(db, [ROOT / "seeds" / "2507.04136.txt"], clock=lambda: NOW)
    else:
        pages = work / "pages"
        for snapshot, when in ((1, FIRST), (2, NOW)):
            subprocess.run([sys.executable, "-m", "bench.generate", "--papers", str(GENERATED_PAPERS), "--out",
                            str(pages), "--snapshot", str(snapshot), "--quiet"], check=True, cwd=ROOT)
            ingest_paths(db, [pages], clock=lambda when=when: when, pool=False)
    compute_direction_ranks(db, NOW)
    return db


def dump(db: Database, work: Path) -> bytes:
    """The database file's bytes, compacted (VACUUM INTO: no WAL, no free pages)."""
    copy = work / "dump.db"
    db.conn.execute("VACUUM INTO ?", (str(copy),))
    return copy.read_bytes()


def load(name: str, target: Path) -> Database:
    """The version-before database of map `name` (tests/data/compact_before/), at `target`,
    opened (and so migrated) by this version."""
    target.write_bytes(gzip.decompress((FIXTURES / f"{name}.db.gz").read_bytes()))
    return open_db(target)


def expected(name: str) -> dict[str, Any]:
    return json.loads(gzip.decompress((FIXTURES / f"{name}.answers.json.gz").read_bytes()))


def jsonable(value: Any) -> Any:
    """`value` as it reads back from JSON (tuples as lists)."""
    return json.loads(json.dumps(value))


def make(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in MAPS:
        with tempfile.TemporaryDirectory() as tmp:
            db = build(name, Path(tmp))
            (out / f"{name}.db.gz").write_bytes(gzip.compress(dump(db, Path(tmp)), mtime=0))
            value = jsonable(everything(db, Path(tmp) / "feeds"))
            (out / f"{name}.answers.json.gz").write_bytes(
                gzip.compress(json.dumps(value, sort_keys=True).encode(), mtime=0))
            db.conn.close()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "make":
        sys.exit("usage: python -m tests.compact_answers make OUT")
    make(Path(sys.argv[2]))
