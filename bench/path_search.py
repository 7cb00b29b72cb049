"""What a /path search costs on a map: store/questions/citation_path.py now beside its version at a git revision.

    .venv/bin/python -m bench.path_search DB [--pairs 200] [--ref main] [--rounds 2] [--seed 11]

Both versions answer the same `--pairs` random pairs of papers with pages (seeded), in this
one process on the same connection, after five warm-up searches each, alternating in
`--rounds` rounds; for each version the round with the lowest total CPU time is printed: CPU
time (process_time) per search at p50, p99 and max, the mean, and how the searches ended
(path lengths, none within 6 steps, or the visit limit). The machine is shared: compare the
two lines of one run.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from bench.chart_draw import module_at_path
from bench.queries import percentile

Search = Callable[..., Any]


def one_round(search: Search, db: Any, pairs: list[tuple[str, str]]) -> tuple[list[float], Counter[str]]:
    from mapwatch.store.errors import PathSearchTooLarge

    times, ends = [], Counter[str]()
    for a, b in pairs:
        t = time.process_time()
        try:
            p = search(db, a, b)
            ends["none" if p is None else f"{len(p.steps)} steps"] += 1
        except PathSearchTooLarge:
            ends["limit"] += 1
        times.append((time.process_time() - t) * 1000)
    return sorted(times), ends


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db")
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--ref", default="main", help="git revision to compare with (default main)")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args(argv)

    from mapwatch.store.database.db import open_db
    from mapwatch.store.questions import citation_path

    db = open_db(args.db)
    rng = random.Random(args.seed)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers WHERE has_page = 1 ORDER BY id")]
    pairs = [(rng.choice(ids), rng.choice(ids)) for _ in range(args.pairs)]
    old = module_at_path(args.ref, "store/questions/citation_path.py")
    versions: dict[str, Search] = {"current": citation_path.citation_path, args.ref: old.citation_path}
    for search in versions.values():
        one_round(search, db, pairs[:5])  # warm-up
    best: dict[str, tuple[list[float], Counter[str]]] = {}
    for _ in range(args.rounds):
        for name, search in versions.items():
            res = one_round(search, db, pairs)
            if name not in best or sum(res[0]) < sum(best[name][0]):
                best[name] = res
    db.close()
    print(f"{len(pairs)} searches between random papers of {args.db} (seed {args.seed}), best of {args.rounds} "
          f"rounds, python {sys.version.split()[0]}")
    for name, (ms, ends) in best.items():
        print(f"{name:>10}: CPU p50 {percentile(ms, 0.5):6.1f} ms  p99 {percentile(ms, 0.99):6.1f} ms  "
              f"max {ms[-1]:6.1f} ms  "
              f"mean {sum(ms) / len(ms):6.2f} ms | " + ", ".join(f"{k} {v}" for k, v in sorted(ends.items())))
    cur, ref = best["current"][0], best[args.ref][0]
    print(f"{args.ref} / current, mean CPU a search: {sum(ref) / sum(cur):.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
