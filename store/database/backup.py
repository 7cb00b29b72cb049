"""`mapwatch backup`'s copy of the database: SQLite's online backup API in one step, the copy
made a self-contained file and checked, then moved into place (mapwatch/cli/store.py runs it;
docs/operations.md). A copy that fails leaves nothing behind, and a full disk is told apart.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from pathlib import Path

from mapwatch.store.atomic import replacing
from mapwatch.store.database.db_check import SIDE_FILES, Kind, check_database, database_kind, output_problem
from mapwatch.store.database.rows import one_column

LOW_SPACE = 64 * 1024  # free bytes under which a failed copy is put down to a full disk


def free_bytes(folder: Path) -> int:
    """Bytes an unprivileged process may still write on the disk holding `folder`."""
    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize


def backup_database(source: str | Path, target: str | Path) -> int:
    """Copy `source` to `target` (atomically replaced); returns the copy's size in bytes.
    Raises ValueError for a missing source or a target it must not write
    (`db_check.output_problem`); NotMapwatchDatabase for a source that is another program's or
    empty (a newer mapwatch's is copied: a backup only reads); OSError (ENOSPC) for a full
    disk, with no temporary file left behind."""
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise ValueError(f"{source}: no such database")
    problem = output_problem(target, source)
    if problem:
        raise ValueError(problem)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp_name, full = "", False
    try:
        with replacing(target) as tmp:
            tmp_name = str(tmp)
            src = sqlite3.connect(source)
            try:
                src.execute("PRAGMA busy_timeout = 10000")
                kind, _ = database_kind(src)  # a newer schema is copied as it is: a backup only reads
                if kind in (Kind.FOREIGN, Kind.EMPTY):
                    check_database(src, str(source), create=False)  # raises NotMapwatchDatabase
                dst = sqlite3.connect(tmp)
                try:
                    # pages=-1 (the default): the whole copy in one step, inside one read
                    # transaction. In WAL mode that never blocks the writer, and the copy cannot
                    # be restarted over and over by a busy writer as a stepped backup could.
                    src.backup(dst)
                    dst.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
                    check = one_column(dst, "PRAGMA integrity_check")
                    if check != ["ok"]:
                        raise ValueError(f"the copy failed its integrity check: {check[0]}")
                except sqlite3.DatabaseError:
                    # SQLite reports a full disk as "database or disk is full", or as an I/O
                    # error when there is no room for the copy's shared-memory file: told
                    # apart by the space left while the copy is still there.
                    full = free_bytes(target.parent) < LOW_SPACE
                    raise
                finally:
                    dst.close()
            finally:
                src.close()
    except sqlite3.DatabaseError as e:
        _remove_side_files(tmp_name)
        if full:
            raise OSError(errno.ENOSPC, f"no space left on the disk for the backup; nothing was written "
                                        f"({e})", str(target.parent)) from None
        raise
    except BaseException:
        _remove_side_files(tmp_name)
        raise
    return target.stat().st_size


def _remove_side_files(tmp_name: str) -> None:
    """The temporary copy's journal, WAL and shared memory: a failed copy leaves none behind
    (the temporary file itself is removed by `replacing`)."""
    if tmp_name:
        for suffix in SIDE_FILES:
            Path(tmp_name + suffix).unlink(missing_ok=True)
