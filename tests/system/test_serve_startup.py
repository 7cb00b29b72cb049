"""`mapwatch serve` and `mapwatch run` answer only from their own publish (issue 21): a folder
an earlier publish left (another base URL) is never served, not even in the first second."""

from __future__ import annotations

import os
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
OLD = b"localhost:8080"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetch(url: str) -> tuple[int, bytes, dict[str, str]]:
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status, resp.read(), dict(resp.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


@pytest.mark.parametrize("command", ["serve", "run"])
def test_no_answer_ever_comes_from_the_earlier_publish(tmp_path: Path, command: str) -> None:
    db, out = tmp_path / "m.db", tmp_path / "public"
    assert main(["refresh", "--db", str(db), "--out", str(out), "--base-url", "http://localhost:8080"]) == 0
    assert OLD in (out / "feeds.opml").read_bytes()
    port = free_port()
    new = f"http://127.0.0.1:{port}".encode()
    env = {k: v for k, v in os.environ.items() if k not in ("DISCORD_TOKEN", "MAPWATCH_BASE_URL", "PORT")}
    argv = [sys.executable, "-m", "mapwatch", command, "--db", str(db), "--out", str(out), "--port", str(port),
            "--base-url", new.decode()]
    if command == "run":
        argv += ["--source", str(tmp_path / "nothing-new")]
        (tmp_path / "nothing-new").mkdir()
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(argv, cwd=ROOT, env={**env, "MAPWATCH_REFRESH": "1h"}, stdout=sink,
                                stderr=subprocess.STDOUT)
    answers: list[tuple[str, int]] = []
    try:
        deadline = time.monotonic() + 60

        def port_open() -> bool:
            assert proc.poll() is None, log.read_text()
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return True

        # Looked at every 2 ms: the answers below start from the moment the port opens.
        wait_until(port_open, 60, what=f"port {port} to open", interval=0.002, ignoring=(OSError,),
                   detail=log.read_text)
        fresh = 0
        while fresh < 20:
            assert time.monotonic() < deadline, (answers[-5:], log.read_text())
            for path in ("/feeds.opml", "/"):
                status, body, headers = fetch(f"http://127.0.0.1:{port}{path}")
                answers.append((path, status))
                assert OLD not in body, f"{path} answered from the earlier publish after {answers}"
                if status == 503:
                    assert headers.get("Retry-After") == "1"
                else:
                    assert status == 200 and new in body, (path, status)
                    fresh += 1
        status, body, _ = fetch(f"http://127.0.0.1:{port}/healthz")  # run: answered throughout
        assert status == (200 if command == "run" else 404), body
    finally:
        proc.terminate()
        proc.wait(20)
    assert OLD not in (out / "feeds.opml").read_bytes()
