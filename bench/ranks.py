"""Direction ranks after a busy tick (issues 24 and 44): the update a tick runs
(`update_direction_ranks`: the changed directions of at least 2,000 papers updated by a push,
the others computed whole) against the same update with every changed direction computed
whole (what a tick did before migration 0041), every direction's PageRank computed again
(`compute_direction_ranks`), and the computation as it was before issue 24 (`before`: a
networkx graph a direction), on bench/livemap.py's map.

    python -m bench.ranks --pages 100000 --ticks 5 --new 20 --work W100
    python -m bench.ranks --pages 1000000 --ticks 3 --new 125 --work W1M --no-copies
    python -m bench.ranks --small            (seconds)

Method:
- The database: every page of the initial map stored with `store.database.ingest.ingest_fed` at
  T0 - 1 h, then the ranks computed whole (as bench/freshness.py builds its database). Built
  once per size and seed in --work, copied twice for the run: one database for the update,
  one for the update without pushes.
- A tick: `--new` papers arrive (`LiveMap.add_paper`: references lognormal, median 14, drawn by
  preferential attachment, the cited pages changed: count, data-through date); their pages and
  the pages that changed are stored in both databases (`ingest_fed`, as a crawl would store
  them; the store into the first is timed too: the rest of a busy tick's work on the map).
  Then, timed with `time.process_time()`: the update; the update without pushes on the
  other database; unless --no-copies, the whole computation on a copy (SQLite's backup) made
  before the update, and `before` on another copy.
- Checked each tick (the run stops otherwise): the update without pushes equals the whole
  computation (every column but `computed_at`); the update ranks the same papers, and each
  direction's PageRanks are within its bound of the whole computation's (the push's bound
  plus networkx's own error, docs/graph.md). Reported: the largest L1 distance, the ranks
  that differ, by how many places at most, and the directions whose top 10 differ.
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
from mapwatch.store.questions.direction_pagerank import (
    PUSH_FROM,
    compute_direction_ranks,
    pagerank,
    update_direction_ranks,
)
from mapwatch.store.questions.rank_push import ALPHA, TOL, l1_bound, rank_place

SETUP = T0 - timedelta(hours=1)
SMALL = {"pages": 3_000, "ticks": 2}
NO_PUSH = 1 << 62  # push_from for an update that computes every changed direction whole (before 0041)
TABLE = "SELECT direction_slug, paper_id, pagerank, rank FROM direction_ranks ORDER BY 1, 2"


def before(db: Database, now: datetime) -> int:
    """compute_direction_ranks as it was before the update (commit 8563e9c): directions' rows."""
    stamp = now.isoformat(timespec="seconds")
    conn = db.conn
    rows: list[tuple[str, str, float, float, int, str]] = []
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
        rows += [(slug, pid, float(pr[pid]), rank_place(float(pr[pid])), members[pid], stamp) for pid in order]
    with db.atomic():  # into the tables behind the view since migrations 0041 and 0043, as 0041 leaves them
        conn.execute("DELETE FROM direction_rank_scores")
        conn.execute("DELETE FROM direction_rank_totals")
        conn.executemany("INSERT INTO direction_rank_scores (direction_slug, paper_id, score, place, cited_by,"
                         " computed_at) VALUES (?, ?, ?, ?, ?, ?)", rows)
        conn.executemany("INSERT INTO direction_rank_totals (direction_slug, whole, total, drift, computed_at)"
                         " VALUES (?, 1.0, 1.0, NULL, ?)", [(slug, stamp) for slug in slugs])
    return len(slugs)


