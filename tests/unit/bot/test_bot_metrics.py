"""The bot's metrics against the fake Discord: deliveries by kind and outcome, and Discord's
429 waits (read from discord.py's own log line, as it waits inside its HTTP client)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import discord

from mapwatch.bot.client import MapwatchBot
from mapwatch.feeds.serving.metrics import Metrics
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.fakediscord import FakeDiscord
from tests.metricscheck import parse, value

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)


async def test_deliveries_and_rate_limit_waits_are_counted(fake_discord: FakeDiscord, db_path: Path, clock,
                                                           make_older_seeds) -> None:
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(3)], clock=clock)
    metrics = Metrics(db_path)
    bot = MapwatchBot(db_path, base_url="http://feeds.example", guild_ready_timeout=0.05, poll=False,
                      clock=clock, metrics=metrics)
    alerts, general = fake.guild.channel("alerts"), fake.channel
    async with fake.connected(bot):
        for ch in (alerts, general):
            h = await fake.slash("track", {"paper": "2412.10400"}, channel_id=ch.id, permissions=MANAGE)
            await h.wait_message()
        clock.advance(days=1)
        await asyncio.to_thread(ingest_paths, open_db(db_path), [SEEDS_DIR], clock=clock)
        fake.forbid_channel(general.id)  # refused for good: failed (the track disabled)
        fake.rate_limit("POST /channels/*/messages", retry_after=0.05, times=1)  # discord.py waits, retries
        fake.server_error("POST /channels/*/messages", status=503, times=1)  # not retried by discord.py: next round
        await bot.deliver_alerts()
        await bot.deliver_alerts()
        samples = parse(metrics.render().decode())
    assert len(fake.channel_messages(alerts.id)) == 1
    assert value(samples, "mapwatch_deliveries_total", kind="track", outcome="sent") == 1
    assert value(samples, "mapwatch_deliveries_total", kind="track", outcome="retried") == 1
    assert value(samples, "mapwatch_deliveries_total", kind="track", outcome="failed") == 1
    assert value(samples, "mapwatch_deliveries_total", kind="follow", outcome="sent") == 0
    assert value(samples, "mapwatch_discord_rate_limit_waits_total") == 1
    assert value(samples, "mapwatch_discord_rate_limit_wait_seconds_total") == 0.05
    # the bot closed: its log handler is gone (a later bot's waits are not counted twice)
    assert not any(type(f).__name__ == "RateLimitLog" for f in logging.getLogger("discord.http").filters)


def test_waits_are_counted_when_the_log_level_hides_warnings(caplog) -> None:
    """MAPWATCH_LOG_LEVEL=ERROR: the wait is counted, and its warning still not shown."""
    from mapwatch.feeds.serving.metrics import RateLimitLog

    caplog.set_level(logging.ERROR)
    http_log = logging.getLogger("discord.http")
    assert not http_log.isEnabledFor(logging.WARNING)
    metrics = Metrics(None)
    counter = RateLimitLog(metrics).install()
    try:
        http_log.warning("We are being rate limited. %s %s responded with 429. Retrying in %.2f seconds.",
                         "POST", "https://discord.com/api/v10/channels/1/messages", 1.25)
    finally:
        counter.uninstall()
    samples = parse(metrics.render().decode())
    assert value(samples, "mapwatch_discord_rate_limit_waits_total") == 1
    assert value(samples, "mapwatch_discord_rate_limit_wait_seconds_total") == 1.25
    assert not [r for r in caplog.records if r.name == "discord.http"]
    assert not http_log.isEnabledFor(logging.WARNING)  # the level is back
