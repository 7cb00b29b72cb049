"""/healthz and /metrics on an address of their own (issue 30, item 6): with
$MAPWATCH_ADMIN_LISTEN set, `mapwatch run` serves them there only, and the public port
answers 404 for them; the feeds stay on the public port. A real process on loopback."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from prometheus_client.parser import text_string_to_metric_families

from mapwatch.store.pages.files import SEEDS_DIR
from tests.system.test_cli_exits import ROOT


def status(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, ""


def test_health_and_metrics_move_to_the_admin_address(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DISCORD_TOKEN": "", "MAPWATCH_ADMIN_LISTEN": "127.0.0.1:0"}
    proc = subprocess.Popen([sys.executable, "-m", "mapwatch", "run", "--source", str(SEEDS_DIR), "--out", "public",
                             "--port", "0", "--db", str(tmp_path / "m.db")], cwd=tmp_path, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        seen = []
        for line in iter(proc.stdout.readline, ""):
            seen.append(line)
            if line.startswith("Feeds: "):
                break
        admin = next(line for line in seen if line.startswith("Health and metrics: ")).split()[3].rstrip(",")
        admin_base = admin.removesuffix("/healthz")
        public = seen[-1].split()[1].rstrip("/")
        assert status(f"{public}/healthz")[0] == 404 and status(f"{public}/metrics")[0] == 404
        assert status(f"{public}/feeds.opml")[0] == 200  # the feeds are still public
        code, body = status(f"{admin_base}/healthz")
        assert code == 200 and json.loads(body)["status"] in ("ok", "degraded")
        code, body = status(f"{admin_base}/metrics")
        names = {f.name for f in text_string_to_metric_families(body)}
        assert code == 200 and "mapwatch_database_size_bytes" in names
        assert status(f"{admin_base}/feeds.opml")[0] == 404  # nothing else there
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err[-2000:]


def test_a_bad_admin_address_is_a_usage_error(tmp_path: Path) -> None:
    from tests.system.test_cli_exits import mapwatch

    r = mapwatch("run", "--out", "public", "--port", "0", "--db", tmp_path / "m.db", cwd=tmp_path,
                 env={"DISCORD_TOKEN": "", "MAPWATCH_ADMIN_LISTEN": "9100"}, timeout=60)
    assert r.returncode == 2 and "$MAPWATCH_ADMIN_LISTEN must be HOST:PORT" in r.stderr, r.stderr
    assert list(tmp_path.iterdir()) == []
