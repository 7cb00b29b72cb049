"""What a cited-by chart costs to draw: feeds/chart.py now beside its version at a git revision.

    .venv/bin/python -m bench.chart_draw [--charts 100] [--ref main] [--rounds 3] [--profile]

Both versions draw the same `--charts` charts (2 to 30 points each, counts rising over a few
days to months, seeded) in this one process, after one warm-up chart each (imports and font
loading left out), alternating in `--rounds` rounds; the best round of each is printed as CPU
time (process_time) and wall time per chart, with the PNGs' mean size. The machine is shared:
compare the two lines of one run. `--profile` prints cProfile's top functions for the current
version instead.
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from pathlib import Path
from types import ModuleType

from mapwatch.store.questions.graph import CountPoint

Draw = Callable[[Sequence[CountPoint], str | None], bytes | None]
ROOT = Path(__file__).resolve().parent.parent


def histories(n: int, seed: int = 1) -> list[tuple[CountPoint, ...]]:
    """n charts' points: 2 to 30 snapshots 1 to 20 days apart, counts from 0 to ~20,000 rising."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        day, count = date(2026, 1, 1) + timedelta(days=rng.randrange(300)), rng.choice((0, 5, 300, 20_000))
        points = []
        for _ in range(rng.randint(2, 30)):
            points.append(CountPoint(day.isoformat(), count))
            day += timedelta(days=rng.randint(1, 20))
            count += rng.randint(0, max(1, count // 20))
        out.append(tuple(points))
    return out


def module_at_path(ref: str, path: str) -> ModuleType:
    """The module at `path` in this checkout as it was at git revision `ref`, imported under
    another name (its own imports are today's modules)."""
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{ref}:{path}"], check=True,
                            capture_output=True, text=True).stdout
    name = f"{Path(path).stem}_at_" + "".join(c if c.isalnum() else "_" for c in ref)
    spec = importlib.util.spec_from_loader(name, loader=None)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up by name
    exec(compile(source, f"{ref}:{path}", "exec"), module.__dict__)
    return module


def module_at(ref: str) -> ModuleType:
    """feeds/chart.py as it was at git revision `ref`."""
    return module_at_path(ref, "feeds/chart.py")


def one_round(draw: Draw, charts: list[tuple[CountPoint, ...]]) -> tuple[float, float, int]:
    wall, cpu = time.perf_counter(), time.process_time()
    size = sum(len(draw(points, f"chart {i}") or b"") for i, points in enumerate(charts))
    return time.perf_counter() - wall, time.process_time() - cpu, size


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--charts", type=int, default=100)
    ap.add_argument("--ref", default="main", help="git revision to compare with (default main)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--profile", action="store_true", help="cProfile the current version instead")
    args = ap.parse_args(argv)

    from mapwatch.feeds import chart

    charts = histories(args.charts)
    if args.profile:
        import cProfile
        import pstats

        chart.count_chart_png(charts[0])
        prof = cProfile.Profile()
        prof.runcall(one_round, chart.count_chart_png, charts)
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
        return 0
    versions: dict[str, Draw] = {"current": chart.count_chart_png, args.ref: module_at(args.ref).count_chart_png}
    best: dict[str, tuple[float, float, int]] = {}
    for draw in versions.values():
        draw(charts[0], None)  # warm-up
    for _ in range(args.rounds):
        for name, draw in versions.items():
            res = one_round(draw, charts)
            if name not in best or res[1] < best[name][1]:
                best[name] = res
    n = len(charts)
    print(f"{n} charts ({sum(len(c) for c in charts) / n:.1f} points each on average), best of {args.rounds} "
          f"rounds, python {sys.version.split()[0]}")
    for name, (wall, cpu, size) in best.items():
        print(f"{name:>10}: {1000 * cpu / n:6.1f} ms CPU a chart, {1000 * wall / n:6.1f} ms wall, "
              f"{size / n / 1024:5.1f} KiB a PNG")
    ratio = best[args.ref][1] / best["current"][1]
    print(f"{args.ref} / current CPU a chart: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
