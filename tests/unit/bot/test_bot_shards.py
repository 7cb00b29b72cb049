"""A sharded gateway (issue 23): the fake Discord's /gateway/bot recommends 2 shards, and
`mapwatch run`'s bot (an AutoShardedClient) connects both: two IDENTIFYs, [0, 2] and [1, 2];
each guild's commands arrive on its own shard and are answered; each alert is delivered
exactly once; one shard down leaves the other serving, and /healthz and /metrics show it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import discord
import pytest

from mapwatch.feeds.serving.health import Health
from mapwatch.feeds.serving.metrics import Metrics
from mapwatch.service.run import run_all
from mapwatch.service.services import RunConfig
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.fakediscord import FakeDiscord
from tests.fakediscord.payloads import FakeChannel, FakeGuild, FakeRole, snowflake
from tests.metricscheck import get, parse, scrape, value
from tests.waiting import async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
OWNER = 1


def _guild_on_shard(shard: int, shards: int = 2) -> FakeGuild:
    gid = snowflake()
    while (gid >> 22) % shards != shard:
        gid += 1 << 22
    return FakeGuild(gid, f"Guild {shard}", channels=[FakeChannel(snowflake(), "general", gid),
                                                      FakeChannel(snowflake(), "alerts", gid, position=1)],
                     roles=[FakeRole(gid, "@everyone")], owner_id=OWNER)


@pytest.fixture
def fake_config() -> dict[str, Any]:
    return {"shards": 2, "guilds": [_guild_on_shard(0), _guild_on_shard(1)]}


def _healthz(base: str) -> dict[str, Any]:
    status, _, body = get(base + "healthz")
    assert status == 200
    return json.loads(body)


def _shard_events(fake: FakeDiscord, shard: int, event: str) -> int:
    return sum(1 for f in fake.shard_sessions[shard].events if f["t"] == event)


async def test_two_shards_answer_deliver_once_and_survive_one_down(fake_discord: FakeDiscord, tmp_path: Path,
                                                                   make_older_seeds, clock) -> None:
    fake = fake_discord
    db_path = tmp_path / "m.db"
    ingest_paths(open_db(db_path), [make_older_seeds(3)], clock=clock)
    said: list[str] = []
    stop = asyncio.Event()
    health = Health(db_path)
    metrics = Metrics(db_path, health, replica_lag=lambda: 1.5)
    config = RunConfig(db_path=db_path, source=str(make_older_seeds(3)), out_dir=tmp_path / "out", port=0)
    task = asyncio.create_task(run_all(config, fake.token, say=said.append, stop=stop, alert_interval=0.2,
                                       client_kwargs={"guild_ready_timeout": 0.05, "identify_spacing": 0.0},
                                       health=health, metrics=metrics))
    try:
        await async_wait_until(lambda: len(fake.shard_sessions) == 2 and fake.command_syncs, 15,
                               what="two shard sessions and the command sync")
        await async_wait_until(lambda: any(s.startswith("Feeds: ") for s in said), 15,
                               what="the run to say where its feeds are")
        base = next(s for s in said if s.startswith("Feeds: ")).split()[1]
        assert sorted(fake.identified_shards) == [[0, 2], [1, 2]]  # two IDENTIFYs, one per shard
        assert fake.identifies == 2
        await async_wait_until(lambda: [s["state"] for s in health.shards()] == ["connected", "connected"], 15,
                               what="both shards connected in the health record")

        # commands from either shard: each guild's interaction goes out on its own shard
        guilds = sorted(fake.guilds.values(), key=lambda g: fake.shard_of(g.id))
        for shard, guild in enumerate(guilds):
            h = await fake.slash("track", {"paper": "2412.10400"}, guild_id=guild.id,
                                 channel_id=guild.channel("alerts").id, permissions=MANAGE)
            assert "Tracking" in (await h.wait_message()).content
            assert _shard_events(fake, shard, "INTERACTION_CREATE") == 1

        # one refresh elsewhere: each guild's alert exactly once
        clock.advance(days=1)
        await asyncio.to_thread(ingest_paths, open_db(db_path), [SEEDS_DIR], clock=clock)
        for guild in guilds:
            msgs = await fake.wait_channel_messages(guild.channel("alerts").id, 1)
            assert "3 new citers" in msgs[0].embed["title"]
        await async_wait_until(lambda: value(parse(metrics.render().decode()), "mapwatch_deliveries_total",
                                             kind="track", outcome="sent") == 2, 15,
                               what="two deliveries sent in /metrics")

        health_body = await asyncio.to_thread(_healthz, base)
        assert [(s["id"], s["state"]) for s in health_body["bot"]["shards"]] == [(0, "connected"), (1, "connected")]
        samples = await asyncio.to_thread(scrape, base)
        assert value(samples, "mapwatch_shard_up", shard="0") == 1 and value(samples, "mapwatch_shard_up",
                                                                             shard="1") == 1
        assert value(samples, "mapwatch_bot_state", state="connected") == 1
        assert value(samples, "mapwatch_replica_lag_seconds") == 1.5

        # shard 0 goes away (and may not come back yet): shard 1 still answers
        fake.pause_gateway()
        await fake.drop_shard(0, code=None)
        await async_wait_until(lambda: health.shards()[0]["state"] == "disconnected", 15,
                               what="shard 0 disconnected in the health record")
        h = await fake.slash("paper", {"paper": "2412.10400"}, guild_id=guilds[1].id)
        msg = await h.wait_message()
        assert msg.embed["title"] == "Reinforcement Learning Enhanced LLMs: A Survey"
        assert _shard_events(fake, 1, "INTERACTION_CREATE") == 2
        health_body = await asyncio.to_thread(_healthz, base)
        assert [(s["id"], s["state"]) for s in health_body["bot"]["shards"]] == [(0, "disconnected"),
                                                                                  (1, "connected")]
        samples = await asyncio.to_thread(scrape, base)
        assert value(samples, "mapwatch_shard_up", shard="0") == 0
        assert value(samples, "mapwatch_shard_up", shard="1") == 1

        # shard 0 back (it resumes its session): its guild is answered again
        fake.open_gateway()
        await fake.wait_for(lambda: fake.resumes >= 1 and fake.shard_sessions[0].ws is not None, 15)
        h = await fake.slash("paper", {"paper": "2412.10400"}, guild_id=guilds[0].id)
        assert (await h.wait_message()).embed["title"] == "Reinforcement Learning Enhanced LLMs: A Survey"
        await async_wait_until(lambda: health.shards()[0]["state"] == "connected", 15,
                               what="shard 0 connected again in the health record")
        assert fake.identifies == 2  # resumed, not identified again
        # another round of delivery ran meanwhile: still one alert per channel
        deliveries = value(parse(metrics.render().decode()), "mapwatch_deliveries_total", kind="track",
                           outcome="sent")
        assert deliveries == 2
    finally:
        fake.open_gateway()
        stop.set()
        await asyncio.wait_for(task, 15)
    for guild in guilds:
        assert len(fake.requests_to("POST", f"/channels/{guild.channel('alerts').id}/messages")) == 1
    assert fake.token not in "\n".join(said)


async def test_shards_from_the_environment(fake_discord: FakeDiscord, tmp_path: Path, monkeypatch) -> None:
    """$MAPWATCH_SHARDS=2 sets the count without asking /gateway/bot."""
    monkeypatch.setenv("MAPWATCH_SHARDS", "2")
    said: list[str] = []
    stop = asyncio.Event()
    health = Health(tmp_path / "m.db")
    config = RunConfig(db_path=tmp_path / "m.db", source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0)
    task = asyncio.create_task(run_all(config, fake_discord.token, say=said.append, stop=stop,
                                       client_kwargs={"guild_ready_timeout": 0.05, "identify_spacing": 0.0},
                                       health=health))
    try:
        await async_wait_until(lambda: len(fake_discord.shard_sessions) == 2, 15, what="two shard sessions")
        await async_wait_until(lambda: [s["state"] for s in health.shards()] == ["connected", "connected"], 15,
                               what="both shards connected in the health record")
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
    assert sorted(fake_discord.identified_shards) == [[0, 2], [1, 2]]
    assert not fake_discord.requests_to("GET", "/gateway/bot")


async def test_too_few_shards_say_so(fake_discord: FakeDiscord, tmp_path: Path, monkeypatch) -> None:
    """$MAPWATCH_SHARDS=1 where Discord requires 2: the gateway closes with 4011 and /healthz's
    last error says what to do (the bot restarts; the feeds run on)."""
    monkeypatch.setenv("MAPWATCH_SHARDS", "1")
    said: list[str] = []
    stop = asyncio.Event()
    health = Health(tmp_path / "m.db")
    config = RunConfig(db_path=tmp_path / "m.db", source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0)
    task = asyncio.create_task(run_all(config, fake_discord.token, say=said.append, stop=stop, bot_backoff=60,
                                       client_kwargs={"guild_ready_timeout": 0.05}, health=health))
    try:
        await async_wait_until(lambda: health.bot()["state"] == "restarting", 15, what="the bot to be restarting")
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
    assert fake_discord.identified_shards == [[0, 1]]
    assert "4011" in health.bot()["last_error"] and "MAPWATCH_SHARDS" in health.bot()["last_error"]
