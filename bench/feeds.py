"""Section 6, feeds: a tick's publish (directions, OPML, index, tracked papers), the static
folder (`--papers all`) cold and after the 2% change, and the feed server against nginx on
the direction feeds (conditional GETs), with paper feeds answered on demand.

`tick_publish(db_path, out)` is the one call the large-map section times (a tick's publish
at any size); `python -m bench.feeds replay DB` times it on an existing database by
handing the newest 2% of its events and pages to publish as new (the cursors set back).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bench.harness import Run

BASE = "http://127.0.0.1:8080"
TRACKED = 20  # papers tracked by some channel: their files are written by every tick


def tick_publish(db_path: str | Path, out: str | Path, base: str = BASE) -> dict[str, Any]:
    """One tick's publish (what `mapwatch run` does after each refresh), timed."""
    from mapwatch.feeds.publish import publish
    from mapwatch.store.database.db import open_db

    db = open_db(db_path)
    try:
        t, c = time.perf_counter(), time.process_time()
        rep = publish(db, out, base)
        return {"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c,
                "written": len(rep.written), "unchanged": rep.unchanged, "page_seconds": rep.page_seconds}
    finally:
        db.close()


def publish_all(db_path: str | Path, out: str | Path, base: str = BASE) -> dict[str, Any]:
    """`mapwatch publish --papers all`, timed."""
    from mapwatch.feeds.publish import publish
    from mapwatch.store.database.db import open_db

    db = open_db(db_path)
    try:
        t, c = time.perf_counter(), time.process_time()
        rep = publish(db, out, base, papers="all")
        return {"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c, "files": rep.total,
                "written": len(rep.written), "unchanged": rep.unchanged, "incremental": rep.incremental,
                "charts": rep.charts, "chart_seconds": rep.chart_seconds, "charts_pending": rep.charts_pending,
                "pages": rep.pages, "page_seconds": rep.page_seconds}
    finally:
        db.close()


def track_some(db_path: str | Path, n: int = TRACKED) -> list[str]:
    """Have a channel track the n most cited papers (as /track does)."""
    from mapwatch.store.database.db import open_db
    from mapwatch.store.questions import feed_queries
    from mapwatch.store.subscriptions.tracking import add_track

    db = open_db(db_path)
    try:
        ids = feed_queries.papers_with_pages(db, n)
        for i, pid in enumerate(ids):
            add_track(db, guild_id=1, channel_id=100 + i, user_id=None, paper_id=pid, created_by=1,
                      now=datetime.now(UTC))
        return ids
    finally:
        db.close()


def replay(db_path: str | Path, out: str | Path, share: float = 0.02) -> dict[str, Any]:
    """A tick's publish on an existing database: publish once (cold, building the feed index),
    then set every cursor back by `share` of the events and pages so the next publish (and
    the index) take them as new, and time that one."""
    from mapwatch.store.database.db import open_db

    cold = tick_publish(db_path, out)
    db = open_db(db_path)
    try:
        e = db.conn.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0]
        s = db.conn.execute("SELECT coalesce(max(id), 0) FROM snapshots").fetchone()[0]
        papers = db.conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        back = (int(e * (1 - share)), int(s * (1 - share)))
        with db.atomic():
            db.conn.execute("UPDATE feed_publishes SET last_event_id = ?, last_snapshot_id = ?", back)
            db.conn.execute("UPDATE feed_index_state SET last_event_id = ?, last_snapshot_id = ?", back)
    finally:
        db.close()
    idle = tick_publish(db_path, out)  # (the set-back state: this is the 2% tick)
    again = tick_publish(db_path, out)
    return {"papers": papers, "events": e, "cold": cold, "tick_2pct": idle, "idle": again}


def direction_paths(out: Path) -> list[str]:
    return sorted("/" + p.relative_to(out).as_posix() for p in (out / "feeds").rglob("*.atom")
                  if not p.relative_to(out).as_posix().startswith("feeds/papers/"))


