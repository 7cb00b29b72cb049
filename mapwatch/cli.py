"""The `mapwatch` command: one entry point above the layers.

It owns `main`, the exit statuses (README, "Exit status"), `--db`, signal handling, the
environment (read once at start: store.environment) and the subcommand registry. Each
command module adds its commands through one `register(subparsers)` (mapwatch.store.cli,
mapwatch.feeds.cli, the bot's cli_* modules, and `run`, which composes the layers, from
mapwatch.cli_run) and imports heavy libraries only inside its command functions, so
`mapwatch --help` and `mapwatch ingest` start without loading discord or networkx. A
command returns its exit status, or a coroutine for a service that runs until it ends or a
signal stops it (`serve`, `run`).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sqlite3
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

from mapwatch.store.errors import EXIT_OK, EXIT_REJECTED, EXIT_USAGE

# The command modules, in the order their commands are listed by `mapwatch --help`.
COMMAND_MODULES = ["mapwatch.store.cli", "mapwatch.feeds.cli", "mapwatch.cli_enrich", "mapwatch.bot.cli_ask",
                   "mapwatch.cli_run",
                   "mapwatch.bot.cli_sync", "mapwatch.bot.cli_graph", "mapwatch.bot.cli_webhook"]

Outcome = int | Coroutine[Any, Any, None]


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser: every command takes `--db FILE` (README, "Usage")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.add_argument("--db", metavar="FILE",
                          help="SQLite database (default: $MAPWATCH_DB, else ./mapwatch.db)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mapwatch",
        description="Follow a citation map: store its pages with history, publish feeds, "
                    "answer and alert in Discord.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=CommandParser)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


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


def run_until_signal(service: Coroutine[Any, Any, None]) -> int:
    """Run a service until it ends or SIGINT/SIGTERM arrives; exit 0 on a signal."""
    import asyncio
    import contextlib
    import logging
    import signal

    from mapwatch.store.environment import current

    try:
        level = current().log_level_name()
    except BaseException:
        service.close()  # never started
        raise
    from mapwatch.log_format import configure, log_format

    try:
        kind = log_format()
    except Exception:
        service.close()  # never started
        raise
    configure(level, kind)

    async def main() -> None:
        task = asyncio.ensure_future(service)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, task.cancel)
        try:
            await task
        except asyncio.CancelledError:
            if kind == "json":  # one JSON object per line, the last one too
                logging.getLogger("mapwatch").warning("mapwatch: stopped")
            else:
                print("mapwatch: stopped", file=sys.stderr)

    try:
        asyncio.run(main())
    except OSError as e:  # e.g. the port is taken, a full disk: a failure, not a usage error
        print(f"mapwatch: error: {e.strerror or e}", file=sys.stderr)
        return EXIT_REJECTED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    from mapwatch.store.environment import Environment, installed
    from mapwatch.store.errors import BadSetting, FetchError, MapwatchError, NoDatabase, NotMapwatchDatabase

    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], Outcome] = args.func
    try:
        with installed(Environment.read()):  # every setting of the environment, read once
            outcome = func(args)
            return outcome if isinstance(outcome, int) else run_until_signal(outcome)
    except (FetchError, NoDatabase, NotMapwatchDatabase, BadSetting) as e:
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
