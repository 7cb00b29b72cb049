"""Webhooks (issue 25, item 5): a paper's alerts and a direction's follows delivered to Slack
(a loopback receiver checking Block Kit's limits) and to Discord webhooks (the fake Discord),
under the channel deliveries' policy; the URLs kept secret."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path
from typing import Any

import discord
import pytest

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.bot.rendering.render_slack import slack_message
from mapwatch.bot.rendering.replies import Embed, Field
from mapwatch.bot.sending.delivery_webhooks import GONE, deliver_webhooks
from mapwatch.store.database.db import open_db
from mapwatch.store.environment import Environment
from mapwatch.store.errors import BadOption
from mapwatch.store.subscriptions import webhooks
from tests import openapi_check
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import RL, SURVEY, TECH, start_older, store_pages
from tests.slackserver import SlackServer, block_kit_violations

pytest_plugins = ["tests.fakediscord.fixtures"]

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "SecretToken123"


def test_urls_parsed_and_never_repeated() -> None:
    d = webhooks.parse_url("https://discord.com/api/webhooks/123456/abcDEF-_xyz?thread_id=777")
    assert d.kind == "discord" and d.hint == "discord.com/webhooks/123456 thread 777" and "abcDEF" not in d.hint
    s = webhooks.parse_url(f"https://hooks.slack.com/services/T0001/B0002/{TOKEN}")
    assert s.kind == "slack" and s.hint == "hooks.slack.com B0002"
    for bad in (f"https://evil.example/services/T1/B2/{TOKEN}", f"http://hooks.slack.com/services/T1/B2/{TOKEN}",
                f"https://discord.com/api/webhooks/1/{TOKEN}?wait=true&x=1",
                f"https://discord.com.evil.example/api/webhooks/1/{TOKEN}", "javascript:alert(1)", "x" * 500,
                f"https://discord.com/api/webhooks/1/{TOKEN}?thread_id=abc"):
        with pytest.raises(BadOption) as e:
            webhooks.parse_url(bad)
        assert TOKEN not in str(e.value) and "evil" not in str(e.value)


def test_slack_blocks_within_block_kit_limits() -> None:
    many = tuple(Field(f"field {i} *x*", "[t](https://arxiv.org/abs/1) " + "v" * 1100) for i in range(25))
    d = Delivery("<@&42> New in **RL** <!channel> & co",
                 tuple(Embed("T" * 300, "d <b> [a|b](https://x.example/p?q=1&r=2)" + "d" * 5000, "https://m.example/",
                             many, "footer") for _ in range(3)))
    msg = slack_message(d)
    assert block_kit_violations(msg) == [] and len(msg["blocks"]) == 50
    first = msg["blocks"][0]["text"]["text"]
    assert "<@&42>" not in first and "&lt;!channel&gt;" in first and "*RL*" in first and "&amp; co" in first
    assert "<https://x.example/p?q=1&amp;r=2|a/b>" in msg["blocks"][2]["text"]["text"]
    assert msg["blocks"][1]["text"]["text"].endswith("…") and len(msg["blocks"][1]["text"]["text"]) <= 150


class Calls:
    """`call(fn, *args)` as the bot's Runner does it, on one connection (a restart: a new one)."""

    def __init__(self, db_path: Path) -> None:
        self.db = open_db(db_path)

    async def __call__(self, fn: Any, *args: Any, **kw: Any) -> Any:
        return fn(self.db, *args, **kw)


