"""Abuse of the feed server and of the feeds' content.

- Requests written byte for byte on a raw socket (no client normalisation): traversal with
  `..`, percent-encoded, double-encoded, overlong UTF-8, backslashes, NUL, absolute paths,
  absolute-form URLs, symlinks (file and folder) leading out of the folder: nothing outside
  the folder is served, and no answer is a 5xx.
- Huge headers, huge request lines, methods other than GET/HEAD, garbage instead of HTTP:
  a 4xx (or a closed connection), never a 5xx, and the server keeps serving.
- Load: many requests from 200 concurrent clients on loopback; every answer is a 200 or a
  304 with the file's exact bytes. CI: 1,000 requests; long form (`-m slow`): 10,000
  (`ABUSE_REQUESTS`).
- Content: pages whose titles carry @everyone, markdown, HTML, script tags and
  XML-invalid control characters produce well-formed Atom (parsed by feedparser and by
  the XML parser), an index page without live markup from the pages, and an OPML file that
  parses.
"""

from __future__ import annotations

import asyncio
import dataclasses
import hashlib
import os
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

import aiohttp
import feedparser
import pytest

from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.server import start_server
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.model import ListedPaper, PaperList
from tests.conftest import FakeClock, seed_page, write_page

MARKER = "TOPSECRET-7f3a"
HOSTILE = ('@everyone <script>alert("x")</script> **bold** [link](https://evil.example/) '
           '&amp; <b>html</b> \x01\x08\x0b\x0c\x1b\x7f\ufffe ]]> <!-- x --> `code` ||s||')


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The seeds' feeds plus one hostile citer, published; secrets lie around the folder."""
    tmp = tmp_path_factory.mktemp("abuse")
    page = seed_page("2412.10400")
    assert page.built_on_by is not None
    hostile = ListedPaper(id="2611.99999", title=HOSTILE, year=2026, position=len(page.built_on_by.items) + 1,
                          url="https://mlsanity.com/paper/2611.99999/")
    lst = page.built_on_by
    first = page.placements[0]
    name = f"{first.direction} {HOSTILE}"
    placed = dataclasses.replace(first, direction=name, breadcrumb=f"{first.area} / {name}")
    page = dataclasses.replace(
        page, title=f"{page.title} {HOSTILE}", direction=name, placements=(placed, *page.placements[1:]),
        built_on_by=PaperList(shown=lst.shown + 1, total=lst.total + 1, items=(*lst.items, hostile)))
    write_page(tmp / "pages", page)
    db = open_db(tmp / "m.db")
    ingest_paths(db, [tmp / "pages"], clock=FakeClock())
    publish(db, tmp / "public", "http://127.0.0.1:1")
    db.close()
    for name in ("secret.atom", "secret.html", "secret.opml", "secret.txt"):
        (tmp / name).write_text(MARKER)
    (tmp / "outside").mkdir()
    (tmp / "outside" / "x.atom").write_text(MARKER)
    public = tmp / "public"
    os.symlink(tmp / "secret.atom", public / "feeds" / "leak.atom")
    os.symlink(tmp / "outside", public / "feeds" / "leakdir")
    os.symlink("../../secret.html", public / "feeds" / "rel.html")
    return public


@pytest.fixture
async def server(site_dir: Path):
    runner, port = await start_server(site_dir, "127.0.0.1", 0)
    yield site_dir, port
    await runner.cleanup()


