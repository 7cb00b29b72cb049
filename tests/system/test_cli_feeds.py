"""The feeds' commands as a user types them: defaults from the environment, clear errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import feedparser
import pytest

from mapwatch.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_help_lists_the_feed_commands() -> None:
    r = subprocess.run([sys.executable, "-m", "mapwatch", "--help"], cwd=ROOT, capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0
    for cmd in ("refresh", "publish", "serve", "run"):
        assert cmd in r.stdout


def test_publish_uses_the_environment_defaults(tmp_path: Path, monkeypatch, capsys) -> None:
    db = tmp_path / "m.db"
    assert main(["ingest", "--db", str(db), "--quiet"]) == 0
    monkeypatch.setenv("MAPWATCH_FEEDS_DIR", str(tmp_path / "site"))
    monkeypatch.setenv("MAPWATCH_BASE_URL", "https://feeds.example.org/")
    assert main(["publish", "--db", str(db)]) == 0
    assert "written" in capsys.readouterr().out
    parsed = feedparser.parse((tmp_path / "site/feeds/lr/reinforcement-learning-for-reasoning.atom").read_bytes())
    assert parsed.feed.links[0].href == "https://feeds.example.org/feeds/lr/reinforcement-learning-for-reasoning.atom"
    # Explicit flags win over the environment.
    assert main(["publish", "--db", str(db), "--out", str(tmp_path / "other"), "--base-url", "http://x"]) == 0
    assert (tmp_path / "other/feeds.opml").read_text().count('xmlUrl="http://x/feeds/') == 2


def test_refresh_source_from_the_environment(tmp_path: Path, monkeypatch, capsys, make_older_seeds) -> None:
    monkeypatch.setenv("MAPWATCH_SOURCE", str(make_older_seeds(1)))
    monkeypatch.chdir(tmp_path)
    assert main(["refresh", "--db", "m.db"]) == 0
    out = capsys.readouterr().out
    assert "older-1" in out and "2 stored" in out
    assert (tmp_path / "public/index.html").exists()


def test_refresh_missing_folder_is_one_clear_line(tmp_path: Path, capsys) -> None:
    assert main(["refresh", "--db", str(tmp_path / "m.db"), "--source", str(tmp_path / "nope"),
                 "--out", str(tmp_path / "public")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mapwatch: error:") and "no such file or folder" in err and "Traceback" not in err


@pytest.mark.parametrize("spec", ["often", "0m"])
def test_run_with_a_bad_schedule_says_so(tmp_path: Path, monkeypatch, capsys, spec: str) -> None:
    monkeypatch.setenv("MAPWATCH_REFRESH", spec)
    code = main(["run", "--db", str(tmp_path / "m.db"), "--out", str(tmp_path / "public"), "--port", "0"])
    assert code == 2  # a usage error (issue 21: it was 1)
    err = capsys.readouterr().err
    assert err.startswith("mapwatch: error: $MAPWATCH_REFRESH") and "Traceback" not in err


def test_serve_on_a_taken_port_is_one_clear_line(tmp_path: Path) -> None:
    import socket

    assert main(["ingest", "--db", str(tmp_path / "m.db")]) == 0
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "mapwatch", "serve", "--db", str(tmp_path / "m.db"),
                            "--out", str(tmp_path / "public"), "--port", str(port)],
                           cwd=ROOT, capture_output=True, text=True, timeout=30,
                           env={**os.environ, "MAPWATCH_DB": str(tmp_path / "m.db")})
    assert r.returncode == 1  # a failure, not a usage error (docs/getting-started.md, "Exit status")
    assert "mapwatch: error:" in r.stderr and "in use" in r.stderr and "Traceback" not in r.stderr
