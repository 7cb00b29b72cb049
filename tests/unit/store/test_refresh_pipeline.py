"""The HTTP refresh as one pipeline on the running loop (store/sources/refresh_pipeline.py): `mapwatch
run`'s tick crawls on its own loop, every statement on the database runs in the tick's one
lowered writer thread and the parsing in its lowered parse threads (no second loop, no crawl
thread); the writer holds at most two batches whatever the budget; a batch that cannot be
stored stops the crawl with its error, the batches before it kept."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mapwatch.service.tick import Publish, Refresh, Tick
from mapwatch.store.clock import utc_now
from mapwatch.store.database.db import open_db
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh import refresh, refresh_async
from tests.conftest import FakeClock
from tests.mapsite import MapSite, serve_site
from tests.system.test_live_map import corpus_texts

linux_only = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="a thread has a CPU priority of its own on Linux only")


def nice_of(native_id: int) -> int:
    return os.getpriority(os.PRIO_PROCESS, native_id)


@linux_only
async def test_an_http_tick_crawls_on_the_loop_and_uses_the_database_in_one_lowered_thread(tmp_path: Path) -> None:
    statements: list[tuple[int, frozenset[str]]] = []  # (thread, the threads alive) for each statement

    def tracked(db) -> tuple[str, ...]:  # type: ignore[no-untyped-def]  # the tick's first use of its database
        db.conn.set_trace_callback(lambda _sql: statements.append(
            (threading.get_native_id(), frozenset(t.name for t in threading.enumerate()))))
        return ()

    loop_thread, loop_nice = threading.get_native_id(), nice_of(threading.get_native_id())
    with serve_site(MapSite(pages=corpus_texts(30))) as site:
        tick = Tick(tmp_path / "m.db", Refresh(site.base, priority=tracked), Publish(tmp_path / "public", "http://x"),
                    nice=3)
        result = await tick.run(utc_now())
    assert result.refresh.stored >= 30 and (tmp_path / "public" / "feeds.opml").is_file()
    writers = {tid for tid, _alive in statements}
    assert len(writers) == 1 and loop_thread not in writers  # saves, ranks, log and publish: one thread
    assert nice_of(writers.pop()) == min(19, loop_nice + 3)
    alive = set().union(*(names for _tid, names in statements))
    # No second event loop in a thread of its own: only the tick's writer and parse threads.
    assert not any(n.startswith("mapwatch-crawl") for n in alive)
    parsers = [t for t in threading.enumerate() if t.name.startswith("mapwatch-parse")]
    assert parsers and all(nice_of(t.native_id or 0) == min(19, loop_nice + 3) for t in parsers)
    assert nice_of(loop_thread) == loop_nice
    tick.close()


async def test_the_writer_holds_at_most_two_batches(tmp_path: Path) -> None:
    db = open_db(tmp_path / "m.db")
    gate = threading.Event()
    held: list[int] = []  # pages taken while the writer was held up
    batch, concurrency = 5, 4

    with ThreadPoolExecutor(1) as writer:
        def progress(done: int, _total: int) -> None:
            if done == 1:
                writer.submit(gate.wait)  # the writer is busy elsewhere: the crawl must wait for it
                threading.Timer(1.0, gate.set).start()
            if not gate.is_set():
                held.append(done)

        with serve_site(MapSite(pages=corpus_texts(80))) as site:
            report = await refresh_async(db, site.base, writer=writer, clock=FakeClock(), progress=progress,
                                         batch_size=batch, options=HttpOptions(concurrency=concurrency))
    assert report.stored >= 80
    assert held and max(held) <= 2 * batch + concurrency  # not the whole crawl: it waited for the writer
    writer_rows = db.conn.execute("SELECT count(*) FROM sources WHERE checked_at IS NOT NULL").fetchone()[0]
    assert writer_rows == report.pages_read + report.missing
    db.close()


def _fail_after(db_path: Path, snapshots: int) -> None:
    conn = sqlite3.connect(db_path)
    conn.execute(f"""CREATE TRIGGER full_disk BEFORE INSERT ON snapshots
                     WHEN (SELECT count(*) FROM snapshots) >= {snapshots}
                     BEGIN SELECT RAISE(ABORT, 'disk full'); END""")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("threaded", [False, True])
def test_a_batch_that_cannot_be_stored_stops_the_crawl_and_the_batches_before_it_stay(
        tmp_path: Path, threaded: bool) -> None:
    db_path = tmp_path / "m.db"
    open_db(db_path).close()
    _fail_after(db_path, 10)
    db = open_db(db_path)
    # One request at a time: a batch is cut at exactly 5 pages (with more, pages arriving while
    # the previous batch is stored join the next one, and it may be the one that fails).
    options = HttpOptions(concurrency=1)
    with serve_site(MapSite(pages=corpus_texts(120))) as site:
        with pytest.raises(sqlite3.IntegrityError, match="disk full"):
            if threaded:
                with ThreadPoolExecutor(1) as writer:
                    asyncio.run(refresh_async(db, site.base, writer=writer, clock=FakeClock(), batch_size=5,
                                              options=options))
            else:
                refresh(db, site.base, clock=FakeClock(), batch_size=5, options=options)
        requested = len(site.paths_requested())
    assert db.conn.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 10  # two batches kept
    assert requested < 60  # the crawl stopped (not all 120 pages and their directions were asked for)
    db.close()


async def test_a_cancelled_refresh_returns_only_once_the_batch_being_stored_is_stored(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    db = open_db(tmp_path / "m.db")
    gate, returned = threading.Event(), threading.Event()
    late: list[str] = []  # statements run after the cancelled refresh returned
    db.conn.set_trace_callback(lambda sql: late.append(sql) if returned.is_set() else None)
    started = asyncio.Event()

    with ThreadPoolExecutor(1) as writer:
        def progress(done: int, _total: int) -> None:
            if done == 1:
                writer.submit(gate.wait)  # the next batch handed over waits in the writer
            if done == 7:
                started.set()

        with serve_site(MapSite(pages=corpus_texts(80))) as site:
            task = asyncio.create_task(refresh_async(db, site.base, writer=writer, clock=FakeClock(),
                                                     progress=progress, batch_size=5))
            await started.wait()  # a batch is waiting in the writer; the crawl goes on
            task.cancel()
            threading.Timer(0.5, gate.set).start()
            with pytest.raises(asyncio.CancelledError):
                await task
            returned.set()
        writer.submit(lambda: None).result()
    db.conn.set_trace_callback(None)
    stored = db.conn.execute("SELECT count(*) FROM snapshots").fetchone()[0]
    assert late == [] and 5 <= stored < 80  # the handed-over batch stored before the return, not the rest
    assert "never retrieved" not in caplog.text  # a quiet shutdown
    db.close()
