"""End to end: the real discord.py client (our MapwatchBot) against the local fake Discord."""

from __future__ import annotations

import asyncio
from pathlib import Path

import discord

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.commands import commands
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.fakediscord import FakeDiscord

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
BASE = "http://feeds.example"


def make_bot(db_path: Path, **kw) -> MapwatchBot:
    kw.setdefault("alert_interval", 60)
    return MapwatchBot(db_path, base_url=BASE, guild_ready_timeout=0.05, **kw)


async def test_commands_sync_once_and_paper_card(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        assert len(fake_discord.command_syncs) == 1
        synced = {c["name"] for c in fake_discord.commands()}
        assert synced == {s.menu or n.split(" ")[0] for n, s in commands().items()}  # "team add": /team
        h = await fake_discord.slash("paper", {"paper": "2412.10400"})
        msg = await h.wait_message()
        assert not h.ephemeral
        assert msg.embed["title"] == "Reinforcement Learning Enhanced LLMs: A Survey"
        assert msg.embed["url"] == "https://mlsanity.com/paper/2412.10400/"
        assert "Cited by **71**" in msg.embed["description"]
        assert msg.allowed_mentions == {"parse": []}
        h = await fake_discord.slash("paper", {"paper": "no such paper whatsoever"})
        msg = await h.wait_message()
        assert h.ephemeral and "No paper matches" in msg.content
    # A restart with the same command set does not sync again.
    bot2 = make_bot(seeded_path)
    async with fake_discord.connected(bot2):
        assert len(fake_discord.command_syncs) == 1


async def test_autocomplete_choices(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        choices = await fake_discord.autocomplete("paper", {"paper": "2412"}, focused="paper")
        assert [c["value"] for c in choices] == ["2412.10400"]
        choices = await fake_discord.autocomplete("citers", {"paper": "reinforcement"}, focused="paper")
        assert 1 <= len(choices) <= 25 and all(len(c["name"]) <= 100 for c in choices)
        choices = await fake_discord.autocomplete("direction", {"direction": "rew"}, focused="direction")
        assert [c["value"] for c in choices] == ["alignment/reward-modeling-and-rlhf"]
        choices = await fake_discord.autocomplete("paper", {"paper": "x" * 6000}, focused="paper")
        assert choices == []


async def test_page_buttons_turn_pages_and_survive_a_restart(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("citers", {"paper": "2412.10400", "direction": "", "sort": "newest"})
        msg = await h.wait_message()
        labels = [b["label"] for b in msg.buttons()]
        assert labels == ["◀ Previous", "Next ▶"]
        assert msg.buttons()[0].get("disabled") and "Page 1 of 3" in msg.embed["footer"]["text"]
        nxt = await fake_discord.click(msg, label=labels[1])
        resp = await nxt.wait_response()
        assert resp["type"] == 7 and "Page 2 of 3" in resp["data"]["embeds"][0]["footer"]["text"]
        assert "11. " in resp["data"]["embeds"][0]["description"]
    bot2 = make_bot(seeded_path)
    async with fake_discord.connected(bot2):
        again = await fake_discord.click(msg, label="Next ▶")  # the message now shows page 2
        resp = await again.wait_response()
        assert resp["type"] == 7 and "Page 3 of 3" in resp["data"]["embeds"][0]["footer"]["text"]
        buttons = resp["data"]["components"][0]["components"]
        assert buttons[1].get("disabled") and not buttons[0].get("disabled")


SAMPLES = {"paper": "2412.10400", "direction": "Reinforcement learning for reasoning", "query": "reward model",
           "sort": "cited", "exclude_direct": "no", "from": "2005.14165", "to": "2509.02547", "days": 30,
           "depth": 1, "keyword": "reasoning", "mode": "daily", "role": 4242, "hour": 8,
           "timezone": "Europe/Paris", "threads": "off",
           "url": "https://hooks.slack.com/services/T1/B2/abc", "remove": 1, "self": "hide", "name": "Lab",
           "author": "0000-0002-1825-0097",  # for /author; on /track it is an alternative to paper
           "citer": "2506.12217"}
EPHEMERAL_ANSWERS = {"digest-preview", "webhook", "author"}  # the seeds alone name no author: not found
MANAGE_ALL = discord.Permissions(manage_channels=True, manage_guild=True)  # /team changes need Manage Server


async def test_every_command_round_trips(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        # untrack and team remove last: /team stats and /tracked see what /team add and /track made
        order = sorted(commands().items(), key=lambda kv: kv[0] in ("untrack", "team remove"))
        for name, cmd in order:
            opts = {o.name: SAMPLES[o.name] for o in cmd.options if not cmd.menu and o.kind != "channel"
                    and o.name in SAMPLES and (o.name != "author" or name == "author")}
            # (author and team on /track: alternatives to paper, in tests/unit/store/test_team_tracks.py)
            if cmd.menu:  # a message context menu: run on a message naming a paper
                h = await fake_discord.message_command(cmd.menu, "see 2412.10400", permissions=MANAGE_ALL)
            else:
                h = await fake_discord.slash(name, opts, permissions=MANAGE_ALL)
            msg = await h.wait_message()
            assert msg.embeds or msg.content, name
            assert h.ephemeral == (name in EPHEMERAL_ANSWERS or bool(cmd.menu)), name
            assert msg.allowed_mentions == {"parse": []}, name


async def test_hostile_options_get_clean_answers(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        for value in ['" OR 1=1; --', "NEAR(a b)*", "@everyone " * 500, "\x00\x1b[31m 強化 🤖"]:
            for name in ("paper", "search", "direction", "citers"):
                opt = {"paper": "paper", "search": "query", "direction": "direction", "citers": "paper"}[name]
                h = await fake_discord.slash(name, {opt: value})
                msg = await h.wait_message()  # a refused (over-limit) answer would raise here
                assert "@everyone" not in msg.text()


async def test_track_needs_manage_channels(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("track", {"paper": "2412.10400"})
        msg = await h.wait_message()
        assert h.ephemeral and "Manage Channels" in msg.content
        assert fake_discord.commands()[0] is not None
        track = next(c for c in fake_discord.commands() if c["name"] == "track")
        assert int(track["default_member_permissions"]) == MANAGE.value
        h = await fake_discord.slash("track", {"paper": "2412.10400"}, permissions=MANAGE)
        msg = await h.wait_message()
        assert not h.ephemeral and "Tracking" in msg.content
        h = await fake_discord.slash("tracked", {})
        assert "2412.10400" in (await h.wait_message()).text()
        choices = await fake_discord.autocomplete("untrack", {"paper": ""}, focused="paper", permissions=MANAGE)
        assert [c["value"] for c in choices] == ["2412.10400"]  # what this channel tracks
        h = await fake_discord.slash("tracked", {}, guild_id=None)
        msg = await h.wait_message()
        assert "2412.10400" not in msg.text()


async def test_alert_flow_exactly_once(fake_discord: FakeDiscord, db_path: Path, clock, make_older_seeds) -> None:
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    channel = fake_discord.guild.channel("alerts")
    bot = make_bot(db_path, poll=False)  # the test delivers: no poller racing it
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("track", {"paper": "2412.10400"}, channel_id=channel.id, permissions=MANAGE)
        await h.wait_message()
        assert await bot.deliver_alerts() == 0
        clock.advance(days=1)
        await asyncio.to_thread(ingest_paths, open_db(db_path), [SEEDS_DIR], clock=clock)  # the refresh
        assert await bot.deliver_alerts() == 1
        assert await bot.deliver_alerts() == 0
        posts = fake_discord.requests_to("POST", f"/channels/{channel.id}/messages")
        assert len(posts) == 1
        assert posts[0].json["enforce_nonce"] is True and posts[0].json["nonce"].startswith("t")
        msg = fake_discord.channel_messages(channel.id)[0]
        assert "3 new citers" in msg.embed["title"] and "Cited by 68 → 71" in msg.embed["description"]
        assert msg.allowed_mentions == {"parse": []}
    bot2 = make_bot(db_path, poll=False)  # the test delivers: no poller racing it
    async with fake_discord.connected(bot2):
        assert await bot2.deliver_alerts() == 0
    assert len(fake_discord.requests_to("POST", f"/channels/{channel.id}/messages")) == 1


async def test_alert_poller_and_gone_channel(fake_discord: FakeDiscord, db_path: Path, clock,
                                             make_older_seeds) -> None:
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    alerts, gone = fake_discord.guild.channel("alerts"), fake_discord.channel
    bot = make_bot(db_path, alert_interval=0.2)
    async with fake_discord.connected(bot):
        for ch in (alerts, gone):
            h = await fake_discord.slash("track", {"paper": "2412.10400"}, channel_id=ch.id, permissions=MANAGE)
            await h.wait_message()
        fake_discord.delete_channel(gone.id)
        clock.advance(days=1)
        ingest_paths(open_db(db_path), [SEEDS_DIR], clock=clock)  # a refresh from another process
        await fake_discord.wait_channel_messages(alerts.id, 1)
        await fake_discord.wait_for(lambda: "404" in (open_db(db_path).conn.execute(
            "SELECT group_concat(disabled_reason) FROM tracks").fetchone()[0] or ""), 5)
    assert len(fake_discord.requests_to("POST", f"/channels/{alerts.id}/messages")) == 1


async def test_dm_track_alerts_by_dm(fake_discord: FakeDiscord, db_path: Path, clock, make_older_seeds) -> None:
    ingest_paths(open_db(db_path), [make_older_seeds(2)], clock=clock)
    bot = make_bot(db_path, poll=False)  # the test delivers: no poller racing it
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("track", {"paper": "2507.04136"}, guild_id=None)  # no Manage Channels in DMs
        msg = await h.wait_message()
        assert "your DMs" in msg.content and not h.ephemeral
        clock.advance(days=1)
        ingest_paths(open_db(db_path), [SEEDS_DIR], clock=clock)
        assert await bot.deliver_alerts() == 1
        dm = fake_discord.dm_channel(fake_discord.user.id)
        posted = fake_discord.channel_messages(dm.id)
        assert len(posted) == 1 and "2 new citers" in posted[0].embed["title"]
        h = await fake_discord.slash("tracked", {}, guild_id=None)
        assert "2507.04136" in (await h.wait_message()).text()


async def test_slow_answers_are_deferred_then_followed_up(fake_discord: FakeDiscord, seeded_path: Path,
                                                          monkeypatch) -> None:
    import mapwatch.bot.interactions as glue

    monkeypatch.setattr(glue, "DEFER_AFTER", 0.0)  # every answer counts as slow
    client = make_bot(seeded_path)
    async with fake_discord.connected(client):
        h = await fake_discord.slash("paper", {"paper": "2412.10400"})
        msg = await h.wait_message()
        assert h.deferred and msg.embed["title"].startswith("Reinforcement Learning Enhanced")
        page = await fake_discord.slash("refs", {"paper": "2412.10400"})
        msg = await page.wait_message()
        nxt = await fake_discord.click(msg, label="Next ▶")
        await nxt.wait_response()
        await fake_discord.wait_for(lambda: "Page 2 of 3" in (msg.embed.get("footer") or {}).get("text", ""), 5)


async def test_discord_failure_loses_nothing_and_forbidden_disables(fake_discord: FakeDiscord, db_path: Path, clock,
                                                                     make_older_seeds) -> None:
    ingest_paths(open_db(db_path), [make_older_seeds(3)], clock=clock)
    alerts, general = fake_discord.guild.channel("alerts"), fake_discord.channel
    bot = make_bot(db_path, poll=False)  # the test delivers: no poller racing it
    async with fake_discord.connected(bot):
        for ch in (alerts, general):
            h = await fake_discord.slash("track", {"paper": "2412.10400"}, channel_id=ch.id, permissions=MANAGE)
            await h.wait_message()
        fake_discord.forbid_channel(general.id)
        clock.advance(days=1)
        ingest_paths(open_db(db_path), [SEEDS_DIR], clock=clock)
        fake_discord.inject(f"POST /channels/{alerts.id}/messages", 503, {"message": "unavailable", "code": 0})
        assert await bot.deliver_alerts() == 0  # 503: kept for the next tick; 403: disabled
        assert fake_discord.channel_messages(alerts.id) == []
        assert await bot.deliver_alerts() == 1
        assert await bot.deliver_alerts() == 0
        assert len(fake_discord.channel_messages(alerts.id)) == 1
        h = await fake_discord.slash("tracked", {})
        text = (await h.wait_message()).text()
        assert "disabled" in text and "403" in text
