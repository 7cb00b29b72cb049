"""Hardening of the feed server (issue 21): security headers on every answer, and
connections that never finish their request (see also tests/test_serve_startup.py)."""

from __future__ import annotations

from pathlib import Path

import aiohttp
import pytest
from mapwatch.feeds.folder_table import CSP
from mapwatch.feeds.ondemand import PaperCache
from mapwatch.feeds.publish import publish
from mapwatch.feeds.server import start_server
from mapwatch.store.files import SEEDS_DIR
from mapwatch.store.ingest import ingest_paths

RL = "lr/reinforcement-learning-for-reasoning"


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from mapwatch.store.db import open_db

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
