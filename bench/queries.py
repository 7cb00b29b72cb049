"""Section 5: latency of the bot's commands (handler + rendering, no network) on a large map.

    python -m bench.queries DB [--during FOLDER] [--vocab auto|zipf|small] [--calls N]

`measure_commands(db_path, ...)` opens an existing database, runs every command found in
this checkout over a deterministic workload (typical papers and the 50 most cited; /search
words drawn from the map's vocabulary, bench/vocab.py's Zipf one when the map was made with it), and reports
per command the latencies' p50/p99/max in ms (wall, and p50/p99 of CPU time): idle, and again while another process
refreshes the same database (`mapwatch ingest --db DB FOLDER`, which takes
$MAPWATCH_BACKGROUND_NICE from the environment as a user's would, or any `writer` command
line), plus this process's peak memory; for the slowest calls, where their time went (CPU,
waiting for a CPU, reads). Run in its own process (as bench/run does) so that the peak is
the commands' alone. The CLI prints the result as one JSON line."""

from __future__ import annotations

import json
import random
import re
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from bench import vocab
from bench.words import FIELD_WORDS

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
BASE_URL = "http://127.0.0.1:8080"


def percentile(sorted_ms: list[float], q: float) -> float:
    if not sorted_ms:
        return float("nan")
    return sorted_ms[min(len(sorted_ms) - 1, int(len(sorted_ms) * q))]


def available() -> list[str]:
    """The commands whose code is in this checkout."""
    import importlib.util

    found = []
    if importlib.util.find_spec("mapwatch.bot.commands") and importlib.util.find_spec("mapwatch.bot.commands.papers"):
        found += ["/paper", "/citers", "/citers newest", "/search"]
    try:
        from mapwatch.store.questions import queries

        if hasattr(queries, "autocomplete_papers"):
            found.append("autocomplete")
    except ImportError:
        pass
    if (importlib.util.find_spec("mapwatch.store.questions.graph")
            and importlib.util.find_spec("mapwatch.bot.rendering.render_graph")):
        found += ["/related", "/path"]
    return found


def map_vocabulary(db) -> str:
    """"zipf" if the map's titles and abstracts hold bench/vocab.py's made-up words, else "small"."""
    v = vocab.zipf()
    made_up = [w for w in v.ranked if w not in set(FIELD_WORDS)][:5]  # the most frequent made-up words
    probe = " OR ".join(f'"{w}"' for w in made_up)
    hit = db.conn.execute("SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT 1", (probe,)).fetchone()
    return "zipf" if hit else "small"


def search_words(rng: random.Random, words: str, n: int = 200) -> list[str]:
    """`n` search texts of 1-3 words from the vocabulary the map was generated with."""
    if words == "zipf":
        v = vocab.zipf()
        return [" ".join(v.query_words(rng)) for _ in range(n)]
    return [" ".join(rng.sample(FIELD_WORDS, rng.randint(1, 3))) for _ in range(n)]


def workloads(db, seed: int = 7, words: str = "zipf") -> tuple[dict[str, list[Callable[[], object]]], list[str]]:
    """The commands that exist in this checkout, each with its calls (deterministic)."""
    rng = random.Random(seed)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers WHERE has_page = 1 ORDER BY id")]
    top = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY cited_by DESC LIMIT 50")]
    titles = dict(db.conn.execute("SELECT id, title FROM papers WHERE has_page = 1"))
    sample = [rng.choice(ids) for _ in range(150)] + top  # typical papers and the most cited
    rng.shuffle(sample)
    out: dict[str, list[Callable[[], object]]] = {}
    missing: list[str] = []
    try:
        from mapwatch.bot.commands.papers import citers_core, paper_core, search_core
        from mapwatch.bot.rendering.replies import Ctx

        ctx = Ctx(guild_id=1, channel_id=1, user_id=1, now=NOW, base_url=BASE_URL)
        out["/paper"] = [lambda p=p: paper_core(db, ctx, paper=p) for p in sample]
        out["/citers"] = [lambda p=p: citers_core(db, ctx, paper=p) for p in sample]
        out["/citers newest"] = [lambda p=p: citers_core(db, ctx, paper=p, sort="newest") for p in sample]
        texts = search_words(rng, words)
        out["/search"] = [lambda w=w: search_core(db, ctx, query=w) for w in texts]
    except ImportError:
        missing += ["/paper", "/citers", "/citers newest", "/search"]
    try:
        from mapwatch.store.questions import autocomplete

        auto = autocomplete.autocomplete_papers
        prefixes = [titles[p][: rng.randint(2, 30)] for p in sample[:100]] + [p[: rng.randint(3, 8)]
                                                                               for p in sample[100:]]
        out["autocomplete"] = [lambda t=t: auto(db, t) for t in prefixes]
    except (ImportError, AttributeError):
        missing.append("autocomplete")
    try:
        from mapwatch.bot.commands import run_core
        from mapwatch.bot.rendering.replies import Ctx

        # As the bot runs them: a search that reaches its bound is the user's reply, not a crash.
        gctx = Ctx(guild_id=1, channel_id=1, user_id=1, now=NOW, base_url=BASE_URL)
        out["/related"] = [lambda p=p: run_core(db, gctx, "related", {"paper": p}) for p in sample[:60]]
        pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(60)]
        out["/path"] = [lambda a=a, b=b: run_core(db, gctx, "path", {"from": a, "to": b}) for a, b in pairs]
    except ImportError:
        missing += ["/related", "/path"]
    return out, missing


