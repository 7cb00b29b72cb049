"""Delivering follows and digests: pacing, per-channel limits, exactly once, the real client
against the fake Discord (allowed_mentions carries the chosen role and nothing else)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest

from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.bot.sending import delivery_loop
from mapwatch.bot.sending.delivery import discord_sender
from mapwatch.bot.sending.outcomes import FORBIDDEN, GONE, Sent
from mapwatch.bot.sending.pacer import Pacer, per_channel
from mapwatch.store.database.db import open_db
from mapwatch.store.subscriptions import digests, follows, tracking
from mapwatch.store.subscriptions.follows import Place
from tests.conftest import FakeClock, seed_page
from tests.follow_helpers import RL, RLHF, SURVEY, TECH, grow, start_older, store_pages

pytest_plugins = ["tests.fakediscord.fixtures"]

G = 100


class FakeTime:
    def __init__(self) -> None:
        self.t = 0.0
        self.stamps: list[float] = []

    def monotonic(self) -> float:
        return self.t

    async def sleep(self, s: float) -> None:
        self.t += s


async def test_pacer_never_exceeds_its_rate_in_any_second() -> None:
    ft = FakeTime()
    pacer = Pacer(rate=20, burst=5, monotonic=ft.monotonic, sleep=ft.sleep)
    for _ in range(300):
        await pacer.wait()
        ft.stamps.append(ft.t)
    assert ft.t > 14  # 300 posts at 20/s after a burst of 5 take ~14.75 s of (fake) time
    for i, start in enumerate(ft.stamps):
        in_window = sum(1 for s in ft.stamps[i:] if s < start + 1.0)
        assert in_window <= 25  # rate + burst: never near Discord's 50 requests/s
    with pytest.raises(ValueError):
        Pacer(rate=0)


def test_per_channel_keeps_order_and_defers_the_rest() -> None:
    items = [("a", 1), ("a", 2), ("b", 1), ("a", 3), ("a", 4), ("b", 2)]
    now, later = per_channel(items, key=lambda x: x[0], limit=2)
    assert now == [("a", 1), ("a", 2), ("b", 1), ("b", 2)] and later == [("a", 3), ("a", 4)]


def make_call(db):
    lock = asyncio.Lock()

    async def call(fn, *args, **kw):
        async with lock:
            return await asyncio.to_thread(fn, db, *args, **kw)

    return call


class Recorder:
    """`send` at the network edge: records posts, answers with a scripted status per channel."""

    def __init__(self) -> None:
        self.posts: list[tuple[Place, Delivery]] = []
        self.status: dict[int, str] = {}

    async def send(self, place: Place, delivery: Delivery, nonce: str) -> Sent:
        assert 1 <= len(nonce) <= 25
        status = self.status.get(place.channel_id, "ok")
        if status == "ok":
            self.posts.append((place, delivery))
            return Sent("ok", 9000 + len(self.posts))
        return Sent(status)


def fast_pacer() -> Pacer:
    ft = FakeTime()
    return Pacer(rate=20, burst=5, monotonic=ft.monotonic, sleep=ft.sleep)


def add(db, clock, channel: int, slug: str = RL, **kw) -> follows.Follow:
    return follows.add_follow(db, guild_id=G, channel_id=channel, user_id=1, direction_slug=slug, created_by=1,
                              now=clock(), **kw)[0]


async def test_loop_limits_per_channel_retries_and_disables(db, clock: FakeClock) -> None:
    start_older(db, clock)
    add(db, clock, 1)
    add(db, clock, 1, slug=RLHF)
    add(db, clock, 2)
    gone = add(db, clock, 3)
    add(db, clock, 4)
    add(db, clock, 5, keyword="no title has this")
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    rec = Recorder()
    rec.status = {3: "gone", 4: "retry"}
    call = make_call(db)
    sent = await delivery_loop.deliver_follows(call, rec.send, fast_pacer(), clock, per_channel_limit=1)
    assert sent == 2 and sorted(p.channel_id for p, _ in rec.posts) == [1, 2]
    assert follows.get_follow(db, gone.id).disabled_reason == GONE  # type: ignore[union-attr]
    # channel 1's second follow waited for the next tick; channel 4 is retried; 5 advanced quietly
    rec.status = {}
    assert await delivery_loop.deliver_follows(call, rec.send, fast_pacer(), clock, per_channel_limit=1) == 2
    assert sorted(p.channel_id for p, _ in rec.posts[2:]) == [1, 4]
    assert await delivery_loop.deliver_follows(call, rec.send, fast_pacer(), clock) == 0
    assert len(rec.posts) == 4


async def test_daily_digest_loop_once_at_its_hour_and_never_on_a_quiet_day(db_path, clock: FakeClock) -> None:
    clock.now = datetime(2026, 11, 1, 4, tzinfo=UTC)
    db = open_db(db_path)
    start_older(db, clock)
    add(db, clock, 7, mode="daily", role_id=42)
    add(db, clock, 7, slug=RLHF, mode="daily")
    digests.set_digest_settings(db, guild_id=G, user_id=1, hour=8, timezone="Europe/Paris", updated_by=1,
                                now=clock())
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    rec = Recorder()
    call = make_call(db)
    clock.now = datetime(2026, 11, 1, 6, 59, tzinfo=UTC)  # 07:59 in Paris
    assert await delivery_loop.deliver_digests(call, rec.send, fast_pacer(), clock) == 0
    clock.now = datetime(2026, 11, 1, 7, 0, 30, tzinfo=UTC)
    assert await delivery_loop.deliver_digests(call, rec.send, fast_pacer(), clock) == 1
    assert await delivery_loop.deliver_digests(call, rec.send, fast_pacer(), clock) == 0
    [(place, d)] = rec.posts
    assert place == Place(G, 7, None) and d.role_ids == (42,)
    assert [f.name.split(" (")[0] for f in d.embeds[0].fields] == [
        "Direction: Reinforcement learning for reasoning", "Direction: Reward modeling and RLHF"]
    db.close()
    db = open_db(db_path)  # restart
    call = make_call(db)
    clock.now = datetime(2026, 11, 2, 7, 5, tzinfo=UTC)  # the next day: nothing new
    assert await delivery_loop.deliver_digests(call, rec.send, fast_pacer(), clock) == 0
    assert db.conn.execute("SELECT count(*), sum(sent) FROM digests").fetchone() == (2, 1)
    store_pages(db, [grow(seed_page(SURVEY), [("2611.00009", "Late News", 2026)])], clock)
    clock.now = datetime(2026, 11, 3, 7, 0, tzinfo=UTC)
    assert await delivery_loop.deliver_digests(call, rec.send, fast_pacer(), clock) == 1
    assert "Late News" in rec.posts[-1][1].embeds[0].fields[0].value
    db.close()


async def test_real_client_posts_once_with_only_the_chosen_role(fake_discord, make_client, db_path,
                                                                clock: FakeClock) -> None:
    fake = fake_discord
    alerts = fake.guild.channel("alerts")
    db = open_db(db_path)
    start_older(db, clock)
    follows.add_follow(db, guild_id=fake.guild.id, channel_id=alerts.id, user_id=fake.user.id, direction_slug=RL,
                       role_id=4242, created_by=fake.user.id, now=clock())
    follows.add_follow(db, guild_id=fake.guild.id, channel_id=fake.channel.id, user_id=fake.user.id,
                       direction_slug=RLHF, keyword="reasoning", created_by=fake.user.id, now=clock())
    follows.add_follow(db, guild_id=fake.guild.id, channel_id=987654321, user_id=fake.user.id,
                       direction_slug=RL, created_by=fake.user.id, now=clock())
    fake.delete_channel(987654321)
    store_pages(db, [grow(seed_page(SURVEY), [("2611.00001", "**@everyone** <@&1> reasoning boost", 2026)])], clock)
    client = make_client()
    async with fake.connected(client):
        sent = await delivery_loop.deliver_follows(make_call(db), discord_sender(client), Pacer(), clock)
    assert sent == 2
    [msg] = fake.channel_messages(alerts.id)
    assert msg.content.startswith("<@&4242> ")
    assert [int(r) for r in msg.allowed_mentions["roles"]] == [4242] and msg.allowed_mentions["parse"] == []
    assert "users" not in msg.allowed_mentions or msg.allowed_mentions["users"] == []
    assert "2611.00001" in msg.embed["description"] and "2506.12217" in msg.embed["description"]
    [other] = fake.channel_messages(fake.channel.id)
    assert other.allowed_mentions["parse"] == [] and not other.allowed_mentions.get("roles")
    assert "<@&" not in other.content and "@everyone" not in other.embed["description"]
    assert "@\u2060everyone" in other.embed["description"]  # shown, but it cannot ping
    assert "2506.12217" not in other.embed["description"]  # the keyword kept only the matching title
    gone = [f for f in follows.list_follows(db, guild_id=fake.guild.id, user_id=None) if f.channel_id == 987654321]
    assert gone[0].disabled_reason == GONE
    db.close()

    db = open_db(db_path)  # a restart repeats nothing
    client2 = make_client()
    async with fake.connected(client2):
        assert await delivery_loop.deliver_follows(make_call(db), discord_sender(client2), Pacer(), clock) == 0
    assert len(fake.requests_to("POST", "/channels/*/messages")) == 3  # two delivered, one 404
    assert fake.unknown_routes == []
    db.close()


async def test_a_digest_to_a_gone_channel_disables_its_follows_and_tracks(db, clock: FakeClock) -> None:
    clock.now = datetime(2026, 11, 1, 4, tzinfo=UTC)
    start_older(db, clock)
    f = add(db, clock, 8, mode="weekly")
    tracking.add_track(db, guild_id=G, channel_id=8, user_id=1, paper_id=SURVEY, created_by=1, now=clock(),
                       mode="weekly")
    instant = add(db, clock, 8, slug=RLHF)
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    rec = Recorder()
    rec.status = {8: "forbidden"}
    clock.now = datetime(2026, 11, 2, 9, 5, tzinfo=UTC)  # Monday
    assert await delivery_loop.deliver_digests(make_call(db), rec.send, fast_pacer(), clock) == 0
    assert follows.get_follow(db, f.id).disabled_reason == FORBIDDEN  # type: ignore[union-attr]
    [t] = tracking.list_tracks(db, guild_id=G, user_id=None)
    assert t.disabled_reason == FORBIDDEN
    assert follows.get_follow(db, instant.id).disabled_reason is None  # other modes are not touched
    assert db["digests"].count == 0 and digests.due_digests(db, clock()) == []
