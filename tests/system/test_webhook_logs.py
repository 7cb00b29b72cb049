"""No log line holds a webhook's secret (hardening round 4, item 10;
docs/bot.md, "Webhooks: channels without the bot, and Slack"): at
MAPWATCH_LOG_LEVEL=DEBUG discord.py logs every gateway event, and a /webhook command carries its
URL. The redaction knew only Slack's upper-case ids and Discord's exact path, and it was a filter
on discord.py's own loggers: a refused Slack URL with lower-case ids was logged whole, and any
other logger's line (aiohttp's, ours) was scrubbed only by `mapwatch run`'s formatter, not in the
record every handler gets. Now every record of every logger, at every level, is scrubbed when it
is made (bot/redact.py), whatever the case of the URL, however its slashes are written."""

from __future__ import annotations

import logging
from pathlib import Path

import discord
import pytest
from sqlite_utils import Database

from mapwatch.bot import redact
from mapwatch.bot.client import MapwatchBot
from mapwatch.store.database.db import open_db
from mapwatch.store.environment import Environment
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import RL, SURVEY, TECH, start_older, store_pages

pytest_plugins = ["tests.fakediscord.fixtures"]

SECRET = "lowerSECRETpart0123"
# Webhook URLs a person might paste, each refused by /webhook (the secret part in each: SECRET, or
# a piece of it), and the shapes they take in a log line.
REFUSED = {
    "slack, lower-case ids": f"https://hooks.slack.com/services/t0abc12/b0def34/{SECRET}",
    "slack, upper-case": f"HTTPS://HOOKS.SLACK.COM/SERVICES/T0ABC12/B0DEF34/{SECRET.upper()}",
    "slack, mixed-case path": f"https://hooks.slack.com/Services/T0ABC12/B0DEF34/{SECRET}x",
    "slack, two ids missing": f"https://hooks.slack.com/services/T0ABC12/{SECRET}y",
    "slack workflow": f"https://hooks.slack.com/workflows/T0ABC12/A0456/{SECRET}z",
    "slack trigger": f"https://hooks.slack.com/triggers/T0ABC12/9876/{SECRET}w",
    "discord, upper-case path": f"https://discord.com/API/WEBHOOKS/123456789/{SECRET}v",
    "discord, word id": f"https://discord.com/api/webhooks/me/{SECRET}u",
    "discord, http": f"http://discordapp.com/api/v10/webhooks/123456789/{SECRET}t",
}
SHAPES = {
    "percent-encoded": f"https%3A%2F%2Fhooks.slack.com%2Fservices%2Ft0abc12%2Fb0def34%2F{SECRET}",
    "json-escaped": f'{{"url": "https:\\/\\/discord.com\\/api\\/webhooks\\/123456789\\/{SECRET}"}}',
    "in a repr": repr({"value": f"https://hooks.slack.com/services/t0abc12/b0def34/{SECRET}"}),
}
PIECE = SECRET[:10]  # no log line may hold even this much of it, in any case


def secret_lines(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The captured lines (each record's message, and the whole text with tracebacks) holding a
    piece of the secret."""
    texts = [r.getMessage() for r in caplog.records] + caplog.text.splitlines()
    return [t for t in texts if PIECE.lower() in t.lower()]


def debug_everywhere(caplog: pytest.LogCaptureFixture) -> None:
    """caplog at DEBUG for the root and for every logger there is (discord.py's, aiohttp's, ours)."""
    caplog.set_level(logging.DEBUG)
    for name in list(logging.root.manager.loggerDict):
        caplog.set_level(logging.DEBUG, logger=name)


def open_db_started(db_path: Path, clock: FakeClock) -> Database:
    db = open_db(db_path)
    start_older(db, clock)
    return db


async def test_refused_webhook_urls_leave_no_secret_in_any_log_line(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """The real bot against the fake Discord: /webhook with each refused URL (each logged by
    discord.py at DEBUG, in the INTERACTION_CREATE event), then a webhook accepted and delivered."""
    debug_everywhere(caplog)
    fake = fake_discord
    monkeypatch.setenv("MAPWATCH_DISCORD_API", fake.api_base)
    db = open_db_started(db_path, clock)
    alerts = fake.guild.channel("alerts")
    url = fake.add_webhook(alerts.id)
    token = url.rsplit("/", 1)[1]
    bot = MapwatchBot(db_path, base_url="http://feeds.example", clock=clock, poll=False,
                      webhook_bases=Environment.read().webhook_bases(), guild_ready_timeout=0.05)
    hooks = discord.Permissions(manage_webhooks=True)
    async with fake.connected(bot):
        for name, refused in REFUSED.items():
            h = await fake.slash("webhook", {"url": refused, "paper": SURVEY}, permissions=hooks)
            msg = await h.wait_message()
            assert "not a Discord or Slack webhook URL" in msg.content or "only ?thread_id" in msg.content, name
        h = await fake.slash("webhook", {"url": url, "direction": RL}, permissions=hooks)
        assert "now receives the new citing papers" in (await h.wait_message()).content
        store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
        await bot.deliver_alerts()
        await fake.wait_for(lambda: len(fake.webhook_messages) == 1)
    ours = "\n".join(r.getMessage() for r in caplog.records)
    assert "INTERACTION_CREATE" in ours and "hooks.slack.com/services/t0abc12/b0def34/…" in ours
    assert ours.count("INTERACTION_CREATE") >= len(REFUSED)
    assert secret_lines(caplog) == [] and token not in caplog.text


@pytest.mark.parametrize("level", [logging.DEBUG, logging.INFO, logging.WARNING, logging.ERROR, logging.CRITICAL])
def test_every_logger_at_every_level_is_scrubbed(caplog: pytest.LogCaptureFixture, level: int) -> None:
    """Lines of any logger (discord.py's, aiohttp's, ours, one made now), the URL in the message,
    in its arguments, or in an exception's traceback, in every shape: none holds the secret."""
    debug_everywhere(caplog)
    redact.install()  # as the bot and `mapwatch run` do, once per process
    texts = {**REFUSED, **SHAPES}
    for logger in ("discord.gateway", "aiohttp.client", "mapwatch.delivery", "someone.else.new"):
        log = logging.getLogger(logger)
        for name, text in texts.items():
            log.log(level, f"in the message: {text}")
            log.log(level, "as an argument %s (%d)", text, 1)
            log.log(level, "%(what)s", {"what": text})
            try:
                raise ValueError(f"bad URL {text}")
            except ValueError:
                log.log(level, "with a traceback (%s)", name, exc_info=True)
    assert len(caplog.records) == 4 * len(texts) * 4
    assert secret_lines(caplog) == []
    assert "hooks.slack.com/services/t0abc12/b0def34/…" in caplog.text and "ValueError: bad URL" in caplog.text


def test_what_is_not_a_secret_is_left_as_it_is() -> None:
    for text in ("webhook 3 (hooks.slack.com B0002) did not answer", "discord.com/webhooks/123456 thread 777",
                 "POST https://discord.com/api/v10/channels/1/messages", "see https://hooks.slack.com/ for help",
                 "https://arxiv.org/abs/2412.10400"):
        assert redact.redact(text) == text
    assert redact.redact(f"https://discord.com/api/webhooks/123/{SECRET}?wait=true") == \
        "https://discord.com/api/webhooks/123/…?wait=true"
    assert redact.redact(f"https://hooks.slack.com/services/T1/B2/{SECRET} and /api/webhooks/9/{SECRET}") == \
        "https://hooks.slack.com/services/T1/B2/… and /api/webhooks/9/…"
