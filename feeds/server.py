"""Serving the output folder over HTTP (aiohttp): GET and HEAD only, conditional GET,
the right content types, and nothing outside the folder, ever."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web
from mapwatch.feeds.build import safe_path

if TYPE_CHECKING:
    from mapwatch.feeds.health import Health

log = logging.getLogger(__name__)

CONTENT_TYPES = {
    ".atom": "application/atom+xml",
    ".opml": "text/x-opml; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}
ALLOWED = ("GET", "HEAD")
INDEX = "index.html"


def folder_redirect(root: Path, request_path: str) -> str | None:
    """`/<folder>` whose `<folder>/index.html` is published -> the slash form to redirect to
    (built from the checked path itself, so never another host), else None."""
    rel = request_path.strip("/")
    if not rel or request_path.endswith("/") or Path(rel).suffix in CONTENT_TYPES:
        return None
    return f"/{rel}/" if resolve(root, f"/{rel}/") is not None else None


def resolve(root: Path, request_path: str) -> tuple[Path, str] | None:
    """The file under `root` that `request_path` names and its content type, or None: only plain segments, only
    the served suffixes, and the resolved file (symlinks followed) must lie inside root. A folder's path
    ending in `/` names its `index.html` (the web pages, README: Feeds)."""
    rel = request_path.lstrip("/")
    if not rel or rel.endswith("/"):
        rel += INDEX
    if "\x00" in rel or "\\" in rel or not safe_path(rel):
        return None
    if Path(rel).suffix not in CONTENT_TYPES:
        return None
    real_root = root.resolve()
    try:
        target = (real_root / rel).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not target.is_relative_to(real_root) or not target.is_file():
        return None
    return target, CONTENT_TYPES[Path(rel).suffix]


def make_app(out_dir: str | Path, health: Health | None = None) -> web.Application:
    root = Path(out_dir)

    async def handle(request: web.Request) -> web.StreamResponse:
        if request.method not in ALLOWED:
            raise web.HTTPMethodNotAllowed(request.method, ALLOWED)
        found = resolve(root, request.path)
        if found is None and (location := folder_redirect(root, request.path)) is not None:
            raise web.HTTPMovedPermanently(location)
        if found is None:
            raise web.HTTPNotFound(text="Not found. The feeds are listed at /\n")
        target, content_type = found
        return web.FileResponse(target, headers={
            "Content-Type": content_type,
            "Cache-Control": "no-cache",
            "X-Content-Type-Options": "nosniff",
        })

    app = web.Application()
    if health is not None:  # GET /healthz (feeds/health.py)
        from mapwatch.feeds.health import add_route
        add_route(app, health)
    app.router.add_route("*", "/{tail:.*}", handle)
    return app


async def start_server(out_dir: str | Path, host: str, port: int,
                       health: Health | None = None) -> tuple[web.AppRunner, int]:
    """Start serving `out_dir` (and /healthz, given `health`); returns the runner (call
    `cleanup()` to stop) and the bound port."""
    runner = web.AppRunner(make_app(out_dir, health), access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, host, port)
    await site.start()
    return runner, runner.addresses[0][1]
