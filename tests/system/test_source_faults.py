"""Faults at the source during `refresh` over HTTP, beyond tests/unit/store/test_refresh_http.py:
connection resets before any answer, redirect loops, wrong content types, empty bodies,
5xx that outlast the retries, truncated bodies and timeouts, all in one tick. Each faulty
page is skipped (failed or rejected) with a reason; what is stored about it is untouched;
the next, fault-free tick recovers; and the database ends in exactly the state of a run
that never saw a fault (no event lost or duplicated)."""

from __future__ import annotations

import dataclasses
import sqlite3
from pathlib import Path

from aiohttp import web

from mapwatch.store.database.db import open_db
from mapwatch.store.pages.model import MapPage
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh import refresh
from tests.conftest import FakeClock, seed_page
from tests.sourceserver import SourceServer, serve_map
from tests.system.test_crash_safety import arrival_free_dump

HISTORY = frozenset({"at_first_read"})  # when a page was first read: a fault moves it

FAST = HttpOptions(concurrency=4, timeout=0.5, retries=2, backoff=0.01, max_retry_after=2)
PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64


class FaultyServer(SourceServer):
    """SourceServer with more ways to misbehave."""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        pid = request.match_info["id"]
        actions = self.script.get(pid) or []
        action = actions[0] if actions else None
        if action == "reset":  # every time (aiohttp's client retries a reused connection itself)
            self.requests.append((pid, dict(request.headers)))
            assert request.transport is not None
            request.transport.abort()  # RST, no status line
            return web.Response()
        if action == "loop":  # a redirect to itself, every time
            self.requests.append((pid, dict(request.headers)))
            raise web.HTTPFound(f"/paper/{pid}/")
        if action == "png":
            actions.pop(0)
            self.requests.append((pid, dict(request.headers)))
            return web.Response(body=PNG, content_type="image/png")
        if action == "json":
            actions.pop(0)
            self.requests.append((pid, dict(request.headers)))
            return web.Response(text='{"error": "rate limited"}', content_type="application/json")
        if action == "empty":
            actions.pop(0)
            self.requests.append((pid, dict(request.headers)))
            return web.Response(body=b"", content_type="text/plain")
        return await super().handle(request)


def clone(page: MapPage, new_id: str, extra_citers: int = 0) -> MapPage:
    return dataclasses.replace(page, id=new_id, title=f"{page.title} ({new_id})",
                               arxiv_url=f"https://arxiv.org/abs/{new_id}",
                               map_url=f"https://mlsanity.com/paper/{new_id}/",
                               cited_by=(page.cited_by or 0) + extra_citers)


FAULTS = {
    "reset": ["reset"],
    "loop": ["loop"],
    "png": ["png"],
    "json": ["json"],
    "empty": ["empty"],
    "500": ["500"] * 3,
    "truncated": ["truncated"] * 3,
    "timeout": ["timeout"] * 3,
}


def run_ticks(db_path: Path, faults: bool) -> tuple[dict[str, list[tuple]], list, list]:
    ids = [f"2611.002{i:02d}" for i in range(len(FAULTS))]
    base = seed_page("2507.04136")
    clock = FakeClock()
    db = open_db(db_path)
    with serve_map(FaultyServer()) as srv:
        for pid in ids:
            srv.put(clone(base, pid))
        first = refresh(db, srv.base, clock=clock, priority=ids, options=FAST)
        assert first.stored == len(ids) and not first.failed
        for pid in ids:
            srv.put(clone(base, pid, extra_citers=3))  # every page changes
        failed, rejected = [], []
        if faults:
            before = {r[0]: r for r in db.conn.execute("SELECT * FROM papers WHERE has_page = 1")}
            events = db["events"].count
            srv.script = {pid: list(actions) for pid, actions in zip(ids, FAULTS.values(), strict=True)}
            clock.advance(hours=1)
            report = refresh(db, srv.base, clock=clock, priority=ids, options=FAST)
            failed, rejected = report.failed, report.rejected
            assert report.stored == 0, (report.saved.stored, report.failed, report.rejected)
            assert {r[0]: r for r in db.conn.execute("SELECT * FROM papers WHERE has_page = 1")} == before
            assert db["events"].count == events
            srv.script = {}
        clock.advance(hours=1)
        last = refresh(db, srv.base, clock=clock, priority=ids, options=FAST)
        assert not last.failed and not last.rejected, last.summary()
        assert sorted(last.saved.stored) == ids
    db.close()
    # Each run has its own server port: name it BASE.
    dump = {t: [tuple(v.replace(srv.base, "BASE") if isinstance(v, str) else v for v in row) for row in rows]
            for t, rows in arrival_free_dump(db_path, HISTORY).items()}
    return dump, failed, rejected


def test_faulty_tick_keeps_data_and_the_next_tick_recovers(tmp_path: Path) -> None:
    clean, _, _ = run_ticks(tmp_path / "clean.db", faults=False)
    faulty, failed, rejected = run_ticks(tmp_path / "faulty.db", faults=True)

    reasons = {f.paper_id: f.reason for f in failed} | {r.location.rstrip("/").rsplit("/", 1)[1]: r.reason
                                                       for r in rejected}
    by_fault = dict(zip(FAULTS, sorted(reasons), strict=True))
    assert len(reasons) == len(FAULTS), reasons  # every faulty page skipped, each once
    assert all(reason.strip() for reason in reasons.values())
    assert "redirect" in reasons[by_fault["loop"]].lower()
    assert any(w in reasons[by_fault["png"]].lower() for w in ("binary", "utf-8", "content", "type"))

    # Timestamps aside, the faulty run ends exactly where the clean run does; the failed
    # tick's rejections are cleared by the recovering tick. (Which citations are known at their
    # cited paper's first read is history, like a timestamp: a fault delays a page's first read.)
    assert faulty == clean
    conn = sqlite3.connect(tmp_path / "faulty.db")
    assert conn.execute("SELECT count(*) FROM ingest_errors").fetchone() == (0,)
    cites = conn.execute("SELECT kind, paper_id, citing_id FROM events WHERE kind = 'citation'").fetchall()
    assert len(cites) == len(set(cites))
