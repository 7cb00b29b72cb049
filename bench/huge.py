"""Section 9, `bench/run --huge N`: a map of N pages (default 1,000,000) fed to the ingest
in-process, no folder of files (1M pages would be a ~8 GB folder). The file path is
measured at 20,000 pages (sections 2, 3 and 8).

The generator first writes the map's pages into one packed file (each page's location,
version and bytes, one after the other; timed apart and not part of the ingest's time), so
that its CPU does not compete with the ingest on this 2-core machine; the ingesting process
then reads the packed file sequentially, as an ingest of files reads them, and stores the
pages with `store.database.ingest.ingest_fed` (the same parse workers, batches and history rules as
files). The skip rule is that of files: a page whose stored (size, version) key is the same
is skipped without its content, as a file whose size and mtime are unchanged is not read;
the generator's version of a page changes exactly when its bytes do (as a file's mtime does
when `bench.generate` rewrites it). The unchanged re-ingest reads the keys only (it seeks
past every page's bytes) and must skip every page.

    python -m bench.huge pack N SEED ITEMS FILE [--changed-to DIR]  (the generator) -> one JSON line
    python -m bench.huge ingest DB FILE [--keys-only]  -> one JSON line
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

from bench import generate as gen
from bench.queries import commands_rss
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed
from mapwatch.store.pages.format import format_page

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SAMPLE_S = 0.5


def location(pid: str) -> str:
    return f"{gen.HOST}/paper/{pid}/"


def pack(n: int, seed: int, items: int, changed_to: str | None, path: str) -> dict:
    """The generator's side: build the map, write the changed pages' folder if asked (the
    refresh that section 9's query latency runs beside), then every page into one packed file."""
    t0 = time.perf_counter()
    with open(path, "wb", buffering=1 << 20) as out:
        stream(n, seed, items, False, changed_to, out)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {"pages": n, "seconds": time.perf_counter() - t0, "cpu_seconds": usage.ru_utime + usage.ru_stime,
            "bytes": os.path.getsize(path), "peak_rss_mib": usage.ru_maxrss / 1024}


def stream(n: int, seed: int, items: int, keys_only: bool, changed_to: str | None, out: BinaryIO) -> None:
    """Build the map, write the changed pages' folder if asked, then write every page to `out`."""
    gen.use_vocabulary("zipf")  # titles and abstracts over thousands of words (bench/vocab.py)
    m = gen.build_map(n, seed, items or None)
    if changed_to:
        folder = Path(changed_to)
        for i in m.changed():
            path = gen.page_path(folder, m.ids[i])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(format_page(gen.page(m, i, 2)).encode("utf-8"))
    out.write(b"READY\n")
    for i in range(m.n):
        pid = m.ids[i]
        if keys_only:
            out.write(f"{location(pid)}\t1\t-1\n".encode())
        else:
            data = format_page(gen.page(m, i, 1)).encode("utf-8")
            out.write(f"{location(pid)}\t1\t{len(data)}\n".encode())
            out.write(data)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out.write(f"END\t{usage.ru_utime + usage.ru_stime}\t{usage.ru_maxrss}\n".encode())
    out.flush()


PROGRESS_EVERY = 50_000


def _pages(src: BinaryIO, tail: dict, db_path: str, sampler: MemorySampler, keys_only: bool) -> Iterator[FedPage]:
    """The pages of the packed file; a progress line on stderr every PROGRESS_EVERY pages
    (so that a run stopped early still shows how the cost grew). With `keys_only`, each
    page's bytes are skipped (a seek) and its content is not given."""
    t0, c0, count = time.perf_counter(), time.process_time(), 0
    while True:
        count += 1
        if count % PROGRESS_EVERY == 0:
            size = sum(os.path.getsize(p) for p in (db_path, f"{db_path}-wal") if os.path.exists(p))
            print(f"{datetime.now(UTC):%H:%M:%S} {count:,} pages fed in {time.perf_counter() - t0:.0f} s, writer CPU "
                  f"{time.process_time() - c0:.0f} s, peak memory {sampler.peak_kib / 1024:.0f} MiB, database "
                  f"{size / 2**30:.2f} GiB", file=sys.stderr, flush=True)
        head = src.readline().decode().rstrip("\n").split("\t")
        if head[0] == "END":
            tail["generator_cpu_seconds"], tail["generator_peak_rss_mib"] = float(head[1]), int(head[2]) / 1024
            return
        loc, version, length = head[0], int(head[1]), int(head[2])
        if keys_only:
            src.seek(max(0, length), os.SEEK_CUR)
            yield FedPage(loc, None, version, None)
        else:
            yield FedPage(loc, None, version, src.read(length) if length >= 0 else None)


def _rss_kib(pid: int | str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def _children(pid: int) -> list[int]:
    kids: list[int] = []
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            kids += [int(x) for x in Path(f"/proc/{pid}/task/{task}/children").read_text().split()]
    except OSError:
        pass
    return kids


class MemorySampler(threading.Thread):
    """Peak of this process's RSS plus its children's (the parse workers)."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.peak_kib, self.stopped = 0, threading.Event()

    def run(self) -> None:
        me = os.getpid()
        while not self.stopped.wait(SAMPLE_S):
            total = _rss_kib(me) + sum(_rss_kib(k) for k in _children(me))
            self.peak_kib = max(self.peak_kib, total)


def ingest(db_path: str, packed: str, keys_only: bool) -> dict:
    src = open(packed, "rb", buffering=1 << 20)  # noqa: SIM115 (closed below, after the ingest)
    if src.readline() != b"READY\n":
        raise RuntimeError(f"{packed} is not a packed map (bench.huge pack)")
    n = int(json.loads(Path(f"{packed}.json").read_text())["pages"])
    db = open_db(db_path)
    sampler = MemorySampler()
    sampler.start()
    tail: dict = {}
    k0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0, c0 = time.perf_counter(), time.process_time()
    report = ingest_fed(db, _pages(src, tail, db_path, sampler, keys_only), f"generator: {n:,} pages",
                        clock=lambda: NOW, expected=n)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    src.close()
    k1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    sampler.stopped.set()
    sampler.join()
    workers_cpu = (k1.ru_utime + k1.ru_stime) - (k0.ru_utime + k0.ru_stime)
    db.close()
    size = sum(os.path.getsize(p) for p in (db_path, f"{db_path}-wal") if os.path.exists(p))
    return {"pages": n, "seconds": seconds, "writer_cpu_seconds": cpu, "workers_cpu_seconds": max(0.0, workers_cpu),
            "cpu_seconds": cpu + max(0.0, workers_cpu), "stored": report.stored, "skipped": report.skipped,
            "rejected": len(report.rejected), "new_citations": report.saved.new_citations,
            "writer_peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "ingest_peak_rss_mib": max(sampler.peak_kib, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024,
            "db_bytes": size, **tail}


# -- the section ---------------------------------------------------------------------------

QUERY_LIMITS = {"/paper": 10, "/citers": 10, "/citers newest": 10, "autocomplete": 10, "/search": 20,
                "/related": 300, "/path": 300}
COLD_LIMIT_S = 20 * 60  # at 1,000,000 pages
MEMORY_LIMIT_MIB = 1024
PUBLISH_LIMIT_S = 10


def publish_tick(b, db: Path, out: Path) -> dict:
    """One `mapwatch publish` (what a tick of `mapwatch run` does), in its own process."""
    argv = [sys.executable, "-m", "mapwatch", "publish", "--db", str(db), "--out", str(out)]
    t = time.perf_counter()
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=b.args.huge_publish_timeout)
    except subprocess.TimeoutExpired:
        return {"seconds": None, "timeout": b.args.huge_publish_timeout}
    return {"seconds": time.perf_counter() - t, "status": proc.returncode, "said": proc.stdout.strip()[-300:]}


def _reusable(packed: Path) -> dict | None:
    """The description of a complete packed map kept by an earlier run (`--huge-packed`), else None."""
    try:
        made = json.loads(Path(f"{packed}.json").read_text())
    except (OSError, ValueError):
        return None
    if not packed.exists() or packed.stat().st_size != made.get("bytes"):
        return None
    return {**made, "reused": True}


def section(b) -> None:
    """Run every point of `--huge-points` (else `--huge`): cold ingest, unchanged re-ingest,
    database size, a publish tick, the commands' latency idle and while a refresh writes."""
    from bench.harness import run_module

    points = b.args.huge_points or [b.args.huge]
    items = b.args.huge_items
    b.r.line(f"pages fed to the ingest in-process from one packed file the generator wrote first (no folder "
             f"of files); the "
             f"file path is measured at {b.args.papers:,} pages (sections 2, 3, 8); "
             + (f"~{items} list items per page" if items else "the original map (~19 citations a paper)")
             + "; titles and abstracts from the Zipf vocabulary (bench/vocab.py)")
    rows = []
    for n in points:
        db, changed = b.work / f"huge-{n}.db", b.work / f"huge-{n}-changed"
        for suffix in ("", "-wal", "-shm"):
            Path(f"{db}{suffix}").unlink(missing_ok=True)
        keep = b.args.huge_packed
        packed = (keep or b.work) / f"huge-{n}-seed{b.args.seed}-items{items}.pages"
        changed = packed.with_suffix(".changed") if keep else changed
        made = _reusable(packed)
        if made is None:
            packed.parent.mkdir(parents=True, exist_ok=True)
            made, _ = run_module("bench.huge", "pack", str(n), str(b.args.seed), str(items), str(packed),
                                 "--changed-to", str(changed))
        b.r.line(f"{n:,} pages generated into one packed file ({made['bytes'] / 2**30:.2f} GiB) in "
                 f"{made['seconds']:.0f} s, before the ingest and not part of it"
                 + (f" (reused from {packed})" if made.get("reused") else ""))
        try:
            cold, _ = run_module("bench.huge", "ingest", str(db), str(packed))
            again, _ = run_module("bench.huge", "ingest", str(db), str(packed), "--keys-only")
        finally:
            if not keep:
                packed.unlink(missing_ok=True)
        if cold["rejected"] or again["stored"] or again["skipped"] != n:
            raise RuntimeError(f"the huge ingest went wrong: {cold} / {again}")
        ratio = again["seconds"] / cold["seconds"]
        b.r.line(f"{n:,} pages: cold ingest {cold['seconds']:.1f} s wall ({n / cold['seconds']:,.0f} pages/s), "
                 f"CPU {cold['cpu_seconds']:.1f} s (writer {cold['writer_cpu_seconds']:.1f} + parse workers "
                 f"{cold['workers_cpu_seconds']:.1f}), {cold['new_citations']:,} citations; peak memory "
                 f"{cold['ingest_peak_rss_mib']:.0f} MiB "
                 f"(writer + workers; writer alone {cold['writer_peak_rss_mib']:.0f} MiB); database "
                 f"{cold['db_bytes'] / 2**30:.2f} GiB")
        b.r.line(f"   unchanged re-ingest: {again['seconds']:.2f} s wall, {again['cpu_seconds']:.2f} s CPU, "
                 f"{again['skipped']:,} skipped by their version key; ratio to cold {ratio:.4f} (1/{1 / ratio:.0f})")
        first = publish_tick(b, db, b.work / f"huge-{n}-public")
        b.r.line("   publish, first tick: " + (f"{first['seconds']:.1f} s (exit {first['status']})"
                                                 if first["seconds"] is not None
                                                 else f"did not finish in {first['timeout']} s"))
        res, _ = run_module("bench.queries", str(db), "--during", str(changed))
        for name, idle in res["idle"].items():
            busy = res["during_refresh"].get(name, {})
            b.r.line(f"   {name:13} idle p50 {idle['p50_ms']:7.2f} ms  p99 {idle['p99_ms']:7.2f} ms | while a refresh "
                     f"writes p99 {busy.get('p99_ms', float('nan')):7.2f} ms ({busy.get('n', 0)} calls)")
        b.r.line(f"   the refresh beside them: {res.get('refresh', {}).get('stored')} changed pages in "
                 f"{res.get('refresh', {}).get('seconds', float('nan')):.1f} s; the commands' process peaked at "
                 f"{commands_rss(res) / 1024:.0f} MiB")
        tick = publish_tick(b, db, b.work / f"huge-{n}-public") if first["seconds"] is not None else first
        b.r.line("   publish, the tick after that refresh: "
                 + (f"{tick['seconds']:.1f} s" if tick["seconds"] is not None
                    else "not run (the first did not finish)"))
        rows.append({"pages": n, "cold": cold, "reingest": again, "reingest_over_cold": ratio,
                     "publish_first": first, "publish_tick": tick, "queries": res})
    b.r.fig("huge", rows)
    b.r.line()
    b.r.line("pages      cold s   CPU s  pages/s  peak MiB  DB GiB  re-ingest s  publish s  " +
             "  ".join(f"{k} p99" for k in QUERY_LIMITS))
    for row in rows:
        c, q = row["cold"], row["queries"]["idle"]
        pub = row["publish_tick"]["seconds"]
        b.r.line(f"{row['pages']:>9,} {c['seconds']:8.1f} {c['cpu_seconds']:7.1f} {row['pages'] / c['seconds']:8,.0f} "
                 f"{c['ingest_peak_rss_mib']:9.0f} {c['db_bytes'] / 2**30:7.2f} {row['reingest']['seconds']:12.2f} "
                 f"{pub if pub is not None else float('nan'):10.1f}  " +
                 "  ".join(f"{q.get(k, {}).get('p99_ms', float('nan')):{len(k) + 4}.1f}" for k in QUERY_LIMITS))
    top = rows[-1]
    n, c = top["pages"], top["cold"]
    b.r.target(f"cold ingest of {n:,} fed pages <= 20 min", c["seconds"] <= COLD_LIMIT_S,
               f"{c['seconds'] / 60:.1f} min")
    b.r.target(f"peak memory of the ingest <= 1 GB at {n:,}", c["ingest_peak_rss_mib"] <= MEMORY_LIMIT_MIB,
               f"{c['ingest_peak_rss_mib']:.0f} MiB")
    b.r.target("unchanged re-ingest <= 1/20 of cold", top["reingest_over_cold"] <= 0.05,
               f"{top['reingest_over_cold']:.4f}")
    pub = top["publish_tick"]["seconds"]
    b.r.target(f"a tick's publish at {n:,} <= 10 s", pub is not None and pub <= PUBLISH_LIMIT_S,
               f"{pub:.1f} s" if pub is not None else "did not finish")
    q = top["queries"]
    for name, idle in q["idle"].items():
        b.r.target(f"{name} p99 <= {QUERY_LIMITS[name]} ms at {n:,}", idle["p99_ms"] <= QUERY_LIMITS[name],
                   f"{idle['p99_ms']:.1f} ms")
    busy = max((v["p99_ms"] for v in q["during_refresh"].values() if v["n"]), default=float("nan"))
    b.r.target(f"every command p99 <= 50 ms while a refresh writes, at {n:,}", busy <= 50, f"worst {busy:.1f} ms")
    b.r.target(f"commands' process <= 300 MB at {n:,}", commands_rss(q) / 1024 <= 300,
               f"{commands_rss(q) / 1024:.0f} MiB")


def main(argv: list[str]) -> int:
    keys_only = "--keys-only" in argv
    changed_to = argv[argv.index("--changed-to") + 1] if "--changed-to" in argv else None
    if argv[0] == "pack":
        n, seed, items = map(int, argv[1:4])
        Path(f"{argv[4]}.json").unlink(missing_ok=True)
        made = pack(n, seed, items, changed_to, argv[4])
        Path(f"{argv[4]}.json").write_text(json.dumps(made))  # written last: the packed file is complete
        print(json.dumps(made), flush=True)
        return 0
    print(json.dumps(ingest(argv[1], argv[2], keys_only)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
