"""`mapwatch run`: the bot (when DISCORD_TOKEN is set), the refresh scheduler and the feed
server in one asyncio process. The one place that wires them, above the layers it composes:
mapwatch.cli.run builds the RunSettings (mapwatch.service.settings) and calls `run_all`, which
makes the parts from them.

The feeds side (mapwatch.service.services: `run_services`) serves and refreshes; the tick's
deliver steps are `NextRefresh` (for /info) and the bot's alert delivery (`BotSide`, whose
client runs beside it, supervised). Alerts are also polled from the event log, so a
`mapwatch refresh` run elsewhere is alerted too. The tick's enrich step starts an enrichment
round (`EnrichmentStage`, docs/enrichment.md) in the background: no tick, and so no alert,
ever waits for a scholarly source.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from typing import TYPE_CHECKING, Any

from mapwatch.bot.supervisor import supervise_bot
from mapwatch.feeds.serving.server import default_base_url
from mapwatch.service.services import run_services, seed_if_empty
from mapwatch.service.settings import RunSettings
from mapwatch.service.tick import AfterRefresh
from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.settings_table import SourceSettings

if TYPE_CHECKING:
    from pathlib import Path

    from sqlite_utils import Database

    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.metrics import Metrics
    from mapwatch.store.scholarly.enrich import EnrichSettings, RoundReport

log = logging.getLogger("mapwatch.run")
enrich_log = logging.getLogger("mapwatch.enrich")

ROUND_SECONDS = 900.0  # no enrichment request starts later than this into its round


class EnrichmentStage:
    """The enrichment of `mapwatch run`: after each tick (the tick's enrich step, its last), one
    round in a task of its own, bounded by `seconds`; a round still running when the next tick
    ends is left to finish (none is started beside it). Each round logs one line per source
    that was unavailable, and one summary line; an error in a round is logged and the next
    tick starts the next round. Each round's outcome, per source, goes to `health` (/healthz's
    "enrichment") and `metrics` (/metrics' `mapwatch_enrichment_*`), as at `clock`.
    The papers whose citers are asked for are handed to the round: the tracked ones the tick
    read (its result's `tracked`; `tracked` reads them when a round is started otherwise),
    each server's `team` papers and the `followed` directions' papers."""

    def __init__(self, db_path: str | Path | None, settings: EnrichSettings,
                 tracked: Callable[[Database], Any] | None = None, seconds: float = ROUND_SECONDS, *,
                 health: Health | None = None, metrics: Metrics | None = None, clock: Clock = utc_now,
                 team: Callable[[Database], Any] | None = None,
                 followed: Callable[[Database], Any] | None = None) -> None:
        self.db_path = db_path
        self.settings = settings
        self.tracked = tracked
        self.team = team
        self.followed = followed
        self.seconds = seconds
        self.health = health
        self.metrics = metrics
        self.clock = clock
        self.task: asyncio.Task[None] | None = None
        self.rounds = 0
        if health is not None:
            health.watch_enrichment(settings.sources)
        if metrics is not None:
            metrics.watch_enrichment(settings.sources)

    async def after_refresh(self, result: Any) -> None:
        if self.task is not None and not self.task.done():
            enrich_log.info("enrichment: the last round is still running; this tick starts none")
            return
        read: tuple[str, ...] | None = getattr(result, "tracked", None)  # a TickResult: the tick read them
        self.task = asyncio.create_task(self._round(self.tracked if read is None or self.tracked is None else read),
                                        name="mapwatch-enrich")

    async def _round(self, tracked: Any) -> None:
        from mapwatch.store.scholarly.enrich import enrich_round

        started = time.monotonic()
        try:
            report = await enrich_round(self.db_path, self.settings, tracked=tracked, team=self.team,
                                        followed=self.followed, seconds=self.seconds, clock=self.clock)
        except Exception as e:  # a bug or the database: logged, the next tick tries again
            enrich_log.error("enrichment round failed: %s: %s", type(e).__name__, e, exc_info=True)
            self._told(time.monotonic() - started, error=e)
            return
        finally:
            self.rounds += 1
        for line in report.trouble_lines():
            enrich_log.warning(line)
        enrich_log.info("enrichment: %s (%.0f s)", report.summary(), report.seconds)
        self._told(report.seconds, report)

    def _told(self, seconds: float, report: RoundReport | None = None, error: Exception | None = None) -> None:
        """The round's outcome, its report or the error it raised, to /healthz and /metrics."""
        if report is not None:
            if self.health is not None:
                self.health.enriched(report, seconds)
            if self.metrics is not None:
                self.metrics.enriched(report, seconds, self.clock().timestamp())
        elif error is not None:
            if self.health is not None:
                self.health.enrich_failed(error, seconds)
            if self.metrics is not None:
                self.metrics.enrich_failed(seconds)

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task


@dataclass(frozen=True)
class DescribeNewCiters:
    """The tick's step before its alerts (mapwatch.service.tick.BeforeAlerts): the sources
    describe the tick's new citers for at most `seconds` (store/scholarly/before_alerts.py);
    a source down, answering badly or still asking then is one line in the log, once a tick."""

    db_path: str | Path | None
    settings: EnrichSettings
    seconds: float

    async def __call__(self, after_event: int, clock: Callable[[], Any]) -> None:
        from mapwatch.store.scholarly.before_alerts import describe_new_citers, late_lines
        from mapwatch.store.subscriptions.watched import watched_paper_ids

        report = await describe_new_citers(self.db_path, self.settings, after_event, watched=watched_paper_ids,
                                           seconds=self.seconds, clock=clock)
        for line in late_lines(report, self.seconds):
            enrich_log.warning(line)
        if any(r.due for r in report.sources.values()):
            enrich_log.info("before alerts: %s (%.1f s)", report.summary(), report.seconds)


def _remember_next_refresh(db_path: str | Path, trigger: Any) -> None:
    from mapwatch.bot.commands.info import NEXT_REFRESH_KEY
    from mapwatch.store.database.db import open_db
    from mapwatch.store.subscriptions import bot_state

    now = utc_now()
    nxt = trigger.get_next_fire_time(now, now)
    if nxt is None:
        return
    db = open_db(db_path)
    try:
        bot_state.set_state(db, NEXT_REFRESH_KEY, nxt.astimezone(UTC).isoformat(timespec="seconds"), now)
    finally:
        db.close()


@dataclass(frozen=True)
class NextRefresh:
    """The first deliver step: the next tick's time, stored for the bot's /info."""

    db_path: str | Path
    trigger: Any

    async def next_refresh(self, _result: Any) -> None:
        await asyncio.to_thread(_remember_next_refresh, self.db_path, self.trigger)


@dataclass
class BotSide:
    """The Discord bot of `mapwatch run`: `make_bot` builds one (the supervisor calls it again
    after each crash), `current` holds the one now running, and `deliver_alerts` is the
    deliver step that sends this tick's alerts through it."""

    db_path: str | Path
    base_url: str
    alert_interval: float
    metrics: Metrics
    shards: int | None = None  # $MAPWATCH_SHARDS; None: Discord's recommendation
    webhook_bases: tuple[str, ...] = ()  # what /webhook accepts besides Discord's and Slack's
    sources: SourceSettings | None = None  # the open sources enrichment asks, as /why reports them
    client_kwargs: Mapping[str, Any] = field(default_factory=dict)
    current: list[Any] = field(default_factory=list)  # one at a time; a new one after each restart

    def make_bot(self) -> Any:
        from mapwatch.bot.client import MapwatchBot

        kwargs = {"shard_count": self.shards, **self.client_kwargs}
        return MapwatchBot(self.db_path, base_url=self.base_url, alert_interval=self.alert_interval,
                           metrics=self.metrics, webhook_bases=self.webhook_bases, sources=self.sources, **kwargs)

    async def deliver_alerts(self, _result: Any) -> None:
        bot = self.current[0] if self.current else None
        if bot is not None and bot.is_ready() and not bot.is_closed():
            sent = await bot.deliver_alerts()
            if sent:
                log.info("sent %d alerts", sent)


async def run_all(settings: RunSettings, *, say: Callable[[str], None] = print, stop: asyncio.Event | None = None,
                  health: Health | None = None, metrics: Metrics | None = None) -> None:
    """Run everything `settings` says until `stop` is set (or forever): without a token, all
    but the bot; without enrichment settings (or sources), no enrichment round. `health` and
    `metrics` (default: new ones for this process) are served at /healthz and /metrics.

    The bot side is supervised: a crash (an exception out of discord.py, e.g. on a malformed
    gateway event) is logged with its traceback and the bot restarted after
    `settings.bot_backoff` seconds, doubling up to `BOT_BACKOFF_CAP`; a refused token stops the
    bot side with one line. The feed server and the scheduler run on throughout; only their
    crash ends this."""
    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.metrics import Metrics, configured_replica_lag
    from mapwatch.service.schedule import parse_schedule
    from mapwatch.store.database.db import open_db
    from mapwatch.store.subscriptions.tracking import tracked_paper_ids

    trigger = parse_schedule(settings.refresh)
    await asyncio.to_thread(lambda: open_db(settings.db_path).close())  # the schema, before anyone reads
    if await asyncio.to_thread(seed_if_empty, settings.db_path):  # before the bot answers anything
        say("Empty database: stored the bundled seed pages.")
    stop = stop or asyncio.Event()
    health = health or Health(settings.db_path, replica=settings.replica)
    metrics = metrics or Metrics(settings.db_path, health,
                                 replica_lag=configured_replica_lag(settings.db_path, settings.replica))
    deliver: list[AfterRefresh] = [NextRefresh(settings.db_path, trigger).next_refresh]
    bot_side = _bot_side(settings, metrics, say)
    if bot_side is not None:
        deliver.append(bot_side.deliver_alerts)
    stage = _enrichment(settings, health, metrics)
    services = asyncio.create_task(
        run_services(settings, deliver, enrich=stage.after_refresh if stage is not None else None,
                     before_alerts=_before_alerts(settings), priority=tracked_paper_ids, say=say, stop=stop,
                     health=health, metrics=metrics),
        name="mapwatch-services")
    supervisor = None
    if bot_side is not None:
        supervisor = asyncio.create_task(
            supervise_bot(bot_side.make_bot, settings.token or "", say, health, bot_side.current,
                          backoff=settings.bot_backoff),
            name="mapwatch-bot")
    try:
        await services  # a crash of the services side ends the process with its error
    finally:
        stop.set()
        if stage is not None:
            await stage.close()
        if supervisor is not None:
            supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await supervisor
        if not services.done():
            services.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await services


def _bot_side(settings: RunSettings, metrics: Metrics, say: Callable[[str], None]) -> BotSide | None:
    """The bot of `settings` (None, said so, without a token), discord.py pointed at its endpoints."""
    if not settings.token:
        say("DISCORD_TOKEN is not set: running the feeds and the refresh schedule without the Discord bot.")
        return None
    import mapwatch.bot.client  # noqa: F401  (discord.py loaded before the first tick, as always)
    from mapwatch.bot.discord_endpoints import point_discord_py_at

    point_discord_py_at(settings.discord_api, settings.discord_gateway)
    if settings.discord_api or settings.discord_gateway:
        say("Discord API: using MAPWATCH_DISCORD_API / MAPWATCH_DISCORD_GATEWAY.")
    base = (settings.base_url or default_base_url(settings.host, settings.port)).rstrip("/")
    sources = settings.enrich.source_settings if settings.enrich else SourceSettings(sources=())  # None: no round
    return BotSide(settings.db_path, base, settings.alert_interval, metrics, shards=settings.shards,
                   webhook_bases=settings.webhook_bases, sources=sources, client_kwargs=settings.client_kwargs)


def _before_alerts(settings: RunSettings) -> DescribeNewCiters | None:
    """The tick's step before its alerts (None: no sources, or $MAPWATCH_BEFORE_ALERTS is 0)."""
    if settings.enrich is None or not settings.enrich.sources or settings.before_alerts <= 0:
        return None
    return DescribeNewCiters(settings.db_path, settings.enrich, settings.before_alerts)


def _enrichment(settings: RunSettings, health: Health, metrics: Metrics) -> EnrichmentStage | None:
    """The enrich step of `settings` (None: no sources), said in the log, its rounds told to
    `health` and `metrics`."""
    from mapwatch.store.questions.teams import team_papers_by_server
    from mapwatch.store.subscriptions.tracking import tracked_paper_ids
    from mapwatch.store.subscriptions.watched import followed_direction_papers

    if settings.enrich is None or not settings.enrich.sources:
        return None
    enrich_log.info("enrichment: from %s after each refresh ($MAPWATCH_ENRICH)", ", ".join(settings.enrich.sources))
    return EnrichmentStage(settings.db_path, settings.enrich, tracked_paper_ids, health=health, metrics=metrics,
                           team=team_papers_by_server, followed=followed_direction_papers)
