"""A fake Discord (REST + gateway) on loopback, for end-to-end tests with the REAL discord.py 2.7.

The client is real; only Discord is fake. The fake speaks the wire protocol discord.py speaks
(``/api/v10`` JSON and multipart, a gateway websocket with zlib-stream compression), records
everything the bot sends, and refuses what Discord refuses — which discord.py does not check:

- 400 Invalid Form Body (code 50035, Discord's nested ``errors``) for content > 2000, embeds
  over limits (title 256, description 4096, 25 fields, field name 256 / value 1024, footer
  2048, author 256, 6000 in total, 10 embeds), > 5 action rows or > 5 components per row,
  > 25 autocomplete choices or a choice name/value > 100, an empty message;
- 404 Unknown interaction (10062) for an initial response later than ``interaction_deadline``
  (3 s) after dispatch; 400 (40060) for a second initial response; follow-ups and edits of
  the original allowed for ``followup_window`` (15 min), 401 (50027) after;
- 401 for REST calls without ``Authorization: Bot <token>``; gateway close 4004 for a bad token.

Usage (pytest; asyncio auto mode)::

    pytest_plugins = ["tests.fakediscord.fixtures"]   # in the test module or conftest.py

    async def test_paper(fake_discord, make_client):
        client = make_client()                          # discord.Client + CommandTree, or your bot
        async with fake_discord.connected(client):      # login, gateway READY, closes on exit
            await client.tree.sync()                    # PUT /applications/{app}/commands
            h = await fake_discord.slash("paper", {"paper": "2412.10400"})
            msg = await h.wait_message()                # response, edited deferral or 1st follow-up
            assert "2412.10400" in msg.embed["title"] and not h.ephemeral
            choices = await fake_discord.autocomplete("paper", {}, focused="paper")
            page2 = await fake_discord.click(msg, label="Next")   # type 3 on a button
            await page2.wait_response()                 # {"type": 7, "data": {...}}

Without ``pytest_plugins``: ``from tests.fakediscord.fixtures import fake_config, fake_discord,
make_client  # noqa: F401``. Outside pytest: ``async with FakeDiscord() as fake: ...``.

Your own bot instead of ``make_client``: set the env vars from ``fake_discord.env()``
(``MAPWATCH_DISCORD_API``, ``MAPWATCH_DISCORD_GATEWAY``, ``DISCORD_TOKEN``) or call
``bot.discord_endpoints.point_discord_py_at(fake.api_base, fake.gateway_url)``; then log in
with ``fake.token``. Create clients with ``guild_ready_timeout=0.05`` or ``on_ready`` waits 2 s.
discord.py sleeps 5 s before a re-IDENTIFY (after ``invalidate_session``); override the
client's ``before_identify_hook`` with a no-op in tests that do that. Resumes are immediate.

Fixtures (``tests/fakediscord/fixtures.py``):
    ``fake_discord``   a started ``FakeDiscord``, discord.py pointed at it (restored after).
    ``fake_config``    dict of ``FakeDiscord`` keyword arguments; override it in a module, or
                       per test: ``@pytest.mark.parametrize("fake_config",
                       [{"interaction_deadline": 0.2}])``.
    ``make_client``    factory of toy ``discord.Client`` objects with a ``.tree`` (closed after).

The ``FakeDiscord`` API (server.py):
    World: ``fake.guild``, ``fake.channel`` (the default guild's #general; #alerts is
    ``fake.guild.channel("alerts")``), ``fake.user`` (who runs commands), ``fake.bot_user``,
    ``fake.app_id``, ``fake.add_user(name)``, ``fake.dm_channel(user_id)``. Pass
    ``guilds=[FakeGuild(...)]`` to configure others.
    Interactions (each returns an ``InteractionHandle``):
        ``await fake.slash(name, {opt: value}, guild_id=, channel_id=, user_id=, permissions=)``
        (``guild_id=None``: a DM; option types come from the synced command),
        ``await fake.autocomplete(name, {opts}, focused="opt")`` -> list of choices
        (``autocomplete_handle`` for the handle), ``await fake.click(message, custom_id | label=, message_patch=)``
        (``message_patch={"interaction_metadata": None}``: a malformed event discord.py chokes on).
    Handle: ``wait_response()`` (the accepted callback body), ``wait_message()``,
    ``wait_messages(n)``, ``wait_followups(n)``, ``wait_rejected()`` (a refused answer, e.g. the
    late 404), ``choices()``, ``.callback``, ``.callback_type``, ``.ephemeral``, ``.deferred``,
    ``.original``, ``.followups``, ``.messages``, ``.rejected``. A refused answer makes the
    ``wait_*`` methods raise ``InteractionRejected`` (an AssertionError).
    ``FakeMessage``: ``.content``, ``.embeds``, ``.embed``, ``.components``, ``.buttons()``,
    ``.custom_ids()``, ``.flags``, ``.ephemeral``, ``.allowed_mentions``, ``.attachments``,
    ``.files`` (bytes of each uploaded file), ``.text()``, ``.payload``, ``.body``, ``.edits``.
    Channel posts: ``fake.channel_messages(channel_id)``,
    ``await fake.wait_channel_messages(channel_id, n)``.
    Everything: ``fake.requests`` (``RecordedRequest``: method, path, query, json, files,
    status, response, authorized, injected), ``fake.requests_to("POST", "/channels/*/messages")``,
    ``fake.unknown_routes`` (requests to routes the fake lacks: assert it stays empty),
    ``fake.command_syncs``, ``fake.commands(guild_id=None)``, ``fake.gateway_received``,
    ``fake.identifies``, ``fake.resumes``, ``await fake.wait_for(predicate, timeout)``.
    Faults (issue 7): ``fake.rate_limit("POST /channels/*/messages", retry_after=0.05,
    is_global=False, times=1)`` (429 with ``X-RateLimit-*`` and ``Via``, so discord.py retries),
    ``fake.server_error(route, 500, times=1)`` (discord.py retries 500/502/504/524 after 1 s),
    ``fake.inject(route, status, body, headers=, times=)``, ``fake.lose_answer(route, 503)`` (the
    request takes effect, then the answer is an error), ``fake.forbid_channel(id)`` (403
    Missing Access 50001), ``fake.delete_channel(id)`` (404 Unknown Channel 10003; the
    client's cache keeps it), ``await fake.remove_channel(id)`` (the same plus CHANNEL_DELETE),
    ``await fake.drop_gateway(code=4000)`` (``code=None``: TCP drop) then
    ``await fake.wait_resumed()`` (missed dispatches are replayed on RESUME),
    ``await fake.invalidate_session()``, ``await fake.request_reconnect()``,
    ``fake.ack_heartbeats = False``. Channel posts honour ``enforce_nonce`` as Discord does: a
    repeated nonce returns the first message (``fake.nonce_repeats`` counts them), for
    ``nonce_ttl`` seconds (a ``FakeDiscord`` argument; None, the default: for ever; Discord's
    is a few minutes). ``fake.refuse_posts(channel_id=, containing=, status=400, code=50035,
    message="Invalid Form Body", times=None)``: channel posts to that channel and/or whose
    content or embeds contain that text are refused for good with Discord's error body.
    ``GET /channels/{id}/messages?limit=&before=`` lists a channel's messages, newest first
    (without nonces, as Discord).
"""

from .payloads import FakeChannel, FakeGuild, FakeRole, FakeUser
from .server import (
    EPHEMERAL,
    FakeDiscord,
    FakeMessage,
    InteractionHandle,
    InteractionRejected,
    RecordedFile,
    RecordedRequest,
)

__all__ = [
    "EPHEMERAL",
    "FakeChannel",
    "FakeDiscord",
    "FakeGuild",
    "FakeMessage",
    "FakeRole",
    "FakeUser",
    "InteractionHandle",
    "InteractionRejected",
    "RecordedFile",
    "RecordedRequest",
]
