"""`mapwatch compact`: the database rewritten without its free pages, in its page size or another
(docs/operations.md, "Compacting the database").

Migrations that move a big table (0038, 0047, 0048) and deletions leave free pages inside the
file, which SQLite keeps for the map's next rows: at 1,000,000 papers with authors 2 GB of a
9.3 GB file (bench/RESULTS.md, "The compact database, part 9"). The rewrite is SQLite's VACUUM,
in its rollback-journal mode: atomic, so a process killed midway leaves the file as it was (the
journal rolls it back at the next open). It needs the file alone (mapwatch stopped) and free
disk beside it for a copy and a journal of the file.
"""

from __future__ import annotations

import errno
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from mapwatch.store.database.backup import free_bytes
from mapwatch.store.database.db import open_db, require_db
from mapwatch.store.database.rows import scalar
from mapwatch.store.errors import DatabaseInUse

PAGE_SIZES = tuple(2 ** k for k in range(9, 17))  # what SQLite allows: 512 to 65,536
PROGRESS_STEPS = 1_000_000  # SQLite's virtual-machine steps between two calls of `on_progress`


@dataclass(frozen=True)
class Compacted:
    bytes_before: int
    bytes_after: int
    page_size_before: int
    page_size_after: int
    seconds: float


def file_bytes(path: Path) -> int:
    """The database's bytes on disk: the file and its WAL."""
    wal = Path(f"{path}-wal")
    return path.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


@dataclass(frozen=True)
class Room:
    """The database's pages: all of them and the free ones (freed by migrations and deletions,
    kept by SQLite for later rows), in bytes."""
    file_bytes: int
    free_bytes: int

    @property
    def worth_compacting(self) -> bool:
        """A tenth of the file or more is free, and at least 10 MB."""
        return self.free_bytes >= max(10_000_000, self.file_bytes // 10)


def room(db: Database) -> Room:
    conn = db.conn
    size = int(scalar(conn, "PRAGMA page_size"))
    return Room(int(scalar(conn, "PRAGMA page_count")) * size, int(scalar(conn, "PRAGMA freelist_count")) * size)


def _quoted(text: str) -> str:
    return text.replace("'", "''")


def check_room(path: Path, needed: int) -> None:
    """OSError (ENOSPC) naming the folder unless it holds a copy of `needed` bytes and a journal
    of as many (the rewrite writes both beside the database: `compact` points SQLite's
    temporary files there)."""
    folder = path.resolve().parent
    free = free_bytes(folder)
    if free < 2 * needed:
        raise OSError(errno.ENOSPC, f"compacting needs {2 * needed / 1e9:.1f} GB free in {folder} (a copy and a"
                                    f" journal of the database), {free / 1e9:.1f} GB are; nothing was changed")


def compact(path: str | Path, page_size: int | None = None,
            on_progress: Callable[[], None] | None = None) -> Compacted:
    """Rewrite the database at `path` without its free pages, in pages of `page_size` bytes (None:
    the size it has), and put it back in WAL mode. Migrations it lacks are applied first. `on_progress` is called
    every PROGRESS_STEPS of SQLite's steps while the copy is made (a command shows it is alive).
    Raises DatabaseInUse when another process has it open, OSError (ENOSPC) when the disk cannot
    hold the copy; in both cases nothing changed."""
    if page_size is not None and page_size not in PAGE_SIZES:
        raise ValueError(f"page size must be a power of two from 512 to 65536, not {page_size}")
    target = Path(require_db(path))
    open_db(target, create=False).close()  # a mapwatch database, migrated
    before = file_bytes(target)
    conn = sqlite3.connect(target, isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout = 0")
        old_size = int(scalar(conn, "PRAGMA page_size"))
        try:  # out of WAL only when no other connection has the file open
            mode, why = scalar(conn, "PRAGMA journal_mode = DELETE"), ""
        except sqlite3.OperationalError as e:
            mode, why = None, f" ({e})"
        if mode != "delete":
            raise DatabaseInUse(f"{target}: another process has the database open{why}: stop mapwatch (run, serve,"
                                " refresh, ingest) and compact again; nothing was changed")
        try:
            check_room(target, target.stat().st_size)
            started = time.perf_counter()
            # SQLite's copy beside the database, on the disk check_room measured (not in /var/tmp).
            # The setting is the process's, not the connection's: put back after.
            conn.execute(f"PRAGMA temp_store_directory = '{_quoted(str(target.resolve().parent))}'")
            conn.execute(f"PRAGMA page_size = {page_size or old_size}")
            if on_progress is not None:
                conn.set_progress_handler(lambda: on_progress() or 0, PROGRESS_STEPS)
            conn.execute("VACUUM")
            conn.set_progress_handler(None, 0)
            seconds = time.perf_counter() - started
        finally:
            conn.execute("PRAGMA temp_store_directory = ''")
            conn.execute("PRAGMA journal_mode = WAL")
        new_size = int(scalar(conn, "PRAGMA page_size"))
    finally:
        conn.close()
    return Compacted(before, file_bytes(target), old_size, new_size, seconds)
