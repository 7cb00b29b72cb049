"""Alerts edited in place once their citers' authors come (bot/sending/alert_edits.py), against
the fake Discord: a PATCH of the same message with the same marker, `self:hide` applied to what
is known now, a deleted message forgotten, nothing posted twice, nothing edited twice."""

from __future__ import annotations

from pathlib import Path

from mapwatch.store.database.db import open_db
from mapwatch.store.records import ArxivRecord, AuthorRecord
from mapwatch.store.scholarly.saved import save_arxiv, save_openalex
from mapwatch.store.subscriptions import tracking
from tests import openapi_check
from tests.author_helpers import SURVEY, WANG, work
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import grow, make_bot, refresh, start_older

pytest_plugins = ["tests.fakediscord.fixtures"]

OWN, THEIRS = "2611.00001", "2611.00002"


def _arxiv(pid: str, *names: str) -> ArxivRecord:
    return ArxivRecord(pid, pid, tuple(AuthorRecord(n) for n in names), "cs.LG", ("cs.LG",), None, None, None, None,
                       None)


async def test_alerts_sent_without_authors_are_edited_once_they_come(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock) -> None:
    fake = fake_discord
    db = open_db(db_path)
    start_older(db, clock, drop=0)
    save_openalex(db, [work(SURVEY, WANG)], [SURVEY], clock())
    hidden, plain = fake.guild.channel("alerts"), fake.guild.channel("general")
    for channel, hide in ((hidden, True), (plain, False)):
        tracking.add_track(db, guild_id=fake.guild.id, channel_id=channel.id, user_id=None, paper_id=SURVEY,
                           created_by=fake.user.id, now=clock(), hide_self=hide)
    db.close()
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        refresh(db_path, clock, [grow(seed_page(SURVEY), [(OWN, "Our Own Follow-up", 2026),
                                                           (THEIRS, "Someone Else's Paper", 2026)])])
        assert await bot.deliver_alerts() == 2  # no source has named the new citers' authors yet
        [first] = fake.channel_messages(hidden.id)
        [gone] = fake.channel_messages(plain.id)
        assert OWN in first.embed["description"]  # not known as a self-citation: sent
        assert await bot.deliver_alerts() == 0
        assert not fake.requests_to("PATCH", "/channels/*/messages/*")  # nothing came: nothing to edit

        db = open_db(db_path)  # the round after the tick: arXiv names them (names only)
        save_arxiv(db, [_arxiv(OWN, "S. Wang", "Ana Lima"), _arxiv(THEIRS, "Bo Chen")], [OWN, THEIRS], clock())
        db.close()
        gone.deleted = True  # someone deleted the plain channel's alert meanwhile
        assert await bot.deliver_alerts() == 0
        edits = fake.requests_to("PATCH", f"/channels/{hidden.id}/messages/{first.id}")
        assert len(edits) == 1
        [edited] = fake.channel_messages(hidden.id)
        desc = edited.embed["description"]
        assert OWN not in desc and "Bo Chen" in desc and "1 self-citation left out (self:hide)." in desc
        footer = edited.embed["footer"]["text"]
        assert footer == first.body["embeds"][0]["footer"]["text"] and " · ref t1e" in footer  # the marker kept
        assert len(fake.requests_to("PATCH", f"/channels/{plain.id}/messages/*")) == 1  # tried, 404

        assert await bot.deliver_alerts() == 0  # closed and forgotten: no edit again
        assert len(fake.requests_to("PATCH", "/channels/*/messages/*")) == 2
        db = open_db(db_path)
        assert db.conn.execute("SELECT count(*) FROM alert_messages WHERE edited_at IS NULL").fetchone()[0] == 0
        db.close()
    for channel in (hidden, plain):
        assert len(fake.requests_to("POST", f"/channels/{channel.id}/messages")) == 1
    assert openapi_check.recorded_errors(fake.requests) == []
