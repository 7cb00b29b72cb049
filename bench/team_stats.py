"""/team stats on a large map: who cites a team of many papers, and how long the answer takes.

    python -m bench.team_stats --papers 30000 [--seed 1] [--db FILE] [--repeat 3]

A map of `--papers` pages from the generator (bench/generate.py), with authors for every paper
stored as the enrichment round stores them (bench/authors.py: 1-15 authors a paper from a pool
of papers/3 people, 60% with an ORCID, 1-2 institutions from 3,000; a third of the works with a
venue); then each citation's first sighting is spread over the year before NOW, so that a window
of 90 days holds about a quarter of them. With `--db FILE` that database is kept, and used as it
is on the next run.

Teams: the 10,000 most cited papers (the worst case: every citation of the map nearly), 10,000,
1,000 and 100 papers at random. For each, over 90 and 365 days: the store's answer
(store/questions/team_stats.cited_by, what /team stats and the team page count) and then its chart
(feeds/team_chart.py), `--repeat` times, the fastest kept; wall and CPU milliseconds. The CLI
prints a readable line per case and then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from datetime import timedelta
from pathlib import Path

from bench import authors as bench_authors
from bench.queries import NOW
from mapwatch.store.clock import iso, unix_seconds
from mapwatch.store.database.db import open_db
from mapwatch.store.scholarly.saved import save_openalex

YEAR_DAYS = 365
WINDOWS = (90, 365)


def build(path: Path, papers: int, seed: int) -> dict:
    """The map, its authors, and its citations first seen over the year before NOW."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{path}{suffix}").unlink(missing_ok=True)
    t0 = time.perf_counter()
    made = bench_authors.build_map_db(path, papers, seed)
    db = open_db(path)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY id")]
    rng = random.Random(seed)
    pool = bench_authors.people(rng, max(1, len(ids) // 3), bench_authors.institutions(rng))
    for batch in bench_authors.works(rng, ids, pool):
        save_openalex(db, batch, [w.paper_id for w in batch], bench_authors.STORED_AT)
    pairs = db.conn.execute("SELECT citing_key, cited_key FROM citation_edges").fetchall()
    with db.conn:
        db.conn.executemany("UPDATE citation_edges SET first_seen_unix = ? WHERE citing_key = ? AND cited_key = ?",
                            [(unix_seconds(iso(NOW - timedelta(days=rng.random() * YEAR_DAYS))), a, b)
                             for a, b in pairs])
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return {**made, "citations": len(pairs), "seconds": time.perf_counter() - t0}


def measure(path: Path, seed: int, repeat: int) -> list[dict]:
    from mapwatch.feeds.team_chart import team_chart_png
    from mapwatch.store.questions import team_stats

    db = open_db(path, migrate=False, create=False)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY coalesce(cited_by, 0) DESC, id")]
    rng = random.Random(seed + 1)
    teams = {"10,000 most cited": set(ids[:10_000]), "10,000 at random": set(rng.sample(ids, 10_000)),
             "1,000 at random": set(rng.sample(ids, 1_000)), "100 at random": set(rng.sample(ids, 100))}
    team_chart_png(team_stats.cited_by(db, set(ids[:10]), team_stats.since_days(NOW, 90)), "warm")  # imports
    out = []
    for name, papers in teams.items():
        for days in WINDOWS:
            best: tuple[float, float, float, float] | None = None
            for _ in range(repeat):
                wall, cpu = time.perf_counter(), time.process_time()
                stats = team_stats.cited_by(db, papers, team_stats.since_days(NOW, days))
                answered = (time.perf_counter() - wall, time.process_time() - cpu)
                team_chart_png(stats, name)
                run = (*answered, time.perf_counter() - wall, time.process_time() - cpu)
                best = run if best is None or run[2] < best[2] else best
            assert best is not None
            out.append({"team": name, "days": days, "citing": stats.citing, "examined": stats.examined,
                        "self_citing": stats.self_citing, "answer_ms": round(best[0] * 1000),
                        "answer_cpu_ms": round(best[1] * 1000), "with_chart_ms": round(best[2] * 1000),
                        "with_chart_cpu_ms": round(best[3] * 1000)})
    db.close()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--papers", type=int, default=30_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--db", type=Path, default=Path("bench/out/team_stats.db"))
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    result: dict = {"papers": args.papers, "seed": args.seed}
    if not args.db.exists():
        args.db.parent.mkdir(parents=True, exist_ok=True)
        result["build"] = build(args.db, args.papers, args.seed)
    result["cases"] = measure(args.db, args.seed, args.repeat)
    for c in result["cases"]:
        print(f"{c['team']:>18}, {c['days']:3} days: {c['citing']:>6,} citing ({c['examined']:,} counted), "
              f"answer {c['answer_ms']:,} ms ({c['answer_cpu_ms']:,} CPU), with the chart {c['with_chart_ms']:,} ms "
              f"({c['with_chart_cpu_ms']:,} CPU)")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
