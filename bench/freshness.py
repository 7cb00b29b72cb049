"""How fresh are mapwatch's feeds and alerts on a live map (issue 24): bench/livemap.py's site,
evolving over simulated time, crawled tick by tick by the real refresh (or the naive sweep of
bench/naive_sweep.py at the same budget), and measured against the site's ground truth.

    python -m bench.freshness --pages 10000 --hours 48 --variant all --crawler both
    python -m bench.freshness --small            (seconds; what CI runs)

Method:
- The site runs in a process of its own (its CPU is not counted), on a fixed loopback port.
- The database starts as if a full crawl had just happened: every page of the initial map is
  stored with `store.database.ingest.ingest_fed` (its text, at T0 - 1 h), then each location gets the
  site's validators (ETag, Last-Modified) and `checked_at` T0 - 1 h. `--tracked` well-cited
  papers (the most cited at T0) are tracked (store.subscriptions.tracking.add_track). This database is
  built once per size and copied for each run.
- A tick: the site's clock moves one simulated hour (new papers arrive on the way), then one
  `refresh(db, url, clock=<the tick's time>, priority=tracked_paper_ids(db),
  options=HttpOptions(budget=B))` runs, as the bot's scheduler calls it. Time is simulated: the
  site does not change during a tick, and everything a tick stores is stamped with its time.
  After the last tick one more runs with nothing new on the site: the quiet tick.
- Ground truth: each new paper's citations and the time it appeared. A citation is in the
  feeds once `citations` has the edge (first_seen = the tick that stored it); a tracked
  paper's alert once `events` has its citation event. Delays are from the citer's appearance.
- Requests: what the site received, by kind; CPU: `time.process_time()` around the tick.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from bench.livemap import DEFAULT_RATE, T0, VARIANTS, LiveMap
from bench.naive_sweep import NaiveSweep
from mapwatch.store.clock import iso, parse_iso
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed
from mapwatch.store.questions.graph import compute_direction_ranks
from mapwatch.store.sources.crawl_plan import ROOM
from mapwatch.store.sources.crawl_schedule import (
    EARLY,
    PAGE_BOUNDS,
    VOUCHED_CEILING,
    after_check,
    page_value,
    recheck_scale,
    recheck_weight,
    spread,
    value_period,
)
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.subscriptions.tracking import add_track, tracked_paper_ids

HOUR = 3600.0
CRAWLERS = ("mapwatch", "naive")
SETUP = T0 - timedelta(hours=1)
STEADY_AGE = 60.0  # days: with --steady, when the initial map's pages last changed


@dataclass(frozen=True)
class Config:
    pages: int
    hours: int
    budget: int = 3_600
    rate: float = DEFAULT_RATE
    seed: int = 1
    tracked: int = 20


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class SimProcess:
    """A simulated site (bench.livemap, or bench.sources serving) in a subprocess of its own,
    started with `argv` (after `python -m`); it prints `PORT <n>` once it listens."""

    def __init__(self, argv: list[str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", *argv], stdout=subprocess.PIPE, text=True,
                                     cwd=Path(__file__).resolve().parent.parent)
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.startswith("PORT "):
            self.stop()
            raise RuntimeError(f"the simulated site did not start: {line!r}")
        self.base = f"http://127.0.0.1:{int(line.split()[1])}"

    def call(self, what: str, method: str = "GET") -> Any:
        req = urllib.request.Request(f"{self.base}/_sim/{what}", method=method)
        with urllib.request.urlopen(req, timeout=600) as r:
            return json.loads(r.read())

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Server(SimProcess):
    """bench.livemap in a subprocess of its own."""

    def __init__(self, cfg: Config, variant: str, port: int, initial_age: float = 1.0) -> None:
        super().__init__(["bench.livemap", "--pages", str(cfg.pages), "--seed", str(cfg.seed),
                          "--variant", variant, "--rate", str(cfg.rate), "--port", str(port),
                          "--initial-age", str(initial_age)])


def build_template(cfg: Config, base: str, path: Path) -> dict:
    """The database after a full crawl at T0 - 1 h (see the module's docstring)."""
    t0, c0 = time.perf_counter(), time.process_time()
    live = LiveMap(cfg.pages, cfg.seed, cfg.rate)
    db = open_db(path)

    def fed() -> Iterator[FedPage]:
        for i, pid in enumerate(live.ids):
            data = live.text(i, base).encode()
            yield FedPage(f"{base}/paper/{pid}/", len(data), 0, data)

    ingest_fed(db, fed(), base, clock=lambda: SETUP, expected=live.size)
    with db.atomic():
        db.conn.executemany(
            "UPDATE sources SET etag = ?, last_modified = ?, checked_at = ? WHERE location = ?",
            [(live.etag(i), live.last_modified(i), iso(SETUP), f"{base}/paper/{pid}/")
             for i, pid in enumerate(live.ids)])
    compute_direction_ranks(db, SETUP)
    top = sorted(range(live.size), key=lambda i: (-live.init_deg[i], i))[:cfg.tracked]
    for k, i in enumerate(top):
        add_track(db, guild_id=1, channel_id=100 + k, user_id=None, paper_id=live.ids[i], created_by=None, now=SETUP)
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.conn.close()
    return {"setup_seconds": round(time.perf_counter() - t0, 1),
            "setup_cpu_seconds": round(time.process_time() - c0, 1), "tracked": [live.ids[i] for i in top]}


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))]


