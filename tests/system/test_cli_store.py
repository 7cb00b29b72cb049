"""`mapwatch ingest` and `mapwatch stats` as a user runs them: a real process, a real file."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import DATA

# The console script installed beside this Python, as a user runs it.
_SCRIPT = Path(sys.executable).parent / "mapwatch"
MAPWATCH = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-m", "mapwatch"]


def run(*args: str | Path, env: dict | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess:
    full_env = {k: v for k, v in os.environ.items() if k != "MAPWATCH_DB"} | (env or {})
    return subprocess.run([*MAPWATCH, *map(str, args)], capture_output=True, text=True, env=full_env,
                          cwd=cwd, timeout=60)


def test_ingest_bundled_seeds_by_default(tmp_path: Path) -> None:
    r = run("ingest", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "Read 2 pages: 2 stored, 0 unchanged, 0 older than stored, 0 rejected." in r.stdout
    assert "Map: 99 papers (2 with pages), 111 citations, 2 directions; 111 new citations." in r.stdout
    assert (tmp_path / "mapwatch.db").exists()
    again = run("ingest", cwd=tmp_path)
    assert "0 stored, 2 unchanged" in again.stdout and "; 0 new citations." in again.stdout


def test_ingest_reports_rejections_and_exits_1(tmp_path: Path, seeds_dir: Path) -> None:
    shutil.copy(DATA / "rejected" / "truncated_mid_list.txt", seeds_dir / "broken.txt")
    r = run("ingest", seeds_dir, "--db", tmp_path / "x.db")
    assert r.returncode == 1
    assert f"rejected: {(seeds_dir / 'broken.txt').resolve()}:57: truncated" in r.stderr
    assert "2 stored" in r.stdout and "1 rejected" in r.stdout
    assert "Traceback" not in r.stderr


def test_mapwatch_db_from_environment(tmp_path: Path) -> None:
    target = tmp_path / "env.db"
    r = run("ingest", env={"MAPWATCH_DB": str(target)}, cwd=tmp_path)
    assert r.returncode == 0 and target.exists()
    s = run("stats", env={"MAPWATCH_DB": str(target)}, cwd=tmp_path)
    assert s.returncode == 0
    assert "papers:        99 (2 with pages, 97 seen only in lists)" in s.stdout
    assert "citations:     111" in s.stdout
    assert "data through:  2026-10-14" in s.stdout


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    r = run("ingest", tmp_path / "missing", "--db", tmp_path / "x.db")
    assert r.returncode == 2 and "no such file or folder" in r.stderr and "Traceback" not in r.stderr
    assert run("ingest", "--bogus").returncode == 2
    notdb = tmp_path / "not.db"
    notdb.write_text("hello, this is not sqlite" * 100)
    r = run("stats", "--db", notdb)
    assert r.returncode == 2 and "database" in r.stderr and "Traceback" not in r.stderr


def test_help_lists_commands() -> None:
    r = run("--help")
    assert r.returncode == 0 and "ingest" in r.stdout and "stats" in r.stdout


def test_a_closed_pipe_is_not_a_traceback(tmp_path: Path) -> None:
    assert run("ingest", "--db", tmp_path / "x.db").returncode == 0
    proc = subprocess.Popen([*MAPWATCH, "ask", "--db", str(tmp_path / "x.db"), "/citers 2412.10400"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # the reader is gone before the answer is written, like `| head -0`
    err = proc.stderr.read().decode()
    proc.wait(timeout=30)
    assert "Traceback" not in err
