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
        await asyncio.sleep(0.05)  # on purpose: a slow command, answered after its defer
        await interaction.followup.send(
            f"done {count}", file=discord.File(io.BytesIO(b"\x89PNG fake"), filename="chart.png")
        )
        await interaction.followup.send("second", ephemeral=True)

    @tree.command(name="pages", description="Paged with buttons")
    async def pages(interaction: discord.Interaction) -> None:
        await interaction.response.send_message(embed=discord.Embed(title="page 1"), view=Pager())

    @tree.command(name="late", description="Answers after the deadline")
    async def late(interaction: discord.Interaction) -> None:
        await asyncio.sleep(late_delay)  # on purpose: past the interaction deadline
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
        assert fake_discord.unknown_routes == []
        async with http.get(f"{fake_discord.api_base}/guilds/1/audit-logs", headers=headers) as resp:
            assert resp.status == 404 and resp.headers["Content-Type"] == "application/json"
        assert [r.path for r in fake_discord.unknown_routes] == ["/guilds/1/audit-logs"]
        assert [r.authorized for r in fake_discord.requests] == [True, False, True]


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
    assert fake_discord.unknown_routes == []


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


# --------------------------------------------------------------------------- more protocol


async def test_endpoints_from_environment(monkeypatch: pytest.MonkeyPatch, fake_discord: FakeDiscord) -> None:
    import discord.gateway
    import discord.http

    from mapwatch.bot.discord_endpoints import from_environment, point_discord_py_at

    point_discord_py_at("https://discord.com/api/v10", "wss://gateway.discord.gg/")
    assert from_environment({}) is False
    assert discord.http.Route.BASE == "https://discord.com/api/v10"
    assert from_environment(fake_discord.env()) is True
    assert fake_discord.api_base == discord.http.Route.BASE
    assert str(discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY) == fake_discord.gateway_url
    for key, value in fake_discord.env().items():
        monkeypatch.setenv(key, value)
    point_discord_py_at("https://discord.com/api/v10/", None)
    assert from_environment() is True and fake_discord.api_base == discord.http.Route.BASE


async def test_uncompressed_gateway_and_resume_replays_missed_events(fake_discord: FakeDiscord) -> None:
    """A raw websocket client: no compression asked, JSON text frames; RESUME replays what was missed."""
    async with aiohttp.ClientSession() as http:
        async with http.ws_connect(f"{fake_discord.gateway_url}?v=10&encoding=json") as ws:
            hello = await ws.receive_json()
            assert hello["op"] == 10 and hello["d"]["heartbeat_interval"] > 0
            await ws.send_json({"op": 1, "d": None})
            assert (await ws.receive_json())["op"] == 11
            await ws.send_json({"op": 2, "d": {"token": fake_discord.token, "intents": 1, "properties": {}}})
            ready = await ws.receive_json()
            assert ready["t"] == "READY" and ready["s"] == 1
            session_id = ready["d"]["session_id"]
            assert ready["d"]["resume_gateway_url"] == fake_discord.gateway_url
            guild = await ws.receive_json()
            assert guild["t"] == "GUILD_CREATE" and guild["d"]["id"] == str(fake_discord.guild.id)
        await fake_discord.wait_for(lambda: fake_discord._session is not None and fake_discord._session.ws is None)
        await fake_discord.dispatch("TYPING_START", {"channel_id": "1"})  # sent while away
        async with http.ws_connect(fake_discord.gateway_url) as ws:
            assert (await ws.receive_json())["op"] == 10
            await ws.send_json({"op": 6, "d": {"token": fake_discord.token, "session_id": session_id, "seq": 2}})
            missed = await ws.receive_json()
            assert (missed["t"], missed["s"]) == ("TYPING_START", 3)
            assert (await ws.receive_json())["t"] == "RESUMED"
        async with http.ws_connect(fake_discord.gateway_url) as ws:
            await ws.receive_json()
            await ws.send_json({"op": 6, "d": {"token": fake_discord.token, "session_id": "nope", "seq": 1}})
            assert (await ws.receive_json()) == {"op": 9, "d": False, "s": None, "t": None}
        async with http.ws_connect(fake_discord.gateway_url) as ws:
            await ws.receive_json()
            await ws.send_json({"op": 2, "d": {"token": "wrong"}})
            closing = await ws.receive()
            assert closing.type == aiohttp.WSMsgType.CLOSE and closing.data == 4004


