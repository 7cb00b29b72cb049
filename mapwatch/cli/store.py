"""The store's commands: `mapwatch ingest`, `stats`, `backup` and `replica`. Heavy imports happen inside them."""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

from mapwatch.store.errors import EXIT_OK, EXIT_REJECTED, EXIT_USAGE


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The store's commands: ingest, stats, backup. `--db` is added to each by mapwatch.cli.options."""
    p = sub.add_parser("ingest", help="store map pages from files or folders",
                       description="Parse map pages and store them with their history. "
                                   "Folders are searched for *.txt, *.md, *.html and *.htm pages. "
                                   "Exit 0: all stored; 1: some pages rejected (the rest stored); "
                                   "2: usage error.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="page files or folders (default: the bundled seeds)")
    p.add_argument("--force", action="store_true",
                   help="re-read files even if their size and mtime are unchanged")
    p.add_argument("--quiet", "-q", action="store_true", help="print only rejections")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("stats", help="what the database holds")
    p.set_defaults(func=cmd_stats)

    p = sub.add_parser(
        "backup", help="copy the database to FILE, safely while mapwatch runs",
        description="Copy the database with SQLite's online backup API: a consistent snapshot, "
                    "taken while the bot, the refresh or an ingest keep writing. The copy is "
                    "checked (PRAGMA integrity_check) and then moved into place, so FILE is "
                    "never left half-written. The key that seals the webhook URLs, when the "
                    "database has a key file, is copied beside it as FILE.webhook-key (mode 0600): "
                    "restore both to keep the webhooks (docs/operations.md).")
    p.add_argument("file", metavar="FILE", help="where to write the copy (replaced if it exists)")
    p.set_defaults(func=cmd_backup)

    p = sub.add_parser(
        "replica", help="is a Litestream replica configured ($MAPWATCH_REPLICA) and current?",
        description="Tell whether the database's Litestream replica ($MAPWATCH_REPLICA) is configured "
                    "and current (docs/operations.md). Exit 0: current; 1: not configured, or behind "
                    "by more than a minute.")
    p.set_defaults(func=cmd_replica)


def cmd_ingest(args: argparse.Namespace) -> int:
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.environment import of_command
    from mapwatch.store.pages.files import SEEDS_DIR
    from mapwatch.store.priority import lower_priority_if_asked
    from mapwatch.store.progress import CrawlProgress
    from mapwatch.store.questions.queries import map_stats

    lower_priority_if_asked(of_command(args).nice_steps(None))  # $MAPWATCH_BACKGROUND_NICE (docs/configuration.md)
    paths = args.paths or [SEEDS_DIR]
    db = open_db(args.db)
    progress = CrawlProgress()
    try:
        report = ingest_paths(db, paths, progress=progress, force=args.force)
    finally:
        progress.close()
    for r in report.rejected:
        print(f"rejected: {r}", file=sys.stderr)
    if not args.quiet:
        s = map_stats(db)
        saved = report.saved
        print(f"Read {report.pages_read:,} pages: {report.stored:,} stored, "
              f"{report.unchanged:,} unchanged, {saved.stale:,} older than stored, "
              f"{len(report.rejected):,} rejected.")
        print(f"Map: {s.papers:,} papers ({s.papers_with_page:,} with pages), "
              f"{s.citations:,} citations, {s.directions:,} directions; "
              f"{saved.new_citations:,} new citations.")
    return EXIT_REJECTED if report.rejected else EXIT_OK


def cmd_stats(args: argparse.Namespace) -> int:
    from mapwatch.store.database.db import open_db
    from mapwatch.store.questions.queries import map_stats

    s = map_stats(open_db(args.db, create=False))
    print(f"papers:        {s.papers:,} ({s.papers_with_page:,} with pages, "
          f"{s.papers - s.papers_with_page:,} seen only in lists)")
    print(f"citations:     {s.citations:,}")
    print(f"directions:    {s.directions:,}")
    print(f"events:        {s.events:,}")
    print(f"data through:  {s.newest_data_through or '-'}")
    print(f"last ingest:   {s.last_ingest_at or 'never'}"
          + (f" from {s.last_ingest_source}" if s.last_ingest_source else ""))
    if s.pages_rejected_now:
        print(f"rejected now:  {s.pages_rejected_now:,} pages (see table ingest_errors)")
    return EXIT_OK


LOW_SPACE = 64 * 1024  # free bytes under which a failed copy is put down to a full disk


def _free_bytes(folder: Path) -> int:
    import os

    st = os.statvfs(folder)
    return st.f_bavail * st.f_frsize


def backup_database(source: str | Path, target: str | Path) -> int:
    """Copy `source` to `target` (atomically replaced); returns the copy's size in bytes.
    Raises ValueError for a missing source or a target it must not write
    (`db_check.output_problem`); NotMapwatchDatabase for a source that is another program's or
    empty (a newer mapwatch's is copied: a backup only reads); OSError (ENOSPC) for a full
    disk, with no temporary file left behind."""
    import errno

    from mapwatch.store.atomic import replacing
    from mapwatch.store.database.db_check import Kind, check_database, database_kind, output_problem
    from mapwatch.store.database.rows import one_column

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
                    full = _free_bytes(target.parent) < LOW_SPACE
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
        from mapwatch.store.database.db_check import SIDE_FILES

        for suffix in SIDE_FILES:
            Path(tmp_name + suffix).unlink(missing_ok=True)


def cmd_backup(args: argparse.Namespace) -> int:
    from mapwatch.store.database.db import default_db_path

    source = args.db or default_db_path()
    try:
        size = backup_database(source, args.file)
    except ValueError as e:
        print(f"mapwatch: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"Backed up {source} to {args.file} ({size:,} bytes).")
    key = backup_key(source, args.file)
    if key:
        print(f"Copied its webhook key to {key} (mode 0600): keep it with the backup, as private as the database.")
    return EXIT_OK


def backup_key(source: str | Path, target: str | Path) -> Path | None:
    """The database's webhook key file copied beside the backup (`<target>.webhook-key`, 0600,
    atomically); None when the database has no key file (no webhooks, or the key lives in
    $MAPWATCH_WEBHOOK_KEY)."""
    from mapwatch.store import secret_box
    from mapwatch.store.atomic import replacing

    src, dst = secret_box.key_path(str(source)), secret_box.key_path(str(target))
    if src is None or dst is None or not src.is_file():
        return None
    with replacing(dst, mode=0o600) as tmp:
        tmp.write_bytes(src.read_bytes())
    return dst


def cmd_replica(args: argparse.Namespace) -> int:
    import time

    from mapwatch.store.database.db import require_db
    from mapwatch.store.database.replica import replica_status
    from mapwatch.store.environment import of_command

    status = replica_status(require_db(args.db), of_command(args).replica_url(), time.time())  # a missing --db: exit 2
    if status is None:
        print("no replica configured: $MAPWATCH_REPLICA is not set (docs/operations.md)")
        return EXIT_REJECTED
    print(status.line())
    return EXIT_OK if status.current else EXIT_REJECTED