def compared(pushed: list[tuple], whole: list[tuple], bounds: dict[str, float]) -> dict[str, float]:
    """The pushed table against the whole computation's (rows of TABLE, the same papers): per
    direction the L1 distance of the PageRanks and its allowance (the push's bound, plus
    networkx's own error in both: 3 · α / (1 − α) · n · 10⁻⁶), the ranks that differ, the
    largest difference of a rank and the directions whose top 10 differ."""
    if [r[:2] for r in pushed] != [r[:2] for r in whole]:
        raise SystemExit("the pushed table does not rank the same papers as the whole computation")
    l1: dict[str, float] = {}
    size: dict[str, int] = {}
    tops: dict[str, tuple[set[str], set[str]]] = {}
    differ = worst_move = 0
    for (slug, pid, x, r), (_, _, y, q) in zip(pushed, whole, strict=True):
        l1[slug] = l1.get(slug, 0.0) + abs(x - y)
        size[slug] = size.get(slug, 0) + 1
        differ += r != q
        worst_move = max(worst_move, abs(r - q))
        top = tops.setdefault(slug, (set(), set()))
        if r <= 10:
            top[0].add(pid)
        if q <= 10:
            top[1].add(pid)
    slack = {slug: bounds.get(slug, 0.0) + 3 * ALPHA / (1 - ALPHA) * n * TOL for slug, n in size.items()}
    over = [slug for slug in l1 if l1[slug] > slack[slug]]
    if over:
        raise SystemExit(f"L1 distance past the bound in {over}")
    return {"max_l1": max(l1.values()), "max_ratio": max(l1[s] / slack[s] for s in l1), "ranks_differ": differ,
            "max_move": worst_move, "top10_differ": sum(a != b for a, b in tops.values())}


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
    p.add_argument("--no-copies", action="store_true",
                   help="time the update and the update without pushes only: no whole computation or `before` on "
                        "copies, no comparison (for 1,000,000 pages)")
    p.add_argument("--push-from", type=int, default=PUSH_FROM,
                   help=f"directions of fewer papers are computed whole (default {PUSH_FROM:,}, the service's)")
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
        recompute = a.work / "recompute.db"
        for f in (work, whole, old, recompute):
            for extra in ("", "-wal", "-shm"):
                Path(f"{f}{extra}").unlink(missing_ok=True)
        shutil.copyfile(template, work)
        shutil.copyfile(template, recompute)
        db = open_db(work)
        again = open_db(recompute)  # the same ticks, each changed direction computed whole (before 0041)
        pagerank(["warm-up"], [])  # numpy and scipy (and networkx) imported before timing, as in a running process
        t = T0.timestamp()
        full_s: list[float] = []
        update_s: list[float] = []
        before_s: list[float] = []
        recompute_s: list[float] = []
        for k in range(1, a.ticks + 1):
            versions = list(live.version)
            first = live.size
            for _ in range(a.new):
                t += 3600 / a.new
                live.add_paper(t)
            changed = [i for i in range(live.size) if i >= first or live.version[i] != versions[i]]
            now = T0 + timedelta(hours=k)
            pages = list(fed(live, changed))  # the simulated site's text, made before the clock starts
            c_store = time.process_time()
            ingest_fed(db, iter(pages), gen.HOST, clock=lambda now=now: now)
            store_s = time.process_time() - c_store  # the tick's pages parsed and stored (in-process)
            if not a.no_copies:
                copy_db(db.conn, whole)
                copy_db(db.conn, old)
            c0 = time.process_time()
            inc = update_direction_ranks(db, now, push_from=a.push_from)
            c1 = time.process_time()
            ingest_fed(again, iter(pages), gen.HOST, clock=lambda now=now: now)
            c6 = time.process_time()
            update_direction_ranks(again, now, push_from=NO_PUSH)
            c7 = time.process_time()
            update_s.append(c1 - c0)
            recompute_s.append(c7 - c6)
            line = (f"tick {k}: {a.new} new papers, {len(changed)} pages stored in {store_s:.3f} s CPU;"
                    f" update {c1 - c0:.3f} s CPU "
                    f"({inc.pushed} directions pushed, {inc.directions} computed, {inc.resorted} re-sorted, "
                    f"{inc.kept} kept of those touched; {inc.papers:,} rows written; bound {inc.bound:.2e}), "
                    f"changed directions computed whole {c7 - c6:.3f} s CPU")
            if a.no_copies:
                log(line)
                continue
            other = open_db(whole)
            c2 = time.process_time()
            full = compute_direction_ranks(other, now)
            c3 = time.process_time()
            same = again.conn.execute(TABLE).fetchall() == other.conn.execute(TABLE).fetchall()
            bounds = {slug: l1_bound(drift, total) for slug, drift, total in db.conn.execute(
                "SELECT direction_slug, drift, total FROM direction_rank_totals WHERE drift IS NOT NULL")}
            near = compared(db.conn.execute(TABLE).fetchall(), other.conn.execute(TABLE).fetchall(), bounds)
            other.conn.close()
            prior = open_db(old)
            c4 = time.process_time()
            before(prior, now)
            c5 = time.process_time()
            prior.conn.close()
            for f in (whole, old):
                for extra in ("", "-wal", "-shm"):
                    Path(f"{f}{extra}").unlink(missing_ok=True)
            full_s.append(c3 - c2)
            before_s.append(c5 - c4)
            log(f"{line} (equal to whole: {same}), whole {c3 - c2:.3f} s CPU ({full.directions} directions, "
                f"{full.papers:,} rows), before {c5 - c4:.3f} s CPU; pushed against whole: {near}")
            if not same:
                print("the update without pushes differs from the whole computation", file=sys.stderr)
                return 1
        db.conn.close()
        again.conn.close()
        r, u = statistics.median(recompute_s), statistics.median(update_s)
        head = (f"pages {a.pages:,}, {a.ticks} ticks of {a.new} new papers, CPU s (median): changed directions "
                f"whole {r:.3f}, update {u:.3f}; changed whole / update {r / u:.1f}x")
        if a.no_copies:
            print(head)
            return 0
        b, f = statistics.median(before_s), statistics.median(full_s)
        print(f"{head}; before {b:.3f}, whole {f:.3f}: whole / update {f / u:.1f}x, before / update {b / u:.1f}x")
        return 0
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