async def test_second_initial_response_and_late_followup(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    outcomes: list[BaseException | str] = []

    @client.tree.command(name="twice", description="Answers twice")
    async def twice(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("one")
        try:
            follow = await interaction.followup.send("follow", wait=True)
            await interaction.edit_original_response(content="one, edited")
            await follow.edit(content="follow, edited")
            outcomes.append((await interaction.original_response()).content)
            fake_discord.followup_window = 0.0
            await interaction.followup.send("too late")
        except discord.HTTPException as exc:
            outcomes.append(exc)

    async with fake_discord.connected(client):
        await client.tree.sync()
        h = await fake_discord.slash("twice")
        await fake_discord.wait_for(lambda: len(outcomes) == 2)
        assert outcomes[0] == "one, edited"
        assert isinstance(outcomes[1], discord.HTTPException) and outcomes[1].code == 50027
        assert [m.content for m in h.messages] == ["one, edited", "follow, edited"]
        # a second initial response to the same interaction is refused
        async with aiohttp.ClientSession() as http:
            url = f"{fake_discord.api_base}/interactions/{h.id}/{h.token}/callback"
            async with http.post(url, json={"type": 4, "data": {"content": "again"}}) as resp:
                assert resp.status == 400 and (await resp.json())["code"] == 40060


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [
        ({"content": "x" * 2001}, "content"),
        ({"embeds": [discord.Embed(title="t" * 257)]}, "embeds"),
        ({"embeds": [discord.Embed(description="d" * 3500) for _ in range(2)]}, "embeds"),  # 7000 in total
        ({"embed": discord.Embed(description="d" * 4000).set_footer(text="f" * 2048)}, "embeds"),
        ({"embed": discord.Embed().add_field(name="n", value="v" * 1025)}, "embeds"),
        ({"embed": discord.Embed().set_author(name="a" * 257)}, "embeds"),
    ],
)
async def test_channel_message_limits(
    fake_discord: FakeDiscord, make_client: Any, kwargs: dict[str, Any], where: str
) -> None:
    client = make_client()
    async with fake_discord.connected(client):
        channel = client.get_partial_messageable(fake_discord.channel.id)
        with pytest.raises(discord.HTTPException) as info:
            await channel.send(**kwargs)
        assert info.value.status == 400 and info.value.code == 50035
        assert where in fake_discord.requests[-1].response["errors"]
        assert fake_discord.channel_messages(fake_discord.channel.id) == []


async def test_more_than_five_action_rows(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    view = discord.ui.View()
    for row in range(5):
        view.add_item(discord.ui.Button(label=f"r{row}", custom_id=f"r{row}", row=row))
    async with fake_discord.connected(client):
        channel = client.get_partial_messageable(fake_discord.channel.id)
        await channel.send("five rows", view=view)
        rows = [{"type": 1, "components": [{"type": 2, "style": 1, "label": str(i), "custom_id": str(i)}]}
                for i in range(6)]
        async with aiohttp.ClientSession() as http:
            url = f"{fake_discord.api_base}/channels/{fake_discord.channel.id}/messages"
            headers = {"Authorization": f"Bot {fake_discord.token}"}
            async with http.post(url, json={"content": "six", "components": rows}, headers=headers) as resp:
                assert resp.status == 400
                assert "components" in (await resp.json())["errors"]
    assert [m.content for m in fake_discord.channel_messages(fake_discord.channel.id)] == ["five rows"]


async def test_channel_post_with_file_dm_and_restart(fake_discord: FakeDiscord, make_client: Any) -> None:
    first = make_client()
    async with fake_discord.connected(first):
        channel = first.get_channel(fake_discord.channel.id)
        assert isinstance(channel, discord.TextChannel)
        png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
        await channel.send("chart", file=discord.File(io.BytesIO(png), filename="graph.png"))
        user = await first.fetch_user(fake_discord.user.id)
        await user.send("a DM alert")
    # a restart: a new client on the same fake identifies anew
    second = make_client()
    async with fake_discord.connected(second):
        fetched = await second.fetch_channel(fake_discord.channel.id)
        assert fetched.id == fake_discord.channel.id
    (msg,) = fake_discord.channel_messages(fake_discord.channel.id)
    assert msg.content == "chart" and msg.files[0].data == png and msg.attachments[0]["size"] == len(png)
    (dm,) = fake_discord.channel_messages(fake_discord.dm_channel(fake_discord.user.id).id)
    assert dm.content == "a DM alert" and dm.guild_id is None
    assert fake_discord.identifies == 2


async def test_slash_refuses_unknown_options_and_unsynced_commands(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        with pytest.raises(ValueError, match="no option"):
            await fake_discord.slash("paper", {"nope": "x"})
        with pytest.raises(ValueError, match="requires"):
            await fake_discord.slash("paper", {})
        fake_discord.strict_commands = True
        with pytest.raises(LookupError):
            await fake_discord.slash("unsynced")


def test_limits_module_directly() -> None:
    """What discord.py already refuses client-side is still checked by the fake (raw HTTP clients)."""
    from tests.fakediscord import limits

    assert limits.check_embeds([{"title": str(i)} for i in range(11)])[0].path == ("embeds",)
    assert limits.check_embeds([{"fields": [{"name": "n", "value": "v"}] * 26}])[0].path == ("embeds", 0, "fields")
    assert limits.check_message({"content": ""}) != []
    assert limits.check_message({"content": "ok"}) == []
    assert limits.check_choices([{"name": "n" * 101, "value": "v"}])[0].path == ("choices", 0, "name")
    assert limits.check_choices([{"name": "n", "value": "v" * 101}])[0].path == ("choices", 0, "value")
    assert limits.check_choices([{"name": "n", "value": 5}]) == []
    row = {"type": 1, "components": [{"type": 2, "style": 1, "custom_id": "c" * 101, "label": "x"}]}
    assert limits.check_components([row])[0].path == ("components", 0, "components", 0, "custom_id")
    errors = limits.errors_object(limits.check_embeds([{"title": "t" * 300}]))
    assert errors == {"embeds": {"0": {"title": {"_errors": [
        {"code": "BASE_TYPE_MAX_LENGTH", "message": "Must be 256 or fewer in length."}]}}}}


# --------------------------------------------------------------------------- faults (issue 7)


async def test_global_rate_limit_then_success(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    async with fake_discord.connected(client):
        fake_discord.rate_limit("POST /channels/*/messages", retry_after=0.1, is_global=True)
        await client.get_partial_messageable(fake_discord.channel.id).send("after the wait")
    first, second = fake_discord.requests_to("POST", "/channels/*/messages")
    assert first.status == 429 and first.injected and first.response["global"] is True
    assert second.status == 200 and not second.injected
    assert [m.content for m in fake_discord.channel_messages(fake_discord.channel.id)] == ["after the wait"]


async def test_rate_limited_interaction_callback_is_retried(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    async with fake_discord.connected(client):
        await client.tree.sync()
        fake_discord.rate_limit("POST /interactions/*/*/callback", retry_after=0.05)
        h = await fake_discord.slash("paper", {"paper": "2412.10400"})
        assert (await h.wait_message()).embed["title"] == "Reasoning about citations"
    assert [r.status for r in fake_discord.requests_to("POST", "/interactions/*")] == [429, 200]


async def test_server_error_is_retried(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    async with fake_discord.connected(client):
        fake_discord.server_error("POST /channels/*/messages", 502)
        await client.get_partial_messageable(fake_discord.channel.id).send("eventually")
        fake_discord.server_error("POST /channels/*/messages", 503)
        with pytest.raises(discord.DiscordServerError):
            await client.get_partial_messageable(fake_discord.channel.id).send("not retried")
    statuses = [r.status for r in fake_discord.requests_to("POST", "/channels/*/messages")]
    assert statuses == [502, 200, 503]


async def test_forbidden_and_deleted_channels(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    alerts = fake_discord.guild.channel("alerts")
    async with fake_discord.connected(client):
        fake_discord.forbid_channel(alerts.id)
        with pytest.raises(discord.Forbidden) as forbidden:
            await client.get_partial_messageable(alerts.id).send("x")
        assert forbidden.value.code == 50001
        fake_discord.allow_channel(alerts.id)
        await client.get_partial_messageable(alerts.id).send("allowed again")
        fake_discord.delete_channel(fake_discord.channel.id)
        with pytest.raises(discord.NotFound) as gone:
            await client.get_partial_messageable(fake_discord.channel.id).send("x")
        assert gone.value.code == 10003
        with pytest.raises(discord.NotFound):
            await client.get_partial_messageable(424242).send("never existed")
        await fake_discord.remove_channel(alerts.id)
        await fake_discord.wait_for(lambda: client.get_channel(alerts.id) is None)
        with pytest.raises(discord.NotFound):
            await client.get_partial_messageable(alerts.id).send("gone")
    assert [m.content for m in fake_discord.channel_messages(alerts.id)] == ["allowed again"]


async def test_tcp_drop_then_resume_and_missed_interaction(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)
    resumed = asyncio.Event()

    @client.event
    async def on_resumed() -> None:
        resumed.set()

    async with fake_discord.connected(client):
        await client.tree.sync()
        await fake_discord.drop_gateway(code=None)
        # dispatched while the client is away: replayed after RESUME
        h = await fake_discord.slash("paper", {"paper": "2501.00001"})
        await fake_discord.wait_resumed(timeout=10)
        assert (await h.wait_message()).embed["title"] == "Another paper"
        await asyncio.wait_for(resumed.wait(), 5)
    assert fake_discord.identifies == 1 and fake_discord.resumes == 1


async def test_invalid_session_makes_the_client_identify_again(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    toy_tree(client)

    async def identify_at_once(shard_id: int | None, *, initial: bool = False) -> None:
        """discord.py waits 5 s before a non-initial IDENTIFY; no need on loopback."""

    client.before_identify_hook = identify_at_once
    async with fake_discord.connected(client):
        await client.tree.sync()
        await fake_discord.invalidate_session(resumable=False)
        await fake_discord.wait_for(lambda: fake_discord.identifies == 2 and fake_discord._session.ws, timeout=10)
        h = await fake_discord.slash("paper", {"paper": "2412.10400"})
        await h.wait_message()
        await fake_discord.request_reconnect()
        await fake_discord.wait_resumed(timeout=10)
        h = await fake_discord.slash("paper", {"paper": "2502.00002"})
        assert (await h.wait_message()).embed["title"] == "Third thing"


async def test_response_with_file_and_permission_check(fake_discord: FakeDiscord, make_client: Any) -> None:
    client = make_client()
    errors: list[BaseException] = []

    @client.tree.command(name="chart", description="A picture")
    async def chart(interaction: discord.Interaction) -> None:
        await interaction.response.send_message(
            embed=discord.Embed(title="graph").set_image(url="attachment://g.png"),
            file=discord.File(io.BytesIO(b"PNGDATA"), filename="g.png"),
        )

    @client.tree.command(name="admin", description="Needs Manage Channels")
    @app_commands.default_permissions(manage_channels=True)
    @app_commands.checks.has_permissions(manage_channels=True)
    async def admin(interaction: discord.Interaction) -> None:
        await interaction.response.send_message("done", ephemeral=True)

    @client.tree.error
    async def on_error(interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        errors.append(error)
        await interaction.response.send_message("You need Manage Channels.", ephemeral=True)

    async with fake_discord.connected(client):
        await client.tree.sync()
        msg = await (await fake_discord.slash("chart")).wait_message()
        assert msg.files[0].filename == "g.png" and msg.files[0].data == b"PNGDATA"
        assert msg.attachments[0]["filename"] == "g.png"
        assert msg.embed["image"]["url"] == "attachment://g.png"
        denied = await fake_discord.slash("admin")
        assert (await denied.wait_message()).content == "You need Manage Channels." and denied.ephemeral
        assert isinstance(errors[0], app_commands.MissingPermissions)
        allowed = await fake_discord.slash("admin", permissions=discord.Permissions(manage_channels=True))
        assert (await allowed.wait_message()).content == "done"
    admin_cmd = next(c for c in fake_discord.commands() if c["name"] == "admin")
    assert admin_cmd["default_member_permissions"] == str(discord.Permissions(manage_channels=True).value)
