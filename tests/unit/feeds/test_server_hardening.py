"""Hardening of the feed server (issue 21): security headers on every answer, and
connections that never finish their request (see also tests/system/test_serve_startup.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp
import pytest

from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.connections import Limits
from mapwatch.feeds.serving.folder_table import CSP, FolderTable
from mapwatch.feeds.serving.ondemand import PaperCache
from mapwatch.feeds.serving.server import start_server
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.waiting import async_wait_until

RL = "lr/reinforcement-learning-for-reasoning"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mapwatch.store.database.db import open_db
    from tests.conftest import FakeClock

    tmp = tmp_path_factory.mktemp("site")
    db = open_db(tmp / "m.db")
    ingest_paths(db, [SEEDS_DIR], clock=FakeClock())
    publish(db, tmp / "public", "http://127.0.0.1")
    db.close()
    return tmp / "public"


@pytest.fixture
async def site(published: Path):
    papers = PaperCache(published.parent / "m.db", "http://127.0.0.1")
    runner, port = await start_server(published, "127.0.0.1", 0, papers=papers)
    async with aiohttp.ClientSession() as session:
        yield f"http://127.0.0.1:{port}", session
    await runner.cleanup()


async def test_every_answer_carries_the_security_headers(site) -> None:
    base, session = site
    cases = [("GET", "/", 200), ("GET", f"/directions/{RL}/", 200),
             ("GET", "/papers/2412.10400/", 200),  # built on demand (not tracked)
             ("GET", f"/feeds/{RL}.atom", 200), ("GET", "/style.css", 200), ("HEAD", "/site.js", 200),
             ("GET", "/no/such/page.html", 404), ("GET", "/papers/9999.99999/", 404),
             ("GET", "/../etc/passwd", 404), ("POST", "/", 405), ("GET", f"/directions/{RL}", 301)]
    for method, path, status in cases:
        async with session.request(method, base + path, allow_redirects=False) as resp:
            assert resp.status == status, (method, path)
            h = resp.headers
            assert h.get("X-Content-Type-Options") == "nosniff", (method, path)
            assert h.get("Content-Security-Policy") == CSP, (method, path)
            assert h.get("X-Frame-Options") == "DENY" and h.get("Referrer-Policy") == "no-referrer", (method, path)
    async with session.get(base + "/") as resp:  # a 304 from the table keeps them too
        etag = resp.headers["ETag"]
    async with session.get(base + "/", headers={"If-None-Match": etag}) as resp:
        assert resp.status == 304 and resp.headers.get("Content-Security-Policy") == CSP


def test_the_policy_is_strict() -> None:
    rules = dict(part.strip().split(" ", 1) for part in CSP.split(";"))
    assert rules["default-src"] == "'none'" and rules["frame-ancestors"] == "'none'"
    assert all("unsafe" not in v and "*" not in v and "http" not in v for v in rules.values())
    assert rules["script-src"] == rules["style-src"] == "'self'"


# --- connections that never finish their request ------------------------------------------------

async def half_open(port: int, n: int, sent: bytes = b"GET / HT") -> list[tuple[asyncio.StreamReader,
                                                                                 asyncio.StreamWriter]]:
    """`n` connections, each having sent half a request line."""
    conns = []
    for _ in range(n):
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(sent)
        conns.append((reader, writer))
    for _, writer in conns:
        await writer.drain()
    return conns


async def closed_by_server(reader: asyncio.StreamReader, within: float = 30.0) -> bytes | None:
    """What the server sent before closing (b"" for nothing), or None if it kept the connection open."""
    try:
        return await asyncio.wait_for(reader.read(), within)
    except TimeoutError:
        return None
    except ConnectionError:  # reset, or a write of ours after the close
        return b""


def close_all(conns) -> None:
    for _, writer in conns:
        writer.close()


async def test_an_unfinished_request_is_closed_after_the_header_timeout(published: Path) -> None:
    runner, port = await start_server(published, "127.0.0.1", 0, limits=Limits(header_timeout=0.5))
    try:
        conns = await half_open(port, 40)
        conns += await half_open(port, 5, b"GET / HTTP/1.1\r\nHost: x\r\n")  # headers never end
        trickle = await half_open(port, 1, b"G")
        for ch in b"ET / HTTP/1.1\r\nX-Slow: 1\r\n":  # active, but never done: closed all the same
            await asyncio.sleep(0.05)  # on purpose: a client sending one byte every 50 ms
            try:
                trickle[0][1].write(bytes([ch]))
            except (ConnectionError, RuntimeError):
                break
        left = await asyncio.gather(*(closed_by_server(r) for r, _ in [*conns, *trickle]))
        assert left == [b""] * 46  # all closed by the server, none answered
        assert runner.guard.timed_out == 46 and not runner.guard.open
        async with aiohttp.ClientSession() as session, session.get(f"http://127.0.0.1:{port}/") as resp:
            assert resp.status == 200  # a whole request is answered as before
        close_all(conns)
    finally:
        await runner.cleanup()


async def test_healthz_answers_while_many_unfinished_connections_are_open(published: Path) -> None:
    from mapwatch.feeds.serving.health import Health

    health = Health(published.parent / "m.db")
    runner, port = await start_server(published, "127.0.0.1", 0, health,
                                       limits=Limits(header_timeout=60, max_connections=100))
    try:
        conns = await half_open(port, 400)
        async with aiohttp.ClientSession() as session:
            for _ in range(20):
                async with session.get(f"http://127.0.0.1:{port}/healthz") as resp:
                    assert resp.status == 200 and (await resp.json())["database"]["reachable"]
                conns += await half_open(port, 10)  # more keep coming
        # The oldest unfinished ones made room: closed by the server, long before their deadline.
        left = await asyncio.gather(*(closed_by_server(r, 5.0) for r, _ in conns[:300]))
        assert left.count(b"") == 300
        assert len(runner.guard.open) <= 100
        assert runner.guard.evicted >= 300 and runner.guard.timed_out == 0
        close_all(conns)
    finally:
        await runner.cleanup()


async def test_at_the_cap_with_every_connection_busy_a_new_one_gets_503(published: Path) -> None:
    gate = asyncio.Event()

    async def slow(request):
        await gate.wait()
        return aiohttp.web.Response(text="done")

    from mapwatch.feeds.serving.server import FeedRunner

    table = FolderTable(published)
    runner = FeedRunner(slow, table, Limits(header_timeout=60, max_connections=3))
    await runner.start()
    site = aiohttp.web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        busy = await half_open(port, 3, b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        await async_wait_until(lambda: len(runner.guard.busy) >= 3, 10, what="three busy connections",
                               interval=0.01)
        [(reader, writer)] = await half_open(port, 1, b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = await closed_by_server(reader, 10)
        assert answer is not None and answer.startswith(b"HTTP/1.1 503") and b"Retry-After: 5" in answer
        gate.set()
        for r, _ in busy:
            assert (await r.readuntil(b"done")).startswith(b"HTTP/1.1 200")
        assert runner.guard.refused == 1 and runner.guard.evicted == 0
        close_all([*busy, (reader, writer)])
    finally:
        await runner.cleanup()


@pytest.mark.parametrize(("name", "value"), [("MAPWATCH_HEADER_TIMEOUT", "soon"), ("MAPWATCH_HEADER_TIMEOUT", "0"),
                                             ("MAPWATCH_HEADER_TIMEOUT", "-1"), ("MAPWATCH_MAX_CONNECTIONS", "0"),
                                             ("MAPWATCH_MAX_CONNECTIONS", "many"), ("MAPWATCH_MAX_CONNECTIONS", "1.5")])
def test_a_bad_limit_is_a_usage_error(published: Path, name: str, value: str, capsys,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from mapwatch.cli import main

    monkeypatch.setenv(name, value)
    assert main(["serve", "--db", str(published.parent / "m.db"), "--out", str(published), "--port", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"mapwatch: error: ${name} must be") and repr(value) in err[0]


def test_the_limits_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from mapwatch.feeds.serving.connections import HEADER_TIMEOUT, descriptor_cap, limits_from_env

    assert limits_from_env() == Limits() and HEADER_TIMEOUT <= 30
    monkeypatch.setenv("MAPWATCH_HEADER_TIMEOUT", "2.5")
    monkeypatch.setenv("MAPWATCH_MAX_CONNECTIONS", "10")
    assert limits_from_env() == Limits(2.5, 10)
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert descriptor_cap(10**9) == soft - min(256, soft // 2) and descriptor_cap(10) == 10
