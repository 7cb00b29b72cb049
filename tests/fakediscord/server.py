"""The fake Discord server: REST under ``/api/v10`` and a JSON gateway under ``/ws``, on loopback.

See the package docstring (``tests/fakediscord/__init__.py``) for how to use it.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import re
import time
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import WSMsgType, web

from . import limits
from .payloads import (
    ATTACHMENT_SIZE_LIMIT,
    MEMBER_PERMISSIONS,
    FakeChannel,
    FakeGuild,
    FakeRole,
    FakeUser,
    application_payload,
    error_payload,
    iso_now,
    member_payload,
    message_payload,
    snowflake,
)

# How long a test waits for a condition on the fake: a ceiling only (the wait ends as soon as it
# holds), generous so that a loaded machine (a matplotlib /graph under load) does not fail a test.
WAIT_SECONDS = 30.0
EPHEMERAL = 1 << 6
LOADING = 1 << 7
DEFAULT: Any = object()  # sentinel: "use the fake's default guild/channel/user"

# Interaction types and callback types (Discord API).
APPLICATION_COMMAND, MESSAGE_COMPONENT, AUTOCOMPLETE, MODAL_SUBMIT = 2, 3, 4, 5
CHANNEL_MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE, AUTOCOMPLETE_RESULT, MODAL = 4, 5, 6, 7, 8, 9

# Option types.
OPT_SUBCOMMAND, OPT_GROUP, OPT_STRING, OPT_INTEGER, OPT_BOOLEAN = 1, 2, 3, 4, 5
OPT_USER, OPT_CHANNEL, OPT_ROLE, OPT_MENTIONABLE, OPT_NUMBER, OPT_ATTACHMENT = 6, 7, 8, 9, 10, 11

_COMMAND_NAME = re.compile(r"^[-_\w]{1,32}$")


class InteractionRejected(AssertionError):
    """The bot's answer to an interaction was refused (late, duplicate, over a limit...)."""

    def __init__(self, request: RecordedRequest) -> None:
        super().__init__(f"{request.method} {request.path} -> {request.status}: {request.response}")
        self.request = request


# --------------------------------------------------------------------------- records


@dataclass
class RecordedFile:
    field: str
    filename: str
    content_type: str
    data: bytes


@dataclass
class RecordedRequest:
    """One REST request as the fake saw it, and what it answered."""

    method: str
    path: str  # relative to the API base, e.g. "/channels/123/messages"
    query: dict[str, str]
    headers: dict[str, str]  # without Authorization
    authorized: bool  # carried "Authorization: Bot <the configured token>"
    json: Any  # the JSON body, or the multipart "payload_json"
    files: list[RecordedFile]
    at: float  # loop time
    status: int = 0
    response: Any = None
    injected: bool = False  # answered by an injected fault

    @property
    def route(self) -> str:
        return f"{self.method} {self.path}"


@dataclass
class FakeMessage:
    """A message the bot made: a channel post, an interaction response or a follow-up."""

    id: int
    channel_id: int
    guild_id: int | None
    kind: str  # "channel" | "response" | "followup"
    payload: dict[str, Any]  # the message object as the fake returns it (after edits)
    body: dict[str, Any]  # the body of the request that created it
    files: list[RecordedFile] = field(default_factory=list)
    edits: list[dict[str, Any]] = field(default_factory=list)
    interaction_id: int | None = None
    deleted: bool = False

    @property
    def content(self) -> str:
        return str(self.payload.get("content") or "")

    @property
    def embeds(self) -> list[dict[str, Any]]:
        return list(self.payload.get("embeds") or [])

    @property
    def embed(self) -> dict[str, Any]:
        """The only (first) embed; raises if there is none."""
        embeds = self.embeds
        assert embeds, f"message {self.id} has no embed: {self.payload!r}"
        return embeds[0]

    @property
    def components(self) -> list[dict[str, Any]]:
        return list(self.payload.get("components") or [])

    @property
    def flags(self) -> int:
        return int(self.payload.get("flags") or 0)

    @property
    def ephemeral(self) -> bool:
        return bool(self.flags & EPHEMERAL)

    @property
    def loading(self) -> bool:
        """A deferred response not yet edited ("Bot is thinking...")."""
        return bool(self.flags & LOADING)

    @property
    def allowed_mentions(self) -> dict[str, Any] | None:
        """``allowed_mentions`` of the latest request that set it (create or edit)."""
        for body in [*reversed(self.edits), self.body]:
            if "allowed_mentions" in body:
                return body["allowed_mentions"]
        return None

    @property
    def attachments(self) -> list[dict[str, Any]]:
        return list(self.payload.get("attachments") or [])

    def buttons(self) -> list[dict[str, Any]]:
        """Every interactive component (buttons, selects) in the message, in order."""
        out: list[dict[str, Any]] = []

        def walk(items: list[dict[str, Any]]) -> None:
            for item in items:
                if item.get("type") in (1, 17, 9):  # action row, container, section
                    walk(item.get("components") or [])
                    if isinstance(item.get("accessory"), dict):
                        walk([item["accessory"]])
                else:
                    out.append(item)

        walk(self.components)
        return out

    def custom_ids(self) -> list[str]:
        return [b["custom_id"] for b in self.buttons() if "custom_id" in b]

    def text(self) -> str:
        """Content and every embed's text in one string, for ``in`` assertions."""
        parts = [self.content]
        for e in self.embeds:
            parts += [e.get("title") or "", e.get("description") or ""]
            parts += [f"{f.get('name')}\n{f.get('value')}" for f in e.get("fields") or []]
            parts += [(e.get("footer") or {}).get("text") or "", (e.get("author") or {}).get("name") or ""]
        return "\n".join(p for p in parts if p)


class InteractionHandle:
    """What a test holds after dispatching an interaction: the bot's answers, as they come."""

    def __init__(self, fake: FakeDiscord, payload: dict[str, Any]) -> None:
        self.fake = fake
        self.payload = payload
        self.id = int(payload["id"])
        self.token: str = payload["token"]
        self.type: int = payload["type"]
        self.channel_id = int(payload["channel_id"])
        self.guild_id = int(payload["guild_id"]) if payload.get("guild_id") else None
        self.dispatched_at = fake.loop_time()
        self.callback: dict[str, Any] | None = None  # the accepted initial response body
        self.callback_request: RecordedRequest | None = None
        self.rejected: list[RecordedRequest] = []  # refused callbacks and follow-ups
        self.original: FakeMessage | None = None  # message of the response (or the clicked one)
        self.followups: list[FakeMessage] = []
        self.component_message: FakeMessage | None = None

    def __repr__(self) -> str:
        return f"<InteractionHandle id={self.id} type={self.type} callback={self.callback_type}>"

    # state
    @property
    def callback_type(self) -> int | None:
        return None if self.callback is None else int(self.callback["type"])

    @property
    def acknowledged(self) -> bool:
        return self.callback is not None

    @property
    def deferred(self) -> bool:
        return self.callback_type in (DEFERRED_MESSAGE, DEFERRED_UPDATE)

    @property
    def ephemeral(self) -> bool:
        """Whether the initial response asked for flags 64 (ephemeral)."""
        data = (self.callback or {}).get("data") or {}
        return bool(int(data.get("flags") or 0) & EPHEMERAL)

    @property
    def messages(self) -> list[FakeMessage]:
        """The visible messages of this interaction: the response (once not loading) then follow-ups."""
        out = []
        if self.original is not None and not self.original.loading and not self.original.deleted:
            out.append(self.original)
        return out + [m for m in self.followups if not m.deleted and m is not self.original]

    # waiting
    async def wait_response(self, timeout: float = WAIT_SECONDS) -> dict[str, Any]:
        """The accepted initial callback body ``{"type": ..., "data": ...}``; raises on a refused one."""
        await self.fake.wait_for(lambda: self.callback is not None or bool(self.rejected), timeout=timeout)
        if self.callback is None:
            raise InteractionRejected(self.rejected[0])
        return self.callback

    async def wait_message(self, timeout: float = WAIT_SECONDS) -> FakeMessage:
        """The first visible answer: the response, the edited deferral, or the first follow-up."""
        await self.fake.wait_for(lambda: bool(self.messages) or bool(self.rejected), timeout=timeout)
        if not self.messages:
            raise InteractionRejected(self.rejected[0])
        return self.messages[0]

    async def wait_messages(self, n: int, timeout: float = WAIT_SECONDS) -> list[FakeMessage]:
        await self.fake.wait_for(lambda: len(self.messages) >= n, timeout=timeout)
        return self.messages

    async def wait_followups(self, n: int = 1, timeout: float = WAIT_SECONDS) -> list[FakeMessage]:
        await self.fake.wait_for(lambda: len(self.followups) >= n, timeout=timeout)
        return self.followups

    async def wait_rejected(self, timeout: float = WAIT_SECONDS) -> RecordedRequest:
        """The first refused answer (e.g. the 404 of a late callback, the 400 of an oversized embed)."""
        await self.fake.wait_for(lambda: bool(self.rejected), timeout=timeout)
        return self.rejected[0]

    async def choices(self, timeout: float = WAIT_SECONDS) -> list[dict[str, Any]]:
        """An autocomplete's answer: the list of ``{"name", "value"}`` choices."""
        body = await self.wait_response(timeout)
        assert body["type"] == AUTOCOMPLETE_RESULT, f"expected an autocomplete result, got {body!r}"
        return list((body.get("data") or {}).get("choices") or [])


@dataclass
class _Fault:
    method: str
    pattern: str
    status: int
    body: Any
    headers: dict[str, str]
    times: int | None  # None = forever
    after: bool = False  # handle the request first (its effect happens), then answer this instead

    def matches(self, method: str, path: str) -> bool:
        return (self.method in ("*", method)) and fnmatch.fnmatchcase(path, self.pattern)


@dataclass
class GatewaySession:
    id: str
    seq: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)  # every dispatch sent, with "s"
    ws: web.WebSocketResponse | None = None
    send: Callable[[dict[str, Any]], Awaitable[None]] | None = None
    resumes: int = 0
    identify: dict[str, Any] = field(default_factory=dict)
    transport: asyncio.BaseTransport | None = None  # the live connection's TCP transport


