"""tests/killpoints.py: a process is killed at the point it is seen to reach, not before and
not at a time; a process that ends first is not counted as killed; commits are seen."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.killpoints import Commits, has_stored, kill_when, stored_count

# A writer that commits one row a line it reads on stdin, and ends at end of input.
WRITER = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
for line in sys.stdin:
    db.execute("INSERT INTO snapshots VALUES (?)", (line.strip(),))
    db.commit()
    print("committed", flush=True)
"""


def _db(tmp_path: Path) -> Path:
    db = tmp_path / "m.db"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE snapshots (x)")
    conn.commit()
    conn.close()
    return db


def _writer(db: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-c", WRITER, str(db)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)


def test_killed_once_the_point_is_reached_and_commits_are_seen(tmp_path: Path) -> None:
    db = _db(tmp_path)
    commits = Commits(db)
    with _writer(db) as proc:
        assert proc.stdin and proc.stdout
        try:
            assert stored_count(db) == 0 and not commits.any()
            for n in range(2):
                proc.stdin.write(f"{n}\n")
                proc.stdin.flush()
                assert proc.stdout.readline() == "committed\n"
            assert commits.any() and stored_count(db) == 2
            assert kill_when(proc, has_stored(db, 2), 30, what="2 rows")  # waiting on stdin: killed
        finally:
            commits.close()
    assert proc.returncode == -9 and stored_count(db) == 2


def test_a_process_that_ends_first_is_not_killed(tmp_path: Path) -> None:
    db = _db(tmp_path)
    with _writer(db) as proc:
        proc.communicate("a\n")
        assert not kill_when(proc, has_stored(db, 5), 30, what="5 rows")
    assert proc.returncode == 0 and stored_count(db) == 1


def test_a_point_never_reached_fails_and_leaves_no_process(tmp_path: Path) -> None:
    db = _db(tmp_path)
    with _writer(db) as proc, pytest.raises(AssertionError, match=r"waiting for 5 rows \(or the process to end\)"):
        kill_when(proc, has_stored(db, 5), 0.2, what="5 rows")
    assert proc.returncode == -9
    assert stored_count(tmp_path / "missing.db") == 0
