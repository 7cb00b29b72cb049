"""Exit statuses through the real CLI: 2 only for a usage error, 1 for a failure.

- A command that only reads, given a database file that does not exist, exits 2 with one
  line naming it and creates nothing (no file, no folder); only ingest, refresh and run
  create a database.
- A database locked by another process past the busy timeout, a full disk and a network
  failure exit 1 with one clear line, never a traceback.
"""

from __future__ import annotations

import os
import shutil
import socket
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from mapwatch.store.pages.files import SEEDS_DIR

ROOT = Path(__file__).resolve().parents[2]


def mapwatch(*args: str | Path, cwd: Path | None = None, env: dict[str, str] | None = None,
             timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mapwatch", *map(str, args)], cwd=cwd or ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


READ_ONLY = {
    "stats": ["stats"],
    "ask": ["ask", "/paper 2412.10400"],
    "ask-track": ["ask", "--guild", "1", "--channel", "2", "/track 2412.10400"],
    "graph": ["graph", "2412.10400", "-o", "g.png"],
    "export": ["export", "citers", "2412.10400", "--format", "csv"],
    "backup": ["backup", "copy.db"],
    "publish": ["publish", "--out", "public"],
    "serve": ["serve", "--out", "public", "--port", "0"],
    "sync": ["sync"],
    "replica": ["replica"],
}


@pytest.mark.parametrize("name", sorted(READ_ONLY))
@pytest.mark.parametrize("how", ["--db", "$MAPWATCH_DB"])
def test_a_read_only_command_creates_no_database(tmp_path: Path, name: str, how: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    missing = "typo/typo.db"
    args = READ_ONLY[name] + (["--db", missing] if how == "--db" else [])
    env = {"DISCORD_TOKEN": "not-a-real-token", "MAPWATCH_FEEDS_DIR": "public"}
    if how != "--db":
        env["MAPWATCH_DB"] = missing
    r = mapwatch(*args, cwd=work, env=env, timeout=30)
    assert r.returncode == 2, (name, r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and missing in lines[0] and "no such database" in lines[0], r.stderr
    assert list(work.iterdir()) == [], f"{name} created {sorted(p.name for p in work.rglob('*'))}"


@pytest.mark.parametrize("args", [["ingest"], ["refresh", "--out", "public"]])
def test_ingest_and_refresh_create_the_database(tmp_path: Path, args: list[str]) -> None:
    r = mapwatch(*args, "--db", "new/m.db", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "new/m.db").is_file()


# -- a locked database ---------------------------------------------------------------------



@contextmanager
def held_lock(path: Path, *, exclusive: bool) -> Iterator[None]:
    """Another connection holding the write lock (a writer in the middle of a transaction);
    `exclusive`: in exclusive locking mode, so that readers are locked out too."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        if exclusive:
            conn.execute("PRAGMA locking_mode = EXCLUSIVE")
        conn.execute("BEGIN EXCLUSIVE" if exclusive else "BEGIN IMMEDIATE")
        conn.execute("INSERT INTO bot_state (key, value, updated) VALUES ('lock-test', 'x', 'now')")
        yield
    finally:
        conn.execute("ROLLBACK")
        conn.close()


SHORT_WAIT = {"MAPWATCH_BUSY_TIMEOUT": "0.3"}


@pytest.mark.parametrize("args", [["ingest", "--force"], ["refresh", "--source", str(SEEDS_DIR), "--out", "public"]],
                         ids=["ingest", "refresh"])
def test_a_locked_database_exits_1_with_one_line(ingested_file: Path, tmp_path: Path, args: list[str]) -> None:
    db = tmp_path / "m.db"
    shutil.copy(ingested_file, db)
    before = sqlite3.connect(db).execute("SELECT count(*) FROM snapshots").fetchone()
    with held_lock(db, exclusive=False):
        r = mapwatch(*args, "--db", db, cwd=tmp_path, env=SHORT_WAIT)
    assert r.returncode == 1, (r.returncode, r.stderr)
    lines = [s for s in r.stderr.splitlines() if s.strip()]
    assert len(lines) == 1 and "database is locked" in lines[0], r.stderr
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert conn.execute("SELECT count(*) FROM snapshots").fetchone() == before
    # Once the lock is gone, the same command succeeds.
    assert mapwatch(*args, "--db", db, cwd=tmp_path, env=SHORT_WAIT).returncode == 0


def test_stats_reads_beside_a_writer_and_says_when_locked_out(ingested_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    shutil.copy(ingested_file, db)
    with held_lock(db, exclusive=False):  # WAL: a writer does not block readers
        r = mapwatch("stats", "--db", db, env=SHORT_WAIT)
        assert r.returncode == 0 and "papers:" in r.stdout, r.stderr
    with held_lock(db, exclusive=True):  # exclusive locking mode: readers are locked out
        r = mapwatch("stats", "--db", db, env=SHORT_WAIT)
    assert r.returncode == 1, (r.returncode, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "database is locked" in lines[0], r.stderr


def test_a_bad_busy_timeout_is_a_usage_error(ingested_file: Path) -> None:
    r = mapwatch("stats", "--db", ingested_file, env={"MAPWATCH_BUSY_TIMEOUT": "soon"})
    assert r.returncode == 2 and "MAPWATCH_BUSY_TIMEOUT" in r.stderr and "Traceback" not in r.stderr


# -- a full disk ----------------------------------------------------------------------------

def _can_mount_tmpfs() -> str | None:
    if shutil.which("unshare") is None:
        return "needs unshare (util-linux) to mount a small filesystem"
    probe = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c",
                            "d=$(mktemp -d) && mount -t tmpfs -o size=64k tmpfs \"$d\""],
                           capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        return f"cannot mount a tmpfs in a user namespace here: {probe.stderr.strip()[:120]}"
    return None


# A new database is made in one transaction (store/database/schema.sql), about 570 KiB of WAL:
# on a smaller disk SQLite's failed write frees its space again (df shows nothing used), so the
# sizes are those where the write fails with the disk full, as df then shows.
@pytest.mark.parametrize("size_kib", [620, 700])
def test_a_full_disk_exits_1_with_one_line(tmp_path: Path, size_kib: int) -> None:
    """`mapwatch ingest` into a database on a real filesystem too small for it (a tmpfs of
    620 or 700 KiB, mounted in a private user and mount namespace)."""
    reason = _can_mount_tmpfs()
    if reason:
        pytest.skip(reason)
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f'mount -t tmpfs -o size={size_kib}k tmpfs "{disk}" && '
              f'"{sys.executable}" -m mapwatch ingest --db "{disk}/m.db"; code=$?; '
              f'df -k "{disk}" | tail -1 >&2; exit $code')
    r = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script], cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    assert len(lines) == 2 and "full" in lines[0], r.stderr  # the error, then df's line
    assert lines[1].split()[3] in ("0", "4", "8"), f"the disk was not full: {lines[1]}"  # KiB available


# -- a network failure ----------------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again when the block ends: connections are refused


def test_refresh_from_an_unreachable_source_exits_1(tmp_path: Path) -> None:
    db = tmp_path / "m.db"  # empty: the crawl starts from the seeds' two papers
    r = mapwatch("refresh", "--db", db, "--source", f"http://127.0.0.1:{_closed_port()}", "--out", "public",
                 cwd=tmp_path)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    failures = r.stderr.strip().splitlines()
    assert failures and all(s.startswith("not fetched (stored data kept): ") and "connection failed" in s
                            for s in failures), r.stderr


def test_run_on_a_taken_port_exits_1(ingested_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    shutil.copy(ingested_file, db)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        r = mapwatch("run", "--db", db, "--source", SEEDS_DIR, "--out", "public", "--port", str(s.getsockname()[1]),
                     cwd=tmp_path, env={"DISCORD_TOKEN": ""}, timeout=60)
    assert r.returncode == 1, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr
    errors = [s for s in r.stderr.splitlines() if s.startswith("mapwatch: error:")]
    assert len(errors) == 1 and "address already in use" in errors[0].lower(), r.stderr
