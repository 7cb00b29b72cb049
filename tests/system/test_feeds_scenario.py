"""The feeds as a user meets them: the refresh command on a folder, a real feed reader
(newsboat: gzipped answers, then 304s) against `mapwatch serve`, and `mapwatch run`."""

from __future__ import annotations

import asyncio
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import aiohttp
import feedparser
import pytest

from mapwatch.cli import main
from mapwatch.feeds.serving.server import start_server
from mapwatch.service.services import run_services
from mapwatch.service.settings import RunSettings
from mapwatch.service.tick import TickResult
from mapwatch.store.database.db import open_db
from mapwatch.store.pages.files import SEEDS_DIR
from tests.conftest import SEED_FILES, seed_page
from tests.feedcheck import assert_valid_atom, feed_files, snapshot
from tests.metricscheck import scrape, value

ROOT = Path(__file__).resolve().parents[2]
DIRECTIONS = ("lr/reinforcement-learning-for-reasoning", "alignment/reward-modeling-and-rlhf")


def entry_ids(path: Path) -> set[str]:
    return {e.id for e in feedparser.parse(path.read_bytes()).entries}


def placed_in(db_path: Path, slug: str) -> set[str]:
    db = open_db(db_path)
    try:
        return {r[0] for r in db.conn.execute("SELECT paper_id FROM placements WHERE direction_slug = ?", (slug,))}
    finally:
        db.close()


async def test_older_seeds_then_full_seeds_gain_exactly_the_new_citers(make_older_seeds, tmp_path: Path,
                                                                       capsys) -> None:
    db, out = tmp_path / "m.db", tmp_path / "public"
    args = ["--db", str(db), "--out", str(out), "--base-url", "http://feeds.test"]
    older = make_older_seeds(3)
    assert main(["refresh", "--source", str(older), *args]) == 0
    before = {slug: entry_ids(out / f"feeds/{slug}.atom") for slug in DIRECTIONS}
    assert all(before.values())  # the first import counts

    full = tmp_path / "full"
    shutil.copytree(SEEDS_DIR, full)
    assert main(["refresh", "--source", str(full), *args]) == 0
    printed = capsys.readouterr().out
    assert "2 stored" in printed and "6 new citations" in printed
    for slug in DIRECTIONS:
        after = entry_ids(out / f"feeds/{slug}.atom")
        assert after >= before[slug]
        dropped = {it.id for pid in placed_in(db, slug) for it in seed_page(pid).built_on_by.items[-3:]}
        expected = {f"tag:mapwatch,2026:direction/{slug}/citer/{c}" for c in dropped} - before[slug]
        assert after - before[slug] == expected and expected
    for f in feed_files(out):
        assert_valid_atom(f.read_bytes(), f"http://feeds.test/{f.relative_to(out)}")

    # A second refresh changes nothing: same bytes, same files, and 304 to a conditional GET.
    published = snapshot(out)
    runner, port = await start_server(out, "127.0.0.1", 0)
    try:
        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{port}/feeds/{DIRECTIONS[0]}.atom"
            async with session.get(url) as resp:
                etag = resp.headers["ETag"]
            assert main(["refresh", "--source", str(full), *args]) == 0
            assert "0 stored, 2 unchanged" in capsys.readouterr().out
            assert snapshot(out) == published
            async with session.get(url, headers={"If-None-Match": etag}) as resp:
                assert resp.status == 304
    finally:
        await runner.cleanup()


def test_broken_page_is_reported_and_skipped(tmp_path: Path, capsys) -> None:
    db, out = tmp_path / "m.db", tmp_path / "public"
    source = tmp_path / "src"
    shutil.copytree(SEEDS_DIR, source)
    args = ["--db", str(db), "--out", str(out), "--source", str(source)]
    assert main(["refresh", *args]) == 0
    kept = snapshot(out)
    (source / "2412.10400.txt").write_text("<!doctype html><html>Just a moment...</html>")
    (source / "2601.00001.txt").write_bytes(SEED_FILES[1].read_bytes()[:400])  # cut off in its key facts
    assert main(["refresh", *args]) == 1
    err = capsys.readouterr().err
    assert "rejected:" in err and "2412.10400.txt:1: an HTML/XML document" in err and "2601.00001.txt" in err
    assert snapshot(out) == kept  # nothing stored was lost, every feed is as it was
    for f in feed_files(out):
        assert_valid_atom(f.read_bytes())
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM citations").fetchone()[0] == 111
    assert conn.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == 2


