"""Direction ranks after a busy tick (issue 24): every direction's PageRank computed again
(`compute_direction_ranks`, what each tick that stored a page did) against the update of the
directions the tick changed (`update_direction_ranks`, what a tick does now), on
bench/livemap.py's map; and the computation of every direction as it was before (`before`: a
networkx graph a direction, the table deleted and written again), for reference.

    python -m bench.ranks --pages 100000 --ticks 3 --new 20 --work W100
    python -m bench.ranks --small            (seconds)

Method:
- The database: every page of the initial map stored with `store.database.ingest.ingest_fed` at
  T0 - 1 h, then the ranks computed whole (as bench/freshness.py builds its database). Built
  once per size and seed in --work, copied for the run.
- A tick: `--new` papers arrive (`LiveMap.add_paper`: references lognormal, median 14, drawn by
  preferential attachment, the cited pages changed: count, data-through date); their pages and
  the pages that changed are stored (`ingest_fed`, as a crawl would store them). Then, timed
  with `time.process_time()`: the update on the tick's database, the whole computation on a
  copy of it (SQLite's backup) made before the update, and `before` on another copy. The
  update's table and the whole computation's must be equal (every column but `computed_at`);
  the run stops otherwise. `before`'s floats may differ in the last bits (its graphs were
  built in the order rows were read).
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import networkx as nx
from sqlite_utils import Database

from bench import generate as gen
from bench.livemap import DEFAULT_RATE, T0, LiveMap
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed
from mapwatch.store.questions.direction_pagerank import compute_direction_ranks, pagerank, update_direction_ranks

SETUP = T0 - timedelta(hours=1)
SMALL = {"pages": 3_000, "ticks": 2}
TABLE = "SELECT direction_slug, paper_id, pagerank, rank FROM direction_ranks ORDER BY 1, 2"


def before(db: Database, now: datetime) -> int:
    """compute_direction_ranks as it was before the update (commit 8563e9c): directions' rows."""
    stamp = now.isoformat(timespec="seconds")
    conn = db.conn
    rows: list[tuple[str, str, float, int, str]] = []
    slugs = [r[0] for r in conn.execute("SELECT DISTINCT direction_slug FROM placements ORDER BY 1")]
    for slug in slugs:
        members = {pid: cited or 0 for pid, cited in conn.execute(
            "SELECT p.id, p.cited_by FROM placements pl JOIN papers p ON p.id = pl.paper_id"
            " WHERE pl.direction_slug = ?", (slug,))}
        g = nx.DiGraph()
        g.add_nodes_from(members)
        g.add_edges_from(conn.execute(
            "SELECT c.citing_id, c.cited_id FROM placements a"
            " JOIN citations c ON c.citing_id = a.paper_id"
            " JOIN placements b ON b.paper_id = c.cited_id AND b.direction_slug = a.direction_slug"
            " WHERE a.direction_slug = ?", (slug,)))
        pr = nx.pagerank(g) if g.number_of_nodes() else {}
        order = sorted(pr, key=lambda p: (-round(pr[p], 12), -members.get(p, 0), p))
        rows += [(slug, pid, float(pr[pid]), i + 1, stamp) for i, pid in enumerate(order)]
    with db.atomic():
        conn.execute("DELETE FROM direction_ranks")
        conn.executemany("INSERT INTO direction_ranks (direction_slug, paper_id, pagerank, rank, computed_at)"
                         " VALUES (?, ?, ?, ?, ?)", rows)
    return len(slugs)


def fed(live: LiveMap, indexes: list[int]) -> Iterator[FedPage]:
    for i in indexes:
        data = live.text(i).encode()
        yield FedPage(f"{gen.HOST}/paper/{live.ids[i]}/", len(data), int(live.version[i]), data)


def build_template(live: LiveMap, path: Path) -> dict[str, float]:
    c0 = time.process_time()
    db = open_db(path)
    ingest_fed(db, fed(live, list(range(live.size))), gen.HOST, clock=lambda: SETUP, expected=live.size)
    c1 = time.process_time()
    report = compute_direction_ranks(db, SETUP)
    c2 = time.process_time()
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return {"ingest_cpu_s": round(c1 - c0, 1), "full_cpu_s": round(c2 - c1, 3), "directions": report.directions,
            "rows": report.papers}


