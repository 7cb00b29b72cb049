"""`mapwatch compact` (issue 44, part 9): a database made before this version, rewritten without
its free pages (in its 4 KiB pages, in 16 KiB and back), answers exactly as before; a database in
use, or a disk without room, is refused with nothing changed; a compaction killed midway leaves
the database as it was.

The database is tests/data/compact_before/'s generated map (160 pages read twice, made by an
earlier version in 4 KiB pages), opened and so migrated by this one, with every answer and feed
byte that version gave (tests/compact_answers.py).
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest

from mapwatch.cli import main
from mapwatch.store.database.compact import check_room, compact
from mapwatch.store.database.db import PAGE_SIZE, open_db
from mapwatch.store.errors import DatabaseInUse
from tests import compact_answers as ca
from tests.killpoints import ROOT, kill_when


def _same(got: dict, want: dict) -> None:
    for part in ("history", "feeds", "answers"):
        assert got[part].keys() == want[part].keys(), part
        for key in want[part]:
            assert got[part][key] == want[part][key], (part, key)


def _pragma(path: Path, name: str) -> object:
    with closing(sqlite3.connect(path)) as raw:
        return raw.execute(f"PRAGMA {name}").fetchone()[0]


@pytest.fixture
def older(tmp_path: Path) -> Path:
    """The generated map of the version before, migrated by this one: 4 KiB pages."""
    path = tmp_path / "before.db"
    ca.load("generated", path).close()
    assert _pragma(path, "page_size") == 4096
    return path


def test_a_new_database_has_sqlites_4_kib_pages(tmp_path: Path) -> None:
    open_db(tmp_path / "new.db").close()
    assert _pragma(tmp_path / "new.db", "page_size") == PAGE_SIZE == 4096


def test_compacted_it_answers_as_before(older: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with closing(sqlite3.connect(older)) as raw, raw:  # pages freed, as a migration or a deletion leaves them
        raw.execute("CREATE TABLE scratch AS SELECT * FROM papers")
        raw.execute("DROP TABLE scratch")
    freed, size = _pragma(older, "freelist_count"), older.stat().st_size
    assert freed > 0
    assert main(["compact", "--db", str(older)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"Compacting {older} (") and "pages of 4,096 -> 4,096 bytes" in out
    assert (_pragma(older, "page_size"), _pragma(older, "freelist_count"), _pragma(older, "journal_mode")) == (
        4096, 0, "wal")
    assert older.stat().st_size <= size - freed * 4096  # the free pages went back to the disk
    db = open_db(older, create=False)
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    _same(ca.jsonable(ca.everything(db, tmp_path / "feeds")), ca.expected("generated"))


def _answers(path: Path, out: Path) -> dict:
    db = open_db(path, create=False)
    try:
        return ca.jsonable(ca.everything(db, out))
    finally:
        db.close()


def test_in_16_kib_pages_and_back(older: Path, tmp_path: Path) -> None:
    done = compact(older, 16_384)
    assert (done.page_size_before, done.page_size_after) == (4096, 16_384)
    at_16 = tmp_path / "at-16.db"  # asked on a copy: a publish records what it published
    at_16.write_bytes(older.read_bytes())
    assert _pragma(at_16, "page_size") == 16_384
    _same(_answers(at_16, tmp_path / "a"), ca.expected("generated"))
    done = compact(older, 4096)
    assert (done.page_size_before, done.page_size_after) == (16_384, 4096)
    _same(_answers(older, tmp_path / "b"), ca.expected("generated"))


def test_a_database_in_use_is_refused_and_left_alone(older: Path, capsys: pytest.CaptureFixture[str]) -> None:
    other = open_db(older, create=False)  # as `mapwatch run` keeps it open
    try:
        other.conn.execute("SELECT count(*) FROM papers").fetchone()
        with pytest.raises(DatabaseInUse, match="another process has the database open"):
            compact(older)
        assert main(["compact", "--db", str(older)]) == 1
        err = capsys.readouterr().err
        assert err.startswith(f"mapwatch: error: {older}: another process") and err.count("\n") == 1
        assert err.rstrip().endswith("nothing was changed")
        assert (_pragma(older, "page_size"), _pragma(older, "journal_mode")) == (4096, "wal")
        assert other.conn.execute("SELECT count(*) FROM papers").fetchone()[0] > 0  # still works
    finally:
        other.close()


def test_a_disk_without_room_for_the_copy_is_told(older: Path) -> None:
    st = os.statvfs(older.parent)
    with pytest.raises(OSError, match=r"compacting needs .* GB free in") as caught:
        check_room(older, st.f_bavail * st.f_frsize + 1)  # more than the disk has
    assert caught.value.errno == 28  # ENOSPC: the command's one line, exit 1


@pytest.mark.parametrize("text", ["4000", "131072", "big", "-4096"])
def test_a_page_size_sqlite_does_not_allow_is_a_usage_error(older: Path, text: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        main(["compact", "--db", str(older), "--page-size", text])
    assert caught.value.code == 2 and "a power of two from 512 to 65536" in capsys.readouterr().err
    assert _pragma(older, "page_size") == 4096


def test_a_missing_database_is_not_created(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compact", "--db", str(tmp_path / "none.db")]) == 2
    assert "no such database" in capsys.readouterr().err and not (tmp_path / "none.db").exists()


# The child: compact in 16 KiB pages, pausing at the third progress call (inside VACUUM, while
# the copy is made) after marking it; the parent kills it there.
PAUSED = """
import sys, threading
from pathlib import Path
from mapwatch.store.database import compact as c
c.PROGRESS_STEPS = 1_000
calls = 0
def tick():
    global calls
    calls += 1
    if calls == 3:
        Path(sys.argv[2] + ".part").write_text("inside the rewrite")
        Path(sys.argv[2] + ".part").replace(sys.argv[2])
        threading.Event().wait()
