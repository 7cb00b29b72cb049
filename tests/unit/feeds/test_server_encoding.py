"""The feed server over real HTTP on loopback: gzip for the text files (Atom, OPML, HTML, CSS,
JavaScript; never PNG) to a client that takes it, with an ETag of its own and 304s for either
ETag (feeds/serving/encoding.py); and a Last-Modified that stays the same across restarts,
the folder written again from nothing included (store/database/published_files.py)."""

from __future__ import annotations

import asyncio
import gzip
import shutil
import time
import urllib.request
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import feedparser
import pytest

from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.encoding import accepts_gzip, gzip_etag
from mapwatch.feeds.serving.ondemand import PaperCache
from mapwatch.feeds.serving.server import start_server
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.conftest import FakeClock
from tests.feedcheck import assert_valid_atom
from tests.metricscheck import get

BASE = "https://feeds.example.org"  # the public address: the same bytes whatever port the test binds
RL = "/feeds/lr/reinforcement-learning-for-reasoning.atom"
TEXT = {RL: "application/atom+xml", "/feeds.opml": "text/x-opml", "/": "text/html",
        "/directions/lr/reinforcement-learning-for-reasoning/": "text/html", "/style.css": "text/css",
        "/site.js": "text/javascript", "/feeds/papers/2412.10400.atom": "application/atom+xml",
        "/papers/2412.10400/": "text/html"}  # the last two built on demand
GZIP = {"Accept-Encoding": "gzip"}


@pytest.fixture(scope="module")
def db_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("site") / "m.db"
    db = open_db(path)
    ingest_paths(db, [SEEDS_DIR], clock=FakeClock())
    db.close()
    return path


