"""The feed server: GET and HEAD only, conditional GET, content types, and nothing outside
the output folder, whatever the path says."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import aiohttp
import pytest

from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.ondemand import PaperCache
from mapwatch.feeds.serving.server import start_server
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.feedcheck import assert_valid_atom

RL = "feeds/lr/reinforcement-learning-for-reasoning.atom"


@pytest.fixture(scope="module")
def published(tmp_path_factory) -> Path:
    """The seeds' feeds, published once for the module; the secrets lie next to the folder."""
    from mapwatch.store.database.db import open_db
    from tests.conftest import FakeClock

    tmp = tmp_path_factory.mktemp("site")
    db = open_db(tmp / "m.db")
    ingest_paths(db, [SEEDS_DIR], clock=FakeClock())
    publish(db, tmp / "public", "http://127.0.0.1", papers="all")  # the on-demand files must equal these
    db.close()
    (tmp / "secret.atom").write_text("<secret/>")
    (tmp / "secret.html").write_text("secret")
    return tmp / "public"


@pytest.fixture
async def site(published: Path):
    papers = PaperCache(published.parent / "m.db", "http://127.0.0.1")
    runner, port = await start_server(published, "127.0.0.1", 0, papers=papers)
    async with aiohttp.ClientSession() as session:
        yield published, f"http://127.0.0.1:{port}", session, port
    await runner.cleanup()


async def raw_status(port: int, method: str, path: str) -> int:
    """Send a request line exactly as written (no client-side normalisation)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"{method} {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
    await writer.drain()
    status_line = await reader.readline()
    data = await reader.read()
    writer.close()
    assert b"secret" not in data
    return int(status_line.split()[1])


async def test_content_types_and_bodies(site) -> None:
    out, base, session, _ = site
    for path, ctype in [("/", "text/html"), ("/index.html", "text/html"), ("/feeds.opml", "text/x-opml"),
                        (f"/{RL}", "application/atom+xml"), ("/feeds/papers/2412.10400.atom", "application/atom+xml")]:
        async with session.get(base + path) as resp:
            assert resp.status == 200, path
            assert resp.content_type == ctype, path
            body = await resp.read()
        rel = "index.html" if path == "/" else path.lstrip("/")
        assert body == (out / rel).read_bytes()
    async with session.get(f"{base}/{RL}") as resp:
        assert_valid_atom(await resp.read())


async def test_conditional_get_and_head(site) -> None:
    _, base, session, _ = site
    async with session.get(f"{base}/{RL}") as resp:
        etag, modified = resp.headers["ETag"], resp.headers["Last-Modified"]
        length = int(resp.headers["Content-Length"])
    async with session.get(f"{base}/{RL}", headers={"If-None-Match": etag}) as resp:
        assert resp.status == 304 and await resp.read() == b""
    async with session.get(f"{base}/{RL}", headers={"If-Modified-Since": modified}) as resp:
        assert resp.status == 304
    async with session.get(f"{base}/{RL}", headers={"If-None-Match": '"other"'}) as resp:
        assert resp.status == 200
    async with session.head(f"{base}/{RL}") as resp:
        assert resp.status == 200 and resp.headers["ETag"] == etag
        assert resp.content_type == "application/atom+xml"
        assert int(resp.headers["Content-Length"]) == length
        assert await resp.read() == b""


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH", "OPTIONS"])
async def test_only_get_and_head(site, method: str) -> None:
    _, base, session, _ = site
    async with session.request(method, f"{base}/{RL}") as resp:
        assert resp.status == 405
        assert set(resp.headers["Allow"].replace(" ", "").split(",")) == {"GET", "HEAD"}


@pytest.mark.parametrize("path", [
    "/../secret.atom", "/feeds/../../secret.atom", "/%2e%2e/secret.atom", "/feeds/%2e%2e/%2e%2e/secret.atom",
    "/..%2fsecret.atom", "/feeds/..%2F..%2Fsecret.html", "//secret.atom", "/.%2e/secret.html",
    "/feeds/papers/..\\..\\..\\secret.atom", "/%00.atom", "/mapwatch.db", "/feeds", "/feeds/",
])
async def test_nothing_outside_the_folder(site, path: str) -> None:
    _, _, _, port = site
    assert await raw_status(port, "GET", path) in (400, 404)


async def test_symlinks_out_of_the_folder_are_refused(site) -> None:
    out, base, session, port = site
    os.symlink(out.parent / "secret.atom", out / "feeds" / "leak.atom")
    os.symlink(out.parent, out / "feeds" / "up")
    os.symlink(out / RL, out / "feeds" / "alias.atom")  # inside: fine
    assert await raw_status(port, "GET", "/feeds/leak.atom") == 404
    assert await raw_status(port, "GET", "/feeds/up/secret.atom") == 404
    async with session.get(f"{base}/feeds/alias.atom") as resp:
        assert resp.status == 200 and resp.content_type == "application/atom+xml"


async def test_temporary_and_dot_files_are_not_served(site) -> None:
    out, _, _, port = site
    (out / "feeds" / ".tmp-abc.atom").write_text("partial")
    assert await raw_status(port, "GET", "/feeds/.tmp-abc.atom") == 404
    assert await raw_status(port, "GET", "/feeds/nope.atom") == 404


def test_a_port_that_is_taken_is_one_line_naming_how_to_choose_another(tmp_path: Path, seeded_path: Path) -> None:
    """`serve` and `run` on a port another server holds: exit 1, one line saying which address
    is in use and which option or variable chooses another (before: the OS's words alone)."""
    import socket
    import subprocess
    import sys

    from mapwatch.feeds.serving.server import start_admin_server

    root = Path(__file__).resolve().parents[3]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        env = {k: v for k, v in os.environ.items() if k not in ("DISCORD_TOKEN", "PORT", "MAPWATCH_BASE_URL")}
        for command in ("serve", "run"):
            p = subprocess.run([sys.executable, "-m", "mapwatch", command, "--db", str(seeded_path), "--out",
                                str(tmp_path / "out"), "--port", str(port)], cwd=root, env=env, capture_output=True,
                               text=True, timeout=60)
            errors = [line for line in p.stderr.splitlines() if line.startswith("mapwatch: error")]
            said = (f"mapwatch: error: 127.0.0.1:{port}: address already in use; choose another port with "
                    "--port or $PORT")
            assert p.returncode == 1 and errors == [said], (command, p.stderr)
        with pytest.raises(OSError, match=rf"127\.0\.0\.1:{port}: address already in use; choose another port with "
                                          r"\$MAPWATCH_ADMIN_LISTEN$"):
            asyncio.run(start_admin_server("127.0.0.1", port, None, None))