async def test_slack_follow_and_paper_alerts_exactly_once_and_the_policy(db_path: Path, clock: FakeClock,
                                                                       caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    db = open_db(db_path)
    start_older(db, clock)
    waits: list[float] = []

    async def sleep(s: float) -> None:
        waits.append(s)

    async with SlackServer() as slack:
        extra = (slack.base,)
        direction, _ = webhooks.add_webhook(db, "direction", RL, webhooks.parse_url(slack.url(), extra_bases=extra),
                                            guild_id=None, created_by=None, now=clock())
        paper, _ = webhooks.add_webhook(db, "paper", SURVEY, webhooks.parse_url(slack.url(hook="B0003"),
                                                                                extra_bases=extra),
                                        guild_id=None, created_by=None, now=clock())
        call = Calls(db_path)
        assert await deliver_webhooks(call, clock, sleep=sleep) == 0  # nothing new: nothing sent
        store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
        slack.answer(500, times=2)  # the two posts at once: a 5xx each, then accepted within the tick
        assert await deliver_webhooks(call, clock, sleep=sleep) == 2
        assert waits == [0.5, 0.5] and len(slack.received) == 2 and slack.violations == []
        follow_msg = next(p for p in slack.received if "Reinforcement learning" in p["text"])
        assert any("<https://" in b.get("text", {}).get("text", "") for b in follow_msg["blocks"])
        assert await deliver_webhooks(call, clock, sleep=sleep) == 0
        assert await deliver_webhooks(Calls(db_path), clock, sleep=sleep) == 0  # a restart: nothing again
        assert webhooks.remove_webhook(db, direction.id, every=True)  # from here on: the paper's webhook alone

        # 5xx three times: left for the next tick, the cursor unchanged; then delivered
        store_pages(db, [_grown(SURVEY, "2612.00010")], clock)
        slack.answer(503, times=3)
        assert await deliver_webhooks(call, clock, sleep=sleep) == 0
        assert webhooks.list_webhooks(db, every=True)[0].last_failure is None
        slack.answer(429, retry_after=2)
        assert await deliver_webhooks(call, clock, sleep=sleep) == 1 and waits[-1] == 2.0

        # another 4xx: refused three times, then recorded as failed and passed over
        store_pages(db, [_grown(SURVEY, "2612.00011")], clock)
        for _ in range(3):
            slack.answer(403)
            assert await deliver_webhooks(call, clock, sleep=sleep) == 0
        [hook] = webhooks.list_webhooks(db, every=True)
        assert hook.disabled_reason is None and "HTTP 403" in (hook.last_failure or "")
        assert "invalid_token" in (hook.last_failure or "")
        assert await deliver_webhooks(call, clock, sleep=sleep) == 0  # moved past it

        # 404: the webhook is gone, disabled with the reason
        store_pages(db, [_grown(SURVEY, "2612.00012")], clock)
        slack.answer(404)
        assert await deliver_webhooks(call, clock, sleep=sleep) == 0
        assert webhooks.list_webhooks(db, every=True)[0].disabled_reason == GONE
        assert direction.id != paper.id
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith("mapwatch"))
    assert "webhook 2 (127.0.0.1" in ours and TOKEN not in ours and "/services/" not in ours


def _grown(paper_id: str, citer: str):
    from tests.follow_helpers import grow

    return grow(seed_page(paper_id), [(citer, f"Citer {citer}", 2026)])