c.compact(sys.argv[1], 16384, on_progress=tick)
"""


def test_a_compaction_killed_midway_leaves_the_database_as_it_was(older: Path, tmp_path: Path) -> None:
    marker = tmp_path / "reached"
    proc = subprocess.Popen([sys.executable, "-c", PAUSED, str(older), str(marker)], cwd=ROOT, stderr=subprocess.PIPE)
    killed = kill_when(proc, marker.exists, timeout=120, what="the rewrite under way")
    assert killed, proc.stderr.read() if proc.stderr else ""
    assert _pragma(older, "journal_mode") == "delete"  # killed between the two switches, inside VACUUM
    db = open_db(older, create=False)  # back to WAL, every row as it was
    assert (_pragma(older, "page_size"), _pragma(older, "journal_mode")) == (4096, "wal")
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    _same(ca.jsonable(ca.everything(db, tmp_path / "feeds")), ca.expected("generated"))


def test_papers_keep_their_rowids_the_full_text_indexes_rest_on(older: Path) -> None:
    """The full-text indexes are external content keyed on papers' rowid (no INTEGER PRIMARY KEY):
    a rewrite that renumbered it would point the index at other papers. A gap in the middle (a
    paper deleted, as a merge of two versions does) is where a renumbering would show."""
    with closing(sqlite3.connect(older)) as raw, raw:
        for pid in ("9999.00001", "9999.00002"):
            raw.execute("INSERT INTO papers (id, title, abstract, has_page, first_seen, updated)"
                        " VALUES (?, 'Spectral gap words', 'zygomorphic', 0, '2026-12-01T00:00:00+00:00',"
                        " '2026-12-01T00:00:00+00:00')", (pid,))
        raw.execute("DELETE FROM papers WHERE id = '9999.00001'")
        before = raw.execute("SELECT rowid, id FROM papers ORDER BY rowid").fetchall()
    assert before[-1][0] - before[-2][0] == 2  # the gap
    compact(older, 16_384)
    with closing(sqlite3.connect(older)) as raw:
        assert raw.execute("SELECT rowid, id FROM papers ORDER BY rowid").fetchall() == before
        for fts in ("papers_fts", "papers_title_fts"):  # the index against its content, row by row
            raw.execute(f"INSERT INTO {fts} ({fts}, rank) VALUES ('integrity-check', 1)")
        found = raw.execute("SELECT p.id FROM papers_fts f JOIN papers p ON p.rowid = f.rowid"
                            " WHERE papers_fts MATCH 'zygomorphic'").fetchall()
        assert found == [("9999.00002",)]


def test_stats_tells_of_free_pages_worth_compacting(older: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with closing(sqlite3.connect(older)) as raw, raw:  # 12 MB freed, as a migration leaves them
        raw.execute("CREATE TABLE scratch AS SELECT zeroblob(1000000) AS b FROM papers LIMIT 12")
        raw.execute("DROP TABLE scratch")
    assert main(["stats", "--db", str(older)]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("database:") and "MB of it free pages: mapwatch compact gives them back" in line
    free_mb = float(line.split("(")[1].split(" MB")[0].replace(",", ""))
    assert 12.0 <= free_mb <= 12.4
    assert main(["compact", "--db", str(older)]) == 0
    capsys.readouterr()
    assert main(["stats", "--db", str(older)]) == 0
    line = capsys.readouterr().out.splitlines()[-1]
    assert line.startswith("database:") and "free pages" not in line
