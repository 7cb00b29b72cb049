"""Bad settings through the real CLI (issue 21, item 10): every environment variable and option
of (docs/configuration.md, "Configuration") out of its range is a usage error: exit 2, one line naming it, no
traceback, and nothing changed (the database is opened after the settings are checked)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from mapwatch.store.pages.files import SEEDS_DIR
from tests.system.test_cli_exits import mapwatch

RUN = ["run", "--source", str(SEEDS_DIR), "--out", "public", "--port", "0"]
SERVE = ["serve", "--out", "public", "--port", "0"]
PUBLISH = ["publish", "--out", "public"]
REFRESH = ["refresh", "--source", str(SEEDS_DIR), "--out", "public"]
ASK = ["ask", "/paper 2412.10400"]

# Settings `run` used only once it had started (the seeds written), or never checked.
RUN_ONLY = {"HEADER_TIMEOUT": "abc", "MAX_CONNECTIONS": "0", "TICK_DEADLINE": "-1", "REPLICA": "ftp://x/",
            "SLACK_WEBHOOKS": "abc", "BACKGROUND_NICE": "99", "BUSY_TIMEOUT": "soon"}

# (command, environment, the setting's name the line must give)
CASES: dict[str, tuple[list[str], dict[str, str], str]] = {
    "PORT=99999 serve": (SERVE[:-2], {"PORT": "99999"}, "$PORT"),
    "PORT=99999 run": (RUN[:-2], {"PORT": "99999"}, "$PORT"),
    "PORT=-1 run": (RUN[:-2], {"PORT": "-1"}, "$PORT"),
    "--port 70000": ([*SERVE[:-2], "--port", "70000"], {}, "--port"),
    "--port -1": ([*RUN[:-2], "--port", "-1"], {}, "--port"),
    "REFRESH=99999999d": (RUN, {"MAPWATCH_REFRESH": "99999999d"}, "$MAPWATCH_REFRESH"),
    "REFRESH=0": (RUN, {"MAPWATCH_REFRESH": "0"}, "$MAPWATCH_REFRESH"),
    "REFRESH=-1h": (RUN, {"MAPWATCH_REFRESH": "-1h"}, "$MAPWATCH_REFRESH"),
    "REFRESH=61 * * * *": (RUN, {"MAPWATCH_REFRESH": "61 * * * *"}, "$MAPWATCH_REFRESH"),
    "REFRESH=0 0 31 2 *": (RUN, {"MAPWATCH_REFRESH": "0 0 31 2 *"}, "$MAPWATCH_REFRESH"),
    "RANKS_WHOLE_EVERY=daily run": (RUN, {"MAPWATCH_RANKS_WHOLE_EVERY": "daily"}, "$MAPWATCH_RANKS_WHOLE_EVERY"),
    "RANKS_WHOLE_EVERY=-1 refresh": (REFRESH, {"MAPWATCH_RANKS_WHOLE_EVERY": "-1"}, "$MAPWATCH_RANKS_WHOLE_EVERY"),
    "--base-url javascript publish": ([*PUBLISH, "--base-url", "javascript:alert(document.cookie)//x.org"], {},
                                      "--base-url"),
    "--base-url javascript refresh": ([*REFRESH, "--base-url", "javascript:alert(1)"], {}, "--base-url"),
    "--base-url javascript serve": ([*SERVE, "--base-url", "javascript:alert(1)"], {}, "--base-url"),
    "--base-url javascript run": ([*RUN, "--base-url", "javascript:alert(1)"], {}, "--base-url"),
    "--base-url no host": ([*PUBLISH, "--base-url", "https://"], {}, "--base-url"),
    "--base-url ftp": ([*PUBLISH, "--base-url", "ftp://feeds.example.org"], {}, "--base-url"),
    "BASE_URL=data: publish": (PUBLISH, {"MAPWATCH_BASE_URL": "data:text/html,x"}, "$MAPWATCH_BASE_URL"),
    "BASE_URL=javascript ask": (ASK, {"MAPWATCH_BASE_URL": "javascript:alert(1)"}, "$MAPWATCH_BASE_URL"),
    "SOURCE_CITATIONS=maybe ask": (ASK, {"MAPWATCH_SOURCE_CITATIONS": "maybe"}, "$MAPWATCH_SOURCE_CITATIONS"),
    "BASE_URL=javascript run": (RUN, {"MAPWATCH_BASE_URL": "javascript:alert(1)"}, "$MAPWATCH_BASE_URL"),
    "--limit 0": ([*PUBLISH, "--limit", "0"], {}, "--limit"),
    "--limit -5": ([*REFRESH, "--limit", "-5"], {}, "--limit"),
    "--limit 10**20": ([*PUBLISH, "--limit", str(10 ** 20)], {}, "--limit"),
    "--guild 10**23": (["ask", "--guild", str(10**23), "--channel", "2", "/track 2412.10400"], {}, "--guild"),
    "--user 0": (["ask", "--user", "0", "/track 2412.10400"], {}, "--user"),
    "--host typo serve": ([*SERVE, "--host", "127.0.0.l"], {}, "--host"),
    "--host typo run": ([*RUN, "--host", "no such host!"], {}, "--host"),
    "--budget -1": ([*REFRESH, "--budget", "-1"], {}, "--budget"),
    "--source http://": ([*REFRESH[:1], "--source", "http://", "--out", "public"], {}, "--source"),
    "SOURCE=https:// run": (["run", "--out", "public", "--port", "0"], {"MAPWATCH_SOURCE": "https://"},
                            "$MAPWATCH_SOURCE"),
    "--out a file": ([*PUBLISH[:1], "--out", "a-file"], {}, "--out"),
    "FEEDS_DIR a file": (["publish"], {"MAPWATCH_FEEDS_DIR": "a-file"}, "$MAPWATCH_FEEDS_DIR"),
    "LOG_LEVEL=loud": (RUN, {"MAPWATCH_LOG_LEVEL": "loud"}, "$MAPWATCH_LOG_LEVEL"),
    "ALERT_INTERVAL=soon": (RUN, {"MAPWATCH_ALERT_INTERVAL": "soon"}, "$MAPWATCH_ALERT_INTERVAL"),
    "LOG_FORMAT=xml run": (RUN, {"MAPWATCH_LOG_FORMAT": "xml"}, "$MAPWATCH_LOG_FORMAT"),
    "LOG_FORMAT=xml serve": (SERVE, {"MAPWATCH_LOG_FORMAT": "xml"}, "$MAPWATCH_LOG_FORMAT"),
    "SHARDS=0": (RUN, {"MAPWATCH_SHARDS": "0"}, "$MAPWATCH_SHARDS"),
    "SHARDS=two": (RUN, {"MAPWATCH_SHARDS": "two"}, "$MAPWATCH_SHARDS"),
    "DISCORD_API=javascript sync": (["sync"], {"DISCORD_TOKEN": "x", "MAPWATCH_DISCORD_API": "javascript:x"},
                                    "$MAPWATCH_DISCORD_API"),
    "DISCORD_GATEWAY=nope run": (RUN, {"DISCORD_TOKEN": "x", "MAPWATCH_DISCORD_GATEWAY": "nope"},
                                 "$MAPWATCH_DISCORD_GATEWAY"),
    # Issue 30, item 8: checked before anything is written, and the two that were not checked at all.
    **{f"{k}={v} run": (RUN, {f"MAPWATCH_{k}": v}, f"$MAPWATCH_{k}") for k, v in RUN_ONLY.items()},
    "SOURCE=ftp run": (["run", "--out", "public", "--port", "0"], {"MAPWATCH_SOURCE": "ftp://x/"},
                       "$MAPWATCH_SOURCE"),
    "--source ftp refresh": ([*REFRESH[:1], "--source", "ftp://x/", "--out", "public"], {}, "--source"),
    "ENRICH=all run": (RUN, {"MAPWATCH_ENRICH": "all"}, "$MAPWATCH_ENRICH"),
    "ENRICH=crossref enrich": (["enrich"], {"MAPWATCH_ENRICH": "arxiv,crossref"}, "$MAPWATCH_ENRICH"),
    "ENRICH=, enrich": (["enrich"], {"MAPWATCH_ENRICH": ","}, "$MAPWATCH_ENRICH"),
    "ARXIV_API=ftp enrich": (["enrich"], {"MAPWATCH_ENRICH": "arxiv", "MAPWATCH_ARXIV_API": "ftp://x.org"},
                             "$MAPWATCH_ARXIV_API"),
    "OPENALEX_API=javascript run": (RUN, {"MAPWATCH_ENRICH": "openalex", "MAPWATCH_OPENALEX_API": "javascript:x"},
                                    "$MAPWATCH_OPENALEX_API"),
    "S2_API no host enrich": (["enrich", "--source", "s2"], {"MAPWATCH_S2_API": "https://"}, "$MAPWATCH_S2_API"),
    "CONTACT not an address run": (RUN, {"MAPWATCH_ENRICH": "arxiv", "MAPWATCH_CONTACT": "me at example"},
                                   "$MAPWATCH_CONTACT"),
    "CONTACT header injection enrich": (["enrich"], {"MAPWATCH_CONTACT": "a@b.org\r\nX-Evil: 1"},
                                        "$MAPWATCH_CONTACT"),
    "--limit 0 enrich": (["enrich", "--source", "arxiv", "--limit", "0"], {}, "--limit"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_setting_is_a_usage_error(ingested_file: Path, tmp_path: Path, case: str) -> None:
    args, env, name = CASES[case]
    db = tmp_path / "m.db"
    db.write_bytes(ingested_file.read_bytes())
    (tmp_path / "a-file").write_text("not a folder\n")
    before = db.read_bytes()
    r = mapwatch(*args, "--db", db, cwd=tmp_path, env={"DISCORD_TOKEN": "", **env}, timeout=60)
    assert r.returncode == 2, (case, r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("mapwatch: error: ") and name in lines[0], r.stderr[-2000:]
    assert "Traceback" not in r.stderr
    assert db.read_bytes() == before, "the database changed"
    assert not (tmp_path / "public").exists(), "feeds were written"


def test_the_base_url_never_reaches_the_feeds(ingested_file: Path, tmp_path: Path) -> None:
    """The issue's case: `--base-url javascript:...` was accepted and became every link of the feeds."""
    db = tmp_path / "m.db"
    db.write_bytes(ingested_file.read_bytes())
    r = mapwatch("publish", "--db", db, "--out", "public", "--base-url", "javascript:alert(1)//", cwd=tmp_path)
    assert r.returncode == 2
    assert not (tmp_path / "public").exists()
    ok = mapwatch("publish", "--db", db, "--out", "public", "--base-url", "https://feeds.example.org/", cwd=tmp_path)
    assert ok.returncode == 0, ok.stderr
    opml = (tmp_path / "public" / "feeds.opml").read_text()
    assert "https://feeds.example.org/" in opml and "javascript" not in opml


