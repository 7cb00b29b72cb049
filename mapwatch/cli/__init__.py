"""The `mapwatch` command: one entry point above the layers, and the only package that parses
a command line (no module of store/, feeds/ or bot/ imports argparse).

It owns `main`, which ends a command with the exit status its error's class carries (store/errors.py;
docs/getting-started.md, "Exit status"), signal handling, the environment
(read once at start: store.environment) and the list of command modules, imported here in the
order `mapwatch --help` lists their commands. `--db` and the options several commands share
are defined once, in mapwatch.cli.options. Each command module (store: ingest, stats, backup,
replica; feeds: refresh, publish, serve; enrich; ask; run, which composes the layers; sync;
graph; export; webhook) adds its commands through one `register(subparsers)` and imports heavy
libraries only inside its command functions, so `mapwatch --help` and `mapwatch ingest` start
without loading discord or networkx. A command returns its exit status, or a coroutine for a
service that runs until it ends or a signal stops it (`serve`, `run`).

mapwatch/cli may import (mapwatch/layers.py): store/, feeds/, bot/, mapwatch/*.py,
mapwatch/service.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

from mapwatch.cli import ask, enrich, export, feeds, graph, run, store, sync, webhook
from mapwatch.cli.options import CommandParser
from mapwatch.store.errors import EXIT_OK, EXIT_REJECTED, EXIT_USAGE

if TYPE_CHECKING:
    from mapwatch.store.environment import Environment

# The command modules, in the order their commands are listed by `mapwatch --help`.
COMMAND_MODULES = (store, feeds, enrich, ask, run, sync, graph, export, webhook)

Outcome = int | Coroutine[Any, Any, None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mapwatch",
        description="Follow a citation map: store its pages with history, publish feeds, "
                    "answer and alert in Discord.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True, parser_class=CommandParser)
    for module in COMMAND_MODULES:
        module.register(sub)
    return parser


# SQLite's primary result codes that mean the --db given is not a database it can open.
_SQLITE_CANTOPEN, _SQLITE_NOTADB = 14, 26
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_FULL = 5, 6, 13


def database_error(e: sqlite3.DatabaseError) -> tuple[str, int]:
    """One line and the exit status for a database error: 2 when the --db is not a database
    that can be opened (a usage error), 1 for a failure while working (docs/getting-started.md, "Exit status")."""
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


# After SIGINT/SIGTERM, the time a service has to stop (its tasks cancelled, its connections
# closed, its worker threads done) before the process exits anyway.
STOP_GRACE_SECONDS = 5.0


class StopDeadline:
    """The end of a service stopped by a signal: it says "mapwatch: stopped" once, and if the
    process still runs `grace` seconds after the signal (a worker thread busy in C code, such
    as a page parse, cannot be interrupted, and Python would wait for it at exit), it flushes
    its output and ends the process with exit status 0. Nothing is lost: SQLite rolls an
    unfinished transaction back, and a file being written is a temporary one (store/atomic.py)
    until it is renamed."""

    def __init__(self, grace: float = STOP_GRACE_SECONDS, json_logs: bool = False) -> None:
        import threading

        self.grace = grace
        self.json_logs = json_logs  # $MAPWATCH_LOG_FORMAT=json: the stop line is a JSON record too
        self._lock = threading.Lock()
        self._timer: threading.Timer | None = None
        self._said = False

    def start(self) -> None:
        """A signal arrived: the countdown starts (once; a second signal does not extend it)."""
        import threading

        with self._lock:
            if self._timer is None:
                self._timer = threading.Timer(self.grace, self._expire)
                self._timer.daemon = True
                self._timer.start()

    def say_stopped(self) -> None:
        with self._lock:
            if not self._said:
                self._said = True
                if self.json_logs:
                    import logging

                    logging.getLogger("mapwatch").warning("mapwatch: stopped")
                else:
                    print("mapwatch: stopped", file=sys.stderr)

    def _expire(self) -> None:
        import logging
        import threading

        busy = [t.name for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon
                and t is not threading.main_thread()]
        logging.getLogger("mapwatch").warning("still running %.0f s after the signal (%s): exiting without waiting",
                                              self.grace, ", ".join(busy) or "the service")
        self.say_stopped()
        for handler in logging.getLogger().handlers:
            with contextlib.suppress(Exception):
                handler.flush()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        os._exit(EXIT_OK)


def run_until_signal(service: Coroutine[Any, Any, None], env: Environment,
                     grace: float = STOP_GRACE_SECONDS) -> int:
    """Run a service until it ends or SIGINT/SIGTERM arrives; exit 0 on a signal, within
    `grace` seconds of it whatever the service's threads are doing (StopDeadline). Its logs
    are as `env` says ($MAPWATCH_LOG_LEVEL, $MAPWATCH_LOG_FORMAT), hiding `env`'s secrets."""
    import asyncio
    import signal

    try:
        level = env.log_level_name()
    except BaseException:
        service.close()  # never started
        raise
    from mapwatch.log_format import configure

    try:
        kind = env.log_format_name()  # $MAPWATCH_LOG_FORMAT
    except Exception:
        service.close()  # never started
        raise
    configure(level, kind, env.secret_values())

    deadline = StopDeadline(grace, json_logs=kind == "json")

    async def main() -> None:
        task = asyncio.ensure_future(service)
        loop = asyncio.get_running_loop()

        def stop() -> None:
            deadline.start()
            task.cancel()

        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, stop)
        try:
            await task
        except asyncio.CancelledError:
            deadline.say_stopped()

    try:
        asyncio.run(main())
    except OSError as e:  # e.g. the port is taken, a full disk: a failure, not a usage error
        print(f"mapwatch: error: {e.strerror or e}", file=sys.stderr)
        return EXIT_REJECTED
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    from mapwatch.store.environment import Environment, installed
    from mapwatch.store.errors import MapwatchError

    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], Outcome] = args.func
    try:
        env = Environment.read()  # every setting of the environment, read once
        args.environment = env  # passed in to the command (store.environment.of_command)
        with installed(env):  # and current() for the few deep readers
            outcome = func(args)
            return outcome if isinstance(outcome, int) else run_until_signal(outcome, env)
    except MapwatchError as e:  # its class says the status: 2 for a usage error, 1 for a failure (store/errors.py)
        print(f"mapwatch: error: {e}", file=sys.stderr)
        return e.exit_status
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
