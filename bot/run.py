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
from datetime import UTC, datetime
from typing import Any

from feeds.run import RunConfig, default_base_url, run_services, seed_if_empty
from store.errors import MapwatchError

log = logging.getLogger("mapwatch.run")


def _remember_next_refresh(db_path: Any, trigger: Any) -> None:
    from bot.commands.info import NEXT_REFRESH_KEY
    from store import tracking
    from store.db import open_db

    now = datetime.now(UTC)
    nxt = trigger.get_next_fire_time(now, now)
    if nxt is None:
        return
    db = open_db(db_path)
    try:
        tracking.set_state(db, NEXT_REFRESH_KEY, nxt.astimezone(UTC).isoformat(timespec="seconds"), now)
    finally:
        db.close()


async def run_all(config: RunConfig, token: str | None, *, say: Callable[[str], None] = print,
                  stop: asyncio.Event | None = None, alert_interval: float = 30.0,
                  client_kwargs: dict[str, Any] | None = None) -> None:
    """Run everything until `stop` is set (or forever). Without a token, all but the bot."""
    from feeds.scheduler import parse_schedule
    from store.db import open_db

    trigger = parse_schedule(config.refresh)
    await asyncio.to_thread(lambda: open_db(config.db_path).close())  # the schema, before anyone reads
    if await asyncio.to_thread(seed_if_empty, config.db_path):  # before the bot answers anything
        say("Empty database: stored the bundled seed pages.")
    stop = stop or asyncio.Event()
    hooks = []

    async def next_refresh(_result: Any) -> None:
        await asyncio.to_thread(_remember_next_refresh, config.db_path, trigger)

    hooks.append(next_refresh)
    bot = None
    if token:
        from bot.client import MapwatchBot
        from bot.discord_endpoints import from_environment

        if from_environment():
            say("Discord API: using MAPWATCH_DISCORD_API / MAPWATCH_DISCORD_GATEWAY.")
        base = (config.base_url or default_base_url(config.host, config.port)).rstrip("/")
        bot = MapwatchBot(config.db_path, base_url=base, alert_interval=alert_interval, **(client_kwargs or {}))

        async def deliver_alerts(_result: Any) -> None:
            if bot is not None and bot.is_ready():
                sent = await bot.deliver_alerts()
                if sent:
                    log.info("sent %d alerts", sent)

        hooks.append(deliver_alerts)
    else:
        say("DISCORD_TOKEN is not set: running the feeds and the refresh schedule without the Discord bot.")

    from store.tracking import tracked_paper_ids

    services = run_services(config, hooks, say=say, stop=stop, priority=tracked_paper_ids)
    tasks = [asyncio.create_task(services, name="mapwatch-services")]
    if bot is not None:
        tasks.append(asyncio.create_task(_run_bot(bot, token or "", say), name="mapwatch-bot"))
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for t in done:
            t.result()  # a crash of either side ends the process with its error
    finally:
        stop.set()
        if bot is not None and not bot.is_closed():
            await bot.close()
        for t in tasks:
            if not t.done():
                t.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await t


async def _run_bot(bot: Any, token: str, say: Callable[[str], None]) -> None:
    import discord

    try:
        await bot.login(token)
    except discord.LoginFailure:
        raise BotLoginError("Discord refused DISCORD_TOKEN (check the token)") from None
    say("Discord bot: connecting.")
    await bot.connect(reconnect=True)


class BotLoginError(MapwatchError):
    """Discord refused the token."""