def test_newsboat_reads_the_served_feeds(tmp_path: Path) -> None:
    if shutil.which("newsboat") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("newsboat is not installed (CI must install it: see .ci/run)")
        pytest.skip("newsboat is not installed")
    db, out = tmp_path / "m.db", tmp_path / "public"
    assert main(["ingest", "--db", str(db), "--quiet"]) == 0
    proc = subprocess.Popen(
        [sys.executable, "-m", "mapwatch", "serve", "--db", str(db), "--out", str(out), "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        base = None
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("Serving"):
                base = line.split(" at ")[1].split("/ ")[0]
                break
        assert base and base.startswith("http://127.0.0.1:")
        feeds = [f"{base}/feeds/{slug}.atom" for slug in DIRECTIONS] + [f"{base}/feeds/papers/2507.04136.atom"]
        (tmp_path / "urls").write_text("\n".join(feeds) + "\n")
        (tmp_path / "config").write_text("")
        run = subprocess.run(
            ["newsboat", "-x", "reload", "-u", "urls", "-c", "cache.db", "-C", "config"],
            cwd=tmp_path, env={**os.environ, "HOME": str(tmp_path)}, capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr
        # It asks for gzip. Its second reload keeps the validators of the gzipped answers (the first
        # makes its records), and its third sends them: each feed is a 304.
        reload = ["newsboat", "-x", "reload", "-u", "urls", "-c", "cache.db", "-C", "config"]
        home = {**os.environ, "HOME": str(tmp_path)}
        assert subprocess.run(reload, cwd=tmp_path, env=home, capture_output=True, timeout=60).returncode == 0
        etags = dict(sqlite3.connect(tmp_path / "cache.db").execute("SELECT rssurl, etag FROM rss_feed"))
        assert sorted(etags) == sorted(feeds) and all(e.endswith('-gzip"') for e in etags.values()), etags
        before = value(scrape(base), "mapwatch_http_not_modified_total", kind="feed")
        assert subprocess.run(reload, cwd=tmp_path, env=home, capture_output=True, timeout=60).returncode == 0
        assert value(scrape(base), "mapwatch_http_not_modified_total", kind="feed") - before == len(feeds)
    finally:
        proc.terminate()
        proc.wait(10)
    cache = sqlite3.connect(tmp_path / "cache.db")
    # The paper feed was built on demand (serve writes tracked papers only): the static folder has the same.
    assert not (out / "feeds/papers/2507.04136.atom").exists()
    assert main(["publish", "--db", str(db), "--out", str(tmp_path / "all"), "--papers", "all"]) == 0
    for url in feeds:
        rel = url.removeprefix(base + "/")
        got = {r[0] for r in cache.execute("SELECT guid FROM rss_item WHERE feedurl = ?", (url,))}
        assert got == entry_ids((tmp_path / "all" if "/papers/" in rel else out) / rel) and got
    titles = dict(cache.execute("SELECT rssurl, title FROM rss_feed"))
    assert titles[feeds[0]] == "Reinforcement learning for reasoning: new citing papers"
    row = cache.execute("SELECT title, url FROM rss_item WHERE guid LIKE '%/citer/2509.02547' AND feedurl = ?",
                        (feeds[0],)).fetchone()
    assert row == ("The Landscape of Agentic Reinforcement Learning for LLMs: A Survey (2025)",
                   "https://mlsanity.com/paper/2509.02547/")


async def test_run_seeds_an_empty_database_serves_feeds_and_calls_hooks(tmp_path: Path) -> None:
    said: list[str] = []
    ticks: asyncio.Queue[TickResult] = asyncio.Queue()
    stop = asyncio.Event()

    async def after_refresh(result: TickResult) -> None:
        await ticks.put(result)

    config = RunSettings(db_path=tmp_path / "m.db", source=str(SEEDS_DIR), out_dir=tmp_path / "public",
                         host="127.0.0.1", port=0, refresh="1h")
    task = asyncio.create_task(run_services(config, [after_refresh], say=said.append, stop=stop))
    try:
        result = await asyncio.wait_for(ticks.get(), 20)  # the first tick runs at start
        assert result.refresh.unchanged == 2 and result.publish.written == []
        text = "\n".join(said)
        assert "stored the bundled seed pages" in text
        urls = [line.rsplit(": ", 1)[1] for line in said[1].splitlines() if line.strip().endswith(".atom")]
        assert len(urls) == 2 and all(u.startswith("http://127.0.0.1:") for u in urls)
        assert "OPML" in text and "/feeds.opml" in text
        async with aiohttp.ClientSession() as session:
            for url in urls:
                async with session.get(url) as resp:
                    assert resp.status == 200
                    assert_valid_atom(await resp.read(), url)
    finally:
        stop.set()
        await asyncio.wait_for(task, 20)
