"""A discussion thread per alert (issue 25, item 2), end to end: the real bot against the fake
Discord, every request checked against Discord's OpenAPI description."""

from __future__ import annotations

from pathlib import Path

import discord

from mapwatch.bot.rendering.render_follow import THREAD_NAME_MAX, thread_name
from mapwatch.bot.sending.delivery import THREAD_ARCHIVE_MINUTES
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests import openapi_check
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import RL, SURVEY, TECH, make_bot, start_older, store_pages

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)


def test_thread_names_are_the_citer_clipped_to_100() -> None:
    assert thread_name(["A Short Title"]) == "A Short Title"
    assert thread_name(["A Short Title", "Another"], more=3) == "A Short Title (+4 more)"
    long = thread_name(["word " * 60], more=1)
    assert len(long) <= THREAD_NAME_MAX and long.endswith("… (+1 more)")
    assert thread_name(["  @everyone\nhello\u200b "]) == "@\u2060everyone hello"  # one line, no mention
    assert thread_name([""]) == "New citing papers"
    assert all(len(thread_name(["x" * n], more=m)) <= 100 for n in (99, 100, 101, 500) for m in (0, 9, 12345))


async def test_a_thread_per_alert_named_after_the_citer_exactly_once(fake_discord: FakeDiscord, db_path: Path,
                                                                    clock: FakeClock, make_older_seeds) -> None:
    ingest_paths(open_db(db_path), [make_older_seeds(1)], clock=clock)
    alerts = fake_discord.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("track", {"paper": "2412.10400", "threads": "on"}, channel_id=alerts.id,
                                     permissions=MANAGE)
        assert "each alert opening a discussion thread" in (await h.wait_message()).content
        clock.advance(days=1)
        ingest_paths(open_db(db_path), [SEEDS_DIR], clock=clock)
        await bot.deliver_alerts()  # (or the poller's first tick did)
        [msg] = await fake_discord.wait_channel_messages(alerts.id, 1)
        [thread] = fake_discord.threads_of(alerts.id)
        assert thread.id == msg.id and thread.archive_minutes == THREAD_ARCHIVE_MINUTES == 10080
        citer = msg.embed["description"].split("[", 1)[1].split("]", 1)[0]
        assert thread.name == citer[:100] and 1 <= len(thread.name) <= 100
    bot2 = make_bot(db_path, clock)  # a restart: no second alert, no second thread
    async with fake_discord.connected(bot2):
        assert await bot2.deliver_alerts() == 0
    assert len(fake_discord.threads_of(alerts.id)) == 1
    assert len(fake_discord.requests_to("POST", f"/channels/{alerts.id}/messages/*/threads")) == 1
    assert openapi_check.recorded_errors(fake_discord.requests) == []


async def test_no_thread_permission_said_once_and_alerts_continue(fake_discord: FakeDiscord, db_path: Path,
                                                                 clock: FakeClock) -> None:
    fake = fake_discord
    db = open_db(db_path)
    start_older(db, clock)
    db.close()
    alerts = fake.guild.channel("alerts")
    fake.deny_threads(alerts.id)
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("follow", {"direction": RL, "threads": "on"}, channel_id=alerts.id, permissions=MANAGE)
        assert "discussion thread" in (await h.wait_message()).content
        h = await fake.slash("track", {"paper": "2412.10400", "threads": "on"}, channel_id=alerts.id,
                             permissions=MANAGE)
        await h.wait_message()
        store_pages(open_db(db_path), [seed_page(SURVEY), seed_page(TECH)], clock)
        await bot.deliver_alerts()
        await fake.wait_channel_messages(alerts.id, 3)  # the track's alert, the follow's, one notice
        texts = [m.content for m in fake.channel_messages(alerts.id)]
        notices = [t for t in texts if "Create Public Threads" in t]
        assert len(notices) == 1 and "plain messages" in notices[0]
        assert fake.threads_of(alerts.id) == []
        assert len(fake.requests_to("POST", f"/channels/{alerts.id}/messages/*/threads")) == 2  # both tried
        # the track and the follow stay enabled
        assert open_db(db_path).conn.execute("SELECT count(*) FROM tracks WHERE disabled_reason IS NULL"
                                             ).fetchone()[0] == 1
        assert open_db(db_path).conn.execute("SELECT count(*) FROM follows WHERE disabled_reason IS NULL"
                                             ).fetchone()[0] == 1
    assert openapi_check.recorded_errors(fake.requests) == []


async def test_threads_refused_in_dms_and_off_by_default(fake_discord: FakeDiscord, db_path: Path,
                                                         clock: FakeClock, make_older_seeds) -> None:
    ingest_paths(open_db(db_path), [make_older_seeds(1)], clock=clock)
    bot = make_bot(db_path, clock)
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("track", {"paper": "2412.10400", "threads": "on"}, guild_id=None)
        msg = await h.wait_message()
        assert h.ephemeral and "not in DMs" in msg.content
        h = await fake_discord.slash("track", {"paper": "2412.10400"}, permissions=MANAGE)
        assert "thread" not in (await h.wait_message()).content
        clock.advance(days=1)
        ingest_paths(open_db(db_path), [SEEDS_DIR], clock=clock)
        await bot.deliver_alerts()
        await fake_discord.wait_channel_messages(fake_discord.channel.id, 1)
    assert fake_discord.threads == {}
