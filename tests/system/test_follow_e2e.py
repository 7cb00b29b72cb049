"""End to end: /follow, digests and role mentions with the real bot against the fake Discord."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import discord

from mapwatch.store.database.db import open_db
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import RL, RLHF, SURVEY, TECH, grow, make_bot, refresh, start_older

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
ROLE = 424242


def posts(fake: FakeDiscord, channel_id: int):
    return fake.requests_to("POST", f"/channels/{channel_id}/messages")


async def test_follow_then_refresh_one_message_naming_the_new_citers(fake_discord: FakeDiscord, db_path: Path,
                                                                     clock: FakeClock) -> None:
    fake = fake_discord
    db = open_db(db_path)
    start_older(db, clock)
    db.close()
    alerts, general = fake.guild.channel("alerts"), fake.channel
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("follow", {"direction": "Reinforcement learning for reasoning"}, channel_id=alerts.id)
        msg = await h.wait_message()
        assert h.ephemeral and "Manage Channels" in msg.content  # the check holds
        h = await fake.slash("follow", {"direction": "Reinforcement learning for reasoning", "role": ROLE},
                             channel_id=alerts.id, permissions=MANAGE)
        msg = await h.wait_message()
        assert not h.ephemeral and "Following **Reinforcement learning for reasoning**" in msg.content
        assert msg.allowed_mentions == {"parse": []}  # the confirmation mentions nobody
        h = await fake.slash("follow", {"direction": RLHF, "keyword": "CELLRFT"}, channel_id=general.id,
                             permissions=MANAGE)
        await h.wait_message()
        assert await bot.deliver_alerts() == 0  # a first follow does not flood

        refresh(db_path, clock, [seed_page(SURVEY), seed_page(TECH)])
        assert await bot.deliver_alerts() == 2
        assert await bot.deliver_alerts() == 0
        [post] = posts(fake, alerts.id)
        [msg] = fake.channel_messages(alerts.id)
        new = ["2506.12217", "2601.18217", "2603.07197", "2606.16733", "2609.19970", "2610.17824"]
        assert all(pid in msg.embed["description"] for pid in new)
        assert msg.embed["title"] == "6 new citing papers in Reinforcement learning for reasoning"
        # the chosen role, and only it, may be mentioned; it appears once, in the content
        assert msg.allowed_mentions["parse"] == [] and [int(r) for r in msg.allowed_mentions["roles"]] == [ROLE]
        assert not msg.allowed_mentions.get("users") and not msg.allowed_mentions.get("replied_user")
        assert msg.content.startswith(f"<@&{ROLE}> ") and str(post.json).count(f"<@&{ROLE}>") == 1
        # the keyword kept one of the six
        [kw] = fake.channel_messages(general.id)
        assert "2609.19970" in kw.embed["description"] and "2506.12217" not in kw.embed["description"]
        assert kw.allowed_mentions["parse"] == [] and not kw.allowed_mentions.get("roles")
        assert "<@&" not in kw.content

        h = await fake.slash("tracked", {})
        text = (await h.wait_message()).text()
        assert "Reinforcement learning for reasoning" in text and "Reward modeling and RLHF" in text
        assert "instant" in text and "“CELLRFT”" in text and "last delivery 1 Nov 2026" in text
        h = await fake.slash("tracked", {}, guild_id=None)  # another scope sees none of it
        assert "Reward modeling" not in (await h.wait_message()).text()

    bot2 = make_bot(db_path, clock)  # a restart repeats nothing
    async with fake.connected(bot2):
        assert await bot2.deliver_alerts() == 0
        h = await fake.slash("unfollow", {"direction": RL}, channel_id=alerts.id, permissions=MANAGE)
        assert "Stopped following" in (await h.wait_message()).content
        refresh(db_path, clock, [grow(seed_page(SURVEY), [("2611.00001", "CellRFT Again", 2026)])])
        assert await bot2.deliver_alerts() == 1  # only the keyword follow in #general remains
    assert len(posts(fake, alerts.id)) == 1 and len(posts(fake, general.id)) == 2
    assert fake.unknown_routes == []


async def test_daily_digest_once_at_its_hour_with_every_paper_and_direction(fake_discord: FakeDiscord,
                                                                            db_path: Path) -> None:
    fake = fake_discord
    clock = FakeClock(datetime(2026, 11, 1, 5, tzinfo=UTC))
    db = open_db(db_path)
    start_older(db, clock)
    db.close()
    ch = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        for name, opts in [("digest-time", {"hour": 9, "timezone": "Europe/Paris"}),
                           ("follow", {"direction": RL, "mode": "daily", "role": ROLE}),
                           ("follow", {"direction": RLHF, "mode": "daily", "keyword": "no title has this"}),
                           ("track", {"paper": TECH, "mode": "daily"}),
                           ("track", {"paper": SURVEY})]:
            h = await fake.slash(name, opts, channel_id=ch.id, permissions=MANAGE)
            msg = await h.wait_message()
            assert not h.ephemeral, msg.content
        assert "09:00 Europe/Paris" in msg.content or "after each refresh" in msg.content
        refresh(db_path, clock, [seed_page(SURVEY), seed_page(TECH)])
        assert await bot.deliver_alerts() == 1  # the instant track of SURVEY
        h = await fake.slash("digest-preview", {}, channel_id=ch.id)
        preview = await h.wait_message()
        assert h.ephemeral and "Next daily digest" in preview.content and "<@&" not in preview.text()

        clock.now = datetime(2026, 11, 1, 7, 59, tzinfo=UTC)  # 08:59 in Paris
        assert await bot.deliver_alerts() == 0
        clock.now = datetime(2026, 11, 1, 8, 0, 40, tzinfo=UTC)
        assert await bot.deliver_alerts() == 1
        assert await bot.deliver_alerts() == 0
        digest = fake.channel_messages(ch.id)[-1]
        names = [f["name"] for f in digest.embed["fields"]]
        assert names == ["Direction: Reinforcement learning for reasoning (6 new citers)",
                         "Paper: A Technical Survey of Reinforcement Learning Techniques for Large Language Models "
                         "(3 new citers, cited by 18 → 21)"]
        assert digest.content.startswith(f"<@&{ROLE}> Daily digest: 9 new citing papers")
        assert [int(r) for r in digest.allowed_mentions["roles"]] == [ROLE]

        clock.now = datetime(2026, 11, 2, 8, 1, tzinfo=UTC)  # a quiet day: nothing
        assert await bot.deliver_alerts() == 0
    bot2 = make_bot(db_path, clock)  # a restart repeats nothing
    async with fake.connected(bot2):
        assert await bot2.deliver_alerts() == 0
        refresh(db_path, clock, [grow(seed_page(TECH), [("2611.00002", "Weekend News", 2026)])])
        assert await bot2.deliver_alerts() == 0  # waits for the next digest
        clock.now = datetime(2026, 11, 3, 8, 0, tzinfo=UTC)
        assert await bot2.deliver_alerts() == 1
        last = fake.channel_messages(ch.id)[-1]
        assert "Weekend News" in str(last.embed)  # it cites TECH, placed in the direction too: both sections
        assert [f["name"].split(" (")[0] for f in last.embed["fields"]] == [  # as many new: by title
            "Paper: A Technical Survey of Reinforcement Learning Techniques for Large Language Models",
            "Direction: Reinforcement learning for reasoning"]
        assert last.content.startswith(f"<@&{ROLE}> Daily digest: 2 new citing papers")
    assert len(posts(fake, ch.id)) == 3
    with open_db(db_path).conn as c:
        assert c.execute("SELECT count(*), sum(sent) FROM digests").fetchone() == (3, 2)
