"""`bench/run`: the speed figures of mapwatch on this machine, in one run.

Sections (`--only 1,2,3`):
  1 parse pages/s (pure, one core)
  2 cold ingest: wall time, peak memory (ru_maxrss of the ingesting child), ratio to a floor
    measured in the same run (read+parse + raw sqlite3 executemany of the same rows)
  3 re-ingest of the unchanged pages: time, ratio to cold
  4 refresh with 2% changed pages (snapshot 2): time, pages read, new events
  5 query latency at --large papers (handler + rendering), idle and while a refresh writes
  6 feeds: publish cold vs incremental (the web pages' share beside the feeds), feed server req/s and p99
    with conditional GETs
  7 alert latency through the fake Discord server
  8 cold ingest against the fair floor (bench/floor.py), ~40 list items per page
  9 (with --huge N, --huge-points) a huge map fed from the generator (bench/huge.py)
Everything it creates lives under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from bench import floor, huge
from bench import generate as gen
from bench.harness import ROOT, Report, Server, copy_db, free_port, run_child, run_module
from bench.queries import commands_rss

OUT = ROOT / "bench" / "out"
SECTIONS = (1, 2, 3, 4, 5, 6, 7, 8)  # 9 (--huge) runs when asked for
PARSE_PASSES = 3


def machine() -> str:
    cores = os.cpu_count() or 0
    try:
        meminfo = Path("/proc/meminfo").read_text().splitlines()
        mem_kb = int(next(ln for ln in meminfo if ln.startswith("MemTotal")).split()[1])
        mem = f"{mem_kb / 1024 / 1024:.1f} GiB"
    except (OSError, StopIteration):
        mem = "unknown memory"
    return (f"{cores} cores, {mem}, {platform.machine()}, Python {platform.python_version()}, "
            f"SQLite {sqlite3.sqlite_version}")


def count_events(db_path: Path) -> int:
    with sqlite3.connect(db_path) as c:
        n = c.execute("SELECT count(*) FROM events").fetchone()[0]
    c.close()
    return n


def http_refresh(db_path: Path, base: str, days_later: float = 0) -> dict:
    """One HTTP refresh tick over the whole map (budget unlimited), `days_later` days from now
    (past the 7-day ceiling of the re-check intervals, every page is due); its figures."""
    from datetime import timedelta

    from mapwatch.store.clock import utc_now
    from mapwatch.store.database.db import open_db
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.sources.refresh import refresh

    db = open_db(db_path)
    at = utc_now() + timedelta(days=days_later)
    t, c = time.perf_counter(), time.process_time()
    rep = refresh(db, base, clock=lambda: at, options=HttpOptions(budget=10**9))
    seconds, cpu = time.perf_counter() - t, time.process_time() - c
    db.close()
    not_modified = rep.skipped  # 304 answers (and identical bodies)
    return {"seconds": seconds, "cpu_seconds": cpu, "requests": rep.pages_read + rep.missing + len(rep.failed),
            "pages_read": rep.pages_read, "not_modified": not_modified, "stored": rep.stored,
            "new_citations": rep.new_citations, "missing": rep.missing, "failed": len(rep.failed),
            "rejected": len(rep.rejected)}


def timed(fn: Callable[[], object]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


class Bench:
    def __init__(self, args: argparse.Namespace, report: Report) -> None:
        self.args = args
        self.r = report
        self.work = args.out / "run"
        self.map_dir = self.work / "map"
        self.db = self.work / "ingest.db"
        self.snap1_db = self.work / "snapshot1.db"  # the cold ingest, kept for sections 4 and 6
        self.snapshot2_written = False
        self.smap: gen.SyntheticMap | None = None
        self.cold_seconds: float | None = None

    # -- setup -------------------------------------------------------------------------
    def prepare(self) -> None:
        if self.work.exists():
            shutil.rmtree(self.work)
        self.work.mkdir(parents=True)
        t = time.perf_counter()
        self.smap = gen.build_map(self.args.papers, self.args.seed)
        manifest = gen.write_map(self.smap, self.map_dir, 1)
        self.r.line(f"map: {manifest['papers']:,} pages (seed {self.args.seed}), {manifest['citations']:,} "
                    f"citations, {manifest['directions']} directions, most cited paper cited by "
                    f"{manifest['max_cited_by']:,}, {manifest['old_style_ids']} old-style ids; "
                    f"generated in {time.perf_counter() - t:.1f} s")
        self.r.fig("map", manifest)

    # -- 1 -------------------------------------------------------------------------------
    def s1_parse(self) -> None:
        from mapwatch.store.pages.files import page_files
        from mapwatch.store.pages.parse import parse_page

        data = [p.read_bytes() for p in page_files([self.map_dir])]
        walls, cpus = [], []
        for _ in range(PARSE_PASSES):
            t_cpu, t = time.process_time(), time.perf_counter()
            for d in data:
                parse_page(d)
            walls.append(time.perf_counter() - t)
            cpus.append(time.process_time() - t_cpu)
        rate, cpu_rate = len(data) / min(walls), len(data) / min(cpus)
        self.r.line(f"parse: {len(data):,} pages ({sum(map(len, data)) / len(data) / 1024:.1f} KiB/page), "
                    f"best of {PARSE_PASSES} passes: {min(walls):.2f} s wall = {rate:,.0f} pages/s; "
                    f"{min(cpus):.2f} s CPU = {cpu_rate:,.0f} pages per CPU-second (one core)")
        self.r.fig("parse_pages_per_s", round(rate))
        self.r.fig("parse_pages_per_cpu_s", round(cpu_rate))
        self.r.target("parse >= 5,000 pages/s", rate >= 5000,
                      f"{rate:,.0f}/s wall = {rate / 5000:.2f}x of target; {cpu_rate:,.0f}/CPU-s = "
                      f"{cpu_rate / 5000:.2f}x")

    # -- 2 -------------------------------------------------------------------------------
    def s2_cold(self) -> None:
        # Floor and ingest alternate `--repeat` times (fresh databases each time); the best of
        # each is compared, so a burst of load from elsewhere on the machine counts less.
        floors, colds = [], []
        for _ in range(self.args.repeat):
            for path in (self.work / "floor.db", self.db):
                for suffix in ("", "-wal", "-shm"):
                    Path(f"{path}{suffix}").unlink(missing_ok=True)
            floors.append(run_child("floor", str(self.work / "floor.db"), str(self.map_dir)))
            colds.append(run_child("ingest", str(self.db), str(self.map_dir)))
        floor, floor_rss = min(floors, key=lambda f: f[0]["cpu_seconds"])
        cold, rss = min(colds, key=lambda c: c[0]["cpu_seconds"])
        rss = max(r for _c, r in colds)
        if self.args.repeat > 1:
            self.r.line("runs (wall/CPU s): floor " + ", ".join(f"{f['seconds']:.1f}/{f['cpu_seconds']:.1f}"
                                                           for f, _r in floors)
                        + "; ingest " + ", ".join(f"{c['seconds']:.1f}/{c['cpu_seconds']:.1f}" for c, _r in colds)
                        + "; the best of each (by CPU) below")
        self.cold_seconds = cold["seconds"]
        ratio = cold["seconds"] / floor["seconds"]
        cpu_ratio = cold["cpu_seconds"] / floor["cpu_seconds"]
        self.r.line(f"cold ingest: {cold['stored']:,} pages stored, {cold['new_citations']:,} new citations "
                    f"in {cold['seconds']:.2f} s wall ({cold['stored'] / cold['seconds']:,.0f} pages/s), "
                    f"{cold['cpu_seconds']:.2f} s CPU; peak memory {rss / 1024:.0f} MiB "
                    f"(ru_maxrss of the ingesting process)")
        self.r.line(f"floor: read+parse {floor['parse_seconds']:.2f} s + raw executemany "
                    f"{floor['insert_seconds']:.2f} s = {floor['seconds']:.2f} s wall; CPU "
                    f"{floor['parse_cpu_seconds']:.2f} + {floor['insert_cpu_seconds']:.2f} = "
                    f"{floor['cpu_seconds']:.2f} s ({floor['papers']:,} papers, {floor['citations']:,} "
                    f"citations; peak {floor_rss / 1024:.0f} MiB)")
        self.r.line(f"cold ingest / floor = {ratio:.2f} wall, {cpu_ratio:.2f} CPU")
        self.r.fig("cold_ingest", {**cold, "peak_rss_mib": round(rss / 1024)})
        self.r.fig("floor", {**floor, "peak_rss_mib": round(floor_rss / 1024)})
        self.r.fig("cold_over_floor", round(ratio, 3))
        self.r.fig("cold_over_floor_cpu", round(cpu_ratio, 3))
        self.r.target("cold ingest <= 1.5x floor", ratio <= 1.5, f"{ratio:.2f}x wall, {cpu_ratio:.2f}x CPU")
        if self.args.papers >= 20_000:
            self.r.target("peak memory <= 500 MB (20k ingest)", rss / 1024 <= 500, f"{rss / 1024:.0f} MiB")
        else:
            self.r.line(f"   (peak memory target is for 20k pages; this run has {self.args.papers:,})")

    # -- 3 -------------------------------------------------------------------------------
    def s3_reingest(self) -> None:
        if self.cold_seconds is None:
            self.s2_cold()
        assert self.cold_seconds is not None
        again, _ = run_child("ingest", str(self.db), str(self.map_dir))
        forced, _ = run_child("ingest", str(self.db), str(self.map_dir), "--force")
        ratio = again["seconds"] / self.cold_seconds
        self.r.line(f"re-ingest unchanged: {again['pages_read']:,} pages, {again['skipped']:,} skipped by "
                    f"size+mtime, {again['stored']} stored, in {again['seconds']:.3f} s wall "
                    f"({again['cpu_seconds']:.3f} s CPU); ratio to cold = {ratio:.3f} (1/{1 / ratio:.0f})")
        self.r.line(f"re-ingest --force (read, parse, compare content hash): {forced['seconds']:.2f} s, "
                    f"{forced['unchanged']:,} unchanged, {forced['stored']} stored; "
                    f"ratio to cold = {forced['seconds'] / self.cold_seconds:.2f}")
        copy_db(self.db, self.snap1_db)
        self.r.fig("reingest", again)
        self.r.fig("reingest_force", forced)
        self.r.fig("reingest_over_cold", round(ratio, 4))
        self.r.target("unchanged re-ingest <= 1/10 of cold", ratio <= 0.1, f"{ratio:.3f}")
        if again["stored"] or again["new_citations"] or forced["stored"] or forced["new_citations"]:
            raise RuntimeError("re-ingesting unchanged pages stored something")

    # -- 4 -------------------------------------------------------------------------------
    def ensure_snapshot1_db(self) -> None:
        if not self.snap1_db.exists():
            if self.cold_seconds is None:
                self.s2_cold()
            copy_db(self.db, self.snap1_db)

    def write_snapshot2(self, folder: Path) -> dict:
        assert self.smap is not None
        return gen.write_map(self.smap, folder, 2)

    def s4_refresh(self) -> None:
        self.ensure_snapshot1_db()
        # Over HTTP: the snapshot-1 map served by a loopback server (another process).
        http_map = self.work / "http-map"
        shutil.copytree(self.map_dir, http_map)
        http_db = self.work / "http.db"
        copy_db(self.snap1_db, http_db)
        port = free_port()
        with Server([sys.executable, "-m", "bench.generate", "serve", str(http_map), "--port", str(port)],
                    port, self.work / "map-server.log"):
            base = f"http://127.0.0.1:{port}"
            first = http_refresh(http_db, base)
            self.r.line(f"HTTP refresh, first tick (no validators stored yet): {first['seconds']:.2f} s wall, "
                        f"{first['cpu_seconds']:.2f} s CPU; {first['pages_read']:,} pages fetched, "
                        f"{first['stored']:,} stored, {first['missing']:,} without a page")
            manifest = self.write_snapshot2(http_map)
            events_before = count_events(http_db)
            # every page due again (docs/live-map.md, "Following the live map over HTTP")
            second = http_refresh(http_db, base, days_later=8)
            new_events = count_events(http_db) - events_before
        self.r.line(f"snapshot 2 on the server: {manifest['files_written']:,} pages changed "
                    f"({manifest['new_citations']:,} new citations, {manifest['new_listed_citations']:,} "
                    f"named in lists)")
        self.r.line(f"HTTP refresh with 2% changed: {second['seconds']:.2f} s wall, {second['cpu_seconds']:.2f} s "
                    f"CPU; {second['requests']:,} requests, {second['not_modified']:,} answered 304, "
                    f"{second['pages_read'] - second['not_modified']:,} pages fetched, {second['stored']:,} stored, "
                    f"{second['new_citations']:,} new citations, {new_events:,} new events "
                    f"({second['missing']:,} listed papers without a page)")
        self.r.fig("refresh_http_first", first)
        self.r.fig("refresh_http", {**second, "new_events": new_events, "changed_pages": manifest["files_written"]})
        if second["stored"] != manifest["files_written"] or new_events == 0:
            raise RuntimeError("the HTTP refresh did not store the changed pages")

        self.s4_website(http_map)

        # From the folder: the same change, written in place (unchanged files keep their mtime).
        manifest = self.write_snapshot2(self.map_dir)
        self.snapshot2_written = True
        events_before = count_events(self.db)
        refresh, _ = run_child("ingest", str(self.db), str(self.map_dir))
        new_events = count_events(self.db) - events_before
        self.r.line(f"refresh from the folder: {refresh['seconds']:.2f} s wall, {refresh['cpu_seconds']:.2f} s CPU; "
                    f"{refresh['pages_read']:,} files seen, {refresh['pages_read'] - refresh['skipped']:,} read, "
                    f"{refresh['stored']:,} stored, {refresh['new_citations']:,} new citations, "
                    f"{new_events:,} new events")
        self.r.fig("refresh_folder", {**refresh, "changed_pages": manifest["files_written"], "new_events": new_events})
        if refresh["stored"] != manifest["files_written"] or refresh["new_citations"] == 0:
            raise RuntimeError("the refresh did not store the changed pages")

    def s4_website(self, folder: Path) -> None:
        """The map's website: the same pages served as HTML (robots.txt, sitemaps; rendered per
        request) and as text, each crawled in a child process (its peak RSS is the crawl's):
        from the snapshot-1 database (every page fetched and parsed, nothing stored yet over
        HTTP), and the HTML site from an empty database (every page found through the
        sitemaps, fetched, parsed and stored as it goes)."""
        figures: dict[str, dict] = {}
        runs = (("text, known map", False, True), ("HTML, known map", True, True),
                ("HTML, empty database", True, False))
        for label, as_html, known in runs:
            db = self.work / f"crawl-{len(figures)}.db"
            db.unlink(missing_ok=True)
            if known:
                copy_db(self.snap1_db, db)
            port = free_port()
            argv = [sys.executable, "-m", "bench.generate", "serve", str(folder), "--port", str(port)]
            with Server(argv + (["--html"] if as_html else []), port, self.work / f"site-{len(figures)}.log"):
                res, rss_kib = run_child("crawl", str(db), f"http://127.0.0.1:{port}")
            res["peak_rss_mib"] = rss_kib / 1024
            figures[label] = res
            self.r.line(f"HTTP crawl, {label}: {res['pages_read']:,} pages in {res['seconds']:.1f} s = "
                        f"{res['pages_per_s']:,.0f} pages/s ({res['cpu_seconds']:.1f} s CPU), {res['stored']:,} "
                        f"stored, {res['rejected']:,} rejected, {res['failed']:,} failed; peak RSS "
                        f"{res['peak_rss_mib']:.0f} MiB")
            if res["rejected"] or res["failed"] or res["pages_read"] < self.args.papers:
                raise RuntimeError(f"the {label} crawl did not read every page: {res}")
        self.r.fig("crawl_website", figures)
        ratio = figures["HTML, known map"]["pages_per_s"] / max(figures["text, known map"]["pages_per_s"], 1e-9)
        self.r.line(f"HTML pages read at {ratio:.2f}x the pages/s of the same pages as text")
        peak = figures["HTML, empty database"]["peak_rss_mib"]
        self.r.target("HTML crawl peak memory <= 300 MB (scaled to 100,000 pages: see RESULTS.md)", peak <= 300,
                      f"{peak:.0f} MiB at {self.args.papers:,} pages")

    def s6_feeds(self) -> None:
        from bench import feeds

        feeds.section(self)

    # -- 5-7 -----------------------------------------------------------------------------
    def s5_queries(self) -> None:
        from bench import queries

        if not queries.available():
            self.r.line("not measurable yet: the /paper, /citers, /search, autocomplete, /related and /path "
                        "handlers are not in this checkout")
            return
        large = self.args.large
        folder = self.work / f"large-map-{large}"
        db_path = self.work / f"large-{large}.db"
        t = time.perf_counter()
        lmap = gen.build_map(large, self.args.seed)
        manifest = gen.write_map(lmap, folder, 1)
        self.r.line(f"map: {large:,} pages, {manifest['citations']:,} citations, generated in "
                    f"{time.perf_counter() - t:.0f} s")
        cold, rss = run_child("ingest", str(db_path), str(folder))
        self.r.line(f"cold ingest of {large:,} pages: {cold['seconds']:.1f} s wall, {cold['cpu_seconds']:.1f} s CPU, "
                    f"peak memory {rss / 1024:.0f} MiB")
        changed = gen.write_map(lmap, folder, 2)["files_written"]
        res, writer_rss = run_module("bench.queries", str(db_path), "--during", str(folder))
        q_rss = commands_rss(res)  # the commands' process alone
        if res["missing"]:
            self.r.line(f"not measurable yet (not in this checkout): {', '.join(res['missing'])}")
        limits = {"/paper": 10, "/citers": 10, "/citers newest": 10, "/search": 10, "autocomplete": 10,
                  "/related": 300, "/path": 300}
        for name, idle in res["idle"].items():
            busy = res["during_refresh"].get(name, {})
            self.r.line(f"{name:13} idle p50 {idle['p50_ms']:7.2f} ms  p99 {idle['p99_ms']:7.2f} ms  "
                        f"({idle['n']} calls) | while a refresh writes p50 {busy.get('p50_ms', float('nan')):7.2f} ms  "
                        f"p99 {busy.get('p99_ms', float('nan')):7.2f} ms  ({busy.get('n', 0)} calls)")
        refresh = res.get("refresh", {})
        self.r.line(f"the refresh: {changed:,} changed pages ingested by another process in "
                    f"{refresh.get('seconds', float('nan')):.1f} s, {refresh.get('stored')} stored")
        self.r.line(f"peak memory of the process running the commands at {large:,} papers: {q_rss / 1024:.0f} MiB "
                    f"(with the refresh writer it started: {writer_rss / 1024:.0f} MiB)")
        self.r.fig("queries", {**res, "papers": large, "peak_rss_mib": round(q_rss / 1024),
                               "cold_ingest": {**cold, "peak_rss_mib": round(rss / 1024)}})
        for name, idle in res["idle"].items():
            self.r.target(f"{name} p99 <= {limits[name]} ms at {large:,} papers", idle["p99_ms"] <= limits[name],
                          f"{idle['p99_ms']:.1f} ms")
        busy_worst = max((v["p99_ms"] for v in res["during_refresh"].values() if v["n"]), default=float("nan"))
        if res["during_refresh"]:
            self.r.target("every command p99 <= 50 ms while a refresh writes", busy_worst <= 50,
                          f"worst p99 {busy_worst:.1f} ms")
        if res["idle"]:
            self.r.target(f"commands' process <= 200 MB at {large:,} papers", q_rss / 1024 <= 200,
                          f"{q_rss / 1024:.0f} MiB (store + rendering; discord.py itself not loaded)")

    def s7_alerts(self) -> None:
        import asyncio

        from bench import alerts

        if not alerts.available():
            self.r.line("not measurable yet: the bot's alerts are not in this checkout")
            return
        interval = 2 if self.args.smoke else 10
        papers = min(self.args.papers, 1000)
        res = asyncio.run(alerts.measure(self.work, papers, self.args.seed, interval, free_port()))
        self.r.line(f"alert latency: {res['seconds']:.1f} s from the changed page (written in "
                    f"{res['write_seconds']:.1f} s) to the alert in the fake Discord channel; refresh every "
                    f"{interval} s over HTTP, {papers:,}-page map; alert: {res['alert_title']!r}")
        self.r.fig("alert", res)
        self.r.target("alert latency <= refresh interval + 5 s", res["seconds"] <= interval + 5,
                      f"{res['seconds']:.1f} s with a {interval} s interval")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run", description="mapwatch speed figures on this machine")
    p.add_argument("--papers", type=int, default=None, help="pages for sections 1-4 (default 20,000)")
    p.add_argument("--large", type=int, default=200_000, help="papers for section 5 (default 200,000)")
    p.add_argument("--only", default="", help="comma-separated sections, e.g. 1,2,3")
    p.add_argument("--smoke", action="store_true", help="1,000 pages, every section (9 too), quick")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--load-seconds", type=float, default=5.0, help="length of each load test (default 5)")
    p.add_argument("--repeat", type=int, default=2, help="floor and cold ingest runs, best of each (default 2)")
    p.add_argument("--huge", type=int, nargs="?", const=1_000_000, default=None,
                   help="section 9: a map of N pages fed from the generator (default N 1,000,000)")
    p.add_argument("--huge-points", default="", help="section 9 at several sizes, e.g. 100000,300000,1000000")
    p.add_argument("--huge-items", type=int, default=0,
                   help="list items per page of section 9's map (default 0: the original map, ~19 citations a paper)")
    p.add_argument("--huge-packed", type=Path, default=None,
                   help="section 9: keep each size's packed map (the generator's output, ~8 GB at 1M) in this "
                        "folder and reuse it when a later run asks for the same size, seed and items")
    p.add_argument("--huge-publish-timeout", type=float, default=900.0, help=argparse.SUPPRESS)
    p.add_argument("--out", type=Path, default=OUT, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    try:
        a.huge_points = [int(x) for x in a.huge_points.split(",") if x.strip()]
    except ValueError:
        p.error("--huge-points takes page counts, e.g. 100000,300000,1000000")
    if a.huge_points and a.huge is None:
        a.huge = a.huge_points[-1]
    if a.smoke:
        a.papers, a.large = a.papers or 1000, min(a.large, a.papers or 1000)
        a.load_seconds = min(a.load_seconds, 1.0)
        a.repeat = 1
        a.huge = a.huge or a.papers
    a.papers = a.papers or 20_000
    try:
        a.sections = tuple(sorted({int(s) for s in a.only.split(",") if s.strip()})) or (
            SECTIONS + ((9,) if a.huge else ()))
    except ValueError:
        p.error("--only takes section numbers, e.g. --only 1,2,3")
    if not set(a.sections) <= {*SECTIONS, 9}:
        p.error("sections are 1 to 9")
    if 9 in a.sections and a.huge is None:
        a.huge = 1_000_000
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    r = Report()
    started = datetime.now(UTC)
    r.line(f"mapwatch benchmark {started:%Y-%m-%d %H:%M} UTC: {machine()}")
    r.line(f"command: bench/run {' '.join(sys.argv[1:] if argv is None else argv)}".rstrip())
    b = Bench(args, r)
    if set(args.sections) - {8, 9}:
        b.prepare()
    else:  # sections 8 and 9 generate their own maps
        shutil.rmtree(b.work, ignore_errors=True)
        b.work.mkdir(parents=True)
    steps = {1: b.s1_parse, 2: b.s2_cold, 3: b.s3_reingest, 4: b.s4_refresh, 5: b.s5_queries,
             6: b.s6_feeds, 7: b.s7_alerts, 8: lambda: floor.section(b), 9: lambda: huge.section(b)}
    for n in args.sections:
        r.section(n)
        t = time.perf_counter()
        steps[n]()
        r.line(f"   (section {n} ran {time.perf_counter() - t:.1f} s)")
    r.line()
    r.line("## targets")
    for name, ok, detail in r.checks:
        r.line(f"{'MET   ' if ok else 'MISSED'} {name} ({detail})")
    (args.out / "results.json").write_text(json.dumps(
        {"started": started.isoformat(timespec="seconds"), "machine": machine(), "args": sys.argv[1:],
         "figures": r.figures, "targets": [{"name": n, "met": ok, "detail": d} for n, ok, d in r.checks]},
        indent=1, default=str) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