@pytest.mark.parametrize("env", [{"PORT": "0"}, {"MAPWATCH_REFRESH": "366d"}, {"MAPWATCH_REFRESH": "0 */6 * * *"},
                                 {"MAPWATCH_BASE_URL": "http://[::1]:8080/feeds/"}, {"MAPWATCH_LOG_LEVEL": "warning"}])
def test_good_settings_still_start_run(ingested_file: Path, tmp_path: Path, env: dict[str, str]) -> None:
    """The checks refuse only what is out of range: `run` with these starts (it is stopped by a
    signal once it says where the feeds are)."""
    import signal
    import subprocess
    import sys

    from tests.system.test_cli_exits import ROOT

    db = tmp_path / "m.db"
    db.write_bytes(ingested_file.read_bytes())
    args = RUN if "PORT" not in env else RUN[:-2]
    proc = subprocess.Popen([sys.executable, "-m", "mapwatch", *args, "--db", str(db)], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "DISCORD_TOKEN": "", **env},
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        lines = [proc.stdout.readline() for _ in range(2)]  # "DISCORD_TOKEN is not set...", then "Feeds: ..."
    finally:
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=60)
    assert lines[1].startswith("Feeds: "), (lines, err[-2000:])
    assert proc.returncode == 0, err[-2000:]
    with sqlite3.connect(db) as c:
        assert c.execute("PRAGMA integrity_check").fetchone() == ("ok",)