async def raw(port: int, request: bytes, timeout: float = 10) -> tuple[int | None, bytes]:
    """Send bytes as they are; the status (None if the server closed without answering) and
    everything it sent."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(request)
        await writer.drain()
        data = await asyncio.wait_for(reader.read(), timeout)
    except (ConnectionResetError, BrokenPipeError):
        data = b""
    except TimeoutError:  # e.g. blank lines only: the server waits for a request line
        data = b""
    finally:
        writer.close()
    if not data.startswith(b"HTTP/"):
        return None, data
    return int(data.split(b" ", 2)[1]), data


def get(path: str, method: str = "GET", extra: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n".encode(
        "utf-8", "surrogateescape")


TRAVERSALS = [
    "/../secret.atom", "/../../secret.atom", "/feeds/../../secret.atom", "/feeds/../../../etc/passwd",
    "/%2e%2e/secret.atom", "/%2E%2E/secret.atom", "/feeds/%2e%2e/%2e%2e/secret.atom", "/..%2fsecret.atom",
    "/feeds/..%2F..%2Fsecret.atom", "/%252e%252e/secret.atom", "/..%252fsecret.atom", "/.%2e/secret.atom",
    "/%c0%ae%c0%ae/secret.atom", "/..%c0%afsecret.atom", "/..%5csecret.atom", "/..\\secret.atom",
    "/feeds\\..\\..\\secret.atom", "//etc/passwd", "///etc/passwd", "/%2fetc%2fpasswd", "/%2F%2E%2E%2Fsecret.atom",
    "/etc/passwd", "/secret.atom", "/feeds/leak.atom", "/feeds/leakdir/x.atom", "/feeds/rel.html",
    "/feeds/%6c%65%61%6b.atom", "/index.html%00.atom", "/feeds/../index.html/../../secret.atom",
    "http://127.0.0.1/../secret.atom", "http://evil.example/../../secret.atom", "/./../secret.atom",
    "/;/../secret.atom", "/?/../secret.atom", "/#/../secret.atom", "/....//secret.atom", "/.../secret.atom",
    "/feeds/.", "/feeds/..", "/feeds/", "/..", "/.", "/.tmp-x.atom", "/%00", "/\u2025/secret.atom",
]


def inside_files(root: Path) -> set[bytes]:
    """The bytes of every file really inside the folder (symlinks excluded)."""
    return {p.read_bytes() for p in root.rglob("*") if p.is_file() and not p.is_symlink()
            and all(not q.is_symlink() for q in p.parents if q.is_relative_to(root))}


@pytest.mark.parametrize("method", ["GET", "HEAD"])
async def test_traversal_never_leaves_the_folder(server, method: str) -> None:
    root, port = server
    allowed = inside_files(root)
    statuses: Counter = Counter()
    for path in TRAVERSALS:
        status, data = await raw(port, get(path, method))
        assert MARKER.encode() not in data, f"{path} served a file outside the folder"
        assert b"root:" not in data
        assert status is None or status < 500, f"{path}: {status}"
        if status == 200 and method == "GET":
            assert data.split(b"\r\n\r\n", 1)[1] in allowed, f"{path}: 200 with something not published"
        statuses[status] += 1
    assert statuses[200] < len(TRAVERSALS) // 4, statuses  # a few paths are the index ("/?/..", "/#/..")


async def test_methods_other_than_get_and_head(server) -> None:
    _root, port = server
    for method in ["POST", "PUT", "DELETE", "PATCH", "OPTIONS", "TRACE", "CONNECT", "PROPFIND", "MKCOL", "FOO"]:
        status, data = await raw(port, get("/index.html", method, "Content-Length: 0\r\n"))
        assert status is not None and 400 <= status < 500, f"{method}: {status}"
        assert MARKER.encode() not in data


async def test_huge_headers_and_garbage_get_4xx_and_the_server_keeps_serving(server) -> None:
    _root, port = server
    cases = [
        get("/index.html", extra=f"X-Big: {'a' * 100_000}\r\n"),
        get("/index.html", extra="".join(f"X-H{i}: v\r\n" for i in range(5000))),
        get("/" + "a" * 100_000 + ".atom"),
        get("/" + "../" * 20_000 + "secret.atom"),
        b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + os.urandom(64),  # a TLS hello
        b"GET / HTTP/9.9\r\n\r\n",
        b"GET /index.html HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
        b"GET /index.html HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        b"\r\n\r\n\r\n",
        os.urandom(2048),
    ]
    for request in cases:
        status, data = await raw(port, request, timeout=2)
        assert status is None or status < 500, (request[:60], status)
        assert MARKER.encode() not in data
    status, data = await raw(port, get("/index.html"))
    assert status == 200 and b"<html" in data.lower()


async def hammer(root: Path, port: int, total: int, clients: int = 200) -> Counter:
    files = [p for p in root.rglob("*") if p.is_file() and not p.is_symlink() and not p.name.startswith(".")]
    expected = {"/" + p.relative_to(root).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    paths = sorted(expected)
    counts: Counter = Counter()
    etags: dict[str, str] = {}
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(total):
        queue.put_nowait(i)

    async def client(session: aiohttp.ClientSession) -> None:
        while True:
            try:
                i = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            path = paths[i % len(paths)]
            headers = {"If-None-Match": etags[path]} if i % 3 == 0 and path in etags else {}
            async with session.get(f"http://127.0.0.1:{port}{path}", headers=headers) as resp:
                body = await resp.read()
                counts[resp.status] += 1
                if resp.status == 200:
                    assert hashlib.sha256(body).hexdigest() == expected[path], path
                    etags[path] = resp.headers["ETag"]
                else:
                    assert resp.status == 304, (path, resp.status)

    connector = aiohttp.TCPConnector(limit=clients, force_close=False)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=120)) as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))
    return counts


async def test_many_concurrent_clients(server) -> None:
    root, port = server
    counts = await hammer(root, port, total=1000)
    assert sum(counts.values()) == 1000 and set(counts) <= {200, 304} and counts[304] > 0


@pytest.mark.slow
async def test_many_concurrent_clients_long(server) -> None:
    root, port = server
    total = int(os.environ.get("ABUSE_REQUESTS", "10000"))
    counts = await hammer(root, port, total=total)
    assert sum(counts.values()) == total and set(counts) <= {200, 304}
    print(f"\nfeed server load: {total} requests, 200 clients: {dict(counts)}")


def test_hostile_titles_are_safe_in_atom_opml_and_index(site_dir: Path) -> None:
    atoms = sorted(site_dir.rglob("*.atom"))
    atoms = [p for p in atoms if not p.is_symlink() and "leak" not in p.parts]
    assert atoms
    seen_hostile = False
    for path in atoms:
        data = path.read_bytes()
        ET.fromstring(data)  # well-formed XML: no control characters, everything escaped
        parsed = feedparser.parse(data)
        assert not parsed.bozo, (path, parsed.get("bozo_exception"))
        for entry in parsed.entries:
            if "alert" in entry.title:
                seen_hostile = True
                assert "\x01" not in entry.title and "\x1b" not in entry.title
        assert b"<script>" not in data  # escaped as text, never markup
    assert seen_hostile, "the hostile citer is in some feed"
    ET.fromstring((site_dir / "feeds.opml").read_bytes())
    index = (site_dir / "index.html").read_text(encoding="utf-8")
    assert "<script>alert" not in index and "<b>html</b>" not in index
    assert not any(c in index for c in "\x01\x08\x0b\x0c\x1b\x7f")
