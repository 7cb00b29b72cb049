"""The migrations of this version on a database made before them (issue 44): time, CPU and peak
memory of the open that applies them, and the bytes a paper before and after.

    python -m bench.migrate OLD.db [--work DIR] [--keep] [--time-only] [--page-size BYTES]

OLD.db is copied into --work (default: beside it) and opened there by `open_db` in a child
process, which applies what it lacks (0038: each citation given its event's id, 20,000 citers
a transaction, then three indexes dropped; 0039; 0040: event_batches filled, events_seen_at
dropped; and any later, e.g. 0047: the events copied into event_log without their kind and
time, `events` a view; 0048: the citations into citation_edges with their first-seen time as a
number, `citations` a view). The child's wall and CPU seconds and its peak
RSS (ru_maxrss) are reported, then both files are compacted (`VACUUM INTO`) and measured table by
table with dbstat (`--time-only`: not; at 1,000,000 papers each compaction takes minutes).
`--page-size BYTES`: between the two, the copy is rewritten by `mapwatch compact` in pages of that
size (its time and memory reported apart), so the "after" column is in those pages.
Prints a readable summary and one JSON line.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

CHILD = """
import json, resource, sys, time
from mapwatch.store.database.db import open_db
t, c = time.perf_counter(), time.process_time()
db = open_db(sys.argv[1])
db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
db.close()
print(json.dumps({"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""

# `mapwatch compact` of the migrated copy in pages of argv[2] bytes (--page-size), timed alone.
COMPACT_CHILD = """
import json, resource, sys, time
from mapwatch.store.database.compact import compact
t, c = time.perf_counter(), time.process_time()
done = compact(sys.argv[1], int(sys.argv[2]))
print(json.dumps({"seconds": time.perf_counter() - t, "cpu_seconds": time.process_time() - c,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "bytes_before": done.bytes_before, "bytes_after": done.bytes_after,
                  "page_size_before": done.page_size_before, "page_size_after": done.page_size_after}))
"""


def table_bytes(path: Path, work: Path) -> tuple[int, dict[str, int], int]:
    """(papers, bytes by table or index, total) of `path` compacted."""
    compact = work / f"{path.stem}-compact.db"
    compact.unlink(missing_ok=True)
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("VACUUM INTO ?", (str(compact),))
    with closing(sqlite3.connect(compact)) as conn:
        papers = conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        sizes = dict(conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name").fetchall())
    total = compact.stat().st_size
    compact.unlink()
    return papers, sizes, total


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.migrate", description=__doc__.split("\n\n")[0])
    p.add_argument("old", type=Path)
    p.add_argument("--work", type=Path)
    p.add_argument("--keep", action="store_true", help="keep the migrated copy")
    p.add_argument("--time-only", action="store_true", help="the migration's time and memory, no table sizes")
    p.add_argument("--page-size", type=int, help="then `mapwatch compact` the copy in pages of this many bytes")
    a = p.parse_args(argv)
    work = a.work or a.old.parent
    work.mkdir(parents=True, exist_ok=True)
    target = work / f"{a.old.stem}-migrated.db"
    shutil.copyfile(a.old, target)
    if not a.time_only:
        papers, before, before_total = table_bytes(a.old, work)
    out = subprocess.run([sys.executable, "-c", CHILD, str(target)], capture_output=True, text=True, check=True)
    run = json.loads(out.stdout.strip().splitlines()[-1])
    if a.page_size:
        done = subprocess.run([sys.executable, "-c", COMPACT_CHILD, str(target), str(a.page_size)],
                              capture_output=True, text=True, check=True)
        run["compact"] = json.loads(done.stdout.strip().splitlines()[-1])
        c = run["compact"]
        print(f"compacted in pages of {c['page_size_after']:,} bytes: {c['seconds']:.1f} s wall,"
              f" {c['cpu_seconds']:.1f} s CPU, peak {c['peak_mib']:,.0f} MiB;"
              f" {c['bytes_before'] / 1e6:,.1f} -> {c['bytes_after'] / 1e6:,.1f} MB")
    if a.time_only:
        if not a.keep:
            target.unlink()
        print(f"migrated in {run['seconds']:.1f} s wall, {run['cpu_seconds']:.1f} s CPU,"
              f" peak {run['peak_mib']:,.0f} MiB")
        print(json.dumps(run))
        return 0
    _, after, after_total = table_bytes(target, work)
    if not a.keep:
        target.unlink()
    result = {"papers": papers, **run, "bytes_a_paper_before": before_total / papers,
              "bytes_a_paper_after": after_total / papers,
              "tables_before": {k: v / papers for k, v in before.items()},
              "tables_after": {k: v / papers for k, v in after.items()},
              "log": out.stderr.strip().splitlines()[-3:]}
    print(f"{papers:,} papers: migrated in {run['seconds']:.1f} s wall, {run['cpu_seconds']:.1f} s CPU,"
          f" peak {run['peak_mib']:,.0f} MiB; {result['bytes_a_paper_before']:,.0f} ->"
          f" {result['bytes_a_paper_after']:,.0f} bytes a paper (compacted)")
    for name in sorted(set(before) | set(after), key=lambda n: -max(before.get(n, 0), after.get(n, 0)))[:16]:
        print(f"  {name:48s} {before.get(name, 0) / papers:8,.0f} {after.get(name, 0) / papers:8,.0f}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