def delays_summary(truth: dict[tuple[str, str], float], seen: dict[tuple[str, str], float], end: float) -> dict:
    """Delays (hours) from appearance to storing, and completeness within windows."""
    found = [seen[e] - at for e, at in truth.items() if e in seen]
    out: dict[str, object] = {"citations": len(truth), "found": len(found)}
    for name, q in (("p50_h", 0.5), ("p95_h", 0.95), ("max_h", 1.0)):
        v = pct(found, q)
        out[name] = None if v is None else round(v / HOUR, 2)
    for name, window in (("within_1_tick", HOUR), ("within_24h", 24 * HOUR), ("within_7d", 7 * 24 * HOUR)):
        old = [e for e, at in truth.items() if at <= end - window] if window > HOUR else list(truth)
        ok = sum(1 for e in old if e in seen and seen[e] - truth[e] <= window)
        out[name] = round(ok / len(old), 4) if old else None
        out[name + "_of"] = len(old)
    out["not_found"] = len(truth) - len(found)
    return out


def reschedule(db_path: Path, columns: tuple[str, ...], values: Callable[[str], tuple]) -> int:
    """Set `columns` of every checked page location to `values(location)`. Returns the locations."""
    db = open_db(db_path)
    try:
        locs = [r[0] for r in db.conn.execute(
            "SELECT location FROM sources WHERE location LIKE 'http%' AND checked_at IS NOT NULL")]
        sets = ", ".join(f"{c} = ?" for c in columns)
        with db.atomic():
            db.conn.executemany(f"UPDATE sources SET {sets} WHERE location = ?",
                                [(*values(loc), loc) for loc in locs])
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.conn.close()
    return len(locs)


def schedule_as_crawled(db_path: Path) -> int:
    """Give every page location the schedule the crawler's saver leaves after a first check
    at T0 - 1 h that found it unchanged (`--scheduled`): its first interval and `next_check_at`
    (store.sources.crawl_schedule). The template has none (the crawler before issue 24 kept no
    schedule), so without this every page is due at the first tick. Returns the locations."""
    def first_check(loc: str) -> tuple:
        s = after_check(SETUP, None, False, None, PAGE_BOUNDS, early=spread(loc))
        return s.interval_s, s.next_check_at

    return reschedule(db_path, ("interval_s", "next_check_at"), first_check)