@asynccontextmanager
async def serving(db_path: Path, out: Path) -> AsyncIterator[str]:
    """What `mapwatch serve` does: publish into `out`, then serve it (and paper files on demand)."""
    db = open_db(db_path)
    try:
        publish(db, out, BASE)
    finally:
        db.close()
    shutil.copyfile(SEEDS_DIR / "graph-2412.10400.png", out / "picture.png")  # a PNG in the folder
    runner, port = await start_server(out, "127.0.0.1", 0, papers=PaperCache(db_path, BASE))
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def fetch(url: str, headers: dict[str, str] | None = None,
                method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """urllib: it sends no Accept-Encoding unless told, and decodes nothing."""
    if method == "GET":
        return await asyncio.to_thread(get, url, headers)

    def send() -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(url, headers=headers or {}, method=method)
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, dict(r.headers), r.read()

    return await asyncio.to_thread(send)


async def test_text_files_are_gzipped_for_a_client_that_takes_gzip(db_path: Path, tmp_path: Path) -> None:
    async with serving(db_path, tmp_path / "public") as base:
        for path, ctype in TEXT.items():
            status, plain_headers, plain = await fetch(base + path)
            assert status == 200 and plain_headers["Content-Type"].startswith(ctype), path
            assert "Content-Encoding" not in plain_headers, path
            assert plain_headers["Vary"] == "Accept-Encoding", path  # the plain answer varies too
            status, headers, body = await fetch(base + path, GZIP)
            assert status == 200, path
            assert headers["Content-Encoding"] == "gzip" and headers["Vary"] == "Accept-Encoding", path
            assert headers["Content-Type"] == plain_headers["Content-Type"], path
            assert int(headers["Content-Length"]) == len(body) < len(plain), path
            assert gzip.decompress(body) == plain, path
            assert headers["ETag"] == gzip_etag(plain_headers["ETag"]) != plain_headers["ETag"], path
            assert headers["ETag"].endswith('-gzip"'), path
            status, head, empty = await fetch(base + path, GZIP, "HEAD")  # the same as GET, without the body
            assert status == 200 and empty == b"", path
            assert (head["Content-Encoding"], head["Content-Length"], head["ETag"]) == (
                "gzip", headers["Content-Length"], headers["ETag"]), path
        for value in ("gzip;q=0, identity", "br", "identity", "gzip;q=0, *;q=1"):
            _, headers, body = await fetch(base + RL, {"Accept-Encoding": value})
            assert "Content-Encoding" not in headers, value
        for value in ("*", "deflate, gzip;q=0.5", "GZIP", "x-gzip", "br;q=1.0, gzip;q=0.8, *;q=0.1"):
            _, headers, body = await fetch(base + RL, {"Accept-Encoding": value})
            assert headers.get("Content-Encoding") == "gzip", value
        # PNG is compressed already: never gzipped, and it does not vary
        status, headers, body = await fetch(base + "/picture.png", GZIP)
        assert status == 200 and headers["Content-Type"] == "image/png"
        assert "Content-Encoding" not in headers and "Vary" not in headers
        assert body == (tmp_path / "public" / "picture.png").read_bytes()


async def test_either_etag_is_answered_304(db_path: Path, tmp_path: Path) -> None:
    async with serving(db_path, tmp_path / "public") as base:
        for path in TEXT:
            _, plain, _ = await fetch(base + path)
            _, zipped, _ = await fetch(base + path, GZIP)
            for held, accept in ((zipped["ETag"], GZIP), (plain["ETag"], {}), (plain["ETag"], GZIP),
                                 (zipped["ETag"], {}), (f'"other", W/{zipped["ETag"]}', GZIP)):
                status, headers, body = await fetch(base + path, {"If-None-Match": held, **accept})
                assert status == 304 and body == b"", (path, held, accept)
                assert headers["ETag"] in held, (path, held)  # the one the client holds
                assert headers["Vary"] == "Accept-Encoding" and "Content-Encoding" not in headers
            status, _, _ = await fetch(base + path, {"If-None-Match": '"other"', **GZIP})
            assert status == 200, path
            if "Last-Modified" in zipped:  # the folder's files (the ones built on demand have none)
                status, _, _ = await fetch(base + path, {"If-Modified-Since": zipped["Last-Modified"], **GZIP})
                assert status == 304, path


async def test_feedparser_reads_the_gzipped_feed_and_polls_with_304s(db_path: Path, tmp_path: Path) -> None:
    async with serving(db_path, tmp_path / "public") as base:
        for path in (RL, "/feeds/papers/2412.10400.atom"):
            first = await asyncio.to_thread(feedparser.parse, base + path)  # it asks for gzip, as readers do
            assert first.status == 200 and first.bozo == 0, first.get("bozo_exception")
            assert first.headers["content-encoding"] == "gzip"
            assert first.etag.endswith('-gzip"') and first.entries
            _, _, plain = await fetch(base + path)
            assert_valid_atom(plain)
            assert [e.id for e in first.entries] == [e.id for e in feedparser.parse(plain).entries]
            again = await asyncio.to_thread(feedparser.parse, base + path, etag=first.etag)
            assert again.status == 304 and not again.entries
            if path == RL:
                since = await asyncio.to_thread(feedparser.parse, base + path, modified=first.modified)
                assert since.status == 304


def validators(answers: dict[str, dict[str, str]]) -> dict[str, tuple[str, str | None]]:
    return {path: (h["ETag"], h.get("Last-Modified")) for path, h in answers.items()}


async def served_validators(base: str) -> dict[str, tuple[str, str | None]]:
    answers = {}
    for path in TEXT:
        for accept in ({}, GZIP):
            status, headers, _ = await fetch(base + path, accept)
            assert status == 200
            answers[path + ("#gzip" if accept else "")] = headers
    return validators(answers)


async def test_last_modified_stays_across_restarts_and_a_folder_written_again(db_path: Path, tmp_path: Path) -> None:
    out = tmp_path / "public"
    async with serving(db_path, out) as base:
        first = await served_validators(base)
    assert all(modified for path, (_, modified) in first.items() if "/papers/" not in path)
    time.sleep(1.1)  # on purpose: Last-Modified has whole seconds, and a file written now would show it
    async with serving(db_path, out) as base:  # restarted on the same folder
        assert await served_validators(base) == first
    shutil.rmtree(out)  # the folder lost (a new disk, the database restored from its replica): written again
    time.sleep(1.1)  # on purpose: as above
    async with serving(db_path, out) as base:
        again = await served_validators(base)
    assert again == first
    # and on disk, for nginx or object storage serving the folder
    for rel in ("feeds.opml", "index.html", "style.css", RL.lstrip("/")):
        assert time.time() - (out / rel).stat().st_mtime > 2, rel


async def test_changed_bytes_get_a_new_last_modified(tmp_path: Path, make_older_seeds: Callable[[int], Path]) -> None:
    """Only the same bytes get their time back: a feed with a new citer is as new as its bytes."""
    clock = FakeClock()
    db_path, out = tmp_path / "m.db", tmp_path / "public"
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    db.close()
    async with serving(db_path, out) as base:
        before = {path: (await fetch(base + path))[1] for path in (RL, "/style.css")}
    time.sleep(1.1)  # on purpose: a new whole second
    clock.advance(days=1)
    db = open_db(db_path)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # three new citers of each seed
    db.close()
    shutil.rmtree(out)
    async with serving(db_path, out) as base:
        after = {path: (await fetch(base + path))[1] for path in (RL, "/style.css")}
    assert after[RL]["ETag"] != before[RL]["ETag"]
    assert after[RL]["Last-Modified"] != before[RL]["Last-Modified"]
    assert validators(after)["/style.css"] == validators(before)["/style.css"]


@pytest.mark.parametrize(("header", "takes"), [
    (None, False), ("", False), ("gzip", True), ("gzip;q=0", False), ("gzip; q=0.001", True),
    ("*", True), ("*;q=0", False), ("identity", False), ("br, deflate", False), ("gzip;q=nan", False),
    ("gzip;q=2", False), ("gzip;q=x", False), ("*, gzip;q=0", False), ("x-gzip", True),
])
def test_accept_encoding(header: str | None, takes: bool) -> None:
    assert accepts_gzip(header) is takes
