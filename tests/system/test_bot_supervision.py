"""`mapwatch run` survives its bot (issue 12, item 3) and says how it is (item 4, /healthz).

End to end with the real discord.py client against the fake Discord: a malformed gateway
event (a button press whose message has `interaction_metadata: null`, on which discord.py
raises TypeError) crashes the bot side; the feed server answers and a scheduled refresh
runs while it restarts (backoff from `bot_backoff`, not a sleep in the test); the bot comes
back and answers. A refused token stops the bot side with one line; the rest runs on.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from mapwatch.feeds.serving.health import FAILED_REFRESHES, Health
from mapwatch.feeds.serving.server import start_server
from mapwatch.service.run import run_all
from mapwatch.service.schedule import parse_schedule, start_scheduler
from mapwatch.service.services import RunConfig
from mapwatch.service.tick import Tick
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.fakediscord import FakeDiscord
from tests.waiting import async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


async def healthz(base: str) -> tuple[int, dict]:
    status, body = await asyncio.to_thread(get, base + "healthz")
    return status, json.loads(body)


def feeds_url(said: list[str]) -> str:
    return next(s for s in said if s.startswith("Feeds: ")).split()[1]


def ticks(db_path: Path) -> int:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute("SELECT count(*) FROM ingests").fetchone()[0]
    finally:
        conn.close()


async def test_a_bot_crash_restarts_the_bot_and_never_stops_the_feeds(
        fake_discord: FakeDiscord, tmp_path: Path, caplog) -> None:
    fake = fake_discord
    db_path = tmp_path / "m.db"
    ingest_paths(open_db(db_path), [SEEDS_DIR])
    said: list[str] = []
    stop = asyncio.Event()
    health = Health(db_path)
    config = RunConfig(db_path=db_path, source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0, refresh="1s")
    caplog.set_level(logging.INFO)
    task = asyncio.create_task(run_all(config, fake.token, say=said.append, stop=stop, alert_interval=60,
                                       client_kwargs={"guild_ready_timeout": 0.05}, bot_backoff=3.0,
                                       health=health))
    await async_wait_until(lambda: health.bot()["state"] == "connected" and any(s.startswith("Feeds: ") for s in said),
                           15, what="the bot connected and the feeds served")
    base = feeds_url(said)
    status, body = await healthz(base)
    assert status == 200 and body["bot"]["state"] == "connected" and body["bot"]["last_error"] is None
    h = await fake.slash("citers", {"paper": "2412.10400"})
    paged = await h.wait_message()

    await fake.click(paged, label="Next ▶", message_patch={"interaction_metadata": None})  # the malformed event
    await async_wait_until(lambda: health.bot()["state"] == "restarting", 15, what="the crashed bot to be restarting")
    crashed_at = ticks(db_path)
    status, body = await healthz(base)
    assert status == 200 and body["bot"]["state"] == "restarting"
    assert body["bot"]["last_error"].startswith("TypeError")
    assert (await asyncio.to_thread(get, base + "feeds.opml"))[0] == 200  # the feed server answers
    await async_wait_until(lambda: ticks(db_path) > crashed_at, 15, what="a tick since the crash: the schedule goes on")
    assert health.bot()["state"] == "restarting"  # ... while the bot is still down
    assert not task.done()

    await async_wait_until(lambda: fake.identifies >= 2 and health.bot()["state"] == "connected", 15,
                           what="the bot to identify again and connect")
    h = await fake.slash("paper", {"paper": "2412.10400"})
    assert (await h.wait_message()).embed["title"].startswith("Reinforcement")  # it answers again
    crash = [r for r in caplog.records if "Discord bot crashed" in r.getMessage()]
    assert len(crash) == 1 and crash[0].exc_info and crash[0].exc_info[0] is TypeError
    assert "restarting it in 3.0 s" in crash[0].getMessage()
    assert fake.token not in caplog.text and fake.token not in "\n".join(said)
    stop.set()
    await asyncio.wait_for(task, 15)


async def test_a_refused_token_stops_only_the_bot(fake_discord: FakeDiscord, tmp_path: Path, caplog) -> None:
    db_path = tmp_path / "m.db"
    said: list[str] = []
    stop = asyncio.Event()
    health = Health(db_path)
    config = RunConfig(db_path=db_path, source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0, refresh="1s")
    token = "not-the-token-4242"
    task = asyncio.create_task(run_all(config, token, say=said.append, stop=stop,
                                       client_kwargs={"guild_ready_timeout": 0.05}, bot_backoff=0.01,
                                       health=health))
    await async_wait_until(lambda: any("Discord refused DISCORD_TOKEN" in s for s in said)
                           and any(s.startswith("Feeds: ") for s in said), 15,
                           what="the refused token said and the feeds served")
    assert sum("Discord refused DISCORD_TOKEN" in s for s in said) == 1
    assert fake_discord.requests_to("GET", "/users/@me")[0].status == 401
    before = ticks(db_path)
    await async_wait_until(lambda: ticks(db_path) > before, 15, what="a tick after the refused token")  # go on
    status, body = await healthz(feeds_url(said))
    assert status == 200 and body["bot"]["state"] == "off" and "refused" in body["bot"]["last_error"]
    assert not task.done()
    assert len(fake_discord.requests_to("GET", "/users/@me")) == 1  # not retried
    assert "Traceback" not in caplog.text and token not in caplog.text + "\n".join(said)
    stop.set()
    await asyncio.wait_for(task, 15)


# -- /healthz --------------------------------------------------------------------------------

async def test_healthz_reports_database_refresh_and_deliveries(tmp_path: Path) -> None:
    db_path = tmp_path / "m.db"
    ingest_paths(open_db(db_path), [SEEDS_DIR])
    health = Health(db_path)
    runner, port = await start_server(tmp_path, "127.0.0.1", 0, health)
    try:
        status, body = await healthz(f"http://127.0.0.1:{port}/")
        assert status == 200 and body["status"] == "ok"
        assert body["database"]["reachable"] and body["database"]["size_bytes"] > 100_000
        assert body["database"]["schema_version"] >= 6
        assert body["refresh"]["last"]["stored"] == 2 and body["refresh"]["last"]["error"] is None  # from ingests
        assert body["bot"]["state"] == "off" and body["bot"]["last_error"] is None and body["bot"]["shards"] == []
        assert body["deliveries"] == {"pending": 0, "failed": 0}
        db_path.unlink()  # the database cannot be read
        for suffix in ("-wal", "-shm"):
            Path(f"{db_path}{suffix}").unlink(missing_ok=True)
        status, body = await healthz(f"http://127.0.0.1:{port}/")
        assert status == 503 and body["status"] == "failing" and not body["database"]["reachable"]
        assert "no database" in body["database"]["error"]
    finally:
        await runner.cleanup()


async def test_healthz_is_503_after_three_failed_refreshes(tmp_path: Path) -> None:
    db_path = tmp_path / "m.db"
    ingest_paths(open_db(db_path), [SEEDS_DIR])
    health = Health(db_path)
    runner, port = await start_server(tmp_path, "127.0.0.1", 0, health)
    missing = tmp_path / "no-such-source"
    tick = Tick(db_path, str(missing), tmp_path / "out", "http://x.example")
    scheduler = start_scheduler(tick, parse_schedule("1s"), run_now=True, health=health)
    try:
        await async_wait_until(lambda: len(health.refreshes) >= 1, 15, what="the first refresh in the health record")
        status, body = await healthz(f"http://127.0.0.1:{port}/")
        assert status == 200 and body["status"] == "degraded" and body["refresh"]["last"]["error"]
        assert body["refresh"]["next"] is not None
        await async_wait_until(lambda: len(health.refreshes) >= FAILED_REFRESHES, 15,
                               what="the failed refreshes in the health record")
        status, body = await healthz(f"http://127.0.0.1:{port}/")
        assert status == 503 and body["status"] == "failing" and body["database"]["reachable"]
        assert str(missing) in body["refresh"]["last"]["error"]
        missing.mkdir()
        for f in SEEDS_DIR.glob("*.txt"):
            (missing / f.name).write_bytes(f.read_bytes())
        await async_wait_until(lambda: health.refreshes[-1].error is None, 15,
                               what="a refresh without error in the health record")
        status, body = await healthz(f"http://127.0.0.1:{port}/")
        assert status == 200 and body["refresh"]["last"]["error"] is None
    finally:
        scheduler.shutdown(wait=False)
        await runner.cleanup()


@pytest.mark.parametrize("path", ["/healthz/", "/healthz.json"])
async def test_only_the_exact_path_is_health(tmp_path: Path, path: str) -> None:
    runner, port = await start_server(tmp_path, "127.0.0.1", 0, Health(tmp_path / "m.db"))
    try:
        assert (await asyncio.to_thread(get, f"http://127.0.0.1:{port}{path}"))[0] == 404
    finally:
        await runner.cleanup()