def schedule_steady(db_path: Path, variant: str, budget: int = 3_600) -> int:
    """Give every page location the schedule a crawl leaves after weeks on a map whose pages
    last changed STEADY_AGE days before T0 (`--steady`; the site is started with that
    `--initial-age`): each page's period the one its value gives a page never seen changing
    (store.sources.crawl_schedule: the square-root rule at the map's scale for `budget`; 7 days
    for a page with room while the budget allows it, 28 for a full list), and its last check
    placed so that its next check falls due at a uniformly random time within one period: with
    believed date-time lastmods ("sitemap-lastmod") the vouched one (VOUCHED_CEILING, up to EARLY
    of it early), else its own. So the ticks re-check pages at the steady rate (pages / period
    an hour), not in the rounds of a fresh start. Returns the locations."""
    rng = random.Random(24)
    db = open_db(db_path)
    try:
        full = {pid for (pid,) in db.conn.execute("SELECT id FROM papers WHERE cited_by >= ?", (ROOM,))}
        locs = [(loc, pid) for loc, pid in db.conn.execute(
            "SELECT location, paper_id FROM sources WHERE location LIKE 'http%' AND checked_at IS NOT NULL")]
    finally:
        db.conn.close()
    weights = {pid: recheck_weight(None, page_value(pid not in full)) for _loc, pid in locs}
    scale = recheck_scale(sum(weights.values()), budget)

    def weeks_in(loc: str, pid: str) -> tuple:
        own = value_period(weights[pid], scale)
        span = VOUCHED_CEILING if variant == "sitemap-lastmod" else own
        period = span * (1 - EARLY * spread(loc))
        checked = T0 - timedelta(seconds=(1 - rng.random()) * period)
        return iso(checked), round(own), iso(checked + timedelta(seconds=period)), round(weights[pid], 6)

    by_loc = {loc: pid for loc, pid in locs}
    return reschedule(db_path, ("checked_at", "interval_s", "next_check_at", "recheck_weight"),
                      lambda loc: weeks_in(loc, by_loc[loc]))


def run_one(cfg: Config, variant: str, crawler: str, port: int, template: Path, work: Path,
            log: Callable[[str], None] = lambda s: None, scheduled: bool = False, steady: bool = False) -> dict:
    start = "-steady" if steady else "-scheduled" if scheduled else ""
    db_path = work / f"{variant}-{crawler}{start}.db"
    for stale in (Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):  # of a run stopped early: not this copy's
        stale.unlink(missing_ok=True)
    shutil.copyfile(template, db_path)
    if steady:
        log(f"scheduled {schedule_steady(db_path, variant, cfg.budget):,} pages as in a steady state")
    elif scheduled:
        log(f"scheduled {schedule_as_crawled(db_path):,} pages as after a first check at T0 - 1 h")
    server = Server(cfg, variant, port, STEADY_AGE if steady else 1.0)
    db: Database | None = None
    try:
        db = open_db(db_path)
        base = server.base
        naive = NaiveSweep(base, [r[0] for r in db.conn.execute("SELECT id FROM papers WHERE has_page")]) \
            if crawler == "naive" else None
        truth: dict[tuple[str, str], float] = {}
        ticks: list[dict] = []
        for k in range(1, cfg.hours + 2):
            quiet = k == cfg.hours + 1
            now = T0 + timedelta(hours=k)
            new = server.call(f"advance?to={now.timestamp()}" + ("&quiet=1" if quiet else ""), "POST")["new"]
            for pid, at, cited in new:
                for c in cited:
                    truth[(pid, c)] = at
            server.call("counts?reset=1")
            w0, c0 = time.perf_counter(), time.process_time()
            if naive is None:
                report = refresh(db, base, clock=lambda now=now: now, priority=tracked_paper_ids(db),
                                 options=HttpOptions(budget=cfg.budget))
                stored = report.new_citations
            else:
                stored = naive.tick(db, now, cfg.budget)
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
            counts = server.call("counts")
            counts.pop("new_pages_requested", None)
            ticks.append({"tick": k, "quiet": quiet, "new_papers": len(new),
                          "new_citations": sum(len(c) for _p, _a, c in new), "stored_citations": stored,
                          "requests": sum(counts.values()), "by_kind": counts,
                          "cpu_s": round(cpu, 3), "wall_s": round(wall, 3)})
            log(f"{variant}/{crawler} tick {k}: {len(new)} new papers, {sum(counts.values())} requests, "
                f"{stored} citations stored, CPU {cpu:.2f} s, wall {wall:.1f} s")
        end = (T0 + timedelta(hours=cfg.hours + 1)).timestamp()
        seen = {(a, b): parse_iso(t).timestamp() for a, b, t in db.conn.execute(
            "SELECT citing_id, cited_id, first_seen FROM citations WHERE first_seen >= ?", (iso(T0),))}
        tracked = set(tracked_paper_ids(db))
        alerted: dict[tuple[str, str], float] = {}
        for paper, citer, t in db.conn.execute(
                "SELECT paper_id, citing_id, min(seen_at) FROM events WHERE kind = 'citation' AND seen_at >= ?"
                " GROUP BY paper_id, citing_id", (iso(T0),)):
            if paper in tracked:
                alerted[(citer, paper)] = parse_iso(t).timestamp()
        unlisted = {(a, b) for a, b in server.call("unlisted")["unlisted"]}
        new_pages_requested = server.call("counts")["new_pages_requested"]
        busy = [t for t in ticks if not t["quiet"]]
        quiet_tick = ticks[-1]
        busiest = max(busy, key=lambda t: (t["new_papers"], t["cpu_s"]))
        requests = sum(t["requests"] for t in busy)
        feeds = delays_summary(truth, seen, end)
        listed_truth = {e: at for e, at in truth.items() if e not in unlisted}
        kinds: dict[str, int] = {}
        for t in busy:
            for kind, n in t["by_kind"].items():
                kinds[kind] = kinds.get(kind, 0) + n
        return {
            "pages": cfg.pages, "variant": variant, "crawler": crawler, "hours": cfg.hours, "budget": cfg.budget,
            "rate_per_day": cfg.rate, "new_papers": sum(t["new_papers"] for t in busy),
            "new_pages_requested": new_pages_requested,
            "feeds": feeds, "feeds_listed": delays_summary(listed_truth, seen, end),
            "unlisted_citations": len(unlisted & truth.keys()),
            "alerts": delays_summary({e: at for e, at in truth.items() if e[1] in tracked}, alerted, end),
            "requests": requests, "requests_by_kind": kinds,
            "requests_per_citation_found": round(requests / feeds["found"], 1) if feeds["found"] else None,
            "cpu_quiet_s": quiet_tick["cpu_s"], "requests_quiet": quiet_tick["requests"],
            "quiet_budget_share": round(quiet_tick["requests"] / cfg.budget, 4),
            "cpu_busy_s": busiest["cpu_s"], "busy_new_papers": busiest["new_papers"],
            "cpu_max_s": max(t["cpu_s"] for t in busy), "cpu_p50_s": pct([t["cpu_s"] for t in busy], 0.5),
            "wall_p50_s": pct([t["wall_s"] for t in busy], 0.5), "ticks": ticks,
            "requests_p50": pct([t["requests"] for t in busy], 0.5), "requests_max": max(t["requests"] for t in busy),
        }
    finally:
        if db is not None:
            db.conn.close()
        server.stop()


