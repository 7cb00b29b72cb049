"""Serving the output folder over HTTP (aiohttp): GET and HEAD only, conditional GET,
the right content types, and nothing outside the folder, ever.

The folder's files are answered from memory (feeds/serving/folder_table.py: bytes, ETag and
Last-Modified held per URL path, reloaded when publish marks a new generation, checked at
most once a second); a paper's feed or page that is not on disk is built on demand from the
database (feeds/serving/ondemand.py), and a path the table does not know is looked up on disk.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import logging
import time
from collections.abc import Awaitable, Callable
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from mapwatch.feeds.serving.connections import AcceptFailures, GuardedServer, Limits
from mapwatch.feeds.serving.encoding import VARY, accepts_gzip, compressible, matched
from mapwatch.feeds.serving.folder_table import CONTENT_TYPES, SECURITY_HEADERS, FolderTable, Served, resolve
from mapwatch.feeds.serving.guesses import Guesses, client_key
from mapwatch.feeds.serving.ondemand import PaperCache, route
from mapwatch.store.settings_table import DEFAULT_HOST, DEFAULT_PORT

if TYPE_CHECKING:
    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.metrics import Metrics

log = logging.getLogger(__name__)

__all__ = ["CONTENT_TYPES", "folder_redirect", "make_handler", "resolve", "start_server"]
ALLOWED = ("GET", "HEAD")
RELOAD_EVERY = 1.0  # seconds between checks of the generation file
NOT_FOUND = "Not found. The feeds are listed at /\n"
HEALTH_PATH = "/healthz"  # feeds/serving/health.py
METRICS_PATH = "/metrics"  # feeds/serving/metrics.py
_COMMON = {"Cache-Control": "no-cache", **SECURITY_HEADERS}
STARTING = "Starting: the feeds are being published. Retry in a moment.\n"
_STARTING = {"Retry-After": "1", "Cache-Control": "no-store", **SECURITY_HEADERS}
TOO_MANY = "Too many addresses not found from your address: retry later.\n"


def default_base_url(host: str = DEFAULT_HOST, port: int = DEFAULT_PORT) -> str:
    """The address the server is shown at: http://host:port, localhost for a wildcard host. The
    one default of every link to the feeds: `serve` and `run` print and serve it, `refresh` and
    `publish` write it into the feeds (the default port), `ask` and `sync` put it in answers."""
    shown = "localhost" if host in ("", "0.0.0.0", "::") else host
    if ":" in shown:
        shown = f"[{shown}]"
    return f"http://{shown}:{port}"


def folder_redirect(root: Path, request_path: str) -> str | None:
    """`/<folder>` whose `<folder>/index.html` is published -> the slash form to redirect to
    (built from the checked path itself, so never another host), else None."""
    rel = request_path.strip("/")
    if not rel or request_path.endswith("/") or Path(rel).suffix in CONTENT_TYPES:
        return None
    return f"/{rel}/" if resolve(root, f"/{rel}/") is not None else None


def _modified_since(request: web.BaseRequest, mtime: int | None) -> bool:
    """Whether If-Modified-Since (absent: no) says the client's copy is as new as `mtime`."""
    ims = request.headers.get("If-Modified-Since")
    if ims is None or mtime is None:
        return False
    try:
        return mtime <= parsedate_to_datetime(ims).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError):
        return False


def _answer(request: web.BaseRequest, served: Served) -> web.Response:
    """A file of the table: its headers (and its gzipped bytes) were built when it was loaded
    (the hot path: a feed reader polling with the ETag it holds gets a 304 from a dict lookup,
    one header read and a comparison or two). Either ETag of the file, plain or gzipped, is
    answered 304, carrying the one the client holds (feeds/serving/encoding.py)."""
    if served.redirect is not None:
        raise web.HTTPMovedPermanently(served.redirect)
    inm = request.headers.get("If-None-Match")
    if inm is not None:  # the ETag as the client got it: no parsing
        if inm == served.etag:
            return web.Response(status=304, headers=served.headers)
        if served.gzip is not None and inm == served.gzip_headers["ETag"]:
            return web.Response(status=304, headers=served.gzip_headers)
    gz = served.gzip is not None and accepts_gzip(request.headers.get("Accept-Encoding"))
    if inm is not None:
        tags = (served.etag, served.gzip_headers["ETag"]) if served.gzip is not None else (served.etag,)
        held = matched(inm, tags[::-1] if gz else tags)
        if held is not None:
            return web.Response(status=304, headers=served.headers if held == served.etag else served.gzip_headers)
    elif _modified_since(request, served.mtime):
        return web.Response(status=304, headers=served.gzip_headers if gz else served.headers)
    if gz:
        assert served.gzip is not None
        return web.Response(body=served.gzip, headers={**served.gzip_headers, "Content-Type": served.content_type,
                                                      "Content-Encoding": "gzip"})
    return web.Response(body=served.body, headers={**served.headers, "Content-Type": served.content_type})


