"""Following a person or a whole team (issue 29, item 3): /team, /track author: and team:,
one alert per citing paper ("X cites 2 of your papers"), exactly once across a restart,
digests, threads and webhooks; end to end against the fake Discord, every request checked
against Discord's OpenAPI description. Bylines come in through the real store API
(store.scholarly.saved.save_openalex)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import discord
import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.errors import BadOption
from mapwatch.store.questions import teams as people
from mapwatch.store.records import AuthorRecord, OpenAlexWork
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions import deliveries, people_tracks, teams, webhooks
from tests import openapi_check
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import SURVEY, TECH, grow, make_bot, refresh, store_pages

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
MANAGE_ALL = discord.Permissions(manage_channels=True, manage_guild=True)
ADA = "0000-0002-1825-0097"  # ORCID's own example iD (valid checksum)
SHARED = ("2612.00001", "A Shared Citer of Both Surveys", 2026)
ONLY_TECH = ("2612.00002", "A Paper Citing the Technical Survey", 2026)


def bylines(db, now: datetime) -> None:
    """Ada wrote both surveys (OpenAlex A100, her ORCID); two different Bob Smiths, one each."""
    save_openalex(db, [
        OpenAlexWork(SURVEY, "W1", (AuthorRecord("Ada Lovelace", "A100", ADA), AuthorRecord("Bob Smith", "A200")),
                     None, None),
        OpenAlexWork(TECH, "W2", (AuthorRecord("Ada Lovelace", "A100", None), AuthorRecord("Bob Smith", "A300")),
                     None, None)], [SURVEY, TECH], now)


def setup(db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    bylines(db, clock())
    db.close()


# -- who a person is -------------------------------------------------------------------------

def test_people_by_orcid_id_or_a_name_and_never_a_guess(db_path: Path, clock: FakeClock) -> None:
    setup(db_path, clock)
    db = open_db(db_path)
    ada = people.resolve_person(db, f"https://orcid.org/{ADA}")
    assert (ada.key, ada.name, ada.author_id, ada.papers) == (ADA, "Ada Lovelace", "A100", 2)
    # her OpenAlex id finds the paper whose row lacks the ORCID too; so does her name, any case
    assert people.person_papers(db, "A100") == people.person_papers(db, ADA) == {SURVEY, TECH}
    assert people.resolve_person(db, "ada LOVELACE").key == "A100"
    try:
        people.resolve_person(db, "Bob Smith")
        raise AssertionError("a name that fits two people was guessed")
    except people.PersonChoice as choice:
        assert [p.key for p in choice.people] == ["A200", "A300"]
        assert {p.example.id for p in choice.people if p.example} == {SURVEY, TECH}
    try:
        people.resolve_person(db, "Nobody Atall")
        raise AssertionError("found Nobody Atall")
    except people.PersonNotFound:
        pass
    with pytest.raises(BadOption, match=r"not a valid ORCID \(its check digit should be 7"):  # never a name
        people.resolve_person(db, "0000-0002-1825-0098")


def test_a_team_holds_people_and_papers(db_path: Path, clock: FakeClock) -> None:
    setup(db_path, clock)
    db = open_db(db_path)
    team, new = teams.ensure_team(db, 5, "Reading Group!", 1, clock())
    assert new and team.slug == "reading-group" and team.feed_slug.startswith("reading-group-")
    assert teams.add_member(db, team, "author", "A200", "Bob Smith", 1, clock())
    assert not teams.add_member(db, team, "author", "A200", "Bob Smith", 1, clock())
    again, new = teams.ensure_team(db, 5, "reading group", 1, clock())
    assert not new and again.feed_slug == team.feed_slug
    assert people.team_papers(db, again) == {SURVEY}
    teams.add_member(db, again, "paper", TECH, "Tech", 1, clock())
    assert people.team_papers(db, people.find_team(db, 5, "Reading Group!")) == {SURVEY, TECH}
    assert people.find_team(db, 6, "reading-group") is None  # teams are per server
    assert people.team_paper_ids(db) == sorted({SURVEY, TECH})  # every server's teams (the sources are asked)
    try:
        teams.ensure_team(db, 5, "!!!", 1, clock())
        raise AssertionError("a name without a letter")
    except BadOption:
        pass


def test_team_remove_by_a_name_two_members_share_removes_nobody(db_path: Path, clock: FakeClock) -> None:
    """Two people named Wei Zhang in one team: the name lists both with their ids and removes
    neither; the id removes exactly that one; the name, once it fits one, removes that one."""
    from dataclasses import replace

    from mapwatch.bot.commands import run_core
    from tests.bot_helpers import ctx

    setup(db_path, clock)
    db = open_db(db_path)
    team, _ = teams.ensure_team(db, 111, "Lab", 1, clock())
    for key, name in (("A100", "Wei Zhang"), ("A200", "Wei Zhang"), ("A300", "Ada Lovelace")):
        teams.add_member(db, team, "author", key, name, 1, clock())
    admin = replace(ctx(), can_manage_guild=True)

    def members() -> list[str]:
        found = people.get_team(db, 111, "lab")
        assert found is not None
        return [m.value for m in found.members]

    reply, _ = run_core(db, admin, "team remove", {"name": "Lab", "author": "wei ZHANG"})
    said = reply.content
    assert reply.ephemeral and "fits 2 people of **Lab**" in said and "nobody was removed" in said, said
    assert "Wei Zhang · `A100`" in said and "Wei Zhang · `A200`" in said and "A300" not in said, said
    assert "`/team remove name:lab author:<id>`" in said and "Removed" not in said
    assert members() == ["A300", "A100", "A200"]
    reply, _ = run_core(db, admin, "team remove", {"name": "Lab", "author": "A200"})
    assert reply.content == "Removed `A200` from **Lab**." and members() == ["A300", "A100"]
    reply, _ = run_core(db, admin, "team remove", {"name": "Lab", "author": "Wei Zhang"})
    assert reply.content == "Removed `A100` from **Lab**." and members() == ["A300"]
    reply, _ = run_core(db, admin, "team remove", {"name": "Lab", "author": "Wei Zhang"})
    assert reply.ephemeral and "is not in **Lab**" in reply.content and members() == ["A300"]


# -- /tracked ----------------------------------------------------------------------------------

def test_tracked_counts_paper_person_and_team_tracks(db_path: Path, clock: FakeClock) -> None:
    from mapwatch.bot.commands import run_core
    from mapwatch.bot.rendering.render import tracks_count
    from tests.bot_helpers import ctx

    setup(db_path, clock)
    db = open_db(db_path)
    team, _ = teams.ensure_team(db, 111, "Reading group", 1, clock())
    teams.add_member(db, team, "author", "A100", "Ada Lovelace", 1, clock())
    for opts in ({"paper": SURVEY}, {"author": "A100"}, {"team": "Reading group"}):
        assert run_core(db, ctx(), "track", opts)[1], opts
    reply, _ = run_core(db, ctx(), "tracked", {})
    [e] = reply.embeds
    assert e.title == "Tracked in this server" and e.footer == "3 tracks: 1 paper, 1 person, 1 team"
    assert SURVEY in e.description and "Ada Lovelace" in e.description and "Reading group" in e.description
    assert run_core(db, ctx(), "follow", {"direction": "Reinforcement learning for reasoning"})[1]
    assert run_core(db, ctx(), "tracked", {})[0].embeds[0].footer == "3 tracks: 1 paper, 1 person, 1 team · 1 followed"
    dm = ctx(guild=None, channel=77, user=5)
    assert run_core(db, dm, "track", {"author": "A100"})[1]
    reply, _ = run_core(db, dm, "tracked", {})
    assert reply.embeds[0].title == "Tracked in your DMs" and reply.embeds[0].footer == "1 person tracked"
    assert tracks_count(2, 0, 0) == "2 papers tracked" and tracks_count(0, 2, 3) == "5 tracks: 2 people, 3 teams"


def test_track_replies_and_feed_titles_read_naturally(db_path: Path, clock: FakeClock) -> None:
    from mapwatch.bot.commands import run_core
    from mapwatch.feeds import people_feeds
    from tests.bot_helpers import ctx

    setup(db_path, clock)
    db = open_db(db_path)
    solo, _ = teams.ensure_team(db, 111, "Reading group", 1, clock())
    teams.add_member(db, solo, "author", "A200", "Bob Smith", 1, clock())  # one paper: the survey
    said = run_core(db, ctx(), "track", {"team": "Reading group"})[0].content
    assert "this channel gets an alert when its paper in the map gains citers" in said, said
    dm = ctx(guild=None, channel=77, user=5)
    said = run_core(db, dm, "track", {"author": "A100"})[0].content
    assert "your DMs get an alert when any of their 2 papers in the map gains citers" in said, said
    said = run_core(db, dm, "track", {"paper": SURVEY})[0].content
    assert "your DMs get an alert when it gains citers" in said, said
    reply, _ = run_core(db, ctx(), "tracked", {})
    assert "• team “Reading group” · <#222>" in reply.embeds[0].description
    atom = people_feeds.build_file(db, people_feeds.TEAM_FEED, solo.feed_slug, "http://feeds.example", 10)
    assert atom is not None and "<title>the team “Reading group”: new citing papers</title>".encode() in atom


# -- end to end --------------------------------------------------------------------------------

async def test_team_and_author_tracks_one_alert_per_citer_exactly_once(fake_discord: FakeDiscord, db_path: Path,
                                                                       clock: FakeClock) -> None:
    fake = fake_discord
    setup(db_path, clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("team add", {"name": "Lab", "author": ADA}, permissions=MANAGE)
        refused = (await h.wait_message()).content
        assert h.ephemeral and "Manage Server" in refused
        h = await fake.slash("team add", {"name": "Lab", "author": ADA}, permissions=MANAGE_ALL)
        said = (await h.wait_message()).content
        assert "New team **Lab**" in said and "Ada Lovelace" in said and "/feeds/teams/lab-" in said
        h = await fake.slash("track", {"author": "Bob Smith"}, permissions=MANAGE)
        choice = (await h.wait_message()).content
        assert h.ephemeral and "fits 2 people" in choice and "`A200`" in choice and "`A300`" in choice
        h = await fake.slash("track", {"team": "lab"}, permissions=MANAGE)
        said = (await h.wait_message()).content
        assert "Tracking team **Lab**" in said and "2 papers" in said, said
        h = await fake.slash("track", {"author": "A100", "threads": "on"}, channel_id=alerts.id, permissions=MANAGE)
        assert "each alert opening a discussion thread" in (await h.wait_message()).content
        h = await fake.slash("team list", {})
        assert "Lab" in (await h.wait_message()).embeds[0]["title"]
        # one refresh: a paper citing both of the team's papers, and one citing one of them
        refresh(db_path, clock, [grow(seed_page(SURVEY), [SHARED]), grow(seed_page(TECH), [SHARED, ONLY_TECH])])
        assert await bot.deliver_alerts() == 2
        [team_alert] = await fake.wait_channel_messages(fake.channel.id, 1)
        e = team_alert.embed
        assert e["title"] == "2 new papers cite your papers", e
        assert "A Shared Citer of Both Surveys" in e["description"]
        assert "cites 2 of your papers" in e["description"] and "cites one of your papers" in e["description"]
        assert e["description"].count("A Shared Citer of Both Surveys") == 1  # one entry, not two
        [author_alert] = await fake.wait_channel_messages(alerts.id, 1)
        assert "Ada Lovelace's papers" in author_alert.embed["description"]
        [thread] = fake.threads_of(alerts.id)
        assert thread.id == author_alert.id and "(+1 more)" in thread.name
        # a later refresh: the shared citer is already known; a new one citing only one paper
        refresh(db_path, clock, [grow(grow(seed_page(TECH), [SHARED, ONLY_TECH]), [("2612.00003", "Third", 2026)])])
        assert await bot.deliver_alerts() == 2
        second = (await fake.wait_channel_messages(fake.channel.id, 2))[1].embed
        assert second["title"] == "Third cites one of your papers", second
    bot2 = make_bot(db_path, clock)  # a restart: nothing again
    async with fake.connected(bot2):
        assert await bot2.deliver_alerts() == 0
    assert len(fake.channel_messages(fake.channel.id)) == 2 and len(fake.channel_messages(alerts.id)) == 2
    assert openapi_check.recorded_errors(fake.requests) == []


async def test_a_crash_after_discord_accepted_resends_the_same_alert_once(fake_discord: FakeDiscord, db_path: Path,
                                                                         clock: FakeClock) -> None:
    """Discord took the team's alert, then the bot died before the cursor moved: the restarted
    bot resends it with the same nonce, and Discord drops the repeat."""
    fake = fake_discord
    setup(db_path, clock)
    db = open_db(db_path)
    team, _ = teams.ensure_team(db, fake.guild.id, "Lab", 1, clock())
    teams.add_member(db, team, "author", ADA, "Ada Lovelace", 1, clock())
    track, _ = people_tracks.add_subject_track(db, guild_id=fake.guild.id, channel_id=fake.channel.id, user_id=None,
                                               team_slug="lab", created_by=1, now=clock())
    start = track.last_event_id
    db.close()
    refresh(db_path, clock, [grow(seed_page(SURVEY), [SHARED]), grow(seed_page(TECH), [SHARED])])
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        assert await bot.deliver_alerts() == 1
    [msg] = fake.channel_messages(fake.channel.id)
    assert msg.embed["title"] == "A Shared Citer of Both Surveys cites 2 of your papers"
    db = open_db(db_path)
    upto = db.conn.execute("SELECT last_event_id FROM tracks WHERE id = ?", (track.id,)).fetchone()[0]
    db.execute("UPDATE tracks SET last_event_id = ? WHERE id = ?", (start, track.id))  # the crash
    deliveries.mark_sending(db, deliveries.TRACKS, track.id, upto, clock())
    db.close()
    bot2 = make_bot(db_path, clock)
    async with fake.connected(bot2):
        await bot2.deliver_alerts()
        assert await bot2.deliver_alerts() == 0
    assert [m.id for m in fake.channel_messages(fake.channel.id)] == [msg.id] and fake.nonce_repeats == 1
    assert openapi_check.recorded_errors(fake.requests) == []


async def test_a_team_digest_lists_each_citer_once(fake_discord: FakeDiscord, db_path: Path) -> None:
    fake = fake_discord
    clock = FakeClock(datetime(2026, 11, 1, 5, tzinfo=UTC))
    setup(db_path, clock)
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("team add", {"name": "Lab", "paper": SURVEY}, permissions=MANAGE_ALL)
        await h.wait_message()
        h = await fake.slash("team add", {"name": "Lab", "paper": TECH}, permissions=MANAGE_ALL)
        await h.wait_message()
        h = await fake.slash("track", {"team": "Lab", "mode": "daily"}, permissions=MANAGE)
        assert "daily digest" in (await h.wait_message()).content
        refresh(db_path, clock, [grow(seed_page(SURVEY), [SHARED]), grow(seed_page(TECH), [SHARED])])
        assert await bot.deliver_alerts() == 0  # not before the digest hour
        clock.now = datetime(2026, 11, 1, 9, 1, tzinfo=UTC)
        assert await bot.deliver_alerts() == 1
        assert await bot.deliver_alerts() == 0
    [digest] = fake.channel_messages(fake.channel.id)
    field = digest.embed["fields"][0]
    assert field["name"].startswith("Team: Lab (1 new citer)"), field
    assert "cites" in field["value"] and field["value"].count(SHARED[1]) == 1
    assert "1 tracked person or team" in digest.content
    bot2 = make_bot(db_path, clock)
    async with fake.connected(bot2):
        assert await bot2.deliver_alerts() == 0
    assert len(fake.channel_messages(fake.channel.id)) == 1
    assert openapi_check.recorded_errors(fake.requests) == []


def test_a_team_webhook_gets_the_grouped_alert(db_path: Path, clock: FakeClock) -> None:
    from mapwatch.bot.sending.delivery_webhooks import discord_payload, message_of

    setup(db_path, clock)
    db = open_db(db_path)
    team, _ = teams.ensure_team(db, 7, "Lab", 1, clock())
    teams.add_member(db, team, "author", "A100", "Ada Lovelace", 1, clock())
    hook = webhooks.parse_url("https://discord.com/api/webhooks/123/abc")
    w, _ = webhooks.add_webhook(db, "team", "lab", hook, guild_id=7, created_by=1, now=clock())
    db.close()
    refresh(db_path, clock, [grow(seed_page(SURVEY), [SHARED]), grow(seed_page(TECH), [SHARED])])
    db = open_db(db_path)
    [p] = webhooks.pending_webhooks(db)
    body = discord_payload(message_of(p))
    assert body["embeds"][0]["title"] == "A Shared Citer of Both Surveys cites 2 of your papers"
    assert openapi_check.request_errors("POST", "/webhooks/1/tok", body) == []
    webhooks.mark_delivered(db, w.id, p.upto, clock())
    assert webhooks.pending_webhooks(db) == []


# -- feeds and pages ---------------------------------------------------------------------------

async def test_team_and_author_feeds_and_pages_on_demand(db_path: Path, clock: FakeClock, tmp_path: Path) -> None:
    import aiohttp

    from mapwatch.feeds.serving.ondemand import PaperCache
    from mapwatch.feeds.serving.server import start_server
    from tests.feedcheck import assert_valid_atom

    setup(db_path, clock)
    db = open_db(db_path)
    team, _ = teams.ensure_team(db, 7, "Lab", 1, clock())
    teams.add_member(db, team, "author", "A100", "Ada Lovelace", 1, clock())
    db.close()
    refresh(db_path, clock, [grow(seed_page(SURVEY), [SHARED]), grow(seed_page(TECH), [SHARED, ONLY_TECH])])
    out = tmp_path / "public"
    out.mkdir()
    cache = PaperCache(db_path, "http://feeds.example")
    runner, port = await start_server(out, "127.0.0.1", 0, papers=cache)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as session:
            async def get(path: str, etag: str | None = None) -> tuple[int, str, bytes, str]:
                async with session.get(base + path, headers={"If-None-Match": etag} if etag else {}) as r:
                    return r.status, r.headers.get("ETag", ""), await r.read(), r.headers.get("Content-Type", "")

            status, tag, body, kind = await get(f"/feeds/teams/{team.feed_slug}.atom")
            assert status == 200 and kind == "application/atom+xml" and tag
            feed = assert_valid_atom(body)
            titles = [e.title for e in feed.entries]
            assert titles.count("A Shared Citer of Both Surveys (2026)") == 1 and len(titles) >= 2
            assert (await get(f"/feeds/teams/{team.feed_slug}.atom", tag))[0] == 304
            status, _, body, _ = await get(f"/feeds/authors/{ADA}.atom")
            assert status == 200 and len(assert_valid_atom(body).entries) == len(titles)
            status, _, html, kind = await get(f"/teams/{team.feed_slug}/")
            assert status == 200 and kind.startswith("text/html") and b"A Shared Citer of Both Surveys" in html
            assert b"/feeds/teams/" + team.feed_slug.encode() + b".atom" in html
            assert (await get("/authors/A100/"))[0] == 200
            for missing in ("/feeds/teams/lab.atom", "/feeds/authors/A999.atom", "/feeds/authors/nobody.atom",
                            "/teams/../etc/", f"/feeds/authors/{ADA[:-1]}8.atom"):
                assert (await get(missing))[0] == 404, missing
            # a new citer of one of the team's papers: a new ETag
            refresh(db_path, clock, [grow(grow(seed_page(TECH), [SHARED, ONLY_TECH]), [("2612.00003", "Third", 2026)])])
            status, tag2, body, _ = await get(f"/feeds/teams/{team.feed_slug}.atom", tag)
            assert status == 200 and tag2 != tag and len(assert_valid_atom(body).entries) == len(titles) + 1
    finally:
        await runner.cleanup()


async def test_a_tracked_persons_feed_answers_before_any_paper_of_theirs_is_known(db_path: Path, clock: FakeClock,
                                                                                 tmp_path: Path) -> None:
    import re

    import aiohttp

    from mapwatch.bot.commands import run_core
    from mapwatch.feeds.serving.ondemand import PaperCache
    from mapwatch.feeds.serving.server import start_server
    from tests.bot_helpers import ctx
    from tests.feedcheck import assert_valid_atom

    setup(db_path, clock)
    newcomer = "A5999999991"  # nobody the map's authors name yet
    db = open_db(db_path)
    reply, ok = run_core(db, ctx(), "track", {"author": newcomer})
    assert ok, reply
    [path] = re.findall(r"http://feeds\.example(/feeds/authors/[^>]+\.atom)", reply.content)
    db.close()
    out = tmp_path / "public"
    out.mkdir()
    runner, port = await start_server(out, "127.0.0.1", 0, papers=PaperCache(db_path, "http://feeds.example"))
    try:
        async with aiohttp.ClientSession() as session:
            async def get(path: str, etag: str | None = None) -> tuple[int, Mapping[str, str], bytes]:
                async with session.get(f"http://127.0.0.1:{port}{path}",
                                       headers={"If-None-Match": etag} if etag else {}) as r:
                    return r.status, r.headers.copy(), await r.read()  # (any case, as HTTP has it)

            status, headers, body = await get(path)
            assert status == 200 and headers["Content-Type"] == "application/atom+xml"
            assert headers["Cache-Control"] == "no-cache" and headers["ETag"]
            feed = assert_valid_atom(body, f"http://feeds.example{path}")
            assert feed.entries == [] and feed.feed.title == f"{newcomer}: new citing papers"
            assert "after each refresh" in feed.feed.subtitle and "enrichment round" in feed.feed.subtitle
            assert (await get(path, headers["ETag"]))[0] == 304
            status, _, html = await get(f"/authors/{newcomer}/")
            assert status == 200 and b"enrichment round" in html
            assert (await get("/feeds/authors/A5999999992.atom"))[0] == 404  # well-formed, tracked nowhere
            # the sources name them: the same address fills, under a new ETag and their name
            db = open_db(db_path)
            save_openalex(db, [OpenAlexWork(SURVEY, "W1", (AuthorRecord("Nia Newcomer", newcomer),), None, None)],
                          [SURVEY], clock())
            db.close()
            status, later, body = await get(path, headers["ETag"])
            assert status == 200 and later["ETag"] != headers["ETag"]
            filled = assert_valid_atom(body)
            assert filled.feed.title == "Nia Newcomer: new citing papers" and "enrichment" not in filled.feed.subtitle
            # untracked and still unknown: 404 again
            db = open_db(db_path)
            assert run_core(db, ctx(), "untrack", {"author": "A5999999993"})[0].ephemeral
            assert run_core(db, ctx(), "track", {"author": "A5999999993"})[1]
            db.close()
            assert (await get("/feeds/authors/A5999999993.atom"))[0] == 200
            db = open_db(db_path)
            assert run_core(db, ctx(), "untrack", {"author": "A5999999993"})[1]
            db.close()
            assert (await get("/feeds/authors/A5999999993.atom"))[0] == 404
    finally:
        await runner.cleanup()


def test_the_documented_examples_run(seeded, db_path: Path, capsys) -> None:
    import re
    import shlex

    from mapwatch.cli import main

    page = (Path(__file__).resolve().parents[3] / "docs" / "bot.md").read_text(encoding="utf-8")
    section = page[page.index("## Following people and teams"):page.index("## Following and digests")]
    examples = re.findall(r"^\.venv/bin/mapwatch (ask .+)$", section, flags=re.M)
    assert len(examples) == 5
    seeded.close()
    for line in examples:
        code = main([*shlex.split(line), "--db", str(db_path)])
        out = capsys.readouterr().out
        assert code == 0, (line, out)
    assert "Tracking **A5023888391**" in out and "none is known yet" in out


async def test_a_team_track_marks_self_citations_and_self_hide_leaves_them_out(fake_discord: FakeDiscord,
                                                                              db_path: Path, clock: FakeClock) -> None:
    """Issue 29, item 4, for a team: a citer one of whose authors wrote the paper it cites is
    marked in the alert, with its byline; a second channel's `self:hide` track leaves it out
    and says so; another citer is in both."""
    fake = fake_discord
    setup(db_path, clock)
    quiet = fake.guild.channel("alerts")
    bot = make_bot(db_path, clock)
    async with fake.connected(bot):
        h = await fake.slash("team add", {"name": "Lab", "paper": SURVEY}, permissions=MANAGE_ALL)
        await h.wait_message()
        h = await fake.slash("track", {"team": "lab"}, permissions=MANAGE)
        await h.wait_message()
        h = await fake.slash("track", {"team": "lab", "self": "hide"}, channel_id=quiet.id, permissions=MANAGE)
        await h.wait_message()
        store_pages_db = open_db(db_path)
        try:  # the shared citer's authors: Ada, who wrote the survey; the other citer's: a stranger
            save_openalex(store_pages_db, [
                OpenAlexWork(SHARED[0], "W9", (AuthorRecord("Ada Lovelace", "A100", ADA),), None, None),
                OpenAlexWork(ONLY_TECH[0], "W8", (AuthorRecord("Cy Stranger", "A900"),), None, None)],
                [SHARED[0], ONLY_TECH[0]], clock())
        finally:
            store_pages_db.close()
        refresh(db_path, clock, [grow(seed_page(SURVEY), [SHARED, ONLY_TECH])])
        assert await bot.deliver_alerts() == 2
        [marked] = await fake.wait_channel_messages(fake.channel.id, 1)
        [hidden] = await fake.wait_channel_messages(quiet.id, 1)
    d = marked.embed["description"]
    assert "A Shared Citer of Both Surveys" in d and "↺ self-citation" in d and "Ada Lovelace" in d, d
    assert "A Paper Citing the Technical Survey" in d and d.count("↺ self-citation") == 1
    h = hidden.embed["description"]
    assert "A Shared Citer of Both Surveys" not in h and "A Paper Citing the Technical Survey" in h, h
    assert "1 self-citation left out (self:hide)." in h
    assert openapi_check.recorded_errors(fake.requests) == []
