"""`mapwatch run`: the bot (when DISCORD_TOKEN is set), the refresh scheduler and the feed
server in one asyncio process. The one place that wires them.

The feeds side (`feeds.run.run_services`) serves and refreshes; the bot adds its
after-refresh hook (alert delivery) and runs its client beside it. Alerts are also
polled from the event log, so a `mapwatch refresh` run elsewhere is alerted too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from datetime import UTC
from typing import TYPE_CHECKING, Any

from mapwatch.feeds.run import RunConfig, default_base_url, run_services, seed_if_empty
from mapwatch.store.clock import utc_now
from mapwatch.store.errors import MapwatchError

if TYPE_CHECKING:
    from mapwatch.feeds.health import Health
    from mapwatch.feeds.metrics import Metrics

log = logging.getLogger("mapwatch.run")


def _remember_next_refresh(db_path: Any, trigger: Any) -> None:
    from mapwatch.bot.commands.info import NEXT_REFRESH_KEY
    from mapwatch.store import bot_state
    from mapwatch.store.db import open_db

    now = utc_now()
    nxt = trigger.get_next_fire_time(now, now)
    if nxt is None:
        return
    db = open_db(db_path)
    try:
        bot_state.set_state(db, NEXT_REFRESH_KEY, nxt.astimezone(UTC).isoformat(timespec="seconds"), now)
    finally:
        db.close()


BOT_BACKOFF = 5.0  # seconds before the first restart of a crashed bot; doubled each time
BOT_BACKOFF_CAP = 300.0  # at most 5 minutes between restarts
REFUSED = "Discord refused DISCORD_TOKEN (check the token)"


async def run_all(config: RunConfig, token: str | None, *, say: Callable[[str], None] = print,
                  stop: asyncio.Event | None = None, alert_interval: float = 30.0,
                  client_kwargs: dict[str, Any] | None = None, bot_backoff: float = BOT_BACKOFF,
                  health: Health | None = None, metrics: Metrics | None = None,
                  replica_lag: Callable[[], float | None] | None = None) -> None:
    """Run everything until `stop` is set (or forever). Without a token, all but the bot.
    `metrics` (default: a new registry for this process) is served at /metrics; `replica_lag`,
    when given, feeds its gauge mapwatch_replica_lag_seconds (seconds, None: unknown).

    The bot side is supervised: a crash (an exception out of discord.py, e.g. on a malformed
    gateway event) is logged with its traceback and the bot restarted after `bot_backoff`
    seconds, doubling up to `BOT_BACKOFF_CAP`; a refused token stops the bot side with one
    line. The feed server and the scheduler run on throughout; only their crash ends this."""
    from mapwatch.feeds.health import Health
    from mapwatch.feeds.scheduler import parse_schedule
    from mapwatch.store.db import open_db

    trigger = parse_schedule(config.refresh)
    await asyncio.to_thread(lambda: open_db(config.db_path).close())  # the schema, before anyone reads
    if await asyncio.to_thread(seed_if_empty, config.db_path):  # before the bot answers anything
        say("Empty database: stored the bundled seed pages.")
    stop = stop or asyncio.Event()
    health = health or Health(config.db_path)
    from mapwatch.feeds.metrics import Metrics

    metrics = metrics or Metrics(config.db_path, health, replica_lag=replica_lag)
    hooks = []

    async def next_refresh(_result: Any) -> None:
        await asyncio.to_thread(_remember_next_refresh, config.db_path, trigger)

    hooks.append(next_refresh)
    current: list[Any] = []  # the bot now running (one at a time; a new one after each restart)
    make_bot: Callable[[], Any] | None = None
    if token:
        from mapwatch.bot.client import MapwatchBot
        from mapwatch.bot.discord_endpoints import from_environment

        if from_environment():
            say("Discord API: using MAPWATCH_DISCORD_API / MAPWATCH_DISCORD_GATEWAY.")
        base = (config.base_url or default_base_url(config.host, config.port)).rstrip("/")

        def make_bot() -> Any:
            from mapwatch.bot.config import shard_count

            kwargs = {"shard_count": shard_count(), **(client_kwargs or {})}  # $MAPWATCH_SHARDS, else Discord's
            return MapwatchBot(config.db_path, base_url=base, alert_interval=alert_interval, metrics=metrics, **kwargs)

        async def deliver_alerts(_result: Any) -> None:
            bot = current[0] if current else None
            if bot is not None and bot.is_ready() and not bot.is_closed():
                sent = await bot.deliver_alerts()
                if sent:
                    log.info("sent %d alerts", sent)

        hooks.append(deliver_alerts)
    else:
        say("DISCORD_TOKEN is not set: running the feeds and the refresh schedule without the Discord bot.")

    from mapwatch.store.tracking import tracked_paper_ids

    services = asyncio.create_task(
        run_services(config, hooks, say=say, stop=stop, priority=tracked_paper_ids, health=health,
                     metrics=metrics),
        name="mapwatch-services")
    supervisor = None
    if make_bot is not None:
        supervisor = asyncio.create_task(
            supervise_bot(make_bot, token or "", say, health, current, backoff=bot_backoff), name="mapwatch-bot")
    try:
        await services  # a crash of the services side ends the process with its error
    finally:
        stop.set()
        if supervisor is not None:
            supervisor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await supervisor
        if not services.done():
            services.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await services


async def supervise_bot(make_bot: Callable[[], Any], token: str, say: Callable[[str], None], health: Health,
                        current: list[Any], *, backoff: float = BOT_BACKOFF, cap: float = BOT_BACKOFF_CAP) -> None:
    """Run a bot from `make_bot` until it is closed on purpose or its token is refused;
    restart it after a crash with exponential backoff (reset once a run lasted `cap`)."""
    loop = asyncio.get_running_loop()
    crashes = 0
    while True:
        bot: Any = None
        started = loop.time()
        try:
            bot = make_bot()
            current[:] = [bot]
            health.bot_ready = _ready_check(bot)
            health.shards = getattr(bot, "shard_states", list)
            health.set_bot("connecting")
            await _run_bot(bot, token, say)
            health.set_bot("off")
            return  # closed on purpose
        except BotLoginError as e:
            say(f"{e}: running the feeds and the refresh schedule without the Discord bot.")
            log.error("%s; the Discord bot is stopped, the rest runs on", e)
            health.set_bot("off", str(e))
            return
        except Exception as e:
            crashes = 1 if loop.time() - started >= cap else crashes + 1
            delay = min(cap, backoff * 2 ** (crashes - 1))
            reason = f"{type(e).__name__}: {e}"
            health.set_bot("restarting", reason)
            log.error("Discord bot crashed (%s); restarting it in %.1f s", reason, delay, exc_info=True)
        finally:
            if bot is not None and not bot.is_closed():
                with contextlib.suppress(Exception):
                    await bot.close()
        await asyncio.sleep(delay)


def _ready_check(bot: Any) -> Callable[[], bool]:
    def ready() -> bool:
        return bool(bot.is_ready() and not bot.is_closed())
    return ready


async def _run_bot(bot: Any, token: str, say: Callable[[str], None]) -> None:
    import discord

    try:
        await bot.login(token)
    except discord.LoginFailure:
        raise BotLoginError(REFUSED) from None
    say("Discord bot: connecting.")
    try:
        await bot.connect(reconnect=True)
    except discord.ConnectionClosed as e:
        if e.code == 4004:  # Authentication failed: the gateway refused the token
            raise BotLoginError(REFUSED) from None
        if e.code == 4011:  # Sharding required: restarted like a crash (a new /gateway/bot asked)
            raise ShardingRequired(SHARDING_REQUIRED) from None
        raise


class BotLoginError(MapwatchError):
    """Discord refused the token."""


SHARDING_REQUIRED = ("Discord closed the gateway with 4011 (sharding required): the bot is in too many servers "
                     "for its shard count; unset $MAPWATCH_SHARDS (Discord's recommendation) or raise it")


class ShardingRequired(MapwatchError):
    """Discord wants more shards than the bot opened (close code 4011)."""
