"""The feeds' half of `mapwatch run`: the scheduler and the feed server on one loop.

`run_services` wires them from the RunSettings (mapwatch.service.settings);
mapwatch.service.run (`run_all`) runs it beside the Discord bot, passing the tick's deliver
steps (the next refresh's time, the bot's alerts), its enrich step and the tracked papers
as the refresh's fetch priority.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from mapwatch.feeds.serving.server import default_base_url
from mapwatch.service.schedule import parse_schedule, start_scheduler
from mapwatch.service.settings import RunSettings
from mapwatch.service.tick import AfterRefresh, BeforeAlerts, Publish, Refresh, Tick
from mapwatch.store.sources.http_client import HttpOptions

if TYPE_CHECKING:
    from sqlite_utils import Database

    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.metrics import Metrics


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
    from mapwatch.store.questions.queries import has_papers

    db = open_db(db_path)
    try:
        if has_papers(db):
            return False
        ingest_paths(db, [SEEDS_DIR])
        return True
    finally:
        db.close()


def _publish_now(db_path: str | Path, step: Publish, port: int) -> Serving:
    from mapwatch.feeds.build import direction_feed_path
    from mapwatch.store.clock import utc_now
    from mapwatch.store.database.db import open_db
    from mapwatch.store.questions import feed_queries

    db = open_db(db_path)
    try:
        step(db, utc_now)
        dirs = feed_queries.directions(db)
    finally:
        db.close()
    base = step.base_url.rstrip("/")
    return Serving(step.base_url, port, f"{base}/", f"{base}/feeds.opml",
                   tuple((d.name, f"{base}/{direction_feed_path(d.slug)}") for d in dirs))


def describe(s: Serving) -> str:
    lines = [f"Feeds: {s.index}", f"  OPML (all directions): {s.opml}"]
    lines += [f"  {name}: {url}" for name, url in s.direction_feeds]
    return "\n".join(lines)


async def run_services(settings: RunSettings, deliver: Sequence[AfterRefresh] = (), *,
                       enrich: AfterRefresh | None = None, before_alerts: BeforeAlerts | None = None,
                       priority: Callable[[Database], Sequence[str]] | None = None,
                       say: Callable[[str], None] = print, stop: asyncio.Event | None = None,
                       health: Health | None = None, metrics: Metrics | None = None) -> None:
    """Serve the feeds (and /healthz, /metrics) and refresh them on schedule until `stop` is set
    (or forever): each tick refreshes (the `priority` papers first), publishes, then runs the
    `deliver` steps and `enrich` (mapwatch.service.tick). `health`, `metrics`: the process's
    (feeds/serving/health.py, metrics.py); default: new ones."""
    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.ondemand import PaperCache
    from mapwatch.feeds.serving.server import HEALTH_PATH, METRICS_PATH, start_admin_server, start_server
    from mapwatch.store.database.db import require_db

    health = health or Health(settings.db_path, replica=settings.replica)
    from mapwatch.feeds.serving.metrics import Metrics, configured_replica_lag

    metrics = metrics or Metrics(settings.db_path, health,
                                 replica_lag=configured_replica_lag(settings.db_path, settings.replica))
    trigger = parse_schedule(settings.refresh)  # a bad schedule fails before anything starts
    if await asyncio.to_thread(seed_if_empty, settings.db_path):
        say("Empty database: stored the bundled seed pages.")
    papers = PaperCache(require_db(settings.db_path), "")  # paper feeds and pages on demand
    admin_at = settings.admin  # $MAPWATCH_ADMIN_LISTEN: /healthz and /metrics there, not here
    runner, port = await start_server(settings.out_dir, settings.host, settings.port, health, papers, ready=False,
                                      limits=settings.limits, metrics=metrics, admin=admin_at is None)
    admin = None
    try:
        if admin_at is not None:
            admin, admin_port = await start_admin_server(admin_at[0], admin_at[1], health, metrics)
            say(f"Health and metrics: {default_base_url(admin_at[0], admin_port)}{HEALTH_PATH}, {METRICS_PATH}")
        base_url = settings.base_url or default_base_url(settings.host, port)
        tick = Tick(settings.db_path, Refresh(settings.source, priority, HttpOptions(deadline=settings.tick_deadline),
                                              whole_every=settings.ranks_whole_every),
                    Publish(settings.out_dir, base_url), deliver, enrich, nice=settings.nice,
                    before_alerts=before_alerts, before_alerts_seconds=settings.before_alerts)
        papers.settle(base_url, tick.publish.limit)
        serving = await asyncio.to_thread(_publish_now, settings.db_path, tick.publish, port)
        await runner.open()  # 503 (but /healthz) until now: nothing from an earlier publish
        say(describe(serving))
        say(f"Refreshing from {settings.source} ({settings.refresh or 'every 1h'}).")
        scheduler = start_scheduler(tick.run, trigger, run_now=True, health=health, metrics=metrics)
        try:
            await (stop or asyncio.Event()).wait()
        finally:
            scheduler.shutdown(wait=False)
    finally:
        await runner.cleanup()
        if admin is not None:
            await admin.cleanup()
