"""The store's commands: `mapwatch ingest`, `stats`, `backup`, `replica` and `compact`. Heavy imports happen
inside them."""

from __future__ import annotations

import argparse
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

    p = sub.add_parser(
        "compact", help="rewrite the database without its free pages (stop mapwatch first)",
        description="Rewrite the database in one piece (SQLite's VACUUM): the pages that migrations and "
                    "deletions freed inside the file go back to the disk (a database made before migrations "
                    "0047 and 0048 has 1-2 KB of them a paper). Atomic: interrupted, the file is as it was. "
                    "Needs the database alone (stop mapwatch run, serve, refresh and ingest first) and free "
                    "disk beside it for a copy and a journal of it (docs/operations.md, \"Compacting the "
                    "database\"). Exit 0: compacted; 1: the database is in use or the disk too full (nothing "
                    "changed); 2: usage error.")
    p.add_argument("--page-size", type=_page_size, default=None, metavar="BYTES",
                   help="rewrite it in pages of this many bytes: a power of two from 512 to 65536 (default: the "
                        "size it has; new databases have 4096)")
    p.set_defaults(func=cmd_compact)


def _page_size(text: str) -> int:
    from mapwatch.store.database.compact import PAGE_SIZES

    if not text.isdigit() or int(text) not in PAGE_SIZES:
        raise argparse.ArgumentTypeError(f"a power of two from 512 to 65536, not {text!r}")
    return int(text)


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
    from mapwatch.store.database.compact import room
    from mapwatch.store.database.db import open_db
    from mapwatch.store.questions.queries import map_stats

    db = open_db(args.db, create=False)
    s = map_stats(db)
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
    r = room(db)
    free = (f" ({r.free_bytes / 1e6:,.1f} MB of it free pages: mapwatch compact gives them back)"
            if r.worth_compacting else "")
    print(f"database:      {r.file_bytes / 1e6:,.1f} MB{free}")
    return EXIT_OK


def cmd_backup(args: argparse.Namespace) -> int:
    from mapwatch.store.database.backup import backup_database
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


def cmd_compact(args: argparse.Namespace) -> int:
    import time

    from mapwatch.store.database.compact import compact, file_bytes
    from mapwatch.store.database.db import default_db_path, require_db

    target = Path(require_db(args.db or default_db_path()))  # a missing --db: exit 2, nothing made
    print(f"Compacting {target} ({file_bytes(target) / 1e6:,.1f} MB); a GB takes 5 to 15 s.", flush=True)
    started = shown = time.monotonic()

    def alive() -> None:  # a line every 30 s of a long rewrite
        nonlocal shown
        if (now := time.monotonic()) >= shown + 30:
            shown = now
            print(f"  still compacting: {now - started:.0f} s", flush=True)

    done = compact(target, args.page_size, on_progress=alive)
    print(f"Compacted {target}: {done.bytes_before / 1e6:,.1f} MB -> {done.bytes_after / 1e6:,.1f} MB, pages of "
          f"{done.page_size_before:,} -> {done.page_size_after:,} bytes, in {done.seconds:.1f} s.")
    return EXIT_OK
