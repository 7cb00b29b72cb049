"""Quiet ticks on a map in its steady state (issue 32, item 3): bench.sources' starting database
(`--work` keeps it), scheduled as after weeks of crawling (bench.freshness.schedule_steady), the
simulated site with nothing new on it, and a few ticks of the real refresh in one process, as
`mapwatch run` makes them, each measured: its requests by kind and its CPU; with `--busy N` the
first N ticks have new papers arriving, so the quiet ones after them are a night's first hours.

    python -m bench.quiet_tick --pages 1000000 --variant no-sitemap --work W
    python -m bench.quiet_tick --pages 1000000 --variant sitemap-lastmod --work W --profile q.prof

The first tick is the database's first crawl of the site (the starting database was stored from
the pages, not crawled: no robots.txt read, so the plan reads every row, and a sitemap is read
and recorded whole); the second is the first on a crawled database (it finds once, and keeps in
the database, that every page was checked); from the third on, the steady quiet tick. With
`--new-process K`, tick K runs in a new Python process (its CPU measured there, around the
refresh alone, as for the others): the first tick of a process that restarts on a crawled
database, its caches empty. `--profile F` writes cProfile's figures of the last tick to F and
prints its 30 costliest calls.

    python -m bench.quiet_tick --pages 1000000 --ticks 4 --new-process 3 --work W
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlite_utils import Database

from bench.freshness import STEADY_AGE, Config, schedule_steady
from bench.livemap import T0, VARIANTS
from bench.sources import Server, starting_database
from mapwatch.store.database.db import open_db
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.subscriptions.tracking import tracked_paper_ids


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.quiet_tick", description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=10_000)
    p.add_argument("--variant", choices=VARIANTS, default="no-sitemap")
    p.add_argument("--ticks", type=int, default=3)
    p.add_argument("--busy", type=int, default=0, help="the first BUSY ticks have new papers (the rest: quiet)")
    p.add_argument("--budget", type=int, default=3_600)
    p.add_argument("--work", type=Path, required=True, help="folder of the starting database (built there if missing)")
    p.add_argument("--profile", type=Path, default=None)
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--new-process", type=int, default=0, metavar="K", help="run tick K in a new process")
    a = p.parse_args(argv)

    def log(s: str) -> None:
        print(f"{datetime.now(UTC):%H:%M:%S} {s}", file=sys.stderr, flush=True)

    cfg = Config(a.pages, a.ticks, a.budget)
    a.work.mkdir(parents=True, exist_ok=True)
    template, port = starting_database(cfg, a.work, log)
    db_path = a.work / f"quiet-{a.variant}.db"
    for stale in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
        stale.unlink(missing_ok=True)
    shutil.copyfile(template, db_path)
    log(f"scheduled {schedule_steady(db_path, a.variant, a.budget):,} pages as in a steady state")
    server = Server(cfg, a.variant, 0.0, port, STEADY_AGE)
    ticks = []
    try:
        for k in range(1, a.ticks + 1):
            now = T0 + timedelta(hours=k)
            quiet = k > a.busy
            server.call(f"advance?to={now.timestamp()}" + ("&quiet=1" if quiet else ""), "POST")
            server.call("counts?reset=1")
            prof: cProfile.Profile | None = None
            if k == a.new_process:
                profiled = [str(a.profile)] if a.profile and k == a.ticks else []
                child = json.loads(subprocess.run(
                    [sys.executable, "-m", "bench.quiet_tick", "--one-tick", str(db_path), server.base,
                     now.isoformat(), str(a.budget), *profiled], check=True, capture_output=True, text=True).stdout)
                cpu, wall = child["cpu_s"], child["wall_s"]
            else:
                db = open_db(db_path)
                prof = cProfile.Profile() if a.profile and k == a.ticks else None
                if prof:
                    prof.enable()
                cpu, wall = one_tick(db, server.base, now, a.budget)
                if prof:
                    prof.disable()
                db.close()
            counts = server.call("counts")
            counts.pop("new_pages_requested", None)
            requests = sum(counts.values())
            ticks.append({"tick": k, "quiet": quiet, "cpu_s": round(cpu, 3), "wall_s": round(wall, 2),
                          "requests": requests, "budget_share": round(requests / a.budget, 4), "by_kind": counts})
            log(f"{a.variant} {'quiet' if quiet else 'busy'} tick {k}: {requests} requests"
                f" ({requests / a.budget:.1%} of the budget), CPU {cpu:.2f} s, wall {wall:.1f} s {counts}")
            if prof and a.profile:
                prof.dump_stats(a.profile)
            if a.profile and k == a.ticks:
                pstats.Stats(str(a.profile)).sort_stats("cumulative").print_stats(30)
    finally:
        server.stop()
        for copy in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
            copy.unlink(missing_ok=True)
    if a.json:
        a.json.write_text(json.dumps({"pages": a.pages, "variant": a.variant, "ticks": ticks}, indent=1) + "\n")
    print(f"{a.pages:,} pages, {a.variant}, budget {a.budget:,}: " + "; ".join(
        f"tick {t['tick']} {t['cpu_s']} s CPU, {t['requests']} requests ({t['budget_share']:.1%})" for t in ticks))
    return 0


def one_tick(db: Database, base: str, now: datetime, budget: int) -> tuple[float, float]:
    """One tick of the real refresh at `now`: its CPU and wall seconds."""
    c0, w0 = time.process_time(), time.perf_counter()
    refresh(db, base, clock=lambda: now, priority=tracked_paper_ids(db), options=HttpOptions(budget=budget))
    return time.process_time() - c0, time.perf_counter() - w0


def child_tick(argv: list[str]) -> int:
    """`--one-tick DB BASE NOW BUDGET [PROFILE]`: one tick in this (new) process; its figures as
    JSON (and cProfile's in PROFILE)."""
    db_path, base, now, budget, *profile = argv
    db = open_db(Path(db_path))
    prof = cProfile.Profile() if profile else None
    if prof:
        prof.enable()
    cpu, wall = one_tick(db, base, datetime.fromisoformat(now), int(budget))
    if prof:
        prof.disable()
        prof.dump_stats(profile[0])
    db.close()
    print(json.dumps({"cpu_s": cpu, "wall_s": wall}))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one-tick"]:
        raise SystemExit(child_tick(sys.argv[2:]))
    raise SystemExit(main())