def thread_counters() -> tuple[int, int, int]:
    """(ns this thread waited on a run queue, read syscalls, bytes read) so far; zeros where
    /proc has no such files. The commands run on this one thread."""
    try:
        with open("/proc/thread-self/schedstat") as f:
            wait = int(f.read().split()[1])
        with open("/proc/thread-self/io") as f:
            io = dict(line.split(": ") for line in f.read().splitlines())
        return wait, int(io["syscr"]), int(io["rchar"])
    except (OSError, KeyError, IndexError, ValueError):
        return 0, 0, 0


Sample = tuple[float, float, float, int, int]  # wall ms, CPU ms, run-queue wait ms, read syscalls, KiB read


def measure(calls: list[Callable[[], object]]) -> list[Sample]:
    """Each call's wall and CPU time (CPU is the steadier figure on a shared machine), and
    where the rest went: time waiting for a CPU, and reads from the database file."""
    out: list[Sample] = []
    for call in calls:
        w0, r0, b0 = thread_counters()
        t, c = time.perf_counter(), time.process_time()
        call()
        wall, cpu = (time.perf_counter() - t) * 1000, (time.process_time() - c) * 1000
        w1, r1, b1 = thread_counters()
        out.append((wall, cpu, (w1 - w0) / 1e6, r1 - r0 - 4, (b1 - b0) // 1024))  # 4: reading /proc itself
    return out


def summary(samples: list[Sample]) -> dict:
    s = sorted(w for w, *_ in samples)
    cpu = sorted(c for _, c, *_ in samples)
    # The slowest 2% of calls (at least one): where their time went, on average.
    slow = sorted(samples, reverse=True)[:max(1, len(samples) // 50)] if samples else []
    mean = (lambda i: sum(x[i] for x in slow) / len(slow)) if slow else (lambda i: float("nan"))
    return {"n": len(s), "p50_ms": percentile(s, 0.50), "p99_ms": percentile(s, 0.99), "max_ms": s[-1] if s else None,
            "cpu_p50_ms": percentile(cpu, 0.50), "cpu_p99_ms": percentile(cpu, 0.99),
            "slowest": {"wall_ms": mean(0), "cpu_ms": mean(1), "runq_wait_ms": mean(2), "read_syscalls": mean(3),
                        "read_kib": mean(4)}}


def commands_rss(result: dict) -> int:
    """The commands' peak resident KiB in a `measure_commands` result (the whole process's
    where the peak could not be reset after building the workload)."""
    return result.get("commands_peak_rss_kib") or result["self_peak_rss_kib"]


def _reset_peak_rss() -> bool:
    """Reset this process's peak resident size (Linux: 5 to /proc/self/clear_refs), after
    collecting the garbage; False where that is not possible."""
    import gc

    gc.collect()
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _peak_rss_kib() -> int | None:
    try:
        with open("/proc/self/status") as f:
            return next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError):
        return None


def measure_commands(db_path: str, *, during: str | None = None, writer: list[str] | None = None,
                     words: str = "auto", calls: int | None = None) -> dict:
    """Latencies of every command on the database at `db_path`: idle, then while `writer`
    (a command line; by default an ingest of the folder `during`) writes to it. See the
    module's docstring."""
    from mapwatch.store.database.db import open_db

    if writer is None and during:
        writer = [sys.executable, "-m", "mapwatch", "ingest", "--db", db_path, during]
    db = open_db(db_path)
    if words == "auto":
        words = map_vocabulary(db)
    work, missing = workloads(db, words=words)
    if calls is not None:
        work = {name: c[:calls] for name, c in work.items()}
    result: dict = {"missing": missing, "idle": {}, "during_refresh": {}, "words": words}
    peak_reset = _reset_peak_rss()  # the workload's own lists (every id of the map) are not the commands'
    for name, c in work.items():
        measure(c[:5])  # warm the page cache and statement cache
        result["idle"][name] = summary(measure(c))
    if writer:
        # Another process writes to the same database (WAL: readers do not wait for the
        # writer); the commands run round-robin until it is done.
        proc = subprocess.Popen(writer, stdout=subprocess.PIPE, text=True)
        samples: dict[str, list[Sample]] = {name: [] for name in work}
        i = 0
        t0 = time.perf_counter()
        while proc.poll() is None:
            for name, c in work.items():
                samples[name] += measure([c[i % len(c)]])
            i += 1
        out = proc.stdout.read() if proc.stdout else ""
        # the ingest's summary (docs/pages.md, "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]")
        stored = re.search(r"pages: ([\d,]+) stored", out)
        result["during_refresh"] = {name: summary(ms) for name, ms in samples.items()}
        result["refresh"] = {"seconds": time.perf_counter() - t0,
                             "stored": int(stored.group(1).replace(",", "")) if stored else None,
                             "rounds": i, "exit": proc.returncode}
    db.close()
    # This process's own peak (wait4 on it would add the writer's, a child it waited for).
    result["self_peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # The peak since the workload was built: what a bot process answering these commands holds.
    result["commands_peak_rss_kib"] = _peak_rss_kib() if peak_reset else None
    return result


def main(argv: list[str]) -> int:
    import argparse

    p = argparse.ArgumentParser(prog="python -m bench.queries", description=__doc__.split("\n\n")[0])
    p.add_argument("db")
    p.add_argument("--during", help="a map folder another process ingests while the commands run again")
    p.add_argument("--vocab", choices=("auto", "zipf", "small"), default="auto",
                   help="the vocabulary the map was generated with (default: found in the map)")
    p.add_argument("--calls", type=int, help="calls per command (default: the whole workload, 60-250)")
    a = p.parse_args(argv)
    result = measure_commands(a.db, during=a.during, words=a.vocab, calls=a.calls)
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
