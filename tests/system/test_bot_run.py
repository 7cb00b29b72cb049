"""`mapwatch run`: the bot, the scheduler and the feed server in one process."""

from __future__ import annotations

import asyncio
import urllib.request
from pathlib import Path

import discord

from mapwatch.bot.commands import commands
from mapwatch.service.run import run_all
from mapwatch.service.services import RunConfig
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.fakediscord import FakeDiscord
from tests.waiting import async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status


async def test_run_without_token_serves_feeds_and_seeds_an_empty_db(tmp_path: Path) -> None:
    said: list[str] = []
    stop = asyncio.Event()
    config = RunConfig(db_path=tmp_path / "m.db", source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0)
    task = asyncio.create_task(run_all(config, None, say=said.append, stop=stop))
    await async_wait_until(lambda: any(s.startswith("Feeds: ") for s in said), 10,
                           what="the run to say where its feeds are")
    assert any("DISCORD_TOKEN is not set" in s for s in said)
    assert any("stored the bundled seed pages" in s for s in said)
    index = next(s for s in said if s.startswith("Feeds: ")).split()[1]
    assert await asyncio.to_thread(_get, index + "feeds.opml") == 200
    stop.set()
    await asyncio.wait_for(task, 10)
    assert open_db(tmp_path / "m.db")["papers"].count == 99


async def test_run_with_bot_alerts_from_another_process_refresh(fake_discord: FakeDiscord, tmp_path: Path,
                                                                 make_older_seeds, clock) -> None:
    db_path = tmp_path / "m.db"
    older = make_older_seeds(3)
    ingest_paths(open_db(db_path), [older], clock=clock)
    said: list[str] = []
    stop = asyncio.Event()
    config = RunConfig(db_path=db_path, source=str(older), out_dir=tmp_path / "out", port=0)
    task = asyncio.create_task(run_all(config, fake_discord.token, say=said.append, stop=stop, alert_interval=0.2,
                                       client_kwargs={"guild_ready_timeout": 0.05}))
    await async_wait_until(lambda: fake_discord.command_syncs and fake_discord.identifies, 10,
                           what="the commands synced and the bot identified")
    channel = fake_discord.guild.channel("alerts")
    h = await fake_discord.slash("track", {"paper": "2412.10400"}, channel_id=channel.id,
                                 permissions=discord.Permissions(manage_channels=True))
    assert "Tracking" in (await h.wait_message()).content
    clock.advance(days=1)
    await asyncio.to_thread(ingest_paths, open_db(db_path), [SEEDS_DIR], clock=clock)  # `mapwatch refresh` elsewhere
    msgs = await fake_discord.wait_channel_messages(channel.id, 1)
    assert "3 new citers" in msgs[0].embed["title"]
    stop.set()
    await asyncio.wait_for(task, 10)
    assert len(fake_discord.requests_to("POST", f"/channels/{channel.id}/messages")) == 1
    assert fake_discord.token not in "\n".join(said)


async def test_mapwatch_run_process_answers_through_the_configured_discord(fake_discord: FakeDiscord,
                                                                           tmp_path: Path) -> None:
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, **fake_discord.env(), "MAPWATCH_ALERT_INTERVAL": "1"}
    log = tmp_path / "run.log"
    with log.open("w") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mapwatch", "run", "--db", str(tmp_path / "m.db"),
                                 "--out", str(tmp_path / "out"), "--port", "0"],
                                cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        await fake_discord.wait_for(lambda: fake_discord.command_syncs and fake_discord.identifies, 20)
        h = await fake_discord.slash("paper", {"paper": "2412.10400"})
        msg = await h.wait_message(timeout=10)
        assert msg.embed["title"] == "Reinforcement Learning Enhanced LLMs: A Survey"
        await async_wait_until(lambda: "Feeds: http://" in log.read_text(), 20,
                               what="the log to say where the feeds are")
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, 20)
    text = log.read_text()
    assert "stored the bundled seed pages" in text and "MAPWATCH_DISCORD_API" in text
    assert fake_discord.token not in text and "Traceback" not in text, text


async def test_mapwatch_sync_registers_the_commands(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    import os
    import sys

    root = Path(__file__).resolve().parents[2]
    open_db(tmp_path / "m.db").close()  # sync keeps the command set's hash there; it creates no database
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mapwatch", "sync", "--db", str(tmp_path / "m.db"), cwd=root,
        env={**os.environ, **fake_discord.env()}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(), 30)
    assert proc.returncode == 0, err.decode()
    top = {name.split()[0] for name in commands()}  # "team add", "team list", ...: one command, /team
    assert out.decode().strip() == f"Synced {len(top)} commands."
    assert fake_discord.token not in out.decode() + err.decode()
    assert len(fake_discord.command_syncs) == 1 and len(fake_discord.commands()) == len(top)


async def test_a_refused_token_is_one_clear_line(fake_discord: FakeDiscord, tmp_path: Path) -> None:
    """The bot side stops with one line; the feeds and the schedule run on (issue 12, item 3)."""
    import os
    import sys

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, **fake_discord.env(), "DISCORD_TOKEN": "not-the-token-123"}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mapwatch", "run", "--db", str(tmp_path / "m.db"), "--out", str(tmp_path / "out"),
        "--port", "0", cwd=root, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out_lines: list[str] = []
    try:
        async with asyncio.timeout(30):
            while not any("Discord refused DISCORD_TOKEN" in s for s in out_lines) or \
                    not any(s.startswith("Feeds: ") for s in out_lines):
                line = await proc.stdout.readline()
                assert line, "mapwatch run ended"
                out_lines.append(line.decode())
        index = next(s for s in out_lines if s.startswith("Feeds: ")).split()[1]
        assert await asyncio.to_thread(_get, index + "healthz") == 200  # still serving
        assert proc.returncode is None  # still running
    finally:
        proc.terminate()
        rest, err = await asyncio.wait_for(proc.communicate(), 30)
    out = "".join(out_lines) + rest.decode()
    assert sum("Discord refused DISCORD_TOKEN (check the token)" in s for s in out.splitlines()) == 1
    assert "not-the-token-123" not in out + err.decode() and "Traceback" not in out + err.decode()
