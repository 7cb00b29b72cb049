"""The reads a command makes through SQLite's page cache at a given size (issue 44): each
command of bench/queries.py's workload (typical papers and the 50 most cited) run once in order,
with the read syscalls (bench/queries.py's `thread_counters`: /proc/thread-self/io) and the CPU
per call.

    python -m bench.page_cache DB [--mib N]

--mib sets $MAPWATCH_DB_CACHE_MIB for the run (default: the environment's, else 16). Linux only
(/proc/thread-self/io). Prints one line.
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

from bench.queries import thread_counters, workloads

COMMANDS = ("/paper", "/citers", "/citers newest", "/search", "autocomplete")
IO = Path("/proc/thread-self/io")  # what thread_counters reads the syscalls from


def read_syscalls() -> int:
    """The read syscalls this thread (the one the commands run on) has made so far."""
    return thread_counters()[1]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.page_cache", description=__doc__.split("\n\n")[0])
    p.add_argument("db", type=Path)
    p.add_argument("--mib", type=int, help="$MAPWATCH_DB_CACHE_MIB for this run")
    a = p.parse_args(argv)
    if not IO.exists():
        p.error(f"needs {IO} (Linux) to count the reads")
    if a.mib is not None:
        os.environ["MAPWATCH_DB_CACHE_MIB"] = str(a.mib)
    from mapwatch.store.database.db import open_db

    db = open_db(a.db, create=False)
    cache_kib = -db.conn.execute("PRAGMA cache_size").fetchone()[0]
    made, _missing = workloads(db)
    out = []
    for name in COMMANDS:
        calls = made[name]
        reads, cpu = read_syscalls(), time.process_time()
        for call in calls:
            call()
        out.append(f"{name}: {(read_syscalls() - reads) / len(calls):.0f} reads, "
                   f"{1000 * (time.process_time() - cpu) / len(calls):.1f} ms CPU a call")
    db.close()
    print(f"page cache {cache_kib // 1024} MiB | " + "; ".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
