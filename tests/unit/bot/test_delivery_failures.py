"""Deliveries Discord refuses for good, and resends after Discord forgot their nonce
(issue 12, items 2 and 8). The real client (MapwatchBot) against the fake Discord.

- A 400 (50035 Invalid Form Body) on one alert, follow delivery or digest: after
  `MAX_REFUSALS` tries it is recorded as failed (HTTP status, Discord's code and message, in
  the log and in /tracked), the cursor moves past it, and later citers are delivered.
- A 5xx keeps being retried, as long as it takes, and counts nothing.
- A delivery recorded as "sending" and older than Discord's nonce memory is looked up in the
  channel's recent messages: found, it is not posted again; absent, it is posted once.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import discord
import pytest

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.sending import delivery, delivery_loop, outcomes
from mapwatch.bot.sending.pacer import Pacer
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.subscriptions import deliveries, follows, tracking
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import RL, SURVEY, TECH, start_older, store_pages

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
REFUSAL = "HTTP 400, Discord error 50035: Invalid Form Body"


def make_bot(db_path: Path, clock: FakeClock) -> MapwatchBot:
    return MapwatchBot(db_path, base_url="http://feeds.example", guild_ready_timeout=0.05, poll=False,
                       clock=clock)


async def ingest(db_path: Path, folder: Path, clock: FakeClock) -> None:
    clock.advance(days=1)
    db = open_db(db_path)
    try:
        await asyncio.to_thread(ingest_paths, db, [folder], clock=clock)
    finally:
        db.close()


def query(db_path: Path, sql: str, *params) -> list[tuple]:
    conn = sqlite3.connect(db_path)
    try:
        return conn.execute(sql, params).fetchall()
    finally:
        conn.close()


def first_new_citer(db_path: Path) -> str:
    db = open_db(db_path)
    try:
        return tracking.pending_alerts(db)[0].new_citers[0].id
    finally:
        db.close()


async def test_a_refused_alert_is_recorded_failed_and_later_citers_arrive(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock, make_older_seeds, caplog) -> None:
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(6)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    caplog.set_level(logging.INFO)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": SURVEY}, channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        await ingest(db_path, make_older_seeds(3), clock)
        # Discord refuses, for ever, any message naming this citer (as it would an embed it
        # finds invalid): the alert holding it can never be delivered.
        fake.refuse_posts(channel_id=alerts.id, containing=first_new_citer(db_path))
        [(cursor, upto)] = query(db_path, "SELECT t.last_event_id, (SELECT max(id) FROM events e"
                                          " WHERE e.paper_id = t.paper_id) FROM tracks t")
        for attempt in range(1, delivery.MAX_REFUSALS + 1):
            assert await bot.deliver_alerts() == 0
            failure = query(db_path, "SELECT last_event_id, last_failure FROM tracks")[0]
            if attempt < delivery.MAX_REFUSALS:
                assert failure == (cursor, None), attempt  # held back, retried
        assert len(fake.requests_to("POST", f"/channels/{alerts.id}/messages")) == delivery.MAX_REFUSALS
        assert failure[0] == upto and REFUSAL in failure[1]  # recorded, and the cursor moved past it
        assert any(REFUSAL in r.getMessage() and r.levelno == logging.ERROR for r in caplog.records)
        assert await bot.deliver_alerts() == 0  # not tried again
        assert len(fake.requests_to("POST", f"/channels/{alerts.id}/messages")) == delivery.MAX_REFUSALS
        # Later citers are delivered.
        await ingest(db_path, SEEDS_DIR, clock)
        assert await bot.deliver_alerts() == 1
        [msg] = fake.channel_messages(alerts.id)
        assert msg.embed["title"].endswith(": 3 new citers")
        h = await fake.slash("tracked", {}, channel_id=alerts.id)
        shown = (await h.wait_message()).text()
        assert "last failed delivery" in shown and REFUSAL in shown


async def test_5xx_is_retried_as_long_as_it_takes_and_counts_nothing(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock, make_older_seeds) -> None:
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(3)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": SURVEY}, channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        await ingest(db_path, SEEDS_DIR, clock)
        fake.inject("POST /channels/*/messages", 503, {"message": "upstream", "code": 0},
                    times=delivery.MAX_REFUSALS + 2)  # discord.py does not retry a 503 itself
        for _ in range(delivery.MAX_REFUSALS + 2):
            assert await bot.deliver_alerts() == 0
        assert query(db_path, "SELECT last_failure FROM tracks") == [(None,)]
        assert query(db_path, "SELECT count(*) FROM bot_state WHERE key LIKE 'refused:%'") == [(0,)]
        assert await bot.deliver_alerts() == 1
        assert len(fake.channel_messages(alerts.id)) == 1


async def test_a_refused_follow_delivery_is_recorded_failed_and_later_ones_arrive(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock, make_older_seeds) -> None:
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(6)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("follow", {"direction": "Reinforcement learning for reasoning"},
                             channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        await ingest(db_path, make_older_seeds(3), clock)
        fake.refuse_posts(channel_id=alerts.id, status=400, code=50035)
        for _ in range(delivery.MAX_REFUSALS):
            assert await bot.deliver_alerts() == 0
        [(cursor, failure)] = query(db_path, "SELECT last_event_id, last_failure FROM follows")
        assert REFUSAL in failure and cursor == query(db_path, "SELECT max(id) FROM events")[0][0]
        fake.clear_faults()
        await ingest(db_path, SEEDS_DIR, clock)
        assert await bot.deliver_alerts() == 1
        assert len(fake.channel_messages(alerts.id)) == 1
        h = await fake.slash("tracked", {}, channel_id=alerts.id)
        assert REFUSAL in (await h.wait_message()).text()


async def test_a_refused_digest_is_recorded_failed_once_and_the_next_period_is_sent(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock) -> None:
    fake = fake_discord
    clock.now = datetime(2026, 11, 1, 4, tzinfo=UTC)
    db = open_db(db_path)
    start_older(db, clock)
    alerts = fake.guild.channel("alerts")
    follows.add_follow(db, guild_id=fake.guild.id, channel_id=alerts.id, user_id=None, direction_slug=RL,
                       mode="daily", created_by=1, now=clock())
    store_pages(db, [seed_page(SURVEY)], clock)
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        fake.refuse_posts(channel_id=alerts.id, code=50035)
        clock.now = datetime(2026, 11, 1, 9, 0, 30, tzinfo=UTC)
        for _ in range(delivery.MAX_REFUSALS):
            assert await bot.deliver_alerts() == 0
        assert db.conn.execute("SELECT sent, failure IS NOT NULL FROM digests").fetchall() == [(0, 1)]
        assert REFUSAL in db.conn.execute("SELECT failure FROM digests").fetchone()[0]
        assert REFUSAL in db.conn.execute("SELECT last_failure FROM follows").fetchone()[0]
        assert await bot.deliver_alerts() == 0  # that period is handled: not tried again
        assert len(fake.requests_to("POST", f"/channels/{alerts.id}/messages")) == delivery.MAX_REFUSALS
        fake.clear_faults()
        store_pages(db, [seed_page(TECH)], clock)
        clock.now = datetime(2026, 11, 2, 9, 0, 30, tzinfo=UTC)
        assert await bot.deliver_alerts() == 1
        assert len(fake.channel_messages(alerts.id)) == 1
    db.close()


def test_outcomes_are_classified_once() -> None:
    class Resp:
        def __init__(self, status: int) -> None:
            self.status, self.reason = status, "x"

    def err(status: int, cls=discord.HTTPException):
        return cls(Resp(status), {"code": 50035 if status == 400 else 0, "message": "Invalid Form Body"})

    assert outcomes.outcome_of(err(400)).status == "refused"
    assert outcomes.outcome_of(err(400)).reason == REFUSAL
    assert outcomes.outcome_of(err(413)).status == "refused"
    assert outcomes.outcome_of(err(429)).status == "retry"
    assert outcomes.outcome_of(err(500, discord.DiscordServerError)).status == "retry"
    assert outcomes.outcome_of(err(403, discord.Forbidden)).status == "forbidden"
    assert outcomes.outcome_of(err(404, discord.NotFound)).status == "gone"
    assert outcomes.outcome_of(TimeoutError()).status == "retry"


# -- item 8: a resend after Discord forgot the nonce -----------------------------------------

@pytest.mark.parametrize("fake_config", [{"nonce_ttl": 0.05}])
async def test_an_old_delivery_already_posted_is_found_and_not_resent(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock, make_older_seeds) -> None:
    """Discord created the alert, the bot never learnt it (lost answer, then a long outage):
    the nonce is forgotten, so the bot must find the message itself."""
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(3)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": SURVEY}, channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        await ingest(db_path, SEEDS_DIR, clock)
        fake.lose_answer("POST /channels/*/messages", 503)
        assert await bot.deliver_alerts() == 0  # Discord has it; the bot saw a 503
        [posted] = fake.channel_messages(alerts.id)
        assert posted.embed["footer"]["text"].endswith(f"ref {posted.body['nonce']}")
        clock.advance(minutes=delivery.NONCE_WINDOW.total_seconds() / 60 + 1)  # the bot was down a while
        await asyncio.sleep(0.1)  # on purpose: longer than the fake's nonce memory (0.05 s)
        assert await bot.deliver_alerts() == 0  # found: nothing sent
        assert len(fake.channel_messages(alerts.id)) == 1
        assert len(fake.requests_to("POST", f"/channels/{alerts.id}/messages")) == 1
        assert len(fake.requests_to("GET", f"/channels/{alerts.id}/messages")) == 1
        assert query(db_path, "SELECT count(*) FROM bot_state WHERE key LIKE 'alert-sending:%'") == [(0,)]
        assert await bot.deliver_alerts() == 0  # settled
        assert len(fake.channel_messages(alerts.id)) == 1


@pytest.mark.parametrize("fake_config", [{"nonce_ttl": 0.05}])
async def test_an_old_delivery_never_posted_is_sent_once(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock, make_older_seeds) -> None:
    """The bot recorded "sending" and crashed before posting; back after a long outage it
    looks, does not find it, and posts it once. Within the window it trusts the nonce."""
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(3)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("follow", {"direction": "Reinforcement learning for reasoning"},
                             channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        h = await fake.slash("track", {"paper": SURVEY}, channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        await ingest(db_path, SEEDS_DIR, clock)
        db = open_db(db_path)
        try:  # the crash: marked as being sent, never posted
            a = tracking.pending_alerts(db)[0]
            deliveries.mark_sending(db, deliveries.TRACKS, a.track.id, a.upto_event_id, clock())
            n = follows.pending_follow_alerts(db)[0]
            deliveries.mark_sending(db, deliveries.FOLLOWS, n.follow.id, n.upto_event_id, clock())
        finally:
            db.close()
        clock.advance(minutes=delivery.NONCE_WINDOW.total_seconds() / 60 + 1)
        assert await bot.deliver_alerts() == 2
        assert len(fake.requests_to("GET", f"/channels/{alerts.id}/messages")) == 2  # looked for each
        nonces = sorted(m.body["nonce"] for m in fake.channel_messages(alerts.id))
        assert nonces == sorted([f"t{a.track.id}e{a.upto_event_id}", f"f{n.follow.id}e{n.upto_event_id}"])
        assert await bot.deliver_alerts() == 0


async def test_the_loop_finds_by_marker_without_discord(db_path: Path, clock: FakeClock) -> None:
    """The lookup as the loop uses it: `find` is asked only for an old "sending" delivery."""
    db = open_db(db_path)
    start_older(db, clock)
    f, _ = follows.add_follow(db, guild_id=1, channel_id=7, user_id=None, direction_slug=RL, created_by=1,
                              now=clock())
    store_pages(db, [seed_page(SURVEY)], clock)
    news = follows.pending_follow_alerts(db)[0]
    deliveries.mark_sending(db, deliveries.FOLLOWS, f.id, news.upto_event_id, clock())
    asked: list[str] = []

    async def call(fn, *args, **kw):
        return fn(db, *args, **kw)

    async def send(place, message, nonce):  # pragma: no cover - must not be reached
        raise AssertionError("resent")

    async def find(place, nonce):
        asked.append(nonce)
        return 4242

    clock.advance(minutes=6)
    assert await delivery_loop.deliver_follows(call, send, Pacer(), clock, find=find) == 0
    assert asked == [f"f{f.id}e{news.upto_event_id}"]
    assert follows.get_follow(db, f.id).last_event_id == news.upto_event_id
    db.close()
