"""Section 5: latency of the bot's commands (handler + rendering, no network) on a large map.

    python -m bench.queries DB MAP_FOLDER [--during FOLDER_TO_INGEST] [--calls N]

Runs in a child process of bench/run (so its peak memory is its own) and prints one JSON
line: per command the latencies' p50/p99 in ms, idle, and again while another process
ingests FOLDER_TO_INGEST into the same database (a refresh writing)."""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime

from bench.generate import _WORDS

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
        found += ["/paper", "/citers", "/search"]
    try:
        from mapwatch.store import queries

        if hasattr(queries, "autocomplete_papers"):
            found.append("autocomplete")
    except ImportError:
        pass
    if importlib.util.find_spec("mapwatch.store.graph") and importlib.util.find_spec("mapwatch.bot.render_graph"):
        found += ["/related", "/path"]
    return found


def workloads(db, seed: int = 7) -> tuple[dict[str, list[Callable[[], object]]], list[str]]:
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
        from mapwatch.bot.replies import Ctx

        ctx = Ctx(guild_id=1, channel_id=1, user_id=1, now=NOW, base_url=BASE_URL)
        out["/paper"] = [lambda p=p: paper_core(db, ctx, paper=p) for p in sample]
        out["/citers"] = [lambda p=p: citers_core(db, ctx, paper=p) for p in sample]
        words = [" ".join(rng.sample(_WORDS, rng.randint(1, 3))) for _ in range(200)]
        out["/search"] = [lambda w=w: search_core(db, ctx, query=w) for w in words]
    except ImportError:
        missing += ["/paper", "/citers", "/search"]
    try:
        from mapwatch.store import queries

        auto = queries.autocomplete_papers
        prefixes = [titles[p][: rng.randint(2, 12)] for p in sample[:100]] + [p[: rng.randint(3, 8)]
                                                                               for p in sample[100:]]
        out["autocomplete"] = [lambda t=t: auto(db, t) for t in prefixes]
    except (ImportError, AttributeError):
        missing.append("autocomplete")
    try:
        from mapwatch.bot.render_graph import path_text, related_text
        from mapwatch.store.citation_path import citation_path
        from mapwatch.store.related import related

        out["/related"] = [lambda p=p: related_text(related(db, p)) for p in sample[:60]]
        pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(60)]
        out["/path"] = [lambda a=a, b=b: path_text(citation_path(db, a, b), a, b) for a, b in pairs]
    except ImportError:
        missing += ["/related", "/path"]
    return out, missing


def measure(calls: list[Callable[[], object]]) -> list[float]:
    ms = []
    for call in calls:
        t = time.perf_counter()
        call()
        ms.append((time.perf_counter() - t) * 1000)
    return ms


def summary(ms: list[float]) -> dict:
    s = sorted(ms)
    return {"n": len(s), "p50_ms": percentile(s, 0.50), "p99_ms": percentile(s, 0.99), "max_ms": s[-1] if s else None}


def main(argv: list[str]) -> int:
    from mapwatch.store.db import open_db

    db_path = argv[0]
    during = argv[argv.index("--during") + 1] if "--during" in argv else None
    db = open_db(db_path)
    work, missing = workloads(db)
    result: dict = {"missing": missing, "idle": {}, "during_refresh": {}}
    for name, calls in work.items():
        measure(calls[:5])  # warm the page cache and statement cache
        result["idle"][name] = summary(measure(calls))
    if during:
        # Another process ingests the changed pages into the same database (WAL: readers
        # do not wait for the writer); the commands run round-robin until it is done.
        writer = subprocess.Popen([sys.executable, "-m", "bench.child", "ingest", db_path, during],
                                  stdout=subprocess.PIPE, text=True)
        samples: dict[str, list[float]] = {name: [] for name in work}
        i = 0
        t0 = time.perf_counter()
        while writer.poll() is None:
            for name, calls in work.items():
                samples[name] += measure([calls[i % len(calls)]])
            i += 1
        writer_out = json.loads(writer.stdout.read().strip().splitlines()[-1]) if writer.stdout else {}
        result["during_refresh"] = {name: summary(ms) for name, ms in samples.items()}
        result["refresh"] = {"seconds": time.perf_counter() - t0, "stored": writer_out.get("stored"),
                             "rounds": i}
    db.close()
    # This process's own peak (wait4 on it would add the writer's, a child it waited for).
    result["self_peak_rss_kib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