class _Reply(Exception):
    def __init__(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        super().__init__(status)
        self.status, self.body, self.headers = status, body, headers or {}


def _invalid_form(violations: list[limits.Violation]) -> _Reply:
    return _Reply(400, error_payload(50035, "Invalid Form Body", limits.errors_object(violations)))


# --------------------------------------------------------------------------- the server


class FakeDiscord:
    """A Discord-compatible REST API and gateway for the real discord.py client, on 127.0.0.1."""

    def __init__(
        self,
        *,
        token: str = "fake-bot-token",
        app_id: int | None = None,
        guilds: list[FakeGuild] | None = None,
        interaction_deadline: float = 3.0,
        followup_window: float = 15 * 60.0,
        heartbeat_interval_ms: int = 41250,
        strict_commands: bool = False,
        nonce_ttl: float | None = None,
        shards: int = 1,
    ) -> None:
        self.token = token
        self.app_id = app_id or snowflake()
        self.bot_user = FakeUser(self.app_id, "mapwatch-test-bot", bot=True)
        self.owner = FakeUser(snowflake(), "owner")
        self.user = FakeUser(snowflake(), "tester")  # the default user who runs commands
        self.users: dict[int, FakeUser] = {u.id: u for u in (self.bot_user, self.owner, self.user)}
        if guilds is None:
            gid = snowflake()
            guilds = [
                FakeGuild(
                    gid,
                    "Test Guild",
                    channels=[
                        FakeChannel(snowflake(), "general", gid),
                        FakeChannel(snowflake(), "alerts", gid, position=1),
                    ],
                    roles=[FakeRole(gid, "@everyone")],
                    owner_id=self.owner.id,
                )
            ]
        self.guilds: dict[int, FakeGuild] = {g.id: g for g in guilds}
        self.interaction_deadline = interaction_deadline
        self.followup_window = followup_window
        self.heartbeat_interval_ms = heartbeat_interval_ms
        #: When True, ``slash()`` refuses commands that the bot has not synced.
        self.strict_commands = strict_commands
        self.attachment_size_limit = ATTACHMENT_SIZE_LIMIT

        # what the bot did
        self.requests: list[RecordedRequest] = []
        self.gateway_received: list[dict[str, Any]] = []  # every payload the client sent on the gateway
        self.identifies = 0
        self.resumes = 0
        self.connections = 0  # websocket connections accepted
        self.gateway_queries: list[dict[str, str]] = []  # query string of each connection
        self.global_commands: list[dict[str, Any]] = []
        self.guild_commands: dict[int, list[dict[str, Any]]] = {}
        self.command_syncs: list[RecordedRequest] = []  # every PUT of a command list
        self.messages: dict[int, FakeMessage] = {}  # every message by id
        self.interactions: dict[int, InteractionHandle] = {}
        self._by_token: dict[str, InteractionHandle] = {}
        self.dm_channels: dict[int, FakeChannel] = {}  # by recipient user id
        #: Channel posts with ``enforce_nonce`` by (channel id, nonce): a repeat returns the first.
        self.nonces: dict[tuple[int, str], FakeMessage] = {}
        self.nonce_repeats = 0  # posts answered with an earlier message (enforced nonce)
        #: Seconds Discord remembers an enforced nonce (None: for ever); ``nonce_seen`` holds when.
        self.nonce_ttl = nonce_ttl
        self.nonce_seen: dict[tuple[int, str], float] = {}
        #: Posts refused for good (``refuse_posts``): (channel id or None, text or None, status, body, times).
        self.refusals: list[list[Any]] = []

        # faults
        self._faults: list[_Fault] = []
        self.forbidden_channels: set[int] = set()
        self.deleted_channels: set[int] = set()
        #: Channels where the bot lacks Create Public Threads (``deny_threads``): 403 Missing Permissions.
        self.no_threads: set[int] = set()
        #: Threads opened (from a message, or forum posts), by id.
        self.threads: dict[int, FakeChannel] = {}
        #: Channel webhooks (``add_webhook``): (webhook id, token) -> channel id; and their messages.
        self.channel_webhooks: dict[tuple[int, str], int] = {}
        self.webhook_messages: list[FakeMessage] = []
        #: Forums whose settings (tags) the bot may not edit (``deny_forum_edit``): 403 Missing Permissions.
        self.no_forum_edit: set[int] = set()
        self.ack_heartbeats = True

        self._session: GatewaySession | None = None
        self._sessions: dict[str, GatewaySession] = {}
        #: The shard count /gateway/bot recommends; each guild belongs to shard (id >> 22) % shards.
        self.shards = shards
        self.shard_sessions: dict[int, GatewaySession] = {}  # by shard id, the latest identified
        self.identified_shards: list[list[int] | None] = []  # the "shard" field of each IDENTIFY
        self._gateway_open = asyncio.Event()
        self._gateway_open.set()
        self._changed = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._routes = self._route_table()

    # ------------------------------------------------------------------ lifecycle

    async def start(self) -> FakeDiscord:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("GET", "/ws", self._gateway)
        app.router.add_route("*", "/api/v{version:\\d+}/{tail:.*}", self._rest)
        app.router.add_route("*", "/api/{tail:.*}", self._rest)
        self._runner = web.AppRunner(app, handle_signals=False, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def close(self) -> None:
        for session in self._sessions.values():
            if session.ws is not None and not session.ws.closed:
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(session.ws.close(code=1001), 1.0)
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeDiscord:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def api_base(self) -> str:
        """The REST base, for ``MAPWATCH_DISCORD_API`` / ``discord.http.Route.BASE``."""
        return f"http://127.0.0.1:{self.port}/api/v10"

    @property
    def gateway_url(self) -> str:
        """The gateway URL, for ``MAPWATCH_DISCORD_GATEWAY`` / ``DiscordWebSocket.DEFAULT_GATEWAY``."""
        return f"ws://127.0.0.1:{self.port}/ws"

    def env(self) -> dict[str, str]:
        """Environment variables that point the bot at this fake."""
        return {"MAPWATCH_DISCORD_API": self.api_base, "MAPWATCH_DISCORD_GATEWAY": self.gateway_url,
                "DISCORD_TOKEN": self.token}

    @contextlib.asynccontextmanager
    async def connected(self, client: Any, *, timeout: float = 10.0) -> AsyncIterator[Any]:
        """Log ``client`` in against this fake, run it until ready, and close it on exit.

        The client must have been created after (or be pointed at the fake with)
        ``bot.discord_endpoints.point_discord_py_at``. Pass ``guild_ready_timeout=0.05`` to the
        client to make ``on_ready`` come fast.
        """
        from mapwatch.bot.discord_endpoints import point_discord_py_at

        point_discord_py_at(self.api_base, self.gateway_url)
        task: asyncio.Task[None] | None = None
        try:
            await client.login(self.token)
            task = asyncio.create_task(client.connect(reconnect=True))
            ready = asyncio.create_task(client.wait_until_ready())
            done, _ = await asyncio.wait({ready, task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if ready not in done:
                ready.cancel()
                if task in done:
                    task.result()  # raises the connection error
                raise TimeoutError("the client did not become ready")
            yield client
        finally:
            await client.close()
            if task is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(task, 5.0)

    # ------------------------------------------------------------------ waiting

    def loop_time(self) -> float:
        return asyncio.get_running_loop().time()

    def _notify(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = WAIT_SECONDS) -> Any:
        """Wait until ``predicate()`` is truthy (re-checked after every request or gateway event)."""
        deadline = self.loop_time() + timeout
        while True:
            value = predicate()
            if value:
                return value
            remaining = deadline - self.loop_time()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {timeout} s")
            event = self._changed
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(event.wait(), min(remaining, 0.5))

    async def wait_connected(self, timeout: float = WAIT_SECONDS) -> GatewaySession:
        """Wait for an identified gateway session with a live websocket."""
        await self.wait_for(lambda: self._session is not None and self._session.ws is not None, timeout)
        assert self._session is not None
        return self._session

    async def wait_resumed(self, count: int = 1, timeout: float = 10.0) -> None:
        await self.wait_for(lambda: self.resumes >= count and self._session is not None and self._session.ws, timeout)

    def channel_messages(self, channel_id: int, *, include_interactions: bool = False) -> list[FakeMessage]:
        """Messages posted with ``POST /channels/{id}/messages`` (not deleted), oldest first."""
        return [
            m
            for m in self.messages.values()
            if m.channel_id == channel_id and not m.deleted and (include_interactions or m.kind == "channel")
        ]

    async def wait_channel_messages(self, channel_id: int, n: int = 1,
                                    timeout: float = WAIT_SECONDS) -> list[FakeMessage]:
        await self.wait_for(lambda: len(self.channel_messages(channel_id)) >= n, timeout)
        return self.channel_messages(channel_id)

    def requests_to(self, method: str, pattern: str) -> list[RecordedRequest]:
        """Recorded requests whose path matches a glob, e.g. ``requests_to("POST", "/channels/*/messages")``."""
        return [r for r in self.requests if r.method == method and fnmatch.fnmatchcase(r.path, pattern)]

    @property
    def unknown_routes(self) -> list[RecordedRequest]:
        """Requests to routes the fake does not implement (answered 404 with code 0).

        Assert this is empty at the end of an end-to-end test to catch a bot using an API the
        fake (and so the test) does not cover.
        """
        return [r for r in self.requests if r.status == 404 and not r.injected and (r.response or {}).get("code") == 0]

    # ------------------------------------------------------------------ convenience accessors

    @property
    def guild(self) -> FakeGuild:
        """The first (default) guild."""
        return next(iter(self.guilds.values()))

    @property
    def channel(self) -> FakeChannel:
        """The default guild's first text channel."""
        return next(c for c in self.guild.channels if c.type == 0)

    def add_user(self, username: str, user_id: int | None = None) -> FakeUser:
        user = FakeUser(user_id or snowflake(), username)
        self.users[user.id] = user
        return user

    def find_channel(self, channel_id: int) -> FakeChannel | None:
        for g in self.guilds.values():
            for c in g.channels:
                if c.id == channel_id:
                    return c
        for c in self.dm_channels.values():
            if c.id == channel_id:
                return c
        return self.threads.get(channel_id)

    def dm_channel(self, user_id: int) -> FakeChannel:
        ch = self.dm_channels.get(user_id)
        if ch is None:
            ch = FakeChannel(snowflake(), "", None, type=1, recipient=self._user(user_id))
            self.dm_channels[user_id] = ch
        return ch

    def _user(self, user_id: int) -> FakeUser:
        user = self.users.get(user_id)
        if user is None:
            user = self.users[user_id] = FakeUser(user_id, f"user{user_id}")
        return user

    def commands(self, guild_id: int | None = None) -> list[dict[str, Any]]:
        """The synced commands: global ones, or those of one guild."""
        return self.global_commands if guild_id is None else self.guild_commands.get(guild_id, [])

    # ------------------------------------------------------------------ fault injection

    def inject(
        self,
        route: str,
        status: int,
        body: Any = None,
        *,
        headers: dict[str, str] | None = None,
        times: int | None = 1,
    ) -> None:
        """Answer the next ``times`` requests matching ``route`` with ``status`` (None = until cleared).

        ``route`` is ``"METHOD /glob"`` relative to the API base, e.g. ``"POST /channels/*/messages"``
        or ``"* /interactions/*"``.
        """
        method, _, pattern = route.partition(" ")
        if body is None:
            body = error_payload(0, f"{status}: injected fault")
        self._faults.append(_Fault(method.upper(), pattern, status, body, headers or {}, times))

    def rate_limit(
        self, route: str, retry_after: float = 0.05, *, is_global: bool = False, times: int = 1, scope: str = "user"
    ) -> None:
        """Queue 429s like Discord's: ``retry_after`` in the body, ``X-RateLimit-*`` and ``Via`` headers.

        discord.py only retries a 429 that carries a ``Via`` header (otherwise it assumes a
        Cloudflare ban); this sends one.
        """
        headers = {
            "Via": "1.1 google",
            "Retry-After": str(max(1, round(retry_after))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": f"{time.time() + retry_after:.3f}",
            "X-RateLimit-Reset-After": f"{retry_after:.3f}",
            "X-RateLimit-Bucket": "fake" + format(abs(hash(route)) % 16**8, "08x"),
            "X-RateLimit-Scope": "global" if is_global else scope,
        }
        if is_global:
            headers["X-RateLimit-Global"] = "true"
        body = {"message": "You are being rate limited.", "retry_after": retry_after, "global": is_global, "code": 0}
        self.inject(route, 429, body, headers=headers, times=times)

    def server_error(self, route: str, status: int = 500, *, times: int = 1) -> None:
        """Queue 5xx answers. discord.py retries 500, 502, 504 and 524 (after 1 s, 3 s...)."""
        self.inject(route, status, error_payload(0, f"{status}: Internal Server Error"), times=times)

    def lose_answer(self, route: str, status: int = 503, *, times: int = 1) -> None:
        """Handle the next ``times`` matching requests (a message is created), then answer
        ``status`` instead of the result: the client cannot know its request took effect."""
        method, _, pattern = route.partition(" ")
        body = error_payload(0, f"{status}: answer lost")
        self._faults.append(_Fault(method.upper(), pattern, status, body, {}, times, after=True))

    def forbid_channel(self, channel_id: int) -> None:
        """Posting to the channel answers 403 Missing Access (50001) until ``allow_channel``."""
        self.forbidden_channels.add(channel_id)

    def deny_threads(self, channel_id: int) -> None:
        """The bot lacks Create Public Threads in the channel: opening a thread there answers 403
        Missing Permissions (50013) until ``allow_threads``."""
        self.no_threads.add(channel_id)

    def allow_threads(self, channel_id: int) -> None:
        self.no_threads.discard(channel_id)

    def add_forum(self, name: str, tags: list[str] | None = None) -> FakeChannel:
        """A forum channel (type 15) in the default guild, with tags of those names; call before
        ``connected`` so that the guild the bot receives holds it."""
        forum = FakeChannel(snowflake(), name, self.guild.id, type=15, position=len(self.guild.channels),
                            tags=[{"id": str(snowflake()), "name": t, "moderated": False, "emoji_id": None,
                                   "emoji_name": None} for t in tags or []])
        self.guild.channels.append(forum)
        return forum

    def deny_forum_edit(self, channel_id: int) -> None:
        """The bot lacks Manage Channels on the forum: editing its tags answers 403 (50013)."""
        self.no_forum_edit.add(channel_id)

    def tag_names(self, post: FakeChannel) -> list[str]:
        """The names of the tags applied to a forum post."""
        forum = self.find_channel(post.parent_id or 0)
        by_id = {t["id"]: t["name"] for t in (forum.tags if forum else [])}
        return [by_id.get(t, f"?{t}") for t in post.applied_tags]

    def threads_of(self, parent_id: int) -> list[FakeChannel]:
        """The threads opened in a channel (a text channel's, or a forum's posts), oldest first."""
        return [t for t in self.threads.values() if t.parent_id == parent_id]

    def allow_channel(self, channel_id: int) -> None:
        self.forbidden_channels.discard(channel_id)

    def delete_channel(self, channel_id: int) -> None:
        """The channel is gone: requests about it answer 404 Unknown Channel (10003)."""
        self.deleted_channels.add(channel_id)

    async def remove_channel(self, channel_id: int) -> None:
        """Delete the channel as Discord does: 404 from now on and a CHANNEL_DELETE dispatch."""
        self.deleted_channels.add(channel_id)
        channel = self.find_channel(channel_id)
        if channel is not None and channel.guild_id is not None:
            self.guilds[channel.guild_id].channels.remove(channel)
            await self.dispatch("CHANNEL_DELETE", channel.payload())

    def refuse_posts(
        self,
        *,
        channel_id: int | None = None,
        containing: str | None = None,
        status: int = 400,
        code: int = 50035,
        message: str = "Invalid Form Body",
        errors: dict[str, Any] | None = None,
        times: int | None = None,
    ) -> None:
        """Refuse channel posts for good, as Discord refuses a message it will never accept:
        posts to ``channel_id`` (None: any) whose content or embeds contain ``containing``
        (None: any) answer ``status`` with Discord's error body (``code``, ``message``,
        ``errors``), ``times`` times (None: until ``clear_faults``)."""
        if errors is None and code == 50035:
            errors = {"embeds": {"0": {"description": {"_errors": [
                {"code": "BASE_TYPE_BAD_LENGTH", "message": "Must be 4096 or fewer in length."}]}}}}
        self.refusals.append([channel_id, containing, status, error_payload(code, message, errors), times])

    def _refused(self, channel_id: int, body: dict[str, Any]) -> _Reply | None:
        text = json.dumps({"content": body.get("content"), "embeds": body.get("embeds")}, ensure_ascii=False)
        for rule in self.refusals:
            ch, containing, status, payload, times = rule
            if (ch is None or ch == channel_id) and (containing is None or containing in text):
                if times is not None:
                    rule[4] = times - 1
                    if rule[4] <= 0:
                        self.refusals.remove(rule)
                return _Reply(status, payload)
        return None

    def clear_faults(self) -> None:
        self.refusals.clear()
        self._faults.clear()
        self.forbidden_channels.clear()
        self.deleted_channels.clear()

    async def drop_gateway(self, code: int | None = 4000) -> None:
        """Close the client's gateway connection with ``code``; ``None`` drops TCP without a close frame.

        discord.py reconnects to ``resume_gateway_url`` and sends RESUME (op 6); the fake replays
        the dispatches the client missed and answers RESUMED. Wait with ``wait_resumed()``.
        """
        await self._drop(await self.wait_connected(), code)

    async def _drop(self, session: GatewaySession, code: int | None) -> None:
        ws = session.ws
        assert ws is not None
        session.ws = None
        session.send = None
        if code is None:
            transport = session.transport
            if transport is not None:
                transport.abort()
        else:
            asyncio.get_running_loop().create_task(ws.close(code=code))
        self._notify()

    async def invalidate_session(self, resumable: bool = False) -> None:
        """Send op 9 INVALID_SESSION; with ``resumable=False`` the client identifies anew."""
        session = await self.wait_connected()
        if not resumable:
            self._sessions.pop(session.id, None)
        await self._send_raw(session, {"op": 9, "d": resumable, "s": None, "t": None})

    async def request_reconnect(self) -> None:
        """Send op 7 RECONNECT: the client closes and resumes."""
        session = await self.wait_connected()
        await self._send_raw(session, {"op": 7, "d": None, "s": None, "t": None})

    # ------------------------------------------------------------------ interactions (test API)

    def _find_command(self, name: str, guild_id: int | None, type_: int = 1) -> dict[str, Any] | None:
        pools = [self.guild_commands.get(guild_id, [])] if guild_id else []
        pools.append(self.global_commands)
        for pool in pools:
            for cmd in pool:
                if cmd["name"] == name and int(cmd.get("type", 1)) == type_:
                    return cmd
        return None

    def _resolve_where(
        self, guild_id: Any, channel_id: Any, user_id: Any
    ) -> tuple[FakeGuild | None, FakeChannel, FakeUser]:
        user = self._user(self.user.id if user_id is DEFAULT else int(user_id))
        if guild_id is None:
            return None, self.dm_channel(user.id), user
        guild = self.guild if guild_id is DEFAULT else self.guilds[int(guild_id)]
        if channel_id is DEFAULT:
            channel = next(c for c in guild.channels if c.type == 0)
        else:
            found = self.find_channel(int(channel_id))
            channel = found or FakeChannel(int(channel_id), f"channel{channel_id}", guild.id)
        return guild, channel, user

    def _base_interaction(
        self, type_: int, guild: FakeGuild | None, channel: FakeChannel, user: FakeUser, permissions: int | None
    ) -> dict[str, Any]:
        iid = snowflake()
        token = f"itoken-{iid}-{snowflake():x}"
        data: dict[str, Any] = {
            "id": str(iid),
            "application_id": str(self.app_id),
            "type": type_,
            "token": token,
            "version": 1,
            "channel_id": str(channel.id),
            "channel": channel.payload(),
            "locale": "en-US",
            "app_permissions": str(MEMBER_PERMISSIONS),
            "entitlements": [],
            "attachment_size_limit": self.attachment_size_limit,
        }
        if guild is not None:
            perms = MEMBER_PERMISSIONS if permissions is None else permissions
            data.update(
                guild_id=str(guild.id),
                guild=guild.partial(),
                guild_locale="en-US",
                member=member_payload(user, roles=[], permissions=perms),
                authorizing_integration_owners={"0": str(guild.id)},
                context=0,
            )
        else:
            data.update(user=user.payload(), authorizing_integration_owners={"0": str(user.id)}, context=1)
        return data

    def _build_options(
        self, command: dict[str, Any] | None, options: dict[str, Any], focused: str | None
    ) -> list[dict[str, Any]]:
        schema = {o["name"]: o for o in (command or {}).get("options", [])}
        if command is not None:
            unknown = set(options) - set(schema)
            if unknown:
                raise ValueError(f"/{command['name']} has no option(s) {sorted(unknown)}; it has {sorted(schema)}")
            missing = [n for n, o in schema.items() if o.get("required") and n not in options and n != focused]
            if missing and focused is None:
                raise ValueError(f"/{command['name']} requires option(s) {missing}")
        out: list[dict[str, Any]] = []
        for name, value in options.items():
            if name in schema:
                otype = int(schema[name]["type"])
            elif isinstance(value, bool):
                otype = OPT_BOOLEAN
            elif isinstance(value, int):
                otype = OPT_INTEGER
            elif isinstance(value, float):
                otype = OPT_NUMBER
            else:
                otype = OPT_STRING
            opt: dict[str, Any] = {"name": name, "type": otype, "value": value}
            if name == focused:
                opt["focused"] = True
                opt["value"] = str(value)
            elif otype in (OPT_USER, OPT_CHANNEL, OPT_ROLE, OPT_MENTIONABLE):
                opt["value"] = str(value)
            out.append(opt)
        return out

    def _resolved(self, options: list[dict[str, Any]], guild: FakeGuild | None,
                  permissions: int | None = None) -> dict[str, Any]:
        resolved: dict[str, Any] = {}
        for opt in options:
            if opt.get("focused"):
                continue
            if opt["type"] == OPT_CHANNEL:
                ch = self.find_channel(int(opt["value"]))
                if ch is not None:
                    payload = ch.payload()
                    payload["permissions"] = str(MEMBER_PERMISSIONS if permissions is None else permissions)
                    resolved.setdefault("channels", {})[str(ch.id)] = payload
            elif opt["type"] in (OPT_USER, OPT_MENTIONABLE):
                user = self._user(int(opt["value"]))
                resolved.setdefault("users", {})[str(user.id)] = user.payload()
        return resolved

    async def _dispatch_interaction(self, payload: dict[str, Any]) -> InteractionHandle:
        handle = InteractionHandle(self, payload)
        self.interactions[handle.id] = handle
        self._by_token[handle.token] = handle
        await self.dispatch("INTERACTION_CREATE", payload)
        handle.dispatched_at = self.loop_time()
        return handle

    async def slash(
        self,
        name: str,
        options: dict[str, Any] | None = None,
        *,
        guild_id: Any = DEFAULT,
        channel_id: Any = DEFAULT,
        user_id: Any = DEFAULT,
        permissions: Any = None,
        _type: int = APPLICATION_COMMAND,
        _focused: str | None = None,
        installed: str = "guild",
        private: bool = False,
        target_permissions: Any = None,
    ) -> InteractionHandle:
        """Run ``/name`` with ``options`` (a dict name -> value) as a user: dispatch INTERACTION_CREATE.

        ``guild_id=None`` runs it in a DM. ``permissions`` (an int or a ``discord.Permissions``)
        are the member's permissions in the channel (default: an ordinary member, no Manage
        Channels). Option types come from the synced command when there is one.
        """
        guild, channel, user = self._resolve_where(guild_id, channel_id, user_id)
        perms = getattr(permissions, "value", permissions)
        name, _, sub = name.partition(" ")  # "team add": the subcommand `add` of /team
        command = self._find_command(name, guild.id if guild else None)
        if command is None and self.strict_commands:
            raise LookupError(f"/{name} was not synced (global or guild)")
        schema = command
        if sub and command is not None:
            schema = next((o for o in command.get("options", []) if o["name"] == sub and int(o["type"]) == 1), None)
            if schema is None:
                raise LookupError(f"/{name} has no subcommand {sub}")
        opts = self._build_options(schema, dict(options or {}), _focused)
        data: dict[str, Any] = {
            "id": command["id"] if command else str(snowflake()),
            "name": name,
            "type": 1,
            "options": [{"type": 1, "name": sub, "options": opts}] if sub else opts,
        }
        if command and command.get("guild_id"):
            data["guild_id"] = command["guild_id"]
        # the user's permissions in a channel option's channel: ``target_permissions``, else as here
        there = getattr(target_permissions, "value", target_permissions)
        resolved = self._resolved(opts, guild, perms if there is None else there)
        if resolved:
            data["resolved"] = resolved
        payload = self._base_interaction(_type, guild, channel, user, perms)
        self._install_context(payload, command, guild, user, installed, private)
        payload["data"] = data
        return await self._dispatch_interaction(payload)

    def _install_context(self, payload: dict[str, Any], command: dict[str, Any] | None, guild: FakeGuild | None,
                         user: FakeUser, installed: str, private: bool) -> None:
        """Who installed the app for this interaction (``installed``: "guild" or "user") and where it
        runs (``context``: 0 a server, 1 the bot's DM, 2 a group DM or another user's DM, ``private``).
        Discord offers a command only where its ``integration_types`` and ``contexts`` allow: the
        fake refuses to dispatch one they do not (a LookupError in the test)."""
        kind = {"guild": 0, "user": 1}[installed]
        context = 0 if guild is not None else 2 if private else 1
        if installed == "user" or private:  # only the user's installation authorises it
            payload["authorizing_integration_owners"] = {"1": str(user.id)}
        payload["context"] = context
        if command is not None:
            types = [int(t) for t in command.get("integration_types") or [0]]
            contexts = [int(c) for c in command.get("contexts") or [0, 1, 2]]
            if kind not in types:
                raise LookupError(f"{command['name']!r} is not offered to a {installed}-installed app "
                                  f"(integration_types {types})")
            if context not in contexts:
                raise LookupError(f"{command['name']!r} is not offered in context {context} (contexts {contexts})")

    async def message_command(
        self,
        name: str,
        target: dict[str, Any] | str,
        *,
        guild_id: Any = DEFAULT,
        channel_id: Any = DEFAULT,
        user_id: Any = DEFAULT,
        permissions: Any = None,
        installed: str = "guild",
        private: bool = False,
    ) -> InteractionHandle:
        """Right-click a message and run the message context menu ``name`` on it (an application
        command of type 3). ``target`` is the message: a message object, or its content (a message
        by another user is made up). Raises LookupError if ``name`` was not synced as a message
        command, or is not offered where it is run (see ``slash``)."""
        guild, channel, user = self._resolve_where(guild_id, channel_id, user_id)
        command = self._find_command(name, guild.id if guild else None, type_=3)
        if command is None:
            raise LookupError(f"message command {name!r} was not synced (global or guild)")
        if isinstance(target, str):
            author = FakeUser(snowflake(), "someone")
            target = message_payload({"content": target}, message_id=snowflake(), channel_id=channel.id,
                                     author=author, guild_id=guild.id if guild else None)
        data: dict[str, Any] = {"id": command["id"], "name": name, "type": 3, "target_id": str(target["id"]),
                                "resolved": {"messages": {str(target["id"]): target}}}
        payload = self._base_interaction(APPLICATION_COMMAND, guild, channel, user, getattr(permissions, "value",
                                                                                            permissions))
        self._install_context(payload, command, guild, user, installed, private)
        payload["data"] = data
        return await self._dispatch_interaction(payload)

    async def autocomplete_handle(
        self, name: str, options: dict[str, Any] | None = None, *, focused: str, **where: Any
    ) -> InteractionHandle:
        """Dispatch an autocomplete (type 4) interaction; ``focused`` names the option being typed."""
        options = dict(options or {})
        options.setdefault(focused, "")
        return await self.slash(name, options, _type=AUTOCOMPLETE, _focused=focused, **where)

    async def autocomplete(
        self, name: str, options: dict[str, Any] | None = None, *, focused: str, timeout: float = WAIT_SECONDS,
        **where: Any
    ) -> list[dict[str, Any]]:
        """Dispatch an autocomplete and return the bot's choices (raises InteractionRejected if refused)."""
        handle = await self.autocomplete_handle(name, options, focused=focused, **where)
        return await handle.choices(timeout)

    async def click(
        self,
        message: FakeMessage,
        custom_id: str | None = None,
        *,
        label: str | None = None,
        values: list[str] | None = None,
        user_id: Any = DEFAULT,
        permissions: Any = None,
        message_patch: dict[str, Any] | None = None,
    ) -> InteractionHandle:
        """Press a button (or pick ``values`` in a select) of ``message``: a type 3 interaction.
        ``message_patch`` overrides keys of the message in the payload (a malformed event, e.g.
        ``{"interaction_metadata": None}``, which makes discord.py raise TypeError)."""
        items = message.buttons()
        if custom_id is None:
            found = [b for b in items if b.get("label") == label]
            if not found:
                raise LookupError(f"no component labelled {label!r} in {[b.get('label') for b in items]}")
            custom_id = found[0]["custom_id"]
        comp = next((b for b in items if b.get("custom_id") == custom_id), None)
        if comp is None:
            raise LookupError(f"no component {custom_id!r} in message {message.id}: {message.custom_ids()}")
        if comp.get("disabled"):
            raise AssertionError(f"component {custom_id!r} is disabled")
        if message.guild_id is None:
            user = self._user(self.user.id if user_id is DEFAULT else int(user_id))
            guild, channel = None, self.dm_channel(user.id)
        else:
            guild, channel, user = self._resolve_where(message.guild_id, message.channel_id, user_id)
        perms = getattr(permissions, "value", permissions)
        payload = self._base_interaction(MESSAGE_COMPONENT, guild, channel, user, perms)
        data: dict[str, Any] = {"custom_id": custom_id, "component_type": int(comp.get("type", 2))}
        if values is not None:
            data["values"] = values
        payload["data"] = data
        payload["message"] = {**message.payload, **(message_patch or {})}
        handle = InteractionHandle(self, payload)
        handle.component_message = message
        self.interactions[handle.id] = handle
        self._by_token[handle.token] = handle
        await self.dispatch("INTERACTION_CREATE", payload)
        handle.dispatched_at = self.loop_time()
        return handle

    # ------------------------------------------------------------------ gateway

    async def dispatch(self, event: str, data: dict[str, Any], *, timeout: float = WAIT_SECONDS) -> None:
        """Send a dispatch (op 0) on the current session; kept for replay if the client is away."""
        if self._session is None:
            await self.wait_connected(timeout)
        session = self._session
        shard = self.shard_of(data.get("guild_id")) if isinstance(data, dict) else None
        if shard is not None:  # sharded: a guild's events go on its shard's session
            await self.wait_for(lambda: shard in self.shard_sessions, timeout)
            session = self.shard_sessions[shard]
        assert session is not None
        session.seq += 1
        frame = {"op": 0, "t": event, "s": session.seq, "d": data}
        session.events.append(frame)
        if session.send is not None:
            # if the socket is going away, the client will RESUME and get the frame replayed
            with contextlib.suppress(ConnectionError, RuntimeError):
                await session.send(frame)
        self._notify()

    def shard_of(self, guild_id: Any) -> int | None:
        """The shard a guild's events go on (None: not sharded, or no guild)."""
        if self.shards <= 1 or guild_id is None:
            return None
        return (int(guild_id) >> 22) % self.shards

    def pause_gateway(self) -> None:
        """New gateway connections wait (no HELLO) until ``open_gateway()``: a dropped shard stays away."""
        self._gateway_open.clear()

    def open_gateway(self) -> None:
        self._gateway_open.set()

    async def drop_shard(self, shard_id: int, code: int | None = 4000) -> None:
        """Close one shard's gateway connection (see ``drop_gateway``)."""
        await self.wait_for(lambda: shard_id in self.shard_sessions and self.shard_sessions[shard_id].ws is not None)
        await self._drop(self.shard_sessions[shard_id], code)

    async def _send_raw(self, session: GatewaySession, frame: dict[str, Any]) -> None:
        if session.send is not None:
            await session.send(frame)

    async def _gateway(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse(autoping=True, max_msg_size=0)
        await ws.prepare(request)
        await self._gateway_open.wait()
        self.connections += 1
        query = dict(request.query)
        self.gateway_queries.append(query)
        compress = query.get("compress")
        send = self._make_sender(ws, compress)
        if send is None:
            await ws.close(code=4000, message=b"unsupported compression")
            return ws
        await send({"op": 10, "d": {"heartbeat_interval": self.heartbeat_interval_ms}, "s": None, "t": None})
        session: GatewaySession | None = None
        try:
            async for msg in ws:
                if msg.type != WSMsgType.TEXT:
                    continue
                payload = json.loads(msg.data)
                self.gateway_received.append(payload)
                op, d = payload.get("op"), payload.get("d")
                if op == 1:
                    if self.ack_heartbeats:
                        await send({"op": 11, "d": None, "s": None, "t": None})
                elif op == 2:
                    if not isinstance(d, dict) or d.get("token") != self.token:
                        await ws.close(code=4004, message=b"Authentication failed.")
                        break
                    session = await self._identify(ws, send, d)
                    session.transport = request.transport
                elif op == 6:
                    session = await self._resume(ws, send, d or {})
                    if session is not None:
                        session.transport = request.transport
                    else:
                        await send({"op": 9, "d": False, "s": None, "t": None})
                self._notify()
        finally:
            if session is not None and session.ws is ws:
                session.ws = None
                session.send = None
            self._notify()
        return ws

    def _make_sender(
        self, ws: web.WebSocketResponse, compress: str | None
    ) -> Callable[[dict[str, Any]], Awaitable[None]] | None:
        lock = asyncio.Lock()
        if not compress:

            async def send_text(frame: dict[str, Any]) -> None:
                async with lock:
                    await ws.send_str(json.dumps(frame))

            return send_text
        if compress == "zlib-stream":
            zctx = zlib.compressobj()

            async def send_zlib(frame: dict[str, Any]) -> None:
                async with lock:
                    data = zctx.compress(json.dumps(frame).encode()) + zctx.flush(zlib.Z_SYNC_FLUSH)
                    await ws.send_bytes(data)

            return send_zlib
        if compress == "zstd-stream":
            compressor = _zstd_stream()
            if compressor is None:
                return None

            async def send_zstd(frame: dict[str, Any]) -> None:
                async with lock:
                    await ws.send_bytes(compressor(json.dumps(frame).encode()))

            return send_zstd
        return None

    async def _identify(
        self, ws: web.WebSocketResponse, send: Callable[[dict[str, Any]], Awaitable[None]], d: dict[str, Any]
    ) -> GatewaySession:
        self.identifies += 1
        session = GatewaySession(id=f"session-{snowflake():x}", identify=d)
        self._sessions[session.id] = session
        shard = d.get("shard")
        self.identified_shards.append(shard)
        guilds = list(self.guilds.values())
        if isinstance(shard, list) and len(shard) == 2 and shard[1] > 1:
            if shard[1] != self.shards:
                await ws.close(code=4010, message=b"Invalid shard.")
                return session
            guilds = [g for g in guilds if self.shard_of(g.id) == shard[0]]
            self.shard_sessions[shard[0]] = session
        elif self.shards > 1:
            await ws.close(code=4011, message=b"Sharding required.")
            return session
        ready = {
            "v": 10,
            "user": {**self.bot_user.payload(), "verified": True, "mfa_enabled": False, "email": None},
            "guilds": [{"id": str(g.id), "unavailable": True} for g in guilds],
            "session_id": session.id,
            "session_type": "normal",
            "resume_gateway_url": self.gateway_url,
            "application": {"id": str(self.app_id), "flags": 0},
            "private_channels": [],
            "relationships": [],
            "presences": [],
            "user_settings": {},
            "geo_ordered_rtc_regions": [],
            "_trace": ["fake-discord"],
        }
        if "shard" in d:
            ready["shard"] = d["shard"]
        session.ws, session.send = ws, send
        self._session = session
        # READY and GUILD_CREATE go straight out (they are the session's first events)
        for event, data in [("READY", ready)] + [
            ("GUILD_CREATE", g.payload(self.bot_user)) for g in guilds
        ]:
            session.seq += 1
            frame = {"op": 0, "t": event, "s": session.seq, "d": data}
            session.events.append(frame)
            await send(frame)
        return session

    async def _resume(
        self, ws: web.WebSocketResponse, send: Callable[[dict[str, Any]], Awaitable[None]], d: dict[str, Any]
    ) -> GatewaySession | None:
        session = self._sessions.get(str(d.get("session_id")))
        if session is None or d.get("token") != self.token:
            return None
        self.resumes += 1
        session.resumes += 1
        if session.ws is not None and session.ws is not ws and not session.ws.closed:
            asyncio.get_running_loop().create_task(session.ws.close(code=4000))
        session.ws, session.send = ws, send
        self._session = session
        last = int(d.get("seq") or 0)
        for frame in list(session.events):
            if frame["s"] > last:
                await send(frame)
        session.seq += 1
        resumed = {"op": 0, "t": "RESUMED", "s": session.seq, "d": {"_trace": ["fake-discord"]}}
        session.events.append(resumed)
        await send(resumed)
        return session

    # ------------------------------------------------------------------ REST plumbing

    def _route_table(self) -> list[tuple[str, re.Pattern[str], Callable[..., Awaitable[Any]]]]:
        table: list[tuple[str, str, Callable[..., Awaitable[Any]]]] = [
            ("GET", r"/users/@me", self._get_me),
            ("GET", r"/users/(\d+)", self._get_user),
            ("POST", r"/users/@me/channels", self._create_dm),
            ("GET", r"/oauth2/applications/@me", self._get_application),
            ("GET", r"/applications/@me", self._get_application),
            ("GET", r"/gateway", self._get_gateway),
            ("GET", r"/gateway/bot", self._get_gateway_bot),
            ("GET", r"/applications/(\d+)/commands", self._get_commands),
            ("PUT", r"/applications/(\d+)/commands", self._put_commands),
            ("POST", r"/applications/(\d+)/commands", self._post_command),
            ("DELETE", r"/applications/(\d+)/commands/(\d+)", self._delete_command),
            ("GET", r"/applications/(\d+)/guilds/(\d+)/commands", self._get_commands),
            ("PUT", r"/applications/(\d+)/guilds/(\d+)/commands", self._put_commands),
            ("POST", r"/applications/(\d+)/guilds/(\d+)/commands", self._post_command),
            ("DELETE", r"/applications/(\d+)/guilds/(\d+)/commands/(\d+)", self._delete_command),
            ("GET", r"/applications/(\d+)/guilds/(\d+)/commands/permissions", self._empty_list),
            ("POST", r"/interactions/(\d+)/([^/]+)/callback", self._callback),
            ("POST", r"/webhooks/(\d+)/([^/]+)", self._followup),
            ("GET", r"/webhooks/(\d+)/([^/]+)/messages/(@original|\d+)", self._webhook_get),
            ("PATCH", r"/webhooks/(\d+)/([^/]+)/messages/(@original|\d+)", self._webhook_edit),
            ("DELETE", r"/webhooks/(\d+)/([^/]+)/messages/(@original|\d+)", self._webhook_delete),
            ("GET", r"/channels/(\d+)", self._get_channel),
            ("POST", r"/channels/(\d+)/messages", self._post_message),
            ("GET", r"/channels/(\d+)/messages", self._list_messages),
            ("GET", r"/channels/(\d+)/messages/(\d+)", self._get_message),
            ("PATCH", r"/channels/(\d+)/messages/(\d+)", self._edit_message),
            ("POST", r"/channels/(\d+)/messages/(\d+)/threads", self._thread_from_message),
            ("POST", r"/channels/(\d+)/threads", self._forum_post),
            ("PATCH", r"/channels/(\d+)", self._edit_channel),
            ("GET", r"/guilds/(\d+)/threads/active", self._active_threads),
            ("DELETE", r"/channels/(\d+)/messages/(\d+)", self._delete_message),
            ("POST", r"/channels/(\d+)/typing", self._no_content),
            ("GET", r"/guilds/(\d+)", self._get_guild),
            ("GET", r"/guilds/(\d+)/channels", self._get_guild_channels),
        ]
        return [(m, re.compile(p + "$"), h) for m, p, h in table]

    async def _read_body(self, request: web.Request) -> tuple[Any, list[RecordedFile]]:
        files: list[RecordedFile] = []
        ctype = request.headers.get("Content-Type", "")
        if ctype.startswith("multipart/"):
            payload: Any = None
            reader = await request.multipart()
            while True:
                part = await reader.next()
                if part is None:
                    break
                data = await part.read(decode=False)  # type: ignore[union-attr]
                name = part.name or ""  # type: ignore[union-attr]
                if name == "payload_json":
                    payload = json.loads(data.decode() or "null")
                else:
                    files.append(
                        RecordedFile(
                            name,
                            part.filename or "",  # type: ignore[union-attr]
                            part.headers.get("Content-Type", ""),
                            bytes(data),
                        )
                    )
            return payload, files
        raw = await request.read()
        if not raw:
            return None, files
        try:
            return json.loads(raw), files
        except ValueError:
            return raw.decode(errors="replace"), files

    @staticmethod
    def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
        if status == 204:
            return web.Response(status=204, headers=headers)
        return web.Response(
            status=status,
            body=json.dumps(body).encode(),
            headers={**(headers or {}), "Content-Type": "application/json"},
        )

    async def _rest(self, request: web.Request) -> web.Response:
        path = "/" + request.match_info["tail"]
        auth = request.headers.get("Authorization")
        headers = {k: v for k, v in request.headers.items() if k.lower() != "authorization"}
        body, files = await self._read_body(request)
        rec = RecordedRequest(
            request.method,
            path,
            dict(request.query),
            headers,
            auth == f"Bot {self.token}",
            body,
            files,
            self.loop_time(),
        )
        self.requests.append(rec)
        try:
            lost: _Fault | None = None
            for fault in self._faults:
                if fault.matches(request.method, path):
                    if fault.times is not None:
                        fault.times -= 1
                        if fault.times <= 0:
                            self._faults.remove(fault)
                    rec.injected = True
                    if fault.after:
                        lost = fault
                        break
                    raise _Reply(fault.status, fault.body, fault.headers)
            for method, pattern, handler in self._routes:
                if method != request.method:
                    continue
                m = pattern.match(path)
                if m is None:
                    continue
                public = path.startswith(("/interactions/", "/webhooks/"))
                if not public and not rec.authorized:
                    raise _Reply(401, error_payload(0, "401: Unauthorized"))
                result = await handler(rec, *m.groups())
                if lost is not None:
                    raise _Reply(lost.status, lost.body, lost.headers)
                raise _Reply(204 if result is None else 200, result)
            raise _Reply(404, error_payload(0, "404: Not Found"))
        except _Reply as reply:
            rec.status, rec.response = reply.status, reply.body
            self._notify()
            return self._json(reply.status, reply.body, reply.headers)

    # ------------------------------------------------------------------ REST: users, app, gateway

    async def _get_me(self, rec: RecordedRequest) -> Any:
        return {**self.bot_user.payload(), "verified": True, "mfa_enabled": False}

    async def _get_user(self, rec: RecordedRequest, user_id: str) -> Any:
        return self._user(int(user_id)).payload()

    async def _create_dm(self, rec: RecordedRequest) -> Any:
        recipient = int((rec.json or {}).get("recipient_id", 0))
        if not recipient:
            raise _Reply(400, error_payload(50035, "Invalid Form Body"))
        return self.dm_channel(recipient).payload()

    async def _get_application(self, rec: RecordedRequest) -> Any:
        return application_payload(self.app_id, self.bot_user, self.owner)

    async def _get_gateway(self, rec: RecordedRequest) -> Any:
        return {"url": self.gateway_url}

    async def _get_gateway_bot(self, rec: RecordedRequest) -> Any:
        limit = {"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1}
        return {"url": self.gateway_url, "shards": self.shards, "session_start_limit": limit}

    async def _empty_list(self, rec: RecordedRequest, *_: str) -> Any:
        return []

    async def _no_content(self, rec: RecordedRequest, *_: str) -> Any:
        return None

    # ------------------------------------------------------------------ REST: commands

    def _check_app(self, app_id: str) -> None:
        if int(app_id) != self.app_id:
            raise _Reply(403, error_payload(50001, "Missing Access"))

    def _validate_command(self, cmd: dict[str, Any], i: int) -> list[limits.Violation]:
        out: list[limits.Violation] = []
        name = cmd.get("name") or ""
        ctype = int(cmd.get("type", 1))
        if ctype == 1 and (not _COMMAND_NAME.match(name) or name != name.lower()):
            out.append(limits.Violation((i, "name"), "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid"))
        if ctype == 1 and not 1 <= len(cmd.get("description") or "") <= 100:
            out.append(
                limits.Violation((i, "description"), "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.")
            )
        if ctype in (2, 3) and (not 1 <= len(name) <= 32 or cmd.get("description") or cmd.get("options")):
            out.append(limits.Violation((i, "name"), "APPLICATION_COMMAND_INVALID_NAME",
                                        "A context menu has a name of 1 to 32 characters, no description, no options"))
        for key, allowed in (("integration_types", {0, 1}), ("contexts", {0, 1, 2})):
            values = cmd.get(key)
            if values is not None and (not values or not {int(v) for v in values} <= allowed
                                       or len(set(values)) != len(values)):
                out.append(limits.Violation((i, key), "BASE_TYPE_CHOICES", f"Value must be one of {sorted(allowed)}."))
        opts = cmd.get("options") or []
        if len(opts) > 25:
            out.append(limits.Violation((i, "options"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length."))
        for j, opt in enumerate(opts):
            if not _COMMAND_NAME.match(opt.get("name") or "") or not 1 <= len(opt.get("description") or "") <= 100:
                out.append(limits.Violation((i, "options", j), "APPLICATION_COMMAND_INVALID_NAME", "Option is invalid"))
            if len(opt.get("choices") or []) > 25:
                out.append(
                    limits.Violation((i, "options", j, "choices"), "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer.")
                )
        return out

    def _stored_command(self, cmd: dict[str, Any], guild_id: str | None, old: list[dict[str, Any]]) -> dict[str, Any]:
        previous = next((c for c in old if c["name"] == cmd["name"] and c.get("type", 1) == cmd.get("type", 1)), None)
        stored = {
            "description": "",
            "options": [],
            "default_member_permissions": None,
            "dm_permission": True,
            "nsfw": False,
            "type": 1,
            **cmd,
            "id": previous["id"] if previous else str(snowflake()),
            "application_id": str(self.app_id),
            "version": str(snowflake()),
        }
        if stored["default_member_permissions"] is not None:  # Discord answers a string
            stored["default_member_permissions"] = str(int(stored["default_member_permissions"]))
        if guild_id is not None:
            stored["guild_id"] = guild_id
        return stored

    async def _get_commands(self, rec: RecordedRequest, app_id: str, guild_id: str | None = None) -> Any:
        self._check_app(app_id)
        return self.commands(int(guild_id) if guild_id else None)

    async def _put_commands(self, rec: RecordedRequest, app_id: str, guild_id: str | None = None) -> Any:
        self._check_app(app_id)
        cmds = rec.json or []
        violations = [v for i, c in enumerate(cmds) for v in self._validate_command(c, i)]
        if len(cmds) > 100:
            violations.append(limits.Violation((), "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length."))
        if violations:
            raise _invalid_form(violations)
        old = self.commands(int(guild_id) if guild_id else None)
        stored = [self._stored_command(c, guild_id, old) for c in cmds]
        if guild_id is None:
            self.global_commands = stored
        else:
            self.guild_commands[int(guild_id)] = stored
        self.command_syncs.append(rec)
        return stored

    async def _post_command(self, rec: RecordedRequest, app_id: str, guild_id: str | None = None) -> Any:
        self._check_app(app_id)
        cmd = rec.json or {}
        violations = self._validate_command(cmd, 0)
        if violations:
            raise _invalid_form(violations)
        pool = self.commands(int(guild_id) if guild_id else None)
        stored = self._stored_command(cmd, guild_id, pool)
        pool = [c for c in pool if c["id"] != stored["id"]] + [stored]
        if guild_id is None:
            self.global_commands = pool
        else:
            self.guild_commands[int(guild_id)] = pool
        return stored

    async def _delete_command(self, rec: RecordedRequest, app_id: str, *ids: str) -> Any:
        self._check_app(app_id)
        guild_id, cmd_id = (ids[0], ids[1]) if len(ids) == 2 else (None, ids[0])
        if guild_id is None:
            self.global_commands = [c for c in self.global_commands if c["id"] != cmd_id]
        else:
            self.guild_commands[int(guild_id)] = [c for c in self.commands(int(guild_id)) if c["id"] != cmd_id]
        return None

    # ------------------------------------------------------------------ REST: messages

    def _attachments(self, body: dict[str, Any], files: list[RecordedFile], channel_id: int) -> list[dict[str, Any]]:
        declared = {str(a.get("id")): a for a in body.get("attachments") or []}
        out = []
        for index, f in enumerate(files):
            if len(f.data) > self.attachment_size_limit:
                raise _Reply(413, error_payload(40005, "Request entity too large"))
            m = re.match(r"files\[(\d+)\]", f.field)
            key = m.group(1) if m else str(index)
            meta = declared.get(key, {})
            aid = snowflake()
            url = f"http://127.0.0.1:{self.port}/attachments/{channel_id}/{aid}/{f.filename}"
            out.append(
                {
                    "id": str(aid),
                    "filename": meta.get("filename") or f.filename,
                    "description": meta.get("description"),
                    "content_type": f.content_type or "application/octet-stream",
                    "size": len(f.data),
                    "url": url,
                    "proxy_url": url,
                }
            )
        return out

    def _new_message(
        self,
        body: dict[str, Any],
        files: list[RecordedFile],
        *,
        channel_id: int,
        guild_id: int | None,
        kind: str,
        interaction: InteractionHandle | None = None,
        extra_flags: int = 0,
    ) -> FakeMessage:
        mid = snowflake()
        attachments = self._attachments(body, files, channel_id)
        metadata = None
        if interaction is not None:
            metadata = {
                "id": str(interaction.id),
                "type": interaction.type,
                "user": (interaction.payload.get("member") or {}).get("user") or interaction.payload.get("user"),
                "authorizing_integration_owners": interaction.payload.get("authorizing_integration_owners", {}),
            }
        payload = message_payload(
            {**body, "flags": int(body.get("flags") or 0) | extra_flags},
            message_id=mid,
            channel_id=channel_id,
            author=self.bot_user,
            guild_id=guild_id,
            attachments=attachments,
            webhook_id=self.app_id if interaction is not None else None,
            interaction_metadata=metadata,
        )
        msg = FakeMessage(
            mid, channel_id, guild_id, kind, payload, body, files,
            interaction_id=interaction.id if interaction else None,
        )
        self.messages[mid] = msg
        return msg

    def _edit(self, msg: FakeMessage, body: dict[str, Any], files: list[RecordedFile]) -> None:
        if msg.deleted:
            raise _Reply(404, error_payload(10008, "Unknown Message"))
        violations = limits.check_message({**msg.payload, **body}, require_something=True)
        if violations:
            raise _invalid_form(violations)
        new = dict(msg.payload)
        for key in ("content", "embeds", "components"):
            if key in body:
                new[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
        if "attachments" in body or files:
            kept_ids = {str(a.get("id")) for a in body.get("attachments") or []}
            kept = [a for a in msg.attachments if a["id"] in kept_ids]
            new["attachments"] = kept + self._attachments(body, files, msg.channel_id)
            msg.files = msg.files + files
        flags = int(new.get("flags") or 0) & ~LOADING
        if "flags" in body and body["flags"] is not None:
            flags = (int(body["flags"]) & ~(EPHEMERAL | LOADING)) | (flags & EPHEMERAL)
        new["flags"] = flags
        new["edited_timestamp"] = iso_now()
        msg.payload = new
        msg.edits.append(body)

    def _channel_or_error(self, channel_id: int) -> FakeChannel:
        if channel_id in self.deleted_channels:
            raise _Reply(404, error_payload(10003, "Unknown Channel"))
        if channel_id in self.forbidden_channels:
            raise _Reply(403, error_payload(50001, "Missing Access"))
        ch = self.find_channel(channel_id)
        if ch is None:
            raise _Reply(404, error_payload(10003, "Unknown Channel"))
        return ch

    async def _get_channel(self, rec: RecordedRequest, channel_id: str) -> Any:
        return self._channel_or_error(int(channel_id)).payload()

    async def _get_guild(self, rec: RecordedRequest, guild_id: str) -> Any:
        guild = self.guilds.get(int(guild_id))
        if guild is None:
            raise _Reply(404, error_payload(10004, "Unknown Guild"))
        data = guild.payload(self.bot_user)
        for key in ("channels", "members", "threads", "voice_states", "presences"):
            data.pop(key, None)
        return data

    async def _get_guild_channels(self, rec: RecordedRequest, guild_id: str) -> Any:
        guild = self.guilds.get(int(guild_id))
        if guild is None:
            raise _Reply(404, error_payload(10004, "Unknown Guild"))
        return [c.payload() for c in guild.channels if c.id not in self.deleted_channels]

    async def _post_message(self, rec: RecordedRequest, channel_id: str) -> Any:
        ch = self._channel_or_error(int(channel_id))
        body = rec.json or {}
        if not isinstance(body, dict):
            raise _Reply(400, error_payload(50109, "The request body contains invalid JSON."))
        violations = limits.check_message({**body, "attachments": body.get("attachments") or rec.files})
        if violations:
            if any(v.message == "Cannot send an empty message" for v in violations):
                raise _Reply(400, error_payload(50006, "Cannot send an empty message"))
            raise _invalid_form(violations)
        if int(body.get("flags") or 0) & EPHEMERAL:
            violation = limits.Violation(("flags",), "MESSAGE_FLAGS_INVALID", "Ephemeral is for interactions")
            raise _invalid_form([violation])
        refused = self._refused(ch.id, body)
        if refused is not None:
            raise refused
        nonce = body.get("nonce")
        key = (ch.id, str(nonce))
        ttl = self.nonce_ttl
        if key in self.nonces and ttl is not None and self.loop_time() - self.nonce_seen[key] > ttl:
            del self.nonces[key]  # Discord remembers a nonce for a few minutes only
        if body.get("enforce_nonce") and nonce is not None and key in self.nonces:
            # Discord: the same author's message with this nonce (within minutes) is returned,
            # and no new message is created.
            self.nonce_repeats += 1
            return self.nonces[key].payload
        msg = self._new_message(body, rec.files, channel_id=ch.id, guild_id=ch.guild_id, kind="channel")
        if body.get("enforce_nonce") and nonce is not None:
            self.nonces[key] = msg
            self.nonce_seen[key] = self.loop_time()
        return msg.payload

    def _check_thread(self, body: dict[str, Any], parent: FakeChannel) -> None:
        """Discord's rules for a new thread: a name of 1 to 100 characters, an archive duration
        of 60, 1440, 4320 or 10080 minutes, and the permission to open one."""
        violations = []
        name = body.get("name")
        if not isinstance(name, str) or not 1 <= len(name) <= 100:
            violations.append(limits.Violation(("name",), "BASE_TYPE_BAD_LENGTH",
                                               "Must be between 1 and 100 in length."))
        archive = body.get("auto_archive_duration")
        if archive is not None and int(archive) not in (60, 1440, 4320, 10080):
            violations.append(limits.Violation(("auto_archive_duration",), "BASE_TYPE_CHOICES",
                                               "Value must be one of {60, 1440, 4320, 10080}."))
        if violations:
            raise _invalid_form(violations)
        if parent.id in self.no_threads:
            raise _Reply(403, error_payload(50013, "Missing Permissions"))

    async def _thread_from_message(self, rec: RecordedRequest, channel_id: str, message_id: str) -> Any:
        parent = self._channel_or_error(int(channel_id))
        msg = self._message_in(channel_id, message_id)
        body = rec.json if isinstance(rec.json, dict) else {}
        if parent.type not in (0, 5):
            raise _Reply(400, error_payload(50024, "Cannot execute action on this channel type"))
        self._check_thread(body, parent)
        if msg.id in self.threads:  # Discord: the thread's id is the message's
            raise _Reply(400, error_payload(160004, "A thread has already been created for this message"))
        thread = FakeChannel(msg.id, body["name"], parent.guild_id, type=11, parent_id=parent.id,
                             owner_id=self.bot_user.id, archive_minutes=int(body.get("auto_archive_duration") or 0))
        self.threads[thread.id] = thread
        msg.payload["thread"] = thread.payload()
        return thread.payload()

    async def _edit_channel(self, rec: RecordedRequest, channel_id: str) -> Any:
        """PATCH a channel: only a forum's ``available_tags`` (at most 20; names 1 to 20 characters;
        a tag without an id is new)."""
        ch = self._channel_or_error(int(channel_id))
        body = rec.json if isinstance(rec.json, dict) else {}
        if ch.id in self.no_forum_edit:
            raise _Reply(403, error_payload(50013, "Missing Permissions"))
        if "available_tags" in body:
            tags = body["available_tags"] or []
            violations = []
            if ch.type != 15:
                violations.append(limits.Violation(("available_tags",), "CHANNEL_TYPE_INVALID", "Not a forum"))
            if len(tags) > 20:
                violations.append(limits.Violation(("available_tags",), "BASE_TYPE_MAX_LENGTH",
                                                   "Must be 20 or fewer in length."))
            for i, t in enumerate(tags):
                if not 1 <= len(str(t.get("name") or "")) <= 20:
                    violations.append(limits.Violation(("available_tags", i, "name"), "BASE_TYPE_BAD_LENGTH",
                                                       "Must be between 1 and 20 in length."))
            if violations:
                raise _invalid_form(violations)
            ch.tags = [{"moderated": False, "emoji_id": None, "emoji_name": None, **t,
                        "id": str(t.get("id") or snowflake())} for t in tags]
        return ch.payload()

    async def _forum_post(self, rec: RecordedRequest, channel_id: str) -> Any:
        """A forum post: a thread with its first message (the message's id is the thread's)."""
        forum = self._channel_or_error(int(channel_id))
        body = rec.json if isinstance(rec.json, dict) else {}
        if forum.type != 15:
            raise _Reply(400, error_payload(50024, "Cannot execute action on this channel type"))
        self._check_thread(body, forum)
        message = body.get("message")
        if not isinstance(message, dict):
            raise _invalid_form([limits.Violation(("message",), "BASE_TYPE_REQUIRED", "This field is required")])
        violations = [limits.Violation(("message", *v.path), v.code, v.message)
                      for v in limits.check_message({**message, "attachments": rec.files})]
        applied = [str(t) for t in body.get("applied_tags") or []]
        known = {t["id"] for t in forum.tags}
        if len(applied) > 5 or not set(applied) <= known:
            violations.append(limits.Violation(("applied_tags",), "BASE_TYPE_CHOICES", "Unknown or too many tags"))
        if violations:
            raise _invalid_form(violations)
        refused = self._refused(forum.id, message)
        if refused is not None:
            raise refused
        tid = snowflake()
        thread = FakeChannel(tid, body["name"], forum.guild_id, type=11, parent_id=forum.id,
                             owner_id=self.bot_user.id, archive_minutes=int(body.get("auto_archive_duration") or 0),
                             applied_tags=applied)
        self.threads[tid] = thread
        msg = self._new_message(message, rec.files, channel_id=tid, guild_id=forum.guild_id, kind="channel")
        del self.messages[msg.id]
        msg.id = tid
        msg.payload["id"] = str(tid)
        self.messages[tid] = msg
        return {**thread.payload(), "message": msg.payload}

    async def _active_threads(self, rec: RecordedRequest, guild_id: str) -> Any:
        threads = [t.payload() for t in self.threads.values() if t.guild_id == int(guild_id)
                   and t.id not in self.deleted_channels]
        return {"threads": threads, "members": []}

    async def _list_messages(self, rec: RecordedRequest, channel_id: str) -> Any:
        """GET /channels/{id}/messages: the newest first, ``limit`` 1-100 (default 50),
        ``before`` a message id. Real Discord does not return nonces here; neither does this."""
        ch = self._channel_or_error(int(channel_id))
        try:
            limit = int(rec.query.get("limit", 50))
        except ValueError:
            raise _Reply(400, error_payload(50035, "Invalid Form Body")) from None
        if not 1 <= limit <= 100:
            raise _Reply(400, error_payload(50035, "Invalid Form Body"))
        before = int(rec.query["before"]) if rec.query.get("before", "").isdigit() else None
        msgs = [m for m in self.channel_messages(ch.id, include_interactions=True) if not m.ephemeral]
        msgs = [m for m in sorted(msgs, key=lambda m: m.id, reverse=True) if before is None or m.id < before]
        return [{k: v for k, v in m.payload.items() if k != "nonce"} for m in msgs[:limit]]

    def _message_in(self, channel_id: str, message_id: str) -> FakeMessage:
        self._channel_or_error(int(channel_id))
        msg = self.messages.get(int(message_id))
        if msg is None or msg.deleted or msg.channel_id != int(channel_id) or msg.ephemeral:
            raise _Reply(404, error_payload(10008, "Unknown Message"))
        return msg

    async def _get_message(self, rec: RecordedRequest, channel_id: str, message_id: str) -> Any:
        return self._message_in(channel_id, message_id).payload

    async def _edit_message(self, rec: RecordedRequest, channel_id: str, message_id: str) -> Any:
        msg = self._message_in(channel_id, message_id)
        self._edit(msg, rec.json or {}, rec.files)
        return msg.payload

    async def _delete_message(self, rec: RecordedRequest, channel_id: str, message_id: str) -> Any:
        self._message_in(channel_id, message_id).deleted = True
        return None

    # ------------------------------------------------------------------ REST: interactions and follow-ups

    def _reject(self, handle: InteractionHandle | None, rec: RecordedRequest, reply: _Reply) -> _Reply:
        if handle is not None:
            rec.status, rec.response = reply.status, reply.body
            handle.rejected.append(rec)
        return reply

    async def _callback(self, rec: RecordedRequest, interaction_id: str, token: str) -> Any:
        handle = self.interactions.get(int(interaction_id))
        if handle is None or handle.token != token:
            raise _Reply(404, error_payload(10062, "Unknown interaction"))
        if handle.callback is not None:
            already = error_payload(40060, "Interaction has already been acknowledged.")
            raise self._reject(handle, rec, _Reply(400, already))
        if rec.at - handle.dispatched_at > self.interaction_deadline:
            raise self._reject(handle, rec, _Reply(404, error_payload(10062, "Unknown interaction")))
        body = rec.json if isinstance(rec.json, dict) else {}
        ctype = int(body.get("type", 0))
        data = body.get("data") or {}
        allowed = {
            APPLICATION_COMMAND: {CHANNEL_MESSAGE, DEFERRED_MESSAGE, MODAL},
            MESSAGE_COMPONENT: {CHANNEL_MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE, MODAL},
            AUTOCOMPLETE: {AUTOCOMPLETE_RESULT},
            MODAL_SUBMIT: {CHANNEL_MESSAGE, DEFERRED_MESSAGE, DEFERRED_UPDATE, UPDATE_MESSAGE},
        }[handle.type]
        if ctype not in allowed:
            violation = limits.Violation(("type",), "INTERACTION_RESPONSE_TYPE_INVALID", "Invalid response type")
            raise self._reject(handle, rec, _invalid_form([violation]))
        violations: list[limits.Violation] = []
        if ctype in (CHANNEL_MESSAGE, UPDATE_MESSAGE):
            checked = {**data, "attachments": data.get("attachments") or rec.files}
            if ctype == UPDATE_MESSAGE and handle.component_message is not None:
                checked = {**handle.component_message.payload, **checked}
            violations = limits.check_message(checked)
        elif ctype == AUTOCOMPLETE_RESULT:
            violations = limits.check_choices(data.get("choices"))
        if violations:
            raise self._reject(
                handle, rec, _invalid_form([limits.Violation(("data", *v.path), v.code, v.message) for v in violations])
            )
        where = {"channel_id": handle.channel_id, "guild_id": handle.guild_id, "interaction": handle}
        resource: dict[str, Any] = {"type": ctype}
        if ctype == CHANNEL_MESSAGE:
            handle.original = self._new_message(data, rec.files, kind="response", **where)
        elif ctype == DEFERRED_MESSAGE:
            handle.original = self._new_message(
                {"content": "", "flags": data.get("flags") or 0}, [], kind="response", extra_flags=LOADING, **where
            )
        elif ctype in (UPDATE_MESSAGE, DEFERRED_UPDATE):
            handle.original = handle.component_message
            if ctype == UPDATE_MESSAGE and handle.original is not None:
                self._edit(handle.original, data, rec.files)
        handle.callback = body
        handle.callback_request = rec
        if handle.original is not None and ctype in (CHANNEL_MESSAGE, DEFERRED_MESSAGE, UPDATE_MESSAGE):
            resource["message"] = handle.original.payload
        original = handle.original
        return {
            "interaction": {
                "id": str(handle.id),
                "type": handle.type,
                "response_message_id": str(original.id) if original else None,
                "response_message_loading": ctype == DEFERRED_MESSAGE,
                "response_message_ephemeral": bool(original and original.ephemeral),
            },
            "resource": resource,
        }

    def _webhook_handle(self, rec: RecordedRequest, app_id: str, token: str) -> InteractionHandle:
        handle = self._by_token.get(token)
        if handle is None or int(app_id) != self.app_id:
            raise _Reply(404, error_payload(10015, "Unknown Webhook"))
        if not handle.acknowledged:
            raise self._reject(handle, rec, _Reply(404, error_payload(10015, "Unknown Webhook")))
        if rec.at - handle.dispatched_at > self.followup_window:
            raise self._reject(handle, rec, _Reply(401, error_payload(50027, "Invalid Webhook Token")))
        return handle

    def _webhook_message(self, handle: InteractionHandle, message_id: str) -> FakeMessage:
        if message_id == "@original":
            msg = handle.original
        else:
            msg = next((m for m in [handle.original, *handle.followups] if m and m.id == int(message_id)), None)
        if msg is None or msg.deleted:
            raise _Reply(404, error_payload(10008, "Unknown Message"))
        return msg

    async def _followup(self, rec: RecordedRequest, app_id: str, token: str) -> Any:
        if (int(app_id), token) in self.channel_webhooks:
            return await self._execute_webhook(rec, int(app_id), token)
        handle = self._webhook_handle(rec, app_id, token)
        body = rec.json if isinstance(rec.json, dict) else {}
        violations = limits.check_message({**body, "attachments": body.get("attachments") or rec.files})
        if violations:
            raise self._reject(handle, rec, _invalid_form(violations))
        # The first follow-up after a deferral replaces the "thinking" message.
        if (
            handle.callback_type == DEFERRED_MESSAGE
            and handle.original is not None
            and handle.original.loading
            and not handle.followups
        ):
            original = handle.original
            self._edit(original, body, rec.files)
            handle.followups.append(original)
            msg = original
        else:
            msg = self._new_message(
                body, rec.files, channel_id=handle.channel_id, guild_id=handle.guild_id, kind="followup",
                interaction=handle,
            )
            handle.followups.append(msg)
        wait = rec.query.get("wait", "false").lower() in ("1", "true")
        return msg.payload if wait else None

    async def _execute_webhook(self, rec: RecordedRequest, webhook_id: int, token: str) -> Any:
        """A channel webhook's message (Execute Webhook): the message limits, `thread_id` a
        thread of its channel (or a forum post), `wait=true` answers the message, else 204."""
        channel_id = self.channel_webhooks[(webhook_id, token)]
        body = rec.json if isinstance(rec.json, dict) else {}
        violations = limits.check_message({**body, "attachments": body.get("attachments") or rec.files})
        if violations:
            raise _invalid_form(violations)
        target = channel_id
        if "thread_id" in rec.query:
            thread = self.threads.get(int(rec.query["thread_id"]))
            if thread is None or thread.parent_id != channel_id:
                raise _Reply(400, error_payload(10003, "Unknown Channel"))
            target = thread.id
        ch = self._channel_or_error(target)
        if ch.type == 15:
            raise _Reply(400, error_payload(220001, "Webhooks posted to forum channels must have a thread_name "
                                                    "or thread_id"))
        msg = self._new_message(body, rec.files, channel_id=ch.id, guild_id=ch.guild_id, kind="channel")
        msg.payload["webhook_id"] = str(webhook_id)
        self.webhook_messages.append(msg)
        wait = rec.query.get("wait", "false").lower() in ("1", "true")
        return msg.payload if wait else None

    def add_webhook(self, channel_id: int) -> str:
        """A webhook of the channel (as Discord's "Integrations > Webhooks" makes): its URL, under
        the fake's API base (``MAPWATCH_DISCORD_API``)."""
        webhook_id, token = snowflake(), f"tok{snowflake():x}-Secret_Token"
        self.channel_webhooks[(webhook_id, token)] = channel_id
        return f"{self.api_base}/webhooks/{webhook_id}/{token}"

    def delete_webhook(self, url: str) -> None:
        """The webhook is deleted in Discord: executing it answers 404 Unknown Webhook (10015)."""
        webhook_id, token = url.rstrip("/").split("?")[0].split("/")[-2:]
        del self.channel_webhooks[(int(webhook_id), token)]
        self.inject(f"POST /webhooks/{webhook_id}/{token}", 404, error_payload(10015, "Unknown Webhook"),
                    times=1000)

    async def _webhook_get(self, rec: RecordedRequest, app_id: str, token: str, message_id: str) -> Any:
        return self._webhook_message(self._webhook_handle(rec, app_id, token), message_id).payload

    async def _webhook_edit(self, rec: RecordedRequest, app_id: str, token: str, message_id: str) -> Any:
        handle = self._webhook_handle(rec, app_id, token)
        msg = self._webhook_message(handle, message_id)
        try:
            self._edit(msg, rec.json if isinstance(rec.json, dict) else {}, rec.files)
        except _Reply as reply:
            raise self._reject(handle, rec, reply) from None
        return msg.payload

    async def _webhook_delete(self, rec: RecordedRequest, app_id: str, token: str, message_id: str) -> Any:
        handle = self._webhook_handle(rec, app_id, token)
        self._webhook_message(handle, message_id).deleted = True
        return None


def _zstd_stream() -> Callable[[bytes], bytes] | None:
    """A streaming zstd compressor flushing one block per message (what discord.py's zstd-stream reads)."""
    try:
        import zstandard  # type: ignore[import-not-found]

        cobj = zstandard.ZstdCompressor().compressobj()
        return lambda data: cobj.compress(data) + cobj.flush(zstandard.COMPRESSOBJ_FLUSH_BLOCK)
    except ImportError:
        pass
    try:
        from compression import zstd  # type: ignore[import-not-found]

        comp = zstd.ZstdCompressor()
        return lambda data: comp.compress(data, mode=zstd.ZstdCompressor.FLUSH_BLOCK)
    except ImportError:
        return None
