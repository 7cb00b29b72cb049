"""The feeds' half of `mapwatch run`: the scheduler and the feed server on one loop.

`run_services` wires them; mapwatch.service.run (`run_all`) runs it beside the
Discord bot, passing the bot's after-refresh hooks (alert delivery) and the tracked
papers as the refresh's fetch priority.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mapwatch.feeds.serving.server import default_base_url
from mapwatch.service.schedule import parse_schedule, start_scheduler
from mapwatch.service.tick import AfterRefresh, Tick
from mapwatch.store.settings_table import DEFAULT_PORT

if TYPE_CHECKING:
    from sqlite_utils import Database

    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.metrics import Metrics


@dataclass(frozen=True)
class RunConfig:
    db_path: str | Path | None
    source: str
    out_dir: str | Path
    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    base_url: str | None = None  # None: http://<host>:<port>
    refresh: str | None = None  # $MAPWATCH_REFRESH: interval or cron; None: 1 hour


@dataclass(frozen=True)
class Serving:
    base_url: str
    port: int
    index: str
    opml: str
    direction_feeds: tuple[tuple[str, str], ...]  # (name, url)


def seed_if_empty(db_path: str | Path | None) -> bool:
    """Ingest the bundled seeds into an empty database; True if it did."""
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.pages.files import SEEDS_DIR

    db = open_db(db_path)
    try:
        if db.conn.execute("SELECT count(*) FROM papers").fetchone()[0]:
            return False
        ingest_paths(db, [SEEDS_DIR])
        return True
    finally:
        db.close()


def _publish_now(tick: Tick, port: int) -> Serving:
    from mapwatch.feeds.build import direction_feed_path
    from mapwatch.feeds.publish import publish
    from mapwatch.store.database.db import open_db
    from mapwatch.store.questions import feed_queries

    db = open_db(tick.db_path)
    try:
        publish(db, tick.out_dir, tick.base_url, limit=tick.limit)
        dirs = feed_queries.directions(db)
    finally:
        db.close()
    base = tick.base_url.rstrip("/")
    return Serving(tick.base_url, port, f"{base}/", f"{base}/feeds.opml",
                   tuple((d.name, f"{base}/{direction_feed_path(d.slug)}") for d in dirs))


def describe(s: Serving) -> str:
    lines = [f"Feeds: {s.index}", f"  OPML (all directions): {s.opml}"]
    lines += [f"  {name}: {url}" for name, url in s.direction_feeds]
    return "\n".join(lines)


async def run_services(config: RunConfig, hooks: Sequence[AfterRefresh] = (), *,
                       say: Callable[[str], None] = print, stop: asyncio.Event | None = None,
                       priority: Callable[[Database], Sequence[str]] | None = None,
                       health: Health | None = None, metrics: Metrics | None = None) -> None:
    """Serve the feeds (and /healthz, /metrics) and refresh them on schedule until `stop` is set
    (or forever). `metrics`: the process's (feeds/serving/metrics.py); default: a new one."""
    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.ondemand import PaperCache
    from mapwatch.feeds.serving.server import HEALTH_PATH, METRICS_PATH, start_admin_server, start_server
    from mapwatch.store.database.db import require_db
    from mapwatch.store.environment import current

    health = health or Health(config.db_path)
    from mapwatch.feeds.serving.metrics import Metrics

    metrics = metrics or Metrics(config.db_path, health)
    from mapwatch.feeds.serving.connections import limits_from_env
    from mapwatch.store.sources.http_client import tick_deadline

    trigger = parse_schedule(config.refresh)  # a bad schedule fails before anything starts
    limits = limits_from_env()  # so does a bad $MAPWATCH_HEADER_TIMEOUT or $MAPWATCH_MAX_CONNECTIONS
    tick_deadline()  # or $MAPWATCH_TICK_DEADLINE (each tick reads it)
    if await asyncio.to_thread(seed_if_empty, config.db_path):
        say("Empty database: stored the bundled seed pages.")
    papers = PaperCache(require_db(config.db_path), "")  # paper feeds and pages on demand
    admin_at = current().admin_address()  # $MAPWATCH_ADMIN_LISTEN: /healthz and /metrics there, not here
    runner, port = await start_server(config.out_dir, config.host, config.port, health, papers, ready=False,
                                      limits=limits, metrics=metrics, admin=admin_at is None)
    admin = None
    try:
        if admin_at is not None:
            admin, admin_port = await start_admin_server(admin_at[0], admin_at[1], health, metrics)
            say(f"Health and metrics: {default_base_url(admin_at[0], admin_port)}{HEALTH_PATH}, {METRICS_PATH}")
        base_url = config.base_url or default_base_url(config.host, port)
        tick = Tick(config.db_path, config.source, config.out_dir, base_url, hooks, priority=priority)
        papers.settle(base_url, tick.limit)
        serving = await asyncio.to_thread(_publish_now, tick, port)
        await runner.open()  # 503 (but /healthz) until now: nothing from an earlier publish
        say(describe(serving))
        say(f"Refreshing from {config.source} ({config.refresh or 'every 1h'}).")
        scheduler = start_scheduler(tick, trigger, run_now=True, health=health, metrics=metrics)
        try:
            await (stop or asyncio.Event()).wait()
        finally:
            scheduler.shutdown(wait=False)
    finally:
        await runner.cleanup()
        if admin is not None:
            await admin.cleanup()