def test_urls_are_sealed_and_a_lost_key_holds_them(db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    start_older(db, clock)
    url = f"https://hooks.slack.com/services/T0001/B0002/{TOKEN}"
    w, new = webhooks.add_webhook(db, "paper", SURVEY, webhooks.parse_url(url), guild_id=1, created_by=2,
                                  now=clock())
    again, new2 = webhooks.add_webhook(db, "paper", SURVEY, webhooks.parse_url(url), guild_id=1, created_by=2,
                                       now=clock())
    assert new and not new2 and again.id == w.id
    assert webhooks.webhook_url(db, w.id) == url
    db.close()
    raw = b"".join(p.read_bytes() for p in db_path.parent.glob(db_path.name + "*") if not p.name.endswith("-key"))
    assert TOKEN.encode() not in raw and b"hooks.slack.com/services" not in raw  # a leaked copy: no URL
    key_file = db_path.parent / (db_path.name + ".webhook-key")
    assert key_file.stat().st_mode & 0o777 == 0o600
    key = key_file.read_bytes()
    key_file.unlink()  # a copy without its key: the webhooks wait for it, none is disabled
    db = open_db(db_path)
    store_pages(db, [seed_page(SURVEY)], clock)
    import asyncio

    assert asyncio.run(deliver_webhooks(Calls(db_path), clock)) == 0
    [hook] = webhooks.list_webhooks(db, every=True)
    assert hook.disabled_reason is None and hook.last_event_id == w.last_event_id
    assert "webhooks 1 wait: the key file mapwatch.db.webhook-key is missing" in (webhooks.key_state(db) or "")
    with pytest.raises(BadOption, match="key is missing"):  # a new key would lock the others out for good
        webhooks.add_webhook(db, "paper", SURVEY, webhooks.parse_url(url.replace("B0002", "B0009")), guild_id=1,
                             created_by=2, now=clock())
    key_file.write_bytes(key)
    assert webhooks.key_state(db) is None and webhooks.webhook_url(db, w.id) == url


async def test_discord_webhooks_via_the_command_into_a_channel_and_a_forum_post(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)  # discord.py logs every gateway event at DEBUG
    fake = fake_discord
    monkeypatch.setenv("MAPWATCH_DISCORD_API", fake.api_base)
    db = open_db(db_path)
    start_older(db, clock)
    db.close()
    alerts = fake.guild.channel("alerts")
    forum = fake.add_forum("papers")
    url = fake.add_webhook(alerts.id)
    forum_url = fake.add_webhook(forum.id)
    bot = MapwatchBot(db_path, base_url="http://feeds.example", clock=clock, poll=False,
                      webhook_bases=Environment.read().webhook_bases(), guild_ready_timeout=0.05)  # as `run` does
    hooks = discord.Permissions(manage_webhooks=True)
    async with fake.connected(bot):
        h = await fake.slash("webhook", {"url": url, "paper": SURVEY})
        msg = await h.wait_message()
        assert h.ephemeral and "Manage Webhooks" in msg.content
        h = await fake.slash("webhook", {"url": url, "paper": SURVEY}, permissions=hooks)
        msg = await h.wait_message()
        token = url.rsplit("/", 1)[1]
        assert h.ephemeral and "now receives the alerts of" in msg.content and token not in msg.text()
        h = await fake.slash("webhook", {"url": "https://evil.example/api/webhooks/1/" + token, "direction": RL},
                             permissions=hooks)
        msg = await h.wait_message()
        assert h.ephemeral and "not a Discord or Slack webhook URL" in msg.content and token not in msg.text()
        # a forum post: a thread of the forum, addressed with ?thread_id=
        post = await bot.http.request(discord.http.Route("POST", "/channels/{channel_id}/threads",
                                                         channel_id=forum.id),
                                      json={"name": "RL news", "message": {"content": "Here"}})
        h = await fake.slash("webhook", {"url": f"{forum_url}?thread_id={post['id']}", "direction": RL},
                             permissions=hooks)
        assert "now receives the new citing papers" in (await h.wait_message()).content
        h = await fake.slash("webhook", {}, permissions=hooks)
        listed = (await h.wait_message()).text()
        assert token not in listed and listed.count("webhooks/") == 2
        store_pages(open_db(db_path), [seed_page(SURVEY), seed_page(TECH)], clock)
        await bot.deliver_alerts()
        await fake.wait_for(lambda: len(fake.webhook_messages) == 2)
        await bot.deliver_alerts()
    in_channel = [m for m in fake.webhook_messages if m.channel_id == alerts.id]
    in_post = [m for m in fake.webhook_messages if m.channel_id == int(post["id"])]
    assert len(in_channel) == 1 and len(in_post) == 1 and len(fake.webhook_messages) == 2
    assert "new citer" in in_channel[0].embed["title"] and in_channel[0].allowed_mentions == {"parse": []}
    assert openapi_check.recorded_errors(fake.requests) == []
    assert openapi_check.covered("POST", fake.requests_to("POST", "/webhooks/*")[-1].path)
    ours = "\n".join(r.getMessage() for r in caplog.records if r.name.startswith(("discord", "mapwatch")))
    assert "INTERACTION_CREATE" in ours and "/webhooks/" in ours and token not in ours


def test_cli_add_list_remove_never_prints_the_url(db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    start_older(db, clock)
    db.close()
    url = f"https://hooks.slack.com/services/T0001/B0002/{TOKEN}"

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mapwatch", "webhook", *args, "--db", str(db_path)],
                              input=stdin, capture_output=True, text=True, timeout=60, cwd=ROOT)

    p = run("add", RL, "-", stdin=url + "\n")
    assert p.returncode == 0 and "now receives direction" in p.stdout and TOKEN not in p.stdout + p.stderr
    p = run("add", "2412.10400", url.replace("hooks.slack.com", "hooks.evil.example"))
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and TOKEN not in p.stderr and "evil" not in p.stderr
    p = run("add", "no such paper or direction at all", url)
    assert p.returncode == 2 and "no paper or direction" in p.stderr
    p = run("list")
    assert p.returncode == 0 and "hooks.slack.com B0002" in p.stdout and TOKEN not in p.stdout
    p = run("remove", "1")
    assert p.returncode == 0 and run("list").stdout.strip() == "No webhooks."
    assert run("remove", "1").returncode == 2
