"""The feeds' commands: refresh, publish, serve. Heavy imports happen inside them; the options
they share with `run` are in mapwatch.cli.options."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Coroutine, Sequence
from typing import Any

from mapwatch.cli.options import (
    base_arg,
    base_url,
    given_base_url,
    host,
    listen_arg,
    out_arg,
    out_dir,
    port,
    source,
    source_arg,
)
from mapwatch.store import settings
from mapwatch.store.environment import of_command
from mapwatch.store.errors import EXIT_OK, EXIT_REJECTED
from mapwatch.store.settings_table import DEFAULT_HOST, DEFAULT_PORT

# publish and refresh write links to the default address when no base URL is given (the default
# port, not $PORT: those commands serve nothing).
DEFAULT_BASE = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"


def _limit(p: argparse.ArgumentParser) -> None:
    p.add_argument("--limit", type=int, default=100, metavar="N", help="entries per feed (default: 100)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "refresh", help="one tick: read the source, store what changed, republish the feeds",
        description="Read the source (a folder of pages, or the map's URL), store what changed with "
                    "new-citation events, and republish the feeds that changed. Exit 0: all read; "
                    "1: some pages rejected or not fetched (the rest stored); 2: usage error.")
    source_arg(p)
    p.add_argument("--budget", type=int, default=None, metavar="N",
                   help="HTTP source: pages fetched at most in this tick (default: 500)")
    out_arg(p)
    base_arg(p, DEFAULT_BASE)
    _limit(p)
    p.set_defaults(func=cmd_refresh)

    p = sub.add_parser("publish", help="write the Atom feeds, feeds.opml and index.html into a folder")
    out_arg(p)
    base_arg(p, DEFAULT_BASE)
    _limit(p)
    p.add_argument("--papers", choices=("tracked", "all"), default="tracked",
                   help="paper feeds and pages written: those of tracked papers (default; the feed server "
                        "builds the others on demand), or all of them, for a plain web server")
    p.set_defaults(func=cmd_publish)

    p = sub.add_parser("serve", help="publish the feeds, then serve the folder over HTTP")
    out_arg(p)
    listen_arg(p)
    base_arg(p, "http://<host>:<port>")
    _limit(p)
    p.set_defaults(func=cmd_serve)
    # `mapwatch run` (feeds, scheduler and the bot in one process) lives in mapwatch/cli/run.py.


def limit(args: argparse.Namespace) -> int:
    return settings.bounded_int(args.limit, "--limit", 1, settings.MAX_FEED_ENTRIES)


def cmd_refresh(args: argparse.Namespace) -> int:
    from mapwatch.feeds.publish import publish
    from mapwatch.store.clock import utc_now
    from mapwatch.store.database.db import open_db
    from mapwatch.store.priority import lower_priority_if_asked
    from mapwatch.store.progress import CrawlProgress
    from mapwatch.store.questions.direction_pagerank import update_direction_ranks
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.sources.refresh import refresh
    from mapwatch.store.subscriptions.tracking import tracked_paper_ids

    # Every setting is checked before the database is opened: a typo changes nothing.
    the_source, folder, url, entries = source(args), out_dir(args), base_url(args), limit(args)
    if args.budget is not None:
        settings.bounded_int(args.budget, "--budget", 1, settings.MAX_BUDGET)
    env = of_command(args)
    lower_priority_if_asked(env.nice_steps(None))  # $MAPWATCH_BACKGROUND_NICE (docs/configuration.md, "Configuration")
    deadline = env.deadline_seconds()  # $MAPWATCH_TICK_DEADLINE (a bad value: exit 2 before anything is read)
    whole_every = env.ranks_whole_every()  # $MAPWATCH_RANKS_WHOLE_EVERY
    options = HttpOptions(deadline=deadline) if args.budget is None else HttpOptions(budget=args.budget,
                                                                                    deadline=deadline)
    db = open_db(args.db)
    progress = CrawlProgress()
    try:  # as `mapwatch run`'s tick: the tracked papers first, then the directions' ranks
        report = refresh(db, the_source, options=options, progress=progress, priority=tracked_paper_ids(db))
        update_direction_ranks(db, utc_now(), whole_every=whole_every)
    finally:
        progress.close()
    _listed("rejected", report.rejected, report.rejected_total, " (all in the ingest_errors table)")
    _listed("not fetched (stored data kept)", report.failed, report.failed_total)
    if report.crawl is not None:
        _listed("skipped by robots.txt", report.crawl.robots_skipped_urls, report.crawl.robots_skipped)
    for note in report.notes:
        print(f"note: {note}", file=sys.stderr)
    print(report.summary())
    print(publish(db, folder, url, limit=entries).summary())
    return EXIT_REJECTED if report.rejected or report.failed else EXIT_OK


def cmd_publish(args: argparse.Namespace) -> int:
    from mapwatch.feeds.publish import publish
    from mapwatch.store.database.db import open_db

    folder, url, entries = out_dir(args), base_url(args), limit(args)
    db = open_db(args.db, create=False)
    report = publish(db, folder, url, limit=entries, papers=args.papers)
    print(report.summary())
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> Coroutine[Any, Any, None]:
    import asyncio

    from mapwatch.feeds.publish import publish
    from mapwatch.feeds.serving.connections import limits_from_env
    from mapwatch.feeds.serving.ondemand import PaperCache
    from mapwatch.feeds.serving.server import default_base_url, start_server
    from mapwatch.store.database.db import open_db, require_db

    the_port, folder, given, entries = port(args), out_dir(args), given_base_url(args), limit(args)
    host(args)
    require_db(args.db)  # before listening: serve never creates a database
    env = of_command(args)
    limits = limits_from_env(env)  # $MAPWATCH_HEADER_TIMEOUT, _MAX_CONNECTIONS, _NOT_FOUND_BURST
    admin_at = env.admin_address()  # $MAPWATCH_ADMIN_LISTEN: /metrics there, not on the public port
    database = args.db or env.database()  # its size on /metrics; its replica's lag only with --db, as ever

    async def main() -> None:
        from mapwatch.feeds.serving.metrics import Metrics, configured_replica_lag
        from mapwatch.feeds.serving.server import METRICS_PATH, start_admin_server

        papers = PaperCache(require_db(args.db), "", entries)  # paper feeds and pages on demand
        metrics = Metrics(database, replica_lag=configured_replica_lag(args.db, env.replica_url()) if args.db else None)
        runner, bound = await start_server(folder, args.host, the_port, papers=papers, ready=False,
                                           limits=limits, metrics=metrics, admin=admin_at is None)
        admin = None
        try:
            if admin_at is not None:
                admin, admin_port = await start_admin_server(admin_at[0], admin_at[1], None, metrics)
                print(f"Metrics: {default_base_url(admin_at[0], admin_port)}{METRICS_PATH}", flush=True)
            url = given or default_base_url(args.host, bound)
            papers.settle(url, entries)
            db = open_db(args.db, create=False)
            try:
                report = await asyncio.to_thread(publish, db, folder, url, limit=entries)
            finally:
                db.close()
            await runner.open()  # 503 until now: nothing from the folder an earlier publish left
            print(report.summary())
            print(f"Serving {folder} at {url}/ (feeds.opml lists every direction feed). Ctrl-C stops.",
                  flush=True)
            await asyncio.Event().wait()
        finally:
            await runner.cleanup()
            if admin is not None:
                await admin.cleanup()

    return main()  # mapwatch.cli runs it until a signal


def _listed(label: str, shown: Sequence[object], total: int, where: str = "") -> None:
    """One stderr line per listed item, then how many more the report only counted."""
    for item in shown:
        print(f"{label}: {item}", file=sys.stderr)
    if total > len(shown):
        print(f"{label}: {total - len(shown):,} more{where}", file=sys.stderr)
