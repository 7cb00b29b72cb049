"""Where the team talks (issue 25): the message context menu "Papers in this message" and the
user install of the read-only commands, end to end against the fake Discord, every request
checked against Discord's OpenAPI description."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import discord
import pytest

from mapwatch.bot.client import MapwatchBot, build_tree_for_inspection
from mapwatch.bot.commands import READ_ONLY, commands
from mapwatch.bot.commands.message import MENU_NAME, in_message_core
from mapwatch.bot.rendering.replies import Ctx
from mapwatch.store.ids import ids_in_text
from tests import openapi_check
from tests.fakediscord import FakeDiscord

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
CHANGERS = {"track", "untrack", "follow", "unfollow", "digest-time"}
MESSAGE = ("Two surveys: https://arxiv.org/abs/2412.10400v2 and <https://arxiv.org/pdf/2507.04136v1.pdf>, "
           "see also https://arxiv.org/html/2203.02155v3#S2 and arXiv:2005.14165, the map's "
           "https://mlsanity.com/paper/1707.06347/ and 2305.18290. Old: hep-th/9901001v2. "
           "Not ids: 1234.5678, version 3.14, 2413.12345.")


def make_bot(db_path: Path) -> MapwatchBot:
    return MapwatchBot(db_path, base_url="http://feeds.example", guild_ready_timeout=0.05, alert_interval=60)


# -- finding papers in a message -------------------------------------------------------------

def test_ids_in_text_finds_links_versions_old_ids_and_map_links() -> None:
    assert ids_in_text(MESSAGE) == ["2412.10400", "2507.04136", "2203.02155", "2005.14165", "1707.06347",
                                    "2305.18290", "hep-th/9901001"]
    assert ids_in_text("math.GT/0309136v1 and https://export.arxiv.org/abs/cs/0112017") == [
        "math.GT/0309136", "cs/0112017"]
    # a 4-digit id after 2015 or a 5-digit one before is no arXiv id; a month 13 neither
    assert ids_in_text("0704.0001 1501.00001 1412.00001 1601.0001 2213.00001 1.2412.10400") == [
        "0704.0001", "1501.00001"]
    assert ids_in_text(" ".join(f"2401.{n:05d}" for n in range(200))) == [f"2401.{n:05d}" for n in range(50)]
    assert ids_in_text("2412.10400 2412.10400v3 https://arxiv.org/abs/2412.10400") == ["2412.10400"]


def test_core_cards_the_known_and_names_the_missing(seeded) -> None:
    ctx = Ctx(1, 2, 3, datetime(2026, 1, 1))
    r = in_message_core(seeded, ctx, text=MESSAGE)
    assert r.ephemeral and r.pager is not None and r.pager.pages == 2
    assert "6 of the 7 papers" in r.content and "Not in the map: `hep-th/9901001`" in r.content
    assert [e.url for e in r.embeds] == [f"https://mlsanity.com/paper/{i}/" for i in
                                         ("2412.10400", "2507.04136", "2203.02155", "2005.14165")]
    second = in_message_core(seeded, ctx, ids=r.pager.args["ids"], page=1)
    assert [e.url.split("/")[-2] for e in second.embeds] == ["1707.06347", "2305.18290"]
    nothing = in_message_core(seeded, ctx, text="no papers here, just 42 and 3.14")
    assert nothing.ephemeral and nothing.embeds == () and "No arXiv ids" in nothing.content
    # ids from a page button are checked again, not trusted
    odd = in_message_core(seeded, ctx, ids="2412.10400,../../etc,'; DROP TABLE papers")
    assert [e.url for e in odd.embeds] == ["https://mlsanity.com/paper/2412.10400/"]


# -- what the command sync declares -------------------------------------------------------------

def test_sync_payload_declares_the_menu_and_the_install_types() -> None:
    tree = build_tree_for_inspection()
    payload = {c.name: c.to_dict(tree) for c in tree.get_commands(type=None)}
    menu = payload[MENU_NAME]
    assert menu["type"] == 3 and menu["integration_types"] == [0, 1] and menu["contexts"] == [0, 1, 2]
    assert set(READ_ONLY) == {"paper", "citers", "refs", "search", "direction", "directions", "related", "path",
                              "rising", "graph", "feed", "stats", "author", "export", "why"}
    for name in READ_ONLY:
        assert payload[name]["integration_types"] == [0, 1] and payload[name]["contexts"] == [0, 1, 2], name
    for name in CHANGERS:
        assert payload[name]["integration_types"] == [0] and payload[name]["contexts"] == [0, 1], name
        assert payload[name]["default_member_permissions"] == MANAGE.value, name
    for name, spec in commands().items():
        if name not in READ_ONLY and spec.slash:  # a subcommand (`team add`): its group's
            assert payload[name.split(" ")[0]]["integration_types"] == [0], name
    assert openapi_check.request_errors("PUT", "/applications/1/commands", list(payload.values())) == []


def test_the_spec_check_can_fail() -> None:
    tree = build_tree_for_inspection()
    good = tree.get_commands(type=discord.AppCommandType.message)[0].to_dict(tree)
    assert openapi_check.request_errors("PUT", "/applications/1/commands", [{**good, "contexts": [3]}])
    assert openapi_check.request_errors("PUT", "/applications/1/commands", [{**good, "name": "x" * 33}])
    assert openapi_check.request_errors("POST", "/interactions/1/tok/callback", {"type": 4, "data": {
        "embeds": [{"title": "t" * 257}]}})


# -- end to end ---------------------------------------------------------------------------------

async def test_menu_end_to_end_ephemeral_paged_and_valid(fake_discord: FakeDiscord, seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        synced = {c["name"]: c for c in fake_discord.commands()}
        assert synced[MENU_NAME]["type"] == 3
        h = await fake_discord.message_command(MENU_NAME, MESSAGE)
        msg = await h.wait_message()
        assert h.ephemeral and msg.allowed_mentions == {"parse": []}
        assert "Not in the map: `hep-th/9901001`" in msg.content and len(msg.embeds) == 4
        assert msg.embeds[0]["url"] == "https://mlsanity.com/paper/2412.10400/"
        nxt = await fake_discord.click(msg, label="Next ▶")
        resp = await nxt.wait_response()
        assert resp["type"] == 7  # the ephemeral page is turned in place
        assert [e["url"] for e in resp["data"]["embeds"]][-1] == "https://mlsanity.com/paper/2305.18290/"
        # a message whose links sit in embeds only (another bot's post)
        target = {"id": "777", "channel_id": str(fake_discord.channel.id), "content": "",
                  "author": {"id": "9", "username": "feedbot", "discriminator": "0", "avatar": None},
                  "embeds": [{"title": "New", "url": "https://arxiv.org/abs/2507.04136v2", "type": "rich"}],
                  "attachments": [], "mentions": [], "mention_roles": [], "pinned": False, "tts": False,
                  "mention_everyone": False, "timestamp": "2026-01-01T00:00:00+00:00", "edited_timestamp": None,
                  "flags": 0, "type": 0, "components": []}
        h = await fake_discord.message_command(MENU_NAME, target)
        msg = await h.wait_message()
        assert h.ephemeral and [e["url"] for e in msg.embeds] == ["https://mlsanity.com/paper/2507.04136/"]
        h = await fake_discord.message_command(MENU_NAME, "nothing to see")
        assert "No arXiv ids" in (await h.wait_message()).content
    assert fake_discord.requests and openapi_check.recorded_errors(fake_discord.requests) == []
    assert openapi_check.covered("POST", fake_discord.requests_to("POST", "/interactions/*")[0].path)


async def test_user_install_read_only_everywhere_changers_server_only(fake_discord: FakeDiscord,
                                                                    seeded_path: Path) -> None:
    bot = make_bot(seeded_path)
    async with fake_discord.connected(bot):
        # a person who installed the app: in a server, and in a group DM (context 2)
        h = await fake_discord.slash("paper", {"paper": "2412.10400"}, installed="user")
        assert (await h.wait_message()).embed["url"] == "https://mlsanity.com/paper/2412.10400/"
        assert h.payload["authorizing_integration_owners"] == {"1": str(fake_discord.user.id)}
        h = await fake_discord.slash("search", {"query": "reward model"}, guild_id=None, private=True,
                                     installed="user")
        assert "Search" in (await h.wait_message()).embed["title"]
        h = await fake_discord.message_command(MENU_NAME, "2412.10400", guild_id=None, private=True,
                                               installed="user")
        assert (await h.wait_message()).embeds[0]["url"].endswith("/2412.10400/")
        for name in sorted(CHANGERS):
            with pytest.raises(LookupError, match="not offered"):
                await fake_discord.slash(name, {}, installed="user", _focused="x")
        with pytest.raises(LookupError, match="not offered"):
            await fake_discord.slash("tracked", {}, guild_id=None, private=True)
        # installed in the server: /track still needs Manage Channels, and works with it
        h = await fake_discord.slash("track", {"paper": "2412.10400"})
        assert h.ephemeral or "Manage Channels" in (await h.wait_message()).content
        h = await fake_discord.slash("track", {"paper": "2412.10400"}, permissions=MANAGE)
        assert "Tracking" in (await h.wait_message()).content
    assert openapi_check.recorded_errors(fake_discord.requests) == []