def fmt(v: object, pct_: bool = False) -> str:
    if v is None:
        return "-"
    if pct_:
        return f"{100 * float(v):.0f}%"  # type: ignore[arg-type]
    return f"{v:,}" if isinstance(v, int) else f"{v}"


def table(results: list[dict]) -> str:
    head = ("| pages | site | crawler | new citations | feed delay p50 / p95 / max (h) | ≤1 tick | ≤24 h | ≤7 d |"
            " not found (unlisted) | tracked: citations, alerted, ≤1 tick, p95 (h) | new pages requested |"
            " requests / citation found | quiet tick: CPU s, budget | busy tick CPU s (new papers) |"
            " requests a tick: p50, max |")
    rows = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in results:
        f, a = r["feeds"], r["alerts"]
        rows.append(
            f"| {r['pages']:,} | {r['variant']} | {r['crawler']} | {f['citations']:,} | "
            f"{fmt(f['p50_h'])} / {fmt(f['p95_h'])} / {fmt(f['max_h'])} | {fmt(f['within_1_tick'], True)} | "
            f"{fmt(f['within_24h'], True)} | {fmt(f['within_7d'], True)} | "
            f"{f['not_found']:,} ({r['unlisted_citations']:,}) | "
            f"{a['citations']:,}, {a['found']:,}, {fmt(a['within_1_tick'], True)}, {fmt(a['p95_h'])} | "
            f"{r['new_pages_requested']:,} of {r['new_papers']:,} | {fmt(r['requests_per_citation_found'])} | "
            f"{r['cpu_quiet_s']}, {fmt(r['quiet_budget_share'], True)} | {r['cpu_busy_s']} ({r['busy_new_papers']}) | "
            f"{fmt(r.get('requests_p50'))}, {fmt(r.get('requests_max'))} |")
    return "\n".join(rows)


