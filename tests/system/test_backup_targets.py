"""`mapwatch backup FILE` through the real CLI (issue 21, item 2): FILE is replaced only when it
is a regular file, or written when it is a new path. Devices, FIFOs, folders, the database
itself (by any name) and its `-wal`, `-shm` and `-journal` are refused with exit 2 and one
line, and stay as they were; a full disk exits 1 and leaves no temporary file behind.
`mapwatch graph -o FILE` follows the same rules (it too replaced /dev/full, and the database)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.system.test_cli_exits import ROOT, _can_mount_tmpfs, mapwatch


def _snapshot(path: Path) -> tuple[int, int, bytes]:
    """What a target is: its type, inode and (for a regular file) its bytes."""
    st = os.lstat(path)
    data = path.read_bytes() if stat.S_ISREG(st.st_mode) else b""
    return stat.S_IFMT(st.st_mode), st.st_ino, data


def _device(tmp_path: Path, db: Path) -> Path:
    target = tmp_path / "full"
    try:
        os.mknod(target, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # a /dev/full of our own
    except PermissionError:
        pytest.skip("mknod is not allowed here")
    return target


def _fifo(tmp_path: Path, db: Path) -> Path:
    target = tmp_path / "fifo"
    os.mkfifo(target)
    return target


def _folder(tmp_path: Path, db: Path) -> Path:
    target = tmp_path / "folder"
    target.mkdir()
    (target / "keep.txt").write_text("kept\n")
    return target


def _side(suffix: str) -> Callable[[Path, Path], Path]:
    def make(tmp_path: Path, db: Path) -> Path:
        return db.with_name(db.name + suffix)
    return make


def _hard_link(tmp_path: Path, db: Path) -> Path:
    target = tmp_path / "other-name.db"
    os.link(db, target)
    return target


def _link_to_wal(tmp_path: Path, db: Path) -> Path:
    target = tmp_path / "wal-link"
    target.symlink_to(db.with_name(db.name + "-wal"))
    return target


TARGETS: dict[str, Callable[[Path, Path], Path]] = {
    "a device": _device, "a FIFO": _fifo, "a folder": _folder,
    "the -wal": _side("-wal"), "the -shm": _side("-shm"), "the -journal (not there)": _side("-journal"),
    "a hard link to the database": _hard_link, "a symbolic link to the -wal": _link_to_wal,
}


OUTPUT = {"backup": lambda target: ["backup", target], "graph": lambda target: ["graph", "2412.10400", "-o", target]}


@pytest.mark.parametrize("name", sorted(TARGETS))
@pytest.mark.parametrize("command", sorted(OUTPUT))
def test_a_target_that_is_not_a_regular_file_or_a_new_path_is_refused(ingested_file: Path, tmp_path: Path,
                                                                       command: str, name: str) -> None:
    db = tmp_path / "m.db"
    db.write_bytes(ingested_file.read_bytes())
    writer = sqlite3.connect(db, isolation_level=None)  # a live database: its -wal and -shm exist
    try:
        writer.execute("PRAGMA journal_mode = WAL")
        writer.execute("PRAGMA wal_autocheckpoint = 0")
        writer.execute("INSERT INTO bot_state (key, value, updated) VALUES ('committed', 'in the WAL', 'now')")
        target = TARGETS[name](tmp_path, db)
        before = _snapshot(target) if os.path.lexists(target) else None
        r = mapwatch(*OUTPUT[command](target), "--db", db, timeout=60)
        assert r.returncode == 2, (name, r.returncode, r.stderr)
        lines = r.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("mapwatch: error: ") and "Traceback" not in r.stderr, r.stderr
        assert (_snapshot(target) if os.path.lexists(target) else None) == before, f"{name} was changed"
        # Every reader still reads the committed row, from the WAL.
        reader = sqlite3.connect(db)
        assert reader.execute("SELECT value FROM bot_state WHERE key = 'committed'").fetchone() == ("in the WAL",)
        assert reader.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        reader.close()
    finally:
        writer.close()
    assert not list(tmp_path.glob(".tmp-*")), "a temporary file was left behind"


def test_a_regular_file_or_a_new_path_is_written(ingested_file: Path, tmp_path: Path) -> None:
    old = tmp_path / "old-backup.db"
    old.write_text("an older backup\n")
    for target in (old, tmp_path / "new" / "folder" / "b.db"):
        r = mapwatch("backup", target, "--db", ingested_file)
        assert r.returncode == 0, r.stderr
        assert sqlite3.connect(target).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_the_source_must_be_a_mapwatch_database(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    with sqlite3.connect(other) as c:
        c.execute("CREATE TABLE notes (body TEXT)")
    empty = tmp_path / "empty.db"
    empty.touch()
    for source in (other, empty):
        r = mapwatch("backup", tmp_path / "copy.db", "--db", source)
        assert r.returncode == 2 and "not a mapwatch database" in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "copy.db").exists()


@pytest.mark.parametrize("room", ["half", "all but the shared memory"])
def test_a_full_disk_leaves_no_temporary_file(ingested_file: Path, tmp_path: Path, room: str) -> None:
    """The target folder is a real tmpfs (mounted in a private user and mount namespace) with
    room for half the copy, or for the copy but not the shared-memory file SQLite needs to
    turn it from WAL into one self-contained file."""
    reason = _can_mount_tmpfs()
    if reason:
        pytest.skip(reason)
    size_kib = ingested_file.stat().st_size // 1024
    size_kib = size_kib // 2 if room == "half" else size_kib + 12
    disk = tmp_path / "disk"
    disk.mkdir()
    script = (f'mount -t tmpfs -o size={size_kib}k tmpfs "{disk}" && '
              f'"{sys.executable}" -m mapwatch backup "{disk}/b.db" --db "{ingested_file}"; code=$?; '
              f'ls -A "{disk}"; exit $code')
    r = subprocess.run(["unshare", "--user", "--map-root-user", "--mount", "sh", "-c", script], cwd=ROOT,
                       env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 1, (r.returncode, r.stdout, r.stderr)
    assert len(lines) == 1 and ("full" in lines[0] or "no space" in lines[0]), r.stderr  # the fault happened
    assert "Traceback" not in r.stderr
    assert r.stdout.split() == [], f"left on the disk: {r.stdout.split()}"
