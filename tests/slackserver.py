"""A Slack incoming-webhook receiver on loopback: records each payload and checks it against
Block Kit's documented limits (api.slack.com/reference/block-kit/blocks): at most 50 blocks;
a header's plain_text 1-150 characters; a section's text 1-3,000; a context's 1-10 elements,
each 1-3,000; a top-level `text` (the notification fallback) of at most 40,000. A payload over
a limit is answered 400 `invalid_blocks`, as Slack does. `answer(status, ...)` queues answers
(500, 429 with Retry-After, 404 `no_service`, 403 `invalid_token`)."""

from __future__ import annotations

import asyncio
from typing import Any

from aiohttp import web


def block_kit_violations(payload: Any) -> list[str]:
    out: list[str] = []
    if not isinstance(payload, dict):
        return ["not a JSON object"]
    text = payload.get("text")
    if not isinstance(text, str) or not text or len(text) > 40_000:
        out.append("text: 1 to 40000 characters")
    blocks = payload.get("blocks", [])
    if len(blocks) > 50:
        out.append(f"blocks: {len(blocks)} > 50")
    for i, b in enumerate(blocks):
        t = b.get("type")
        if t == "header":
            tx = b.get("text") or {}
            if tx.get("type") != "plain_text" or not 1 <= len(tx.get("text") or "") <= 150:
                out.append(f"blocks[{i}] header: plain_text of 1 to 150")
        elif t == "section":
            tx = b.get("text") or {}
            if tx.get("type") not in ("mrkdwn", "plain_text") or not 1 <= len(tx.get("text") or "") <= 3000:
                out.append(f"blocks[{i}] section: text of 1 to 3000")
        elif t == "context":
            els = b.get("elements") or []
            if not 1 <= len(els) <= 10 or any(not 1 <= len(e.get("text") or "") <= 3000 for e in els):
                out.append(f"blocks[{i}] context: 1 to 10 elements of 1 to 3000")
        else:
            out.append(f"blocks[{i}]: unexpected type {t!r}")
    return out


class SlackServer:
    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []  # accepted payloads
        self.requests: list[tuple[str, Any]] = []  # (path, payload) of every request
        self.violations: list[str] = []
        self.answers: list[tuple[int, str, dict[str, str]]] = []
        self._runner: web.AppRunner | None = None
        self.port = 0

    def answer(self, status: int, body: str = "", *, retry_after: int | None = None, times: int = 1) -> None:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        self.answers += [(status, body or {500: "internal_error", 429: "rate_limited", 404: "no_service",
                                             403: "invalid_token"}.get(status, "error"), headers)] * times

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/services"

    def url(self, team: str = "T0001", hook: str = "B0002", token: str = "SecretToken123") -> str:
        return f"{self.base}/{team}/{hook}/{token}"

    async def _hook(self, request: web.Request) -> web.Response:
        payload = await request.json()
        self.requests.append((request.path, payload))
        if self.answers:
            status, body, headers = self.answers.pop(0)
            return web.Response(status=status, text=body, headers=headers)
        bad = block_kit_violations(payload)
        if bad:
            self.violations += bad
            return web.Response(status=400, text="invalid_blocks")
        self.received.append(payload)
        return web.Response(text="ok")

    async def __aenter__(self) -> SlackServer:
        app = web.Application()
        app.router.add_post("/services/{team}/{hook}/{token}", self._hook)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


class SilentServer:
    """A receiver that accepts every connection, reads the request and never answers (a
    webhook host that hangs). `requests`: the request lines it read, one per POST; `base`
    and `url()` as SlackServer's."""

    def __init__(self) -> None:
        self.requests: list[str] = []
        self.port = 0
        self._server: asyncio.Server | None = None
        self._writers: list[asyncio.StreamWriter] = []
        self._done = asyncio.Event()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/services"

    def url(self, team: str = "T0001", hook: str = "B0002", token: str = "SilentToken123") -> str:
        return f"{self.base}/{team}/{hook}/{token}"

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.append(writer)
        try:
            line = await reader.readline()
            if line:
                self.requests.append(line.decode("latin-1").strip())
            await self._done.wait()  # never an answer
        except (ConnectionError, asyncio.CancelledError):
            pass

    async def __aenter__(self) -> SilentServer:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._done.set()
        for w in self._writers:
            w.close()
        if self._server is not None:
            self._server.close()
