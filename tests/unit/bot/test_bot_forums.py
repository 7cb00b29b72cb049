"""Forum channels (issue 25, item 1), end to end: the real bot against the fake Discord, every
request checked against Discord's OpenAPI description."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import discord

from mapwatch.bot.rendering.render_follow import Delivery, ForumPost, digest_post_title, forum_tag
from mapwatch.bot.rendering.replies import Embed
from mapwatch.bot.sending.delivery import discord_sender, marked
from mapwatch.store.database.db import open_db
from mapwatch.store.subscriptions.follows import Place
from tests import openapi_check
from tests.conftest import FakeClock, older_snapshot, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import RL, SURVEY, TECH, grow, make_bot, refresh, start_older, store_pages

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
SHARED = ("2612.00001", "A Shared Citer of Both Surveys", 2026)
RL_TAG = forum_tag("Reinforcement learning for reasoning")


def test_tag_and_digest_titles_fit_discord() -> None:
    assert RL_TAG == "Reinforcement…" and len(forum_tag("x" * 50)) == 20 and forum_tag("RLHF") == "RLHF"
    assert digest_post_title("daily", "2026-11-01T08:00:00+00:00") == "Daily digest · 1 Nov 2026"


async def test_track_alerts_become_posts_and_a_shared_citer_reuses_its_post(fake_discord: FakeDiscord,
                                                                           db_path: Path, clock: FakeClock) -> None:
    fake = fake_discord
    db = open_db(db_path)
    store_pages(db, [older_snapshot(seed_page(SURVEY), 1), older_snapshot(seed_page(TECH), 1)], clock)
    db.close()
    forum = fake.add_forum("papers")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": SURVEY, "channel": forum.id})  # Manage Channels there too
        msg = await h.wait_message()
        assert h.ephemeral and "Manage Channels" in msg.content
        h = await fake.slash("track", {"paper": SURVEY, "channel": forum.id}, permissions=MANAGE,
                             target_permissions=0)  # Manage Channels here, not in the forum
        msg = await h.wait_message()
        assert h.ephemeral and "Manage Channels" in msg.content
        for paper in (SURVEY, TECH):
            h = await fake.slash("track", {"paper": paper, "channel": forum.id}, permissions=MANAGE)
            said = (await h.wait_message()).content
            assert f"<#{forum.id}> gets an alert" in said, said
        h = await fake.slash("track", {"paper": SURVEY, "channel": forum.id, "threads": "on"}, permissions=MANAGE)
        assert "forum" in (await h.wait_message()).content  # threads are for text channels
        refresh(db_path, clock, [grow(seed_page(SURVEY), [SHARED])])
        await bot.deliver_alerts()
        [post] = await fake.wait_for(lambda: fake.threads_of(forum.id))
        first = fake.channel_messages(post.id)
        assert len(first) == 1 and first[0].id == post.id
        assert post.name.endswith("(+1 more)") and len(post.name) <= 100
        # TECH now gains the same citer: its alert goes into the existing post
        refresh(db_path, clock, [grow(seed_page(TECH), [SHARED])])
        await bot.deliver_alerts()
        await fake.wait_channel_messages(post.id, 2)
        assert [t.id for t in fake.threads_of(forum.id)] == [post.id]
        assert "A Technical Survey" in fake.channel_messages(post.id)[1].embed["title"]
    bot2 = make_bot(db_path, clock)  # a restart: nothing again
    async with fake.connected(bot2):
        assert await bot2.deliver_alerts() == 0
    assert len(fake.threads_of(forum.id)) == 1 and len(fake.channel_messages(post.id)) == 2
    assert fake.requests_to("POST", f"/channels/{forum.id}/messages") == []
    assert openapi_check.recorded_errors(fake.requests) == []


async def test_direction_tags_matched_created_within_20_or_left_off(fake_discord: FakeDiscord, db_path: Path,
                                                                   clock: FakeClock) -> None:
    fake = fake_discord
    db = open_db(db_path)
    start_older(db, clock)
    db.close()
    fillers = [f"topic {i}" for i in range(19)]
    room = fake.add_forum("room", fillers)  # 19 tags: the direction's becomes the 20th
    full = fake.add_forum("full", [*fillers, "topic 19"])  # 20 tags: the post goes untagged
    named = fake.add_forum("named", ["news", RL_TAG.upper()])  # matched by name, any case
    locked = fake.add_forum("locked", [])
    fake.deny_forum_edit(locked.id)  # the bot may not add tags: untagged
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        for forum in (room, full, named, locked):
            h = await fake.slash("follow", {"direction": RL, "channel": forum.id}, permissions=MANAGE)
            assert "Following" in (await h.wait_message()).content
        refresh(db_path, clock, [seed_page(SURVEY), seed_page(TECH)])
        await bot.deliver_alerts()
        await fake.wait_for(lambda: all(fake.threads_of(f.id) for f in (room, full, named, locked)))
    [p_room], [p_full], [p_named], [p_locked] = (fake.threads_of(f.id) for f in (room, full, named, locked))
    assert fake.tag_names(p_room) == [RL_TAG] and len(room.tags) == 20
    assert fake.tag_names(p_full) == [] and len(full.tags) == 20
    assert fake.tag_names(p_named) == [RL_TAG.upper()] and len(named.tags) == 2
    assert fake.tag_names(p_locked) == [] and locked.tags == []
    assert [r.path for r in fake.requests if r.method == "PATCH"] == [f"/channels/{room.id}",
                                                                      f"/channels/{locked.id}"]
    assert p_room.name.endswith("(+5 more)")  # six new citing papers
    assert openapi_check.recorded_errors(fake.requests) == []


async def test_a_digest_in_a_forum_is_one_post_per_period(fake_discord: FakeDiscord, db_path: Path) -> None:
    fake = fake_discord
    clock = FakeClock(datetime(2026, 11, 1, 5, tzinfo=UTC))
    db = open_db(db_path)
    start_older(db, clock)
    db.close()
    forum = fake.add_forum("digests")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("follow", {"direction": RL, "mode": "daily", "channel": forum.id}, permissions=MANAGE)
        await h.wait_message()
        refresh(db_path, clock, [seed_page(SURVEY)])
        clock.now = datetime(2026, 11, 1, 9, 1, tzinfo=UTC)
        await bot.deliver_alerts()  # (or the poller's tick did)
        await fake.wait_for(lambda: len(fake.threads_of(forum.id)) == 1)
        clock.now = datetime(2026, 11, 2, 9, 1, tzinfo=UTC)
        refresh(db_path, clock, [seed_page(TECH)])
        await bot.deliver_alerts()
        await fake.wait_for(lambda: len(fake.threads_of(forum.id)) == 2)
        assert await bot.deliver_alerts() == 0
    posts = fake.threads_of(forum.id)
    assert [p.name for p in posts] == ["Daily digest · 1 Nov 2026", "Daily digest · 2 Nov 2026"]
    assert all(len(fake.channel_messages(p.id)) == 1 for p in posts)
    assert openapi_check.recorded_errors(fake.requests) == []


async def test_a_resent_forum_post_is_found_not_posted_twice(fake_discord: FakeDiscord, db_path: Path,
                                                            clock: FakeClock) -> None:
    """Forum posts carry no nonce: a resend (a crash after Discord made the post, before it was
    recorded) finds its marker among the bot's posts; a gone post is replaced by a new one."""
    fake = fake_discord
    open_db(db_path).close()
    forum = fake.add_forum("papers")
    bot = make_bot(db_path, clock)
    place = Place(fake.guild.id, forum.id, None)
    message = Delivery("", (Embed("An alert", "a new citer", None, (), "footer"),))
    async with fake.connected(bot):
        send = discord_sender(bot)
        post = ForumPost("A citing paper", "", ("2612.00001",))
        first = await send(place, marked(Delivery(message.content, message.embeds, forum=post), "t1e1"), "t1e1")
        assert first.status == "ok" and not first.found
        db = open_db(db_path)
        with db.atomic():
            db.conn.execute("DELETE FROM forum_posts")  # as if the crash lost the record
        db.close()
        again = ForumPost("A citing paper", "", ("2612.00001",), resend=True)
        second = await send(place, marked(Delivery("", message.embeds, forum=again), "t1e1"), "t1e1")
        assert second.status == "ok" and second.found and second.message_id == first.message_id
        assert len(fake.threads_of(forum.id)) == 1
        # the post is deleted in Discord: the next alert about that paper opens a new one
        fake.delete_channel(first.message_id or 0)
        later = ForumPost("A citing paper", "", ("2612.00001",), thread_id=first.message_id)
        third = await send(place, marked(Delivery("", message.embeds, forum=later), "t1e2"), "t1e2")
        assert third.status == "ok" and third.message_id != first.message_id
        assert len(fake.threads_of(forum.id)) == 2
    rows = open_db(db_path).conn.execute("SELECT citer_id, thread_id FROM forum_posts").fetchall()
    assert rows == [("2612.00001", third.message_id)]
    assert openapi_check.recorded_errors(fake.requests) == []
