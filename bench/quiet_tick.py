"""Quiet ticks on a map in its steady state (issue 32, item 3): bench.sources' starting database
(`--work` keeps it), scheduled as after weeks of crawling (bench.freshness.schedule_steady), the
simulated site with nothing new on it, and a few ticks of the real refresh in one process, as
`mapwatch run` makes them, each measured: its requests by kind and its CPU; with `--busy N` the
first N ticks have new papers arriving, so the quiet ones after them are a night's first hours.

    python -m bench.quiet_tick --pages 1000000 --variant no-sitemap --work W
    python -m bench.quiet_tick --pages 1000000 --variant sitemap-lastmod --work W --profile q.prof

The first tick is the database's first crawl of the site (the starting database was stored from
the pages, not crawled: no robots.txt read, so the plan reads every row, and a sitemap is read
and recorded whole); the second is the first of a process on a crawled database; from the third
on, the steady quiet tick. `--profile F` writes cProfile's figures of the last tick to F and
prints its 30 costliest calls.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import shutil
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

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
            db = open_db(db_path)
            prof = cProfile.Profile() if a.profile and k == a.ticks else None
            c0, w0 = time.process_time(), time.perf_counter()
            if prof:
                prof.enable()
            refresh(db, server.base, clock=lambda now=now: now, priority=tracked_paper_ids(db),
                    options=HttpOptions(budget=a.budget))
            if prof:
                prof.disable()
            cpu, wall = time.process_time() - c0, time.perf_counter() - w0
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


if __name__ == "__main__":
    raise SystemExit(main())
