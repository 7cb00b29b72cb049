"""The feed server with few file descriptors (issue 21): a flood of unfinished connections
against `mapwatch serve` under a lowered RLIMIT_NOFILE, and a process whose descriptors are
all taken, log a bounded number of lines (before: a traceback per failed accept, hundreds of
megabytes in seconds) and go on serving."""

from __future__ import annotations

import os
import resource
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mapwatch.cli import main
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 128
MAX_LOG = 4096  # bytes of log a run may write


def low_limit() -> None:  # in the child, before exec
    resource.setrlimit(resource.RLIMIT_NOFILE, (LIMIT, LIMIT))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, log: Path) -> None:
    def port_open() -> bool:
        assert proc.poll() is None, log.read_bytes()[:MAX_LOG]
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
        return True

    wait_until(port_open, 60, what=f"port {port} to open", ignoring=(OSError,),
               detail=lambda: log.read_bytes()[:MAX_LOG])


def flood(port: int, n: int) -> list[socket.socket]:
    """`n` connections that each send half a request line (the backlog may refuse some)."""
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.settimeout(2)
        try:
            s.connect(("127.0.0.1", port))
            s.send(b"GET / HT")
        except OSError:
            s.close()
            continue
        socks.append(s)
    return socks


def get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status
    except urllib.error.HTTPError as e:
        return e.code


def log_of(log: Path) -> str:
    size = log.stat().st_size
    assert size <= MAX_LOG, f"{size:,} bytes of log: {log.read_bytes()[:2000]!r}"
    return log.read_text()


@pytest.fixture
def site(tmp_path: Path) -> tuple[Path, Path]:
    db, out = tmp_path / "m.db", tmp_path / "public"
    assert main(["refresh", "--db", str(db), "--out", str(out)]) == 0
    return db, out


def test_a_flood_against_serve_with_128_descriptors_logs_little_and_serves(site, tmp_path: Path) -> None:
    db, out = site
    port = free_port()
    log = tmp_path / "serve.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAPWATCH_")}
    with log.open("w") as sink:
        proc = subprocess.Popen([sys.executable, "-m", "mapwatch", "serve", "--db", str(db), "--out", str(out),
                                 "--port", str(port)], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT,
                                preexec_fn=low_limit)
    socks: list[socket.socket] = []
    try:
        wait_for_port(port, proc, log)
        wait_until(lambda: get(f"http://127.0.0.1:{port}/") == 200, 60, what="the first publish",  # 503 meanwhile
                   interval=0.1)
        for _ in range(3):
            socks += flood(port, 300)  # far more than the 128 descriptors
            assert get(f"http://127.0.0.1:{port}/") == 200  # answered throughout
        time.sleep(1.5)  # on purpose: long enough for asyncio to retry a failed accept
        assert get(f"http://127.0.0.1:{port}/feeds.opml") == 200
        assert proc.poll() is None
    finally:
        for s in socks:
            s.close()
        proc.terminate()
        proc.wait(20)
    text = log_of(log)
    assert "Traceback" not in text and text.count("\n") <= 8, text


SCRIPT = r"""
import asyncio, os, sys
from mapwatch.feeds.serving.server import start_server

async def main():
    runner, port = await start_server(sys.argv[1], "127.0.0.1", 0)
    hog = []
    while True:  # take every descriptor left
        try:
            hog.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            break
    print(port, len(hog), flush=True)
    line = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
    for fd in hog:  # (the executor's thread needed no descriptor)
        os.close(fd)
    print("released", flush=True)
    await asyncio.sleep(3600)  # serves until killed

asyncio.run(main())
"""


def test_no_descriptor_left_is_one_log_line_and_the_server_recovers(site, tmp_path: Path) -> None:
    _db, out = site
    log = tmp_path / "server.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAPWATCH_")}
    with log.open("w") as errors:
        proc = subprocess.Popen([sys.executable, "-c", "import logging; logging.basicConfig()\n" + SCRIPT, str(out)],
                                cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors,
                                text=True, preexec_fn=low_limit)
    socks: list[socket.socket] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        port_s, hogged = proc.stdout.readline().split()
        port = int(port_s)
        assert int(hogged) > 0
        socks = flood(port, 40)  # in the listen queue; every accept fails (EMFILE)
        time.sleep(3)  # on purpose: asyncio retries a failed accept after 1 s: several rounds
        assert proc.poll() is None
        before = log_of(log)
        assert before.count("out of file descriptors") == 1, before
        proc.stdin.write("go\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "released"
        for s in socks:
            s.close()
        status = wait_until(lambda: get(f"http://127.0.0.1:{port}/"), 30, what="the accept loop to come back",
                            interval=0.2, ignoring=(OSError,))  # on its own
        assert status == 200
    finally:
        for s in socks:
            s.close()
        proc.kill()
        proc.wait(20)
    text = log_of(log)
    assert "Traceback" not in text and text.count("out of file descriptors") == 1, text