Handler = Callable[[web.BaseRequest], Awaitable[web.StreamResponse]]


def make_handler(out_dir: str | Path, health: Health | None = None,
                 papers: PaperCache | None = None, metrics: Metrics | None = None,
                 admin: bool = True, guesses: Guesses | None = None) -> tuple[Handler, FolderTable]:
    """The feed server's one request handler over `out_dir` (no router, no middleware: each
    request is a dict lookup in the table), and the table it reads; with `papers`, paper feeds
    and pages not on disk are built on demand (a paper that does not exist: 404); with
    `metrics`, GET /metrics answers them and each request is counted; with `guesses`, a client
    that had too many 404s gets 429 for what is not in the table (feeds/serving/guesses.py)."""
    root = Path(out_dir)
    table = FolderTable(root)  # loaded when the server starts (in a worker thread)
    if metrics is not None and papers is not None:
        papers.on_build = metrics.built

    async def on_demand(request: web.BaseRequest) -> web.StreamResponse | None:
        wanted = route(request.path)
        if papers is None or wanted is None:
            return None
        if wanted.redirect:  # `/papers/<id>`: to its folder, if the paper has a page
            if await asyncio.to_thread(papers.etag, wanted.kind, wanted.paper_id) is None:
                raise web.HTTPNotFound(text=NOT_FOUND)
            raise web.HTTPMovedPermanently(f"/papers/{wanted.paper_id}/")
        answer = await asyncio.to_thread(papers.get, wanted.kind, wanted.paper_id,
                                         request.headers.get("If-None-Match"),
                                         gzip=accepts_gzip(request.headers.get("Accept-Encoding")))
        if answer.status == 404:
            raise web.HTTPNotFound(text=NOT_FOUND)
        headers = {"ETag": answer.etag, **_COMMON}
        if compressible(answer.content_type):
            headers.update(VARY)
        if answer.status == 304:
            return web.Response(status=304, headers=headers)
        if answer.gzipped:
            headers["Content-Encoding"] = "gzip"
        return web.Response(body=answer.body, headers={**headers, "Content-Type": answer.content_type})

    async def from_disk(request: web.BaseRequest) -> web.StreamResponse:
        """A file the table does not hold (written since its last load, or a folder served without
        the database): looked up on disk with the same checks."""
        found = resolve(root, request.path)
        if found is None and (location := folder_redirect(root, request.path)) is not None:
            raise web.HTTPMovedPermanently(location)
        if found is None:
            raise web.HTTPNotFound(text=NOT_FOUND)
        target, content_type = found
        return web.FileResponse(target, headers={"Content-Type": content_type, **_COMMON})

    async def handle(request: web.BaseRequest) -> web.StreamResponse:
        try:
            response = await answer(request)
        except web.HTTPException as e:  # 404, 405, 301: the same security headers
            e.headers.update(SECURITY_HEADERS)
            if metrics is not None:
                metrics.request(request.path, e.status)
            raise
        if metrics is not None:
            metrics.request(request.path, response.status)
        return response

    async def answer(request: web.BaseRequest) -> web.StreamResponse:
        if request.method not in ALLOWED:
            raise web.HTTPMethodNotAllowed(request.method, ALLOWED)
        served = table.files.get(request.path)
        if served is not None:
            return _answer(request, served)
        if admin and metrics is not None and request.path == METRICS_PATH:
            exposition = await asyncio.to_thread(metrics.render)  # the database's size is read from disk
            return web.Response(body=exposition, headers={"Content-Type": metrics_content_type(),
                                                    "Cache-Control": "no-store", **SECURITY_HEADERS})
        if not table.loads and not (admin and request.path == HEALTH_PATH):  # publishing before the first load
            return web.Response(status=503, text=STARTING, headers=_STARTING)
        if admin and health is not None and request.path == HEALTH_PATH:
            from mapwatch.feeds.serving.health import report

            status, body = await report(health)
            return web.json_response(body, status=status, headers={**SECURITY_HEADERS, "Cache-Control": "no-store"})
        if guesses is None:
            return await looked_up(request)
        client = client_key(request.remote)
        if (wait := guesses.take(client)) is not None:  # before any lookup: a right guess looks like a wrong one
            return web.Response(status=429, text=TOO_MANY, headers={**_STARTING, "Retry-After": str(wait)})
        missed = False
        try:
            return await looked_up(request)
        except web.HTTPNotFound:
            missed = True
            raise
        finally:
            if not missed:
                guesses.give_back(client)

    async def looked_up(request: web.BaseRequest) -> web.StreamResponse:
        """What the table does not hold: built on demand, or looked up on disk."""
        if (built := await on_demand(request)) is not None:
            return built
        return await from_disk(request)

    return handle, table


def metrics_content_type() -> str:
    from mapwatch.feeds.serving.metrics import CONTENT_TYPE

    return CONTENT_TYPE


