"""No secret on /healthz, /metrics or in any log line (issue 30, items 6 and 11).

`mapwatch run` with planted secrets: a replica URL with a password ($MAPWATCH_REPLICA, started
as docs/operations.md shows it: the database from $MAPWATCH_DB), logging at DEBUG in JSON.
/healthz showed the URL verbatim; /metrics had no replica lag without `--db`; shutdown wrote a
plain line among the JSON ones."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.urls import redact_url
from tests.system.test_cli_exits import ROOT

PASSWORD = "pw-0f5bd1c9e27a"
REPLICA = f"sftp://backup:{PASSWORD}@replica.example/mapwatch"


def test_redact_url_hides_user_information_and_secret_query_values() -> None:
    assert redact_url(REPLICA) == "sftp://***@replica.example/mapwatch"
    assert redact_url("see s3://AKIA:SECRET@bucket/x and https://h/p?api_key=K1&page=2") == (
        "see s3://***@bucket/x and https://h/p?api_key=***&page=2")
    assert redact_url("https://map.example/paper/2412.10400/") == "https://map.example/paper/2412.10400/"


def test_healthz_metrics_and_logs_hold_no_password(tmp_path: Path) -> None:
    # Litestream's folder beside the database, as `litestream replicate` makes it: the lag of an
    # SFTP replica is then what Litestream has not taken from the WAL (store/database/replica.py).
    (tmp_path / ".m.db-litestream" / "ltx" / "0").mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "DISCORD_TOKEN": "", "MAPWATCH_DB": str(tmp_path / "m.db"),
           "MAPWATCH_REPLICA": REPLICA, "MAPWATCH_LOG_LEVEL": "DEBUG", "MAPWATCH_LOG_FORMAT": "json"}
    proc = subprocess.Popen([sys.executable, "-m", "mapwatch", "run", "--source", str(SEEDS_DIR), "--out", "public",
                             "--port", "0"], cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None
    try:
        feeds = next(line for line in iter(proc.stdout.readline, "") if line.startswith("Feeds: "))
        base = feeds.split()[1].rstrip("/")
        with urllib.request.urlopen(f"{base}/healthz", timeout=30) as r:
            health = r.read().decode()
        with urllib.request.urlopen(f"{base}/metrics", timeout=30) as r:
            metrics = r.read().decode()
    finally:
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    replica = json.loads(health)["replica"]
    assert replica["url"] == "sftp://***@replica.example/mapwatch"  # the fault was planted and shown, hidden
    for where, text in (("/healthz", health), ("/metrics", metrics), ("stdout", out), ("stderr", err)):
        assert PASSWORD not in text, where
    assert replica["lag_seconds"] is not None, replica
    assert "mapwatch_replica_lag_seconds" in metrics  # as /healthz has it (before: left out without --db)
    lines = err.strip().splitlines()
    assert len(lines) > 5  # DEBUG: there was much to log
    assert all(json.loads(line)["message"] is not None for line in lines), lines[-3:]  # every line JSON
    assert "mapwatch: stopped" in [json.loads(line)["message"] for line in lines]
    assert proc.returncode == 0


def test_every_log_line_is_scrubbed_whichever_logger_wrote_it() -> None:
    """DEBUG logs kept a refused webhook URL and interaction tokens (they were scrubbed only on
    discord.py's loggers): now the formatter of every line, text and JSON, hides them."""
    import logging

    from mapwatch.log_format import formatter
    from mapwatch.store.environment import Environment, installed

    token = "MTA5ODc2.Gsecret.planted-token-value"
    planted = {
        "webhook": "https://discord.com/api/webhooks/1234567890/hookSECRETpart_xyz",
        "slack": "https://hooks.slack.com/services/T0001/B0002/slackSECRETpart",
        "interaction": '{"id": "99", "token": "aW50ZXJhY3Rpb25TRUNSRVQ", "type": 2}',
        "route": "POST /interactions/99/aW50ZXJhY3Rpb25TRUNSRVQ/callback",
        "replica": REPLICA,
        "token": f"Authorization: Bot {token}",
    }
    s2_key = "s2-planted-key-7d41c0"
    planted["s2"] = f"GET /graph/v1/paper/arXiv:1/citations x-api-key={s2_key}"
    webhook_key = "d2ViaG9vay1rZXktcGxhbnRlZC0wMTIzNDU2Nzg5YWI="
    planted["webhook key"] = f"key {webhook_key} loaded"
    secrets = ["hookSECRETpart_xyz", "slackSECRETpart", "aW50ZXJhY3Rpb25TRUNSRVQ", PASSWORD, token, s2_key, webhook_key]
    env = Environment.read({"DISCORD_TOKEN": token, "MAPWATCH_S2_KEY": s2_key, "MAPWATCH_WEBHOOK_KEY": webhook_key})
    with installed(env):
        for kind in ("text", "json"):
            for name, text in planted.items():
                record = logging.LogRecord("mapwatch.bot.webhooks", logging.DEBUG, __file__, 1, "refused %s", (text,),
                                           None)
                line = formatter(kind, env.secret_values()).format(record)
                assert not any(s in line for s in secrets), (kind, name, line)
                assert "refused" in line
