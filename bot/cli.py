"""The `mapwatch` command. Each subcommand imports what it needs when it runs, so
`mapwatch --help` and `mapwatch ingest` start without loading discord or networkx."""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence

EXIT_OK, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2

# Modules that add subcommands: each has `register(subparsers)`, and imports heavy
# libraries only inside its command functions.
COMMAND_MODULES = ["bot.cli", "feeds.cli", "bot.cli_admin", "bot.cli_bot", "bot.cli_graph"]


def db_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--db", metavar="FILE",
                   help="SQLite database (default: $MAPWATCH_DB, else ./mapwatch.db)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mapwatch",
        description="Follow a citation map: store its pages with history, publish feeds, "
                    "answer and alert in Discord.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def register(sub: argparse._SubParsersAction) -> None:
    """The store's commands: ingest, stats."""
    p = sub.add_parser("ingest", help="store map pages from files or folders",
                       description="Parse map pages and store them with their history. "
                                   "Folders are searched for *.txt and *.md pages. "
                                   "Exit 0: all stored; 1: some pages rejected (the rest stored); "
                                   "2: usage error.")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="page files or folders (default: the bundled seeds)")
    db_arg(p)
    p.add_argument("--force", action="store_true",
                   help="re-read files even if their size and mtime are unchanged")
    p.add_argument("--quiet", "-q", action="store_true", help="print only rejections")
    p.set_defaults(func=cmd_ingest)

    p = sub.add_parser("stats", help="what the database holds")
    db_arg(p)
    p.set_defaults(func=cmd_stats)


class ProgressBar:
    """A one-line progress bar on a terminal; silent elsewhere or for short runs."""

    def __init__(self, stream=sys.stderr, min_total: int = 200) -> None:
        self.stream = stream
        self.enabled = stream.isatty()
        self.min_total = min_total
        self.last = -1

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total < self.min_total:
            return
        pct = done * 100 // total
        if pct == self.last and done != total:
            return
        self.last = pct
        bar = "#" * (pct // 4)
        self.stream.write(f"\r[{bar:<25}] {done:,}/{total:,} pages")
        if done == total:
            self.stream.write("\n")
        self.stream.flush()


def cmd_ingest(args: argparse.Namespace) -> int:
    from store.db import open_db
    from store.fetch import SEEDS_DIR
    from store.ingest import ingest_paths
    from store.queries import map_stats

    paths = args.paths or [SEEDS_DIR]
    db = open_db(args.db)
    report = ingest_paths(db, paths, progress=ProgressBar(), force=args.force)
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
    from store.db import open_db
    from store.queries import map_stats

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


# SQLite's primary result codes that mean the --db given is not a database it can open.
_SQLITE_CANTOPEN, _SQLITE_NOTADB = 14, 26
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_FULL = 5, 6, 13


def database_error(e: sqlite3.DatabaseError) -> tuple[str, int]:
    """One line and the exit status for a database error: 2 when the --db is not a database
    that can be opened (a usage error), 1 for a failure while working (README, "Exit status")."""
    code = (getattr(e, "sqlite_errorcode", None) or 0) & 0xFF
    if code in (_SQLITE_BUSY, _SQLITE_LOCKED):
        return ("mapwatch: error: the database is locked: another process kept it busy past the busy "
                "timeout ($MAPWATCH_BUSY_TIMEOUT); nothing was lost, try again", EXIT_REJECTED)
    if code == _SQLITE_FULL:
        return "mapwatch: error: the database or disk is full; nothing was half-written", EXIT_REJECTED
    if code in (_SQLITE_CANTOPEN, _SQLITE_NOTADB):
        return f"mapwatch: database error: {e}", EXIT_USAGE
    return f"mapwatch: database error: {e}", EXIT_REJECTED


def os_error(e: OSError) -> str:
    """An operating system failure (a full disk, a network failure) as one line."""
    where = f": {e.filename}" if getattr(e, "filename", None) else ""
    return f"mapwatch: error: {e.strerror or e}{where}"


def main(argv: Sequence[str] | None = None) -> int:
    from store.errors import FetchError, MapwatchError, NoDatabase

    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (FetchError, NoDatabase) as e:
        print(f"mapwatch: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except MapwatchError as e:
        print(f"mapwatch: error: {e}", file=sys.stderr)
        return EXIT_REJECTED
    except sqlite3.DatabaseError as e:
        line, code = database_error(e)
        print(line, file=sys.stderr)
        return code
    except KeyboardInterrupt:
        print("mapwatch: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader went away (`mapwatch ask ... | head`): stop quietly, as Unix tools do.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except OSError as e:  # a full disk, a network failure: not a usage error
        print(os_error(e), file=sys.stderr)
        return EXIT_REJECTED


if __name__ == "__main__":
    sys.exit(main())