@pytest.mark.parametrize("setting", [*sorted(RUN_ONLY), "SOURCE"])
def test_run_checks_every_setting_before_it_writes_anything(tmp_path: Path, setting: str) -> None:
    """With no database yet, `run` used to store the seeds and only then refuse these: now
    the database file and the feeds folder are never created (issue 30, item 8)."""
    value = RUN_ONLY.get(setting, "ftp://x/")
    db = tmp_path / "new.db"
    r = mapwatch("run", "--out", "public", "--port", "0", "--db", db, cwd=tmp_path,
                 env={"DISCORD_TOKEN": "", f"MAPWATCH_{setting}": value}, timeout=60)
    assert r.returncode == 2, r.stderr[-2000:]
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and f"$MAPWATCH_{setting}" in lines[0], r.stderr[-2000:]
    assert sorted(p.name for p in tmp_path.iterdir()) == [], "something was written"


def test_a_replica_url_is_shown_without_its_password(tmp_path: Path) -> None:
    r = mapwatch("run", "--out", "public", "--port", "0", "--db", tmp_path / "m.db", cwd=tmp_path,
                 env={"DISCORD_TOKEN": "", "MAPWATCH_REPLICA": "ftp://user:hunter2pw@host/db"}, timeout=60)
    assert r.returncode == 2 and "hunter2pw" not in r.stderr and "ftp://***@host/db" in r.stderr, r.stderr
