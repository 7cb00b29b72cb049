"""Hardening of the HTTP crawl (issue 21): robots.txt checks do not re-read the package
metadata, and a tick has an overall deadline (what is left waits for the next tick)."""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from aiohttp import web

from mapwatch.store.environment import Environment
from mapwatch.store.pages.format import format_page
from mapwatch.store.sources.http_client import Deadline, HttpOptions, user_agent
from mapwatch.store.sources.refresh import refresh
from tests import pagegen
from tests.mapsite import MapSite, seed_texts, serve_site
from tests.sourceserver import serve_in_thread


def test_robots_checks_read_the_package_metadata_at_most_once(db, clock, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each page the crawl queues is checked against robots.txt with mapwatch's User-Agent;
    that name was rebuilt from the package metadata for every check (1.4 ms a URL)."""
    calls: list[str] = []
    real = importlib.metadata.version

    def counting(name: str) -> str:
        calls.append(name)
        return real(name)

    monkeypatch.setattr(importlib.metadata, "version", counting)
    texts = {**seed_texts(), **{p.id: format_page(p) for p in pagegen.generate(30).v1}}
    with serve_site(MapSite(pages=texts, disallow=["/paper/2507.04136/"])) as site:
        budget = 40 + len(site.directions())  # (direction pages spend the budget too)
        report = refresh(db, site.base, clock=clock, options=HttpOptions(budget=budget, backoff=0.01))
    assert report.crawl.robots_skipped == 1 and report.pages_read >= 30  # every queued page was checked
    assert len(calls) <= 1, f"the metadata was read {len(calls)} times"
    assert user_agent() == user_agent() and user_agent().startswith("mapwatch/")


# --- the tick's deadline ------------------------------------------------------------------------

class SlowSite:
    """The seeds at /paper/<id>/; the ids in `wait` answer 503 with `Retry-After: 100` (and, with
    `delay` set, robots.txt asks for that Crawl-delay)."""

    def __init__(self, wait: set[str], delay: int | None = None) -> None:
        self.texts = seed_texts()
        self.wait = wait
        self.delay = delay
        self.paths: list[str] = []

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.paths.append(request.path)
        if request.path == "/robots.txt":
            if self.delay is None:
                raise web.HTTPNotFound()
            return web.Response(text=f"User-agent: *\nCrawl-delay: {self.delay}\n")
        pid = request.path.removeprefix("/paper/").rstrip("/")
        if pid in self.wait:
            return web.Response(status=503, headers={"Retry-After": "100"})
        if pid not in self.texts:
            raise web.HTTPNotFound()
        return web.Response(text=self.texts[pid], content_type="text/plain")

    def pages_asked(self) -> list[str]:
        return [p for p in self.paths if p.startswith("/paper/")]


@contextmanager
def slow_site(site: SlowSite) -> Iterator[str]:
    with serve_in_thread(lambda app: app.router.add_get("/{path:.*}", site.handle)) as base:
        yield base


def test_a_tick_stops_at_its_deadline_and_the_next_tick_takes_what_was_left(db, clock) -> None:
    slow = "2507.04136"
    site = SlowSite({slow})
    with slow_site(site) as base:
        # Retry-After: 100 is honoured (up to 120 s, 3 retries): without a deadline, 300 s for one page.
        report = refresh(db, base, clock=clock, options=HttpOptions(deadline=1.5, concurrency=2))
        assert report.stored == 1 and report.failed_total == 0  # the other page's batch is stored
        assert report.crawl.over_budget == 1 and "1 left for the next tick" in report.summary()
        assert any("tick deadline of 1.5 s reached: 1 pages left for the next tick" in n for n in report.notes)
        assert db.conn.execute("SELECT checked_at FROM sources WHERE location = ?",
                               (f"{base}/paper/{slow}/",)).fetchone() is None  # not marked checked
        site.wait.clear()
        site.paths.clear()
        clock.advance(hours=1)
        again = refresh(db, base, clock=clock, options=HttpOptions(deadline=60, concurrency=1))
        assert f"/paper/{slow}/" in site.pages_asked()  # never checked: among the first of its group
        assert again.stored == 1 and again.crawl.over_budget == 0 and not again.notes
    assert db.conn.execute("SELECT has_page FROM papers WHERE id = ?", (slow,)).fetchone() == (1,)


def test_a_crawl_delay_cannot_stretch_a_tick_past_its_deadline(db, clock) -> None:
    site = SlowSite(set(), delay=30)  # 30 s between requests: two pages, 30 s
    with slow_site(site) as base:
        report = refresh(db, base, clock=clock, options=HttpOptions(deadline=1.0, concurrency=1))
    assert report.stored == 1 and report.crawl.over_budget == 1 and len(site.pages_asked()) == 1


def test_the_deadline_comes_from_the_environment(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    from mapwatch.cli import main

    assert HttpOptions().deadline is None and Deadline(None).seconds == 1800  # 30 minutes by default
    assert Environment.read({}).deadline_seconds() == 1800
    site = SlowSite({"2507.04136"})
    with slow_site(site) as base:
        monkeypatch.setenv("MAPWATCH_TICK_DEADLINE", "1")
        code = main(["refresh", "--db", str(tmp_path / "m.db"), "--source", base, "--out", str(tmp_path / "out")])
        out, err = capsys.readouterr()
        assert code == 0 and "1 stored" in out and "1 left for the next tick" in out, (out, err)
        assert "note: tick deadline of 1 s reached: 1 pages left for the next tick" in err
        for bad in ("soon", "0", "-5", "1e9"):
            monkeypatch.setenv("MAPWATCH_TICK_DEADLINE", bad)
            assert main(["refresh", "--db", str(tmp_path / "m.db"), "--source", base]) == 2
            out, err = capsys.readouterr()
            assert err.strip().splitlines() == [f"mapwatch: error: $MAPWATCH_TICK_DEADLINE must be seconds "
                                                f"(more than 0, at most 86400), not {bad!r}"]
