"""A map served over HTTP on loopback, which can change its pages and misbehave on cue."""

from __future__ import annotations

import asyncio
import hashlib
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from aiohttp import web

from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import MapPage

LAST_MODIFIED = "Wed, 14 Oct 2026 00:00:00 GMT"


@dataclass
class SourceServer:
    """Pages by paper id at /paper/<id>/. `script[id]` lists what to do on the next requests
    for that page, one action per request: "500", "429" (Retry-After: 1), "429-long"
    (Retry-After: 3600), "timeout", "truncated", "html", "huge", "offsite"."""

    pages: dict[str, bytes] = field(default_factory=dict)
    script: dict[str, list[str]] = field(default_factory=dict)
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    base: str = ""

    def put(self, page: MapPage, host_links: bool = False) -> None:
        text = format_page(page)
        if host_links:
            text = text.replace("https://mlsanity.com", self.base)
        self.pages[page.id] = text.encode()

    def ids_requested(self) -> list[str]:
        return [pid for pid, _ in self.requests]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        pid = request.match_info["id"]
        self.requests.append((pid, dict(request.headers)))
        actions = self.script.get(pid) or []
        action = actions.pop(0) if actions else None
        if action == "500":
            return web.Response(status=500, text="oops")
        if action == "429":
            return web.Response(status=429, headers={"Retry-After": "1"})
        if action == "429-long":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        if action == "timeout":
            await asyncio.sleep(3)  # on purpose: the "timeout" action answers too late
            return web.Response(text="too late")
        if action == "html":
            return web.Response(text="<!doctype html><html><body>Just a moment...</body></html>",
                                content_type="text/html")
        if action == "offsite":
            raise web.HTTPFound("http://localhost:9/elsewhere/")
        if action == "huge":
            resp = web.StreamResponse()
            resp.enable_chunked_encoding()
            await resp.prepare(request)
            for _ in range(3):
                await resp.write(b"x" * (1024 * 1024))
            await resp.write_eof()
            return resp
        body = self.pages.get(pid)
        if body is None:
            raise web.HTTPNotFound()
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        if action == "truncated":
            resp = web.StreamResponse(headers={"Content-Type": "text/plain"})
            resp.content_length = len(body)
            await resp.prepare(request)
            await resp.write(body[: len(body) // 2])
            assert request.transport is not None
            request.transport.close()
            return resp
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=body, content_type="text/plain", charset="utf-8",
                            headers={"ETag": etag, "Last-Modified": LAST_MODIFIED})


@contextmanager
def serve_in_thread(add_routes: Callable[[web.Application], None]) -> Iterator[str]:
    """Run an aiohttp app on 127.0.0.1 (port 0) in a thread of its own, so the synchronous
    `refresh` (which runs its own event loop) can talk to it; yields its base URL."""
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict = {}

    async def start() -> None:
        app = web.Application()
        add_routes(app)
        runner = web.AppRunner(app, access_log=None, shutdown_timeout=0.2)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        holder["runner"] = runner
        holder["base"] = f"http://127.0.0.1:{runner.addresses[0][1]}"

    async def stop() -> None:
        await holder["runner"].cleanup()
        # Handlers still sleeping (timeouts the client gave up on) end here, not at exit.
        rest = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in rest:
            task.cancel()
        await asyncio.gather(*rest, return_exceptions=True)

    def main() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        ready.set()
        loop.run_forever()

    thread = threading.Thread(target=main, daemon=True)
    thread.start()
    ready.wait(10)
    try:
        yield holder["base"]
    finally:
        asyncio.run_coroutine_threadsafe(stop(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()


@contextmanager
def serve_map(server: SourceServer | None = None) -> Iterator[SourceServer]:
    """Run the source server on loopback in a thread of its own (`serve_in_thread`)."""
    server = server or SourceServer()
    with serve_in_thread(lambda app: app.router.add_get("/paper/{id:.+}/", server.handle)) as base:
        server.base = base
        yield server