class FeedRunner(web.ServerRunner):
    """aiohttp's low-level runner (with the header deadline and the connection cap of
    feeds/serving/connections.py), plus the task that reloads the table when publish marks a new
    generation of the folder (checked every RELOAD_EVERY seconds)."""

    def __init__(self, handler: Handler, table: FolderTable, limits: Limits | None = None) -> None:
        self.guard = GuardedServer(handler, limits or Limits(), access_log=None)
        super().__init__(self.guard)
        self.table = table
        self.watcher: asyncio.Task[None] | None = None
        self.accept_failures = AcceptFailures(asyncio.get_running_loop(), self.guard)

    async def start(self, load: bool = True) -> None:
        self.accept_failures.install()
        await self.setup()
        if load:
            await self.open()

    async def open(self) -> None:
        """Load the table and watch the folder from now on: until the first load, every path but
        /healthz is answered 503 with Retry-After (`start_server(..., ready=False)`)."""
        await asyncio.to_thread(self.table.load)
        if self.watcher is None:
            self.watcher = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(RELOAD_EVERY)
            if self.table.stale():
                await asyncio.to_thread(self.table.load)

    async def cleanup(self) -> None:
        if self.watcher is not None:
            self.watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.watcher
        await super().cleanup()
        self.accept_failures.uninstall()


async def start_server(out_dir: str | Path, host: str, port: int, health: Health | None = None,
                       papers: PaperCache | None = None, *, ready: bool = True,
                       limits: Limits | None = None, metrics: Metrics | None = None,
                       admin: bool = True, clock: Callable[[], float] = time.monotonic) -> tuple[FeedRunner, int]:
    """Start serving `out_dir` (and /healthz, given `health`; paper files on demand, given
    `papers`); returns the runner (call `cleanup()` to stop) and the bound port. With
    `ready=False` the folder is not read yet: everything but /healthz answers 503 (Retry-After:
    1) until `runner.open()`, which `serve` and `run` call once their own publish is written, so
    no answer ever comes from a folder an earlier publish left (another base URL, older data).
    `limits`: the header deadline, the connection cap and the bound on a client's 404s (default:
    feeds/serving/connections.py's).
    `metrics`: served at /metrics, and told of every request (feeds/serving/metrics.py).
    `admin=False`: /healthz and /metrics are not served here (`start_admin_server` serves them).
    `clock`: the monotonic seconds the 404 buckets refill by."""
    limits = limits or Limits()
    guesses = (Guesses(limits.not_found_burst, limits.not_found_per_second, clock=clock)
               if limits.not_found_burst else None)
    runner = FeedRunner(*make_handler(out_dir, health, papers, metrics, admin, guesses), limits)
    await runner.start(load=ready)
    await listen(runner, host, port, "--port or $PORT")
    return runner, runner.addresses[0][1]


async def listen(runner: web.BaseRunner, host: str, port: int, setting: str) -> None:
    """Listen at host:port (the runner cleaned up when it cannot); an address that is taken, or a
    port that needs privileges, is one line naming the `setting` that chooses another (an
    OSError: exit 1, mapwatch.cli)."""
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as e:
        await runner.cleanup()
        shown = default_base_url(host, port).removeprefix("http://")
        if e.errno == errno.EADDRINUSE:
            raise OSError(e.errno, f"{shown}: address already in use; choose another port with {setting}") from e
        if e.errno == errno.EACCES:
            raise OSError(e.errno, f"{shown}: no permission to listen there (ports below 1024 need it): "
                                   f"choose another port with {setting}") from e
        raise


async def start_admin_server(host: str, port: int, health: Health | None,
                             metrics: Metrics | None) -> tuple[web.AppRunner, int]:
    """/healthz and /metrics on an address of their own ($MAPWATCH_ADMIN_LISTEN), for a port
    that only the operator's monitoring reaches; everything else there is 404. Returns the
    runner (call `cleanup()` to stop) and the bound port."""

    async def healthz(_request: web.Request) -> web.StreamResponse:
        from mapwatch.feeds.serving.health import report

        if health is None:
            raise web.HTTPNotFound()
        status, body = await report(health)
        return web.json_response(body, status=status, headers={**SECURITY_HEADERS, "Cache-Control": "no-store"})

    async def metrics_page(_request: web.Request) -> web.StreamResponse:
        if metrics is None:
            raise web.HTTPNotFound()
        exposition = await asyncio.to_thread(metrics.render)
        return web.Response(body=exposition, headers={"Content-Type": metrics_content_type(),
                                                      "Cache-Control": "no-store", **SECURITY_HEADERS})

    app = web.Application()
    app.router.add_get(HEALTH_PATH, healthz)
    app.router.add_get(METRICS_PATH, metrics_page)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await listen(runner, host, port, "$MAPWATCH_ADMIN_LISTEN")
    return runner, runner.addresses[0][1]