def server_load(bench: Run, out: Path, db_path: Path) -> dict[str, Any]:
    """wrk with conditional GETs over every direction feed: the feed server, then nginx on the
    same folder; and over 200 paper feeds the server answers on demand (304 from one row)."""
    from bench import load
    from bench.harness import Server, free_port

    paths = direction_paths(out)
    port = free_port()
    argv = [sys.executable, "-c",
            "import asyncio, sys\n"
            "from mapwatch.feeds.serving.ondemand import PaperCache\n"
            "from mapwatch.feeds.serving.server import start_server\n"
            "async def main():\n"
            "    papers = PaperCache(sys.argv[3], sys.argv[4])\n"
            "    await start_server(sys.argv[1], '127.0.0.1', int(sys.argv[2]), papers=papers)\n"
            "    await asyncio.Event().wait()\n"
            "asyncio.run(main())\n", str(out), str(port), str(db_path), BASE]
    results: dict[str, Any] = {}
    papers = load.sample_paths(out, 100_000)
    papers = [p for p in papers if p.startswith("/feeds/papers/")]
    papers = papers[:: max(1, len(papers) // 200)][:200]
    with Server(argv, port, bench.work / "feed-server.log"):
        results["feed server, direction feeds"] = load.run(f"http://127.0.0.1:{port}", paths,
                                                           bench.args.load_seconds, bench.work)
        if papers:
            results["feed server, paper feeds on demand"] = load.run(f"http://127.0.0.1:{port}", papers,
                                                                     bench.args.load_seconds, bench.work)
    nginx = load.Nginx(out, bench.work / "nginx")
    if nginx.available():
        with nginx:
            results["nginx, same folder, direction feeds"] = load.run(f"http://127.0.0.1:{nginx.port}", paths,
                                                                      bench.args.load_seconds, bench.work)
    for name, res in results.items():
        n = len(papers) if "paper" in name else len(paths)
        bench.r.line(f"{name}: {res['requests_per_s']:,.0f} requests/s, p50 {res['p50_ms']:.2f} ms, "
                     f"p99 {res['p99_ms']:.2f} ms ({res['tool']}, {res['connections']} connections, "
                     f"{res['seconds']:.0f} s, conditional GETs over {n} feeds, "
                     f"{res['status_304_share']:.0%} answered 304)")
        res.pop("raw", None)
    return results


def section(bench: Run) -> None:
    """bench/run section 6 on the bench's map: the snapshot-1 database, then the 2% change."""
    from bench.harness import copy_db, run_child

    bench.ensure_snapshot1_db()
    db_path, work = bench.work / "feeds.db", bench.work
    copy_db(bench.snap1_db, db_path)
    tracked = track_some(db_path)
    tick_dir, all_dir = work / "public-tick", work / "public"
    cold_tick = tick_publish(db_path, tick_dir)
    cold_all = publish_all(db_path, all_dir)
    if not bench.snapshot2_written:
        bench.write_snapshot2(bench.map_dir)
        bench.snapshot2_written = True
    run_child("ingest", str(db_path), str(bench.map_dir))
    tick = tick_publish(db_path, tick_dir)
    inc_all = publish_all(db_path, all_dir)
    idle = tick_publish(db_path, tick_dir)
    ratio = inc_all["seconds"] / cold_all["seconds"]
    r = bench.r
    r.line(f"a tick's publish (directions, OPML, index, {len(tracked)} tracked papers): first "
           f"{cold_tick['seconds']:.2f} s ({cold_tick['written']:,} files, builds the feed index); after the 2% "
           f"change {tick['seconds']:.2f} s wall, "
           f"{tick['cpu_seconds']:.2f} s CPU ({tick['written']:,} files written); idle {idle['seconds']:.2f} s")
    r.line(f"publish --papers all cold: {cold_all['files']:,} files in {cold_all['seconds']:.2f} s wall, "
           f"{cold_all['cpu_seconds']:.2f} s CPU")
    r.line(f"publish --papers all after the 2% change: {inc_all['written']:,} files written, "
           f"{inc_all['unchanged']:,} unchanged, in {inc_all['seconds']:.2f} s wall, "
           f"{inc_all['cpu_seconds']:.2f} s CPU; "
           f"ratio to cold = {ratio:.3f} wall, {inc_all['cpu_seconds'] / cold_all['cpu_seconds']:.3f} CPU "
           f"(of which {inc_all['charts']:,} charts drawn in {inc_all['chart_seconds']:.2f} s, "
           f"{inc_all['charts_pending']:,} left for the next publishes; cold drew {cold_all['charts']:,})")
    r.fig("publish_tick", {"first": cold_tick, "after_change": tick, "idle": idle})
    r.fig("publish_cold", cold_all)
    r.fig("publish_incremental", inc_all)
    r.target("publish --papers all incremental <= 1/10 of cold", ratio <= 0.1, f"{ratio:.3f}")
    r.target("a tick's publish <= 10 s (at this size; the large-map section times 1M)", tick["seconds"] <= 10,
             f"{tick['seconds']:.2f} s")
    results = server_load(bench, all_dir, db_path)
    r.fig("feed_server", results)
    ours = results["feed server, direction feeds"]
    r.target("feed server >= 5,000 conditional GETs/s (direction feeds)", ours["requests_per_s"] >= 5000,
             f"{ours['requests_per_s']:,.0f}/s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.feeds", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    rp = sub.add_parser("replay", help="a tick's publish on an existing database (it is changed: use a copy)")
    rp.add_argument("db", type=Path)
    rp.add_argument("--out", type=Path, required=True)
    rp.add_argument("--share", type=float, default=0.02)
    a = p.parse_args(argv)
    print(json.dumps(replay(a.db, a.out, a.share)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