def copy_db(src: sqlite3.Connection, dest: Path) -> None:
    out = sqlite3.connect(dest)
    try:
        src.backup(out)
    finally:
        out.close()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.ranks", description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=100_000)
    p.add_argument("--ticks", type=int, default=3)
    p.add_argument("--new", type=int, default=20, help="new papers a tick")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--small", action="store_true", help=f"a run of seconds: {SMALL}")
    p.add_argument("--work", type=Path, default=None, help="folder for the databases (default: a temporary one)")
    a = p.parse_args(argv)
    if a.small:
        a.pages, a.ticks = SMALL["pages"], SMALL["ticks"]
    tmp = None
    if a.work is None:
        tmp = tempfile.mkdtemp(prefix="bench-ranks-")
        a.work = Path(tmp)
    a.work.mkdir(parents=True, exist_ok=True)

    def log(s: str) -> None:
        print(f"{datetime.now(UTC):%H:%M:%S} {s}", file=sys.stderr, flush=True)

    try:
        live = LiveMap(a.pages, a.seed, DEFAULT_RATE)
        template = a.work / f"ranks-{a.pages}-{a.seed}.db"
        if not template.exists():
            log(f"building the {a.pages:,}-page database")
            built = build_template(live, template.with_suffix(".part"))
            template.with_suffix(".part").rename(template)
            log(f"built: {built}")
        work, whole, old = a.work / "tick.db", a.work / "whole.db", a.work / "before.db"
        for f in (work, whole, old):
            for extra in ("", "-wal", "-shm"):
                Path(f"{f}{extra}").unlink(missing_ok=True)
        shutil.copyfile(template, work)
        db = open_db(work)
        pagerank(["warm-up"], [])  # numpy and scipy (and networkx) imported before timing, as in a running process
        t = T0.timestamp()
        full_s: list[float] = []
        update_s: list[float] = []
        before_s: list[float] = []
        for k in range(1, a.ticks + 1):
            versions = list(live.version)
            first = live.size
            for _ in range(a.new):
                t += 3600 / a.new
                live.add_paper(t)
            changed = [i for i in range(live.size) if i >= first or live.version[i] != versions[i]]
            now = T0 + timedelta(hours=k)
            ingest_fed(db, fed(live, changed), gen.HOST, clock=lambda now=now: now)
            copy_db(db.conn, whole)
            copy_db(db.conn, old)
            c0 = time.process_time()
            inc = update_direction_ranks(db, now)
            c1 = time.process_time()
            other = open_db(whole)
            c2 = time.process_time()
            full = compute_direction_ranks(other, now)
            c3 = time.process_time()
            same = db.conn.execute(TABLE).fetchall() == other.conn.execute(TABLE).fetchall()
            other.conn.close()
            prior = open_db(old)
            c4 = time.process_time()
            before(prior, now)
            c5 = time.process_time()
            prior.conn.close()
            for f in (whole, old):
                for extra in ("", "-wal", "-shm"):
                    Path(f"{f}{extra}").unlink(missing_ok=True)
            update_s.append(c1 - c0)
            full_s.append(c3 - c2)
            before_s.append(c5 - c4)
            log(f"tick {k}: {a.new} new papers, {len(changed)} pages stored; update {c1 - c0:.3f} s CPU "
                f"({inc.directions} directions computed, {inc.resorted} re-sorted, {inc.kept} kept of those "
                f"touched; {inc.papers:,} rows written), whole {c3 - c2:.3f} s CPU ({full.directions} directions, "
                f"{full.papers:,} rows), before {c5 - c4:.3f} s CPU; tables equal: {same}")
            if not same:
                print("the update's table differs from the whole computation's", file=sys.stderr)
                return 1
        db.conn.close()
        b, f, u = (statistics.median(x) for x in (before_s, full_s, update_s))
        print(f"pages {a.pages:,}, {a.ticks} ticks of {a.new} new papers, CPU s (median): before {b:.3f}, "
              f"whole {f:.3f}, update {u:.3f}; whole / update {f / u:.1f}x, before / update {b / u:.1f}x")
        return 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
