"""The fake Discord server against the real discord.py client: the protocol, the limits, the faults."""

from __future__ import annotations

import asyncio
import io
from typing import Any

import aiohttp
import discord
import pytest
from discord import app_commands

from tests.fakediscord import EPHEMERAL, FakeDiscord, InteractionRejected

pytest_plugins = ["tests.fakediscord.fixtures"]

PAPERS = {"2412.10400": "Reasoning about citations", "2501.00001": "Another paper", "2502.00002": "Third thing"}


class Pager(discord.ui.View):
    """Two pages and a Next button, like the bot's paged answers."""

    def __init__(self) -> None:
        super().__init__(timeout=60)
        self.page = 0

    @discord.ui.button(label="Next", style=discord.ButtonStyle.secondary, custom_id="pager:next")
    async def next_page(self, interaction: discord.Interaction, button: discord.ui.Button[Any]) -> None:
        self.page += 1
        await interaction.response.edit_message(embed=discord.Embed(title=f"page {self.page + 1}"), view=self)


def toy_tree(client: Any, *, errors: list[BaseException] | None = None, late_delay: float = 0.5) -> None:
    """Toy commands exercising each kind of answer."""
    tree: app_commands.CommandTree[Any] = client.tree

    @tree.command(name="paper", description="A paper's card")
    @app_commands.describe(paper="arXiv id or title")
    async def paper(interaction: discord.Interaction, paper: str) -> None:
        title = PAPERS.get(paper)
        if title is None:
            await interaction.response.send_message(f"No paper matches {paper!r}", ephemeral=True)
            return
        embed = discord.Embed(title=title, description=f"arXiv {paper}")
        embed.add_field(name="Cited by", value="71")
        await interaction.response.send_message(embed=embed, allowed_mentions=discord.AllowedMentions.none())

    @paper.autocomplete("paper")
    async def paper_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=f"{pid} {t}", value=pid) for pid, t in PAPERS.items() if current in pid]

    @tree.command(name="slow", description="Deferred, then a follow-up with a file")
    async def slow(interaction: discord.Interaction, count: int = 1) -> None:
        await interaction.response.defer(thinking=True)
        await asyncio.sleep(0.05)
        await interaction.followup.send(
            f"done {count}", file=discord.File(io.BytesIO(b"\x89PNG fake"), filename="chart.png")
        )
        await interaction.followup.send("second", ephemeral=True)

    @tree.command(name="pages", description="Paged with buttons")
    async def pages(interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=discord.Embed(title="page 1"), view=Pager())

    @tree.command(name="late", description="Answers after the deadline")
    async def late(interaction: discord.Interaction) -> None:
        await asyncio.sleep(late_delay)
        await interaction.response.send_message("too late")

    @tree.command(name="huge", description="An oversized embed")
    async def huge(interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=discord.Embed(title="x", description="y" * 5000))

    @tree.command(name="many", description="Too many choices")
    async def many(interaction: discord.Interaction, q: str) -> None:
        await interaction.response.send_message(q)

    @many.autocomplete("q")
    async def many_ac(interaction: discord.Interaction, current: str) -> list[app_commands.Choice[str]]:
        return [app_commands.Choice(name=f"c{i}", value=f"c{i}") for i in range(30)]

    @tree.command(name="post", description="Posts to another channel")
    async def post(interaction: discord.Interaction, channel_id: str) -> None:
        await interaction.response.defer(ephemeral=True)
        channel = interaction.client.get_partial_messageable(int(channel_id))
        await channel.send("an alert", allowed_mentions=discord.AllowedMentions.none())
        await interaction.followup.send("posted", ephemeral=True)

    if errors is not None:

        @tree.error
        async def on_error(interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
            errors.append(error)


async def test_login_ready_and_guilds(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    async with fake_discord.connected(client):
        assert client.user is not None and client.user.id == fake_discord.bot_user.id
        assert client.application_id == fake_discord.app_id
        guild = client.get_guild(fake_discord.guild.id)
        assert guild is not None and guild.name == "Test Guild"
        assert {c.name for c in guild.text_channels} == {"general", "alerts"}
        assert guild.default_role.id == guild.id
    assert fake_discord.identifies == 1
    identify = next(p for p in fake_discord.gateway_received if p["op"] == 2)["d"]
    assert identify["intents"] == discord.Intents.default().value
    assert fake_discord.gateway_queries[0]["v"] == "10"
    assert fake_discord.gateway_queries[0]["encoding"] == "json"
    assert fake_discord.gateway_queries[0]["compress"] in ("zlib-stream", "zstd-stream")
    assert [r.route for r in fake_discord.requests[:2]] == ["GET /users/@me", "GET /oauth2/applications/@me"]
    assert all(r.authorized for r in fake_discord.requests)


async def test_json_content_type_is_exact(fake_discord: FakeDiscord) -> None:
    async with aiohttp.ClientSession() as http:
        headers = {"Authorization": f"Bot {fake_discord.token}"}
        async with http.get(f"{fake_discord.api_base}/users/@me", headers=headers) as resp:
            assert resp.status == 200
            assert resp.headers["Content-Type"] == "application/json"
        async with http.get(f"{fake_discord.api_base}/users/@me") as resp:
            assert resp.status == 401


async def test_wrong_token_fails_login(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    with pytest.raises(discord.LoginFailure):
        await client.login("not-the-token")
    await client.close()


async def test_tree_sync_stores_commands(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        synced = await client.tree.sync()
        assert {c.name for c in synced} == {"paper", "slow", "pages", "late", "huge", "many", "post"}
        assert all(c.id for c in synced)
        fetched = await client.tree.fetch_commands()
        assert {c.id for c in fetched} == {c.id for c in synced}
        guild = discord.Object(fake_discord.guild.id)
        client.tree.copy_global_to(guild=guild)
        guild_synced = await client.tree.sync(guild=guild)
        assert len(guild_synced) == len(synced)
        assert fake_discord.commands(fake_discord.guild.id)[0]["guild_id"] == str(fake_discord.guild.id)
    assert len(fake_discord.command_syncs) == 2
    paper = next(c for c in fake_discord.commands() if c["name"] == "paper")
    assert paper["options"][0]["name"] == "paper" and paper["options"][0]["autocomplete"] is True


async def test_slash_round_trip_with_embed(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("paper", {"paper": "2412.10400"})
        body = await h.wait_response()
        assert body["type"] == 4
        msg = await h.wait_message()
        assert msg.embed["title"] == "Reasoning about citations"
        assert msg.embed["fields"] == [{"name": "Cited by", "value": "71", "inline": True}]
        assert msg.allowed_mentions == {"parse": []}
        assert not h.ephemeral and not msg.ephemeral
        assert msg.channel_id == fake_discord.channel.id


async def test_ephemeral_flag(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("paper", {"paper": "nope"})
        body = await h.wait_response()
        assert body["data"]["flags"] & EPHEMERAL
        assert h.ephemeral
        assert "No paper matches" in (await h.wait_message()).content


async def test_slash_in_dm(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("paper", {"paper": "2412.10400"}, guild_id=None)
        msg = await h.wait_message()
        assert msg.guild_id is None and msg.channel_id == fake_discord.dm_channel(fake_discord.user.id).id
        assert "guild_id" not in h.payload and h.payload["user"]["id"] == str(fake_discord.user.id)


async def test_deferred_then_followups_with_file(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("slow", {"count": 3})
        assert (await h.wait_response())["type"] == 5
        assert h.deferred
        first, second = await h.wait_messages(2)
        assert first.content == "done 3" and first is h.original and not first.loading
        assert first.attachments[0]["filename"] == "chart.png"
        assert first.files[0].data == b"\x89PNG fake"
        assert second.content == "second" and second.ephemeral
    sent = fake_discord.requests_to("POST", "/webhooks/*")
    assert all(r.query.get("wait") == "1" for r in sent)


async def test_autocomplete_choices(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        choices = await fake_discord.autocomplete("paper", {}, focused="paper")
        assert [c["value"] for c in choices] == list(PAPERS)
        choices = await fake_discord.autocomplete("paper", {"paper": "2501"}, focused="paper")
        assert choices == [{"name": "2501.00001 Another paper", "value": "2501.00001"}]


async def test_more_than_25_choices_is_refused(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        with pytest.raises(InteractionRejected) as info:
            await fake_discord.autocomplete("many", {}, focused="q")
        assert info.value.request.status == 400
        assert "choices" in info.value.request.response["errors"]["data"]


async def test_button_click_updates_message(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("pages")
        msg = await h.wait_message()
        assert msg.custom_ids() == ["pager:next"]
        click = await fake_discord.click(msg, label="Next")
        assert (await click.wait_response())["type"] == 7
        assert msg.embed["title"] == "page 2"
        click = await fake_discord.click(msg, "pager:next")
        await click.wait_response()
        assert msg.embed["title"] == "page 3" and len(msg.edits) == 2


@pytest.mark.parametrize("fake_config", [{"interaction_deadline": 0.2}])
async def test_late_answer_gets_404(fake_discord: FakeDiscord, make_client: Any) -> None:
    errors: list[BaseException] = []
    client = make_client()
    toy_tree(client, errors=errors, late_delay=0.4)
    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("late")
        rejected = await h.wait_rejected()
        assert rejected.status == 404 and rejected.response["code"] == 10062
        assert h.callback is None
        await fake_discord.wait_for(lambda: errors)
        assert isinstance(errors[0].__cause__ or errors[0], discord.NotFound)


async def test_oversized_embed_gets_400(fake_discord: FakeDiscord, make_client: Any) -> None:
    errors: list[BaseException] = []
    client = make_client()
    toy_tree(client, errors=errors)
    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("huge")
        rejected = await h.wait_rejected()
        assert rejected.status == 400 and rejected.response["code"] == 50035
        assert "description" in rejected.response["errors"]["data"]["embeds"]["0"]
        await fake_discord.wait_for(lambda: errors)
        assert isinstance(errors[0].__cause__ or errors[0], discord.HTTPException)


async def test_rate_limit_then_success(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    alerts = fake_discord.guild.channel("alerts")
    async with fake_discord.connected(client):
        await client.tree.sync()
        fake_discord.rate_limit(f"POST /channels/{alerts.id}/messages", retry_after=0.1)
        h = await fake_discord.slash("post", {"channel_id": str(alerts.id)})
        await h.wait_followups(1)
        assert [m.content for m in fake_discord.channel_messages(alerts.id)] == ["an alert"]
    posts = fake_discord.requests_to("POST", f"/channels/{alerts.id}/messages")
    assert [r.status for r in posts] == [429, 200]


async def test_gateway_drop_resume_then_command(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        await fake_discord.drop_gateway(code=4000)
        await fake_discord.wait_resumed()
        h = await fake_discord.slash("paper", {"paper": "2412.10400"})
        assert (await h.wait_message()).embed["title"] == "Reasoning about citations"
    assert fake_discord.identifies == 1 and fake_discord.resumes == 1
    resume = next(p for p in fake_discord.gateway_received if p["op"] == 6)["d"]
    assert resume["session_id"].startswith("session-")
