"""Administration commands: `mapwatch backup`."""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
from pathlib import Path

from bot.cli import EXIT_OK, EXIT_USAGE, db_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "backup", help="copy the database to FILE, safely while mapwatch runs",
        description="Copy the database with SQLite's online backup API: a consistent snapshot, "
                    "taken while the bot, the refresh or an ingest keep writing. The copy is "
                    "checked (PRAGMA integrity_check) and then moved into place, so FILE is "
                    "never left half-written.")
    p.add_argument("file", metavar="FILE", help="where to write the copy (replaced if it exists)")
    db_arg(p)
    p.set_defaults(func=cmd_backup)


def backup_database(source: str | Path, target: str | Path) -> int:
    """Copy `source` to `target` (atomically replaced); returns the copy's size in bytes.
    Raises ValueError for a missing source or a target that is the source itself."""
    source, target = Path(source), Path(target)
    if not source.is_file():
        raise ValueError(f"{source}: no such database")
    if target.exists() and target.resolve() == source.resolve():
        raise ValueError(f"{target}: the backup must not overwrite the database itself")
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        src = sqlite3.connect(source)
        try:
            src.execute("PRAGMA busy_timeout = 10000")
            dst = sqlite3.connect(tmp)
            try:
                # pages=-1 (the default): the whole copy in one step, inside one read
                # transaction. In WAL mode that never blocks the writer, and the copy cannot
                # be restarted over and over by a busy writer as a stepped backup could.
                src.backup(dst)
                dst.execute("PRAGMA journal_mode = DELETE")  # one self-contained file
                check = dst.execute("PRAGMA integrity_check").fetchall()
                if check != [("ok",)]:
                    raise ValueError(f"the copy failed its integrity check: {check[0][0]}")
            finally:
                dst.close()
        finally:
            src.close()
        os.replace(tmp, target)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return target.stat().st_size


def cmd_backup(args: argparse.Namespace) -> int:
    from store.db import default_db_path

    source = args.db or default_db_path()
    try:
        size = backup_database(source, args.file)
    except ValueError as e:
        print(f"mapwatch: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"Backed up {source} to {args.file} ({size:,} bytes).")
    return EXIT_OK