SMALL = {"pages": 400, "hours": 6, "budget": 150, "rate": 0.3, "tracked": 5}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.freshness", description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=10_000)
    p.add_argument("--hours", type=int, default=None, help="simulated hours (ticks), default 24 x --days")
    p.add_argument("--days", type=float, default=3.0)
    p.add_argument("--budget", type=int, default=3_600, help="requests per tick (default: 1 per simulated second)")
    p.add_argument("--rate", type=float, default=DEFAULT_RATE, help="new papers per day, share of the map")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tracked", type=int, default=20)
    p.add_argument("--variant", default="all", help=f"one of {', '.join(VARIANTS)}, or all (comma-separated list)")
    p.add_argument("--crawler", choices=(*CRAWLERS, "both"), default="both")
    p.add_argument("--small", action="store_true", help=f"a run of seconds: {SMALL}, one variant unless given")
    p.add_argument("--work", type=Path, default=None, help="folder for the databases (default: a temporary one)")
    p.add_argument("--json", type=Path, default=None, help="write every result (with its ticks) here")
    p.add_argument("--port", type=int, default=0, help="the site's loopback port (default: a free one)")
    p.add_argument("--quiet", action="store_true")
    p.add_argument("--steady", action="store_true",
                   help="start as after weeks of crawling a map whose pages last changed long ago: re-checks "
                        "fall due evenly (see schedule_steady)")
    p.add_argument("--scheduled", action="store_true",
                   help="start with each page's re-check schedule as the crawler leaves a full crawl "
                        "(default: none, every page due at the first tick)")
    a = p.parse_args(argv)
    if a.small:
        for k, v in SMALL.items():
            if getattr(a, k) == p.get_default(k) or (k == "hours" and a.hours is None):
                setattr(a, k, v)
        if a.variant == "all":
            a.variant = VARIANTS[0]
    variants = list(VARIANTS) if a.variant == "all" else a.variant.split(",")
    bad = [v for v in variants if v not in VARIANTS]
    if bad or a.pages < 10:
        p.error(f"unknown variant {bad[0]!r}" if bad else "--pages must be at least 10")
    hours = a.hours if a.hours is not None else round(24 * a.days)
    if hours < 1 or a.budget < 1:
        p.error("--hours (or --days) and --budget must give at least one tick of one request")
    cfg = Config(a.pages, hours, a.budget, a.rate, a.seed, a.tracked)
    crawlers = CRAWLERS if a.crawler == "both" else (a.crawler,)

    def log(s: str) -> None:
        if not a.quiet:
            print(f"{datetime.now(UTC):%H:%M:%S} {s}", file=sys.stderr, flush=True)

    tmp = None
    if a.work is None:
        tmp = tempfile.TemporaryDirectory(prefix="mapwatch-fresh-")
        work = Path(tmp.name)
    else:
        work = a.work
        work.mkdir(parents=True, exist_ok=True)
    try:
        template, marker = work / "template.db", work / "template.json"
        key = {"pages": cfg.pages, "seed": cfg.seed, "rate": cfg.rate, "tracked": cfg.tracked}
        known = json.loads(marker.read_text()) if marker.exists() and template.exists() else {}
        if known.get("key") == key:  # built by an earlier run in this folder: same map, same port
            port, setup = known["port"], known["setup"]
            log(f"reusing the database of {cfg.pages:,} pages in {work}")
        else:
            port = a.port or free_port()
            log(f"building the database of {cfg.pages:,} pages")
            setup = build_template(cfg, f"http://127.0.0.1:{port}", template)
            marker.write_text(json.dumps({"key": key, "port": port, "setup": setup}) + "\n")
            log(f"built in {setup['setup_seconds']} s")
        results = []
        for variant in variants:
            for crawler in crawlers:
                results.append({**run_one(cfg, variant, crawler, port, template, work, log, a.scheduled, a.steady),
                                "scheduled": a.scheduled, "steady": a.steady})
                if a.json:  # as it goes: a long run stopped early keeps what it measured
                    a.json.write_text(json.dumps({"setup": setup, "results": results}, indent=1) + "\n")
        print(f"{cfg.pages:,} pages, {hours} ticks of 1 simulated hour, budget {cfg.budget:,} requests per tick, "
              f"new papers {cfg.rate:g} of the map per day, {cfg.tracked} tracked papers")
        print(table(results))
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
