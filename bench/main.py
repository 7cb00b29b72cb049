"""`bench/run`: the speed figures of mapwatch on this machine, in one run.

Sections (`--only 1,2,3`):
  1 parse pages/s (pure, one core)
  2 cold ingest: wall time, peak memory (ru_maxrss of the ingesting child), ratio to a floor
    measured in the same run (read+parse + raw sqlite3 executemany of the same rows)
  3 re-ingest of the unchanged pages: time, ratio to cold
  4 refresh with 2% changed pages (snapshot 2): time, pages read, new events
  5 query latency at --large papers (handler + rendering), idle and while a refresh writes
  6 feeds: publish cold vs incremental, feed server req/s and p99 with conditional GETs
  7 alert latency through the fake Discord server
Everything it creates lives under bench/out/.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TextIO

from bench import generate as gen

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
SECTIONS = (1, 2, 3, 4, 5, 6, 7)
PARSE_PASSES = 3
TITLES = {
    1: "parse", 2: "cold ingest", 3: "re-ingest unchanged", 4: "refresh, 2% changed",
    5: "query latency", 6: "feeds", 7: "alert latency",
}


class Report:
    """Collects figures and prints them as they come."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.figures: dict[str, object] = {}
        self.checks: list[tuple[str, bool, str]] = []

    def line(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    def section(self, n: int) -> None:
        self.line()
        self.line(f"## {n}. {TITLES[n]}")

    def fig(self, key: str, value: object) -> None:
        self.figures[key] = value

    def target(self, name: str, ok: bool, detail: str) -> None:
        self.checks.append((name, ok, detail))
        self.line(f"   target {name}: {'MET' if ok else 'MISSED'} ({detail})")


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


def run_child(*args: str) -> tuple[dict, int]:
    """Run `python -m bench.child ARGS`; returns its JSON output and its peak RSS in KiB."""
    proc = subprocess.Popen([sys.executable, "-m", "bench.child", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"bench.child {args[0]} failed with status {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1]), usage.ru_maxrss


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
        from store.fetch import page_files
        from store.parse import parse_page

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
        floor_db = self.work / "floor.db"
        floor, floor_rss = run_child("floor", str(floor_db), str(self.map_dir))
        cold, rss = run_child("ingest", str(self.db), str(self.map_dir))
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
        self.r.fig("reingest", again)
        self.r.fig("reingest_force", forced)
        self.r.fig("reingest_over_cold", round(ratio, 4))
        self.r.target("unchanged re-ingest <= 1/10 of cold", ratio <= 0.1, f"{ratio:.3f}")
        if again["stored"] or again["new_citations"] or forced["stored"] or forced["new_citations"]:
            raise RuntimeError("re-ingesting unchanged pages stored something")

    # -- 4 -------------------------------------------------------------------------------
    def s4_refresh(self) -> None:
        if self.cold_seconds is None:
            self.s2_cold()
        assert self.smap is not None
        t = time.perf_counter()
        manifest = gen.write_map(self.smap, self.map_dir, 2)
        self.r.line(f"snapshot 2 written in {time.perf_counter() - t:.1f} s: {manifest['files_written']:,} "
                    f"pages changed ({manifest['new_citations']:,} new citations, "
                    f"{manifest['new_listed_citations']:,} of them named in lists)")
        refresh, _ = run_child("ingest", str(self.db), str(self.map_dir))
        self.r.line(f"refresh from the folder: {refresh['seconds']:.2f} s, {refresh['pages_read']:,} pages "
                    f"seen, {refresh['pages_read'] - refresh['skipped']:,} read, {refresh['stored']:,} stored, "
                    f"{refresh['new_citations']:,} new citations")
        self.r.fig("refresh_folder", {**refresh, "changed_pages": manifest["files_written"]})
        if refresh["stored"] != manifest["files_written"] or refresh["new_citations"] == 0:
            raise RuntimeError("the refresh did not store the changed pages")
        self.r.line("refresh over HTTP: not measurable yet (no HTTP refresh in store on this branch)")

    # -- 5-7 -----------------------------------------------------------------------------
    def s5_queries(self) -> None:
        self.r.line("not measurable yet: the /paper, /citers, /search, autocomplete, /related and /path "
                    "handlers are not on this branch")

    def s6_feeds(self) -> None:
        self.r.line("not measurable yet: feeds publishing and the feed server are not on this branch")

    def s7_alerts(self) -> None:
        self.r.line("not measurable yet: alerts and the fake Discord server are not on this branch")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="bench/run", description="mapwatch speed figures on this machine")
    p.add_argument("--papers", type=int, default=None, help="pages for sections 1-4 (default 20,000)")
    p.add_argument("--large", type=int, default=200_000, help="papers for section 5 (default 200,000)")
    p.add_argument("--only", default="", help="comma-separated sections, e.g. 1,2,3")
    p.add_argument("--smoke", action="store_true", help="1,000 pages, every section, quick")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=OUT, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.smoke:
        a.papers, a.large = a.papers or 1000, min(a.large, a.papers or 1000)
    a.papers = a.papers or 20_000
    try:
        a.sections = tuple(sorted({int(s) for s in a.only.split(",") if s.strip()})) or SECTIONS
    except ValueError:
        p.error("--only takes section numbers, e.g. --only 1,2,3")
    if not set(a.sections) <= set(SECTIONS):
        p.error("sections are 1 to 7")
    return a


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    r = Report()
    started = datetime.now(UTC)
    r.line(f"mapwatch benchmark {started:%Y-%m-%d %H:%M} UTC: {machine()}")
    r.line(f"command: bench/run {' '.join(sys.argv[1:] if argv is None else argv)}".rstrip())
    b = Bench(args, r)
    b.prepare()
    steps = {1: b.s1_parse, 2: b.s2_cold, 3: b.s3_reingest, 4: b.s4_refresh, 5: b.s5_queries,
             6: b.s6_feeds, 7: b.s7_alerts}
    for n in args.sections:
        r.section(n)
        steps[n]()
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
