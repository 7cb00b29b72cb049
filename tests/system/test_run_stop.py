"""SIGTERM stops `mapwatch run` within seconds whatever its threads are doing (issue 30, item 2).

A page parse runs in a worker thread, in lexbor's C code, and cannot be interrupted; at exit
Python waits for every worker thread, so a process told to stop during a long parse used to
live on until the parse ended (minutes for the attribute bombs the pre-scan now rejects).
mapwatch.cli gives the service STOP_GRACE_SECONDS after the signal, then exits anyway."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from aiohttp import web

from mapwatch.cli import STOP_GRACE_SECONDS
from tests.mapsite import render_page, seed_texts
from tests.sourceserver import serve_in_thread
from tests.system.test_cli_exits import ROOT
from tests.waiting import wait_until

ATTRIBUTES = 120_000  # on one element: lexbor alone takes a minute or more over them


def slow_page() -> bytes:
    """The seed page 2412.10400 as HTML, an element of ATTRIBUTES attributes in its article."""
    page = render_page(seed_texts()["2412.10400"])
    at = page.index("</article>")
    bomb = "<div " + " ".join(f"a{i}" for i in range(ATTRIBUTES)) + ">x</div>"
    return (page[:at] + bomb + page[at:]).encode()


def marks_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def test_sigterm_during_a_parse_stops_run_within_seconds(tmp_path: Path) -> None:
    """The real `mapwatch run` against a loopback map whose pages take a minute or more to
    parse. It runs as `python -m tests.slowparse run ...`: the same command with the HTML
    pre-scan switched off in that process (the pre-scan rejects every known slow page in
    milliseconds, and no page it lets through parses for more than about a second), so lexbor
    really parses the page in a worker thread. The test waits until the site has been asked
    for a page and a parse of it has started and not ended (tests/slowparse.py writes both
    marks), then sends SIGTERM: the process must end within the grace period and a margin,
    with status 0 and "mapwatch: stopped", the parse still unfinished (it was not waited
    for), and the database intact. On the code before, the process lived until the parse
    ended (the assertion on the time fails)."""
    body = slow_page()
    asked: list[str] = []

    async def page(request: web.Request) -> web.Response:
        asked.append(request.match_info["id"])
        return web.Response(body=body, content_type="text/html")

    def routes(app: web.Application) -> None:
        app.router.add_get("/paper/{id:.+}/", page)

    marks, db = tmp_path / "marks", tmp_path / "m.db"
    started, ended = f"start {len(body.decode())}", f"end {len(body.decode())}"  # (the parser is given text)
    with serve_in_thread(routes) as base:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.slowparse", "run", "--source", base, "--out", str(tmp_path / "public"),
             "--port", "0", "--db", str(db)],
            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT), "DISCORD_TOKEN": "", "SLOWPARSE_MARKS": str(marks)})
        try:
            wait_until(lambda: started in marks_of(marks) or proc.poll() is not None, 120,
                       what="the parse to start (or the run to end)", interval=0.1)
            time.sleep(1.0)  # on purpose: well into the parse
            assert proc.poll() is None and asked, "run ended, or never asked for a page"
            assert started in marks_of(marks) and ended not in marks_of(marks), marks_of(marks)
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            try:
                _out, err = proc.communicate(timeout=STOP_GRACE_SECONDS + 30)
            except subprocess.TimeoutExpired:
                err = "(still running)"
            took = time.monotonic() - sent
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    assert took < STOP_GRACE_SECONDS + 3, f"stopped {took:.1f} s after SIGTERM; {err[-2000:]}"
    assert proc.returncode == 0, err[-2000:]
    assert "mapwatch: stopped" in err.splitlines() and "Traceback" not in err, err[-2000:]
    assert "exiting without waiting" in err, err[-2000:]  # the grace period ran out: the parse was busy
    assert ended not in marks_of(marks), "the parse finished: the test proved nothing"
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)
