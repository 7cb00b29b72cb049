"""End to end against the fake Discord: a refresh adds citers of a tracked paper, the sources
name their authors, and the alert names them, marks the self-citation, quotes the citing
sentence, and leaves the self-citation out where the track says `self:hide`."""

from __future__ import annotations

from pathlib import Path

import discord

from mapwatch.store.database.db import open_db
from mapwatch.store.records import AuthorRecord
from mapwatch.store.scholarly.saved import save_openalex
from tests import openapi_check
from tests.author_helpers import HOSTILE, SURVEY, WANG, store_context, work
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import grow, make_bot, refresh, start_older

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
OWN, THEIRS = "2611.00001", "2611.00002"


async def test_alert_names_authors_marks_self_citations_and_self_hide_leaves_them_out(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock) -> None:
    fake = fake_discord
    db = open_db(db_path)
    start_older(db, clock, drop=0)
    db.close()
    shown, hidden = fake.guild.channel("alerts"), fake.channel
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": SURVEY}, channel_id=shown.id, permissions=MANAGE)
        assert "Tracking" in (await h.wait_message()).content
        h = await fake.slash("track", {"paper": SURVEY, "self": "hide"}, channel_id=hidden.id, permissions=MANAGE)
        msg = await h.wait_message()
        assert "self-citations left out" in msg.content and msg.allowed_mentions == {"parse": []}

        refresh(db_path, clock, [grow(seed_page(SURVEY), [(OWN, "Our Own Follow-up", 2026),
                                                           (THEIRS, "Someone Else's Paper", 2026)])])
        db = open_db(db_path)  # the enrichment stage of the tick, after the refresh
        save_openalex(db, [work(SURVEY, WANG), work(OWN, AuthorRecord("Guibin Zhang", "A5000000002"), WANG),
                           work(THEIRS, AuthorRecord(HOSTILE, "A5000000003"), AuthorRecord("Ana Lima"))],
                      [SURVEY, OWN, THEIRS], clock())
        store_context(db, clock(), THEIRS, sentences=("Unlike @everyone, we build on <@123> [2].",))
        db.close()

        assert await bot.deliver_alerts() == 2
        assert await bot.deliver_alerts() == 0
        [full] = fake.channel_messages(shown.id)
        desc = full.embed["description"]
        own_line = next(line for line in desc.splitlines() if OWN in line)
        assert "↺ self-citation" in own_line and full.embed["title"].endswith(": 2 new citers")
        assert "\n  Guibin Zhang, Shuhe Wang\n" in desc
        assert "\n  Mallory \\[click\\](https://evil.example) @\u2060everyone \\*bold\\*, Ana Lima" in desc
        quote = "> “Unlike @\u2060everyone, we build on \\<@\u2060123\\> \\[2\\].”"
        assert f"{quote}\n— Semantic Scholar · background · influential" in desc
        assert full.allowed_mentions["parse"] == [] and not full.allowed_mentions.get("roles")

        [left] = fake.channel_messages(hidden.id)
        assert OWN not in left.embed["description"] and THEIRS in left.embed["description"]
        assert left.embed["title"].endswith(": 1 new citer")
        assert "1 self-citation left out (self:hide)." in left.embed["description"]
        assert left.allowed_mentions["parse"] == []

        h = await fake.slash("author", {"author": "Shuhe Wang"}, channel_id=shown.id)
        card = await h.wait_message()
        assert card.embed["title"] == "Shuhe Wang" and OWN in card.embed["fields"][0]["value"]
    assert openapi_check.recorded_errors(fake.requests) == []
    assert fake.unknown_routes == []
