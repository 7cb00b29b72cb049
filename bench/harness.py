"""What bench/run (bench/main.py) and its sections (bench/feeds.py, floor.py, huge.py, alerts.py,
load.py, alert_authors.py) share: the report figures go to, child processes and their peak
memory, servers in child processes, free ports, and consistent copies of a database.

Why a module of its own: bench/main.py imports the sections to run them; the sections import
these from here, not from main, so no section imports back up into the module that runs it
(tests/unit/test_layers.py: no circle of imports, bench/ included).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Protocol, TextIO

ROOT = Path(__file__).resolve().parent.parent
TITLES = {
    1: "parse", 2: "cold ingest", 3: "re-ingest unchanged", 4: "refresh, 2% changed",
    5: "query latency", 6: "feeds", 7: "alert latency", 8: "cold ingest vs the fair floor",
    9: "huge map, fed from the generator",
}


class Report:
    """Collects figures and prints them as they come."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stdout
        self.figures: dict[str, object] = {}
        self.checks: list[tuple[str, bool, str]] = []

    def line(self, text: str = "") -> None:
        print(text, file=self.stream, flush=True)

    def section(self, n: int) -> None:
        self.line()
        self.line(f"## {n}. {TITLES[n]}")

    def fig(self, key: str, value: object) -> None:
        self.figures[key] = value

    def target(self, name: str, ok: bool, detail: str) -> None:
        self.checks.append((name, ok, detail))
        self.line(f"   target {name}: {'MET' if ok else 'MISSED'} ({detail})")


class Run(Protocol):
    """What a section gets from bench/run (bench.main.Bench): its arguments, the report, the work
    folder, the generated map and its snapshot-1 database."""

    args: argparse.Namespace
    r: Report
    work: Path
    map_dir: Path
    snap1_db: Path
    snapshot2_written: bool

    def ensure_snapshot1_db(self) -> None: ...

    def write_snapshot2(self, folder: Path) -> dict: ...


def run_child(*args: str) -> tuple[dict, int]:
    """Run `python -m bench.child ARGS`; returns its JSON output and its peak RSS in KiB."""
    return run_module("bench.child", *args)


def run_module(module: str, *args: str) -> tuple[dict, int]:
    """Run `python -m MODULE ARGS`; returns its last JSON line and its peak RSS in KiB."""
    proc = subprocess.Popen([sys.executable, "-m", module, *args], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _pid, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{module} {' '.join(args[:1])} failed with status {proc.returncode}")
    return json.loads(out.strip().splitlines()[-1]), usage.ru_maxrss


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen | None = None, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


class Server:
    """A server in a child process (stopped by its pid when the block ends)."""

    def __init__(self, argv: list[str], port: int, log: Path) -> None:
        self.argv, self.port, self.log = argv, port, log

    def __enter__(self) -> Server:
        self.fh = self.log.open("w")
        self.proc = subprocess.Popen(self.argv, cwd=ROOT, stdout=self.fh, stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc)
        return self

    def __exit__(self, *exc: object) -> None:
        stop_process(self.proc)
        self.fh.close()


def stop_process(proc: subprocess.Popen) -> None:
    """Terminate a child, killing it if it has not exited within 10 s."""
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def copy_db(src: Path, dst: Path) -> None:
    """A consistent copy of a SQLite database (WAL included)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{dst}{suffix}").unlink(missing_ok=True)
    with sqlite3.connect(src) as a, sqlite3.connect(dst) as b:
        a.backup(b)
    b.close()
    a.close()
