"""GET /metrics (feeds/serving/metrics.py): the exposition parses with prometheus_client's parser and
its counters move with what the process does: a refresh tick over HTTP from a live map site,
feed and page requests (304s too), on-demand builds; JSON log lines."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

from mapwatch.feeds.serving.health import Health
from mapwatch.feeds.serving.metrics import Metrics, request_kind
from mapwatch.log_format import JsonFormatter, TextFormatter
from mapwatch.service.services import RunConfig, run_services
from mapwatch.store.sources.http_client import status_label
from tests.mapsite import MapSite, seed_texts, serve_site
from tests.metricscheck import get, parse, scrape, value
from tests.waiting import async_wait_until


async def test_metrics_move_with_ticks_requests_and_builds(tmp_path: Path) -> None:
    said: list[str] = []
    stop = asyncio.Event()
    db_path = tmp_path / "m.db"
    health = Health(db_path)
    metrics = Metrics(db_path, health)
    with serve_site(MapSite(pages=seed_texts())) as site:
        config = RunConfig(db_path=db_path, source=site.base, out_dir=tmp_path / "out", port=0, refresh="1h")
        task = asyncio.create_task(run_services(config, say=said.append, stop=stop, health=health, metrics=metrics))
        try:
            await async_wait_until(lambda: any(s.startswith("Feeds: ") for s in said), 20,
                                   what="the run to say where its feeds are")
            base = next(s for s in said if s.startswith("Feeds: ")).split()[1]
            await async_wait_until(lambda: value(parse(metrics.render().decode()), "mapwatch_refresh_ticks_total",
                                                 outcome="ok") == 1, 20, what="the first tick in /metrics")
            before = await asyncio.to_thread(scrape, base)
            # the tick: pages fetched and stored from the site, its statuses, the sitemap's URLs
            assert value(before, "mapwatch_refresh_ticks_total", outcome="failed") == 0
            assert value(before, "mapwatch_refresh_duration_seconds_count") == 1
            assert value(before, "mapwatch_pages_fetched_total") >= 2
            assert value(before, "mapwatch_pages_stored_total") >= 2
            assert value(before, "mapwatch_pages_rejected_total") == 0
            assert value(before, "mapwatch_source_responses_total", code="200") >= 3  # robots, sitemaps, pages
            assert value(before, "mapwatch_source_requests_total") >= 3
            assert value(before, "mapwatch_sitemap_urls_seen_total") >= 2
            assert value(before, "mapwatch_last_refresh_success_timestamp_seconds") > 1.7e9
            assert value(before, "mapwatch_database_size_bytes") > 0
            assert value(before, "mapwatch_bot_state", state="off") == 1
            assert value(before, "mapwatch_replica_lag_seconds") is None  # no replica given: no series
            # feed requests, one answered 304
            status, headers, _ = await asyncio.to_thread(get, base + "feeds.opml")
            assert status == 200
            status, _, _ = await asyncio.to_thread(get, base + "feeds.opml", {"If-None-Match": headers["ETag"]})
            assert status == 304
            status, _, _ = await asyncio.to_thread(get, base)
            assert status == 200
            # a paper's feed built on demand (not tracked: not published)
            status, _, _ = await asyncio.to_thread(get, base + "feeds/papers/2412.10400.atom")
            assert status == 200
            after = await asyncio.to_thread(scrape, base)
        finally:
            stop.set()
            await asyncio.wait_for(task, 10)
    assert value(after, "mapwatch_http_requests_total", kind="feed") - value(
        before, "mapwatch_http_requests_total", kind="feed") == 3
    assert value(after, "mapwatch_http_not_modified_total", kind="feed") - value(
        before, "mapwatch_http_not_modified_total", kind="feed") == 1
    assert value(after, "mapwatch_http_requests_total", kind="page") - value(
        before, "mapwatch_http_requests_total", kind="page") == 1
    assert value(after, "mapwatch_ondemand_builds_total", kind="feed") == 1
    assert value(after, "mapwatch_http_requests_total", kind="other") > value(  # the first /metrics
        before, "mapwatch_http_requests_total", kind="other")


async def test_a_failed_tick_is_counted(tmp_path: Path) -> None:
    said: list[str] = []
    stop = asyncio.Event()
    db_path = tmp_path / "m.db"
    metrics = Metrics(db_path)
    # a source folder that is not there: the tick raises FetchError (logged, the next tick still runs)
    config = RunConfig(db_path=db_path, source=str(tmp_path / "no such folder"), out_dir=tmp_path / "out", port=0,
                       refresh="1h")
    task = asyncio.create_task(run_services(config, say=said.append, stop=stop, metrics=metrics))
    try:
        await async_wait_until(lambda: sum(value(parse(metrics.render().decode()), "mapwatch_refresh_ticks_total",
                                                 outcome=o) or 0 for o in ("ok", "failed")) >= 1, 20,
                               what="a tick, ok or failed, in /metrics")
    finally:
        stop.set()
        await asyncio.wait_for(task, 10)
    samples = parse(metrics.render().decode())
    assert value(samples, "mapwatch_refresh_ticks_total", outcome="failed") == 1
    assert value(samples, "mapwatch_refresh_ticks_total", outcome="ok") == 0
    assert value(samples, "mapwatch_refresh_duration_seconds_count") == 1
    assert value(samples, "mapwatch_pages_stored_total") == 0
    assert value(samples, "mapwatch_last_refresh_success_timestamp_seconds") == 0  # never succeeded


def test_replica_lag_gauge_and_a_failing_lag_function() -> None:
    samples = parse(Metrics(None, replica_lag=lambda: 2.5).render().decode())
    assert value(samples, "mapwatch_replica_lag_seconds") == 2.5

    def broken() -> float:
        raise OSError("replica unreachable")

    samples = parse(Metrics(None, replica_lag=broken).render().decode())  # the scrape still answers
    assert value(samples, "mapwatch_replica_lag_seconds") is None


def test_two_registries_do_not_mix() -> None:
    a, b = Metrics(None), Metrics(None)
    a.request("/feeds.opml", 304)
    assert value(parse(a.render().decode()), "mapwatch_http_not_modified_total", kind="feed") == 1
    assert value(parse(b.render().decode()), "mapwatch_http_not_modified_total", kind="feed") == 0


def test_labels_stay_few() -> None:
    """No paper id reaches a label: a hostile site's odd statuses fold into their class."""
    assert {request_kind(p) for p in ("/feeds/papers/2412.10400.atom", "/papers/2412.10400/", "/x.png",
                                      "/feeds.opml", "/index.html")} == {"feed", "page", "other"}
    assert [status_label(s) for s in (200, 304, 404, 299, 418, 599, 999)] == [
        "200", "304", "404", "2xx", "4xx", "5xx", "other"]


def _record(msg: str, *args: object, exc: BaseException | None = None) -> logging.LogRecord:
    exc_info = (type(exc), exc, exc.__traceback__) if exc else None
    return logging.LogRecord("mapwatch.bot", logging.ERROR, __file__, 1, msg, args, exc_info)


def test_json_log_lines_hold_the_exception_and_never_the_token(monkeypatch) -> None:
    token = "secret-token-abcdef123456"
    monkeypatch.setenv("DISCORD_TOKEN", token)
    try:
        raise ValueError(f"bad {token}\nsecond line")
    except ValueError as e:
        error = e
    line = JsonFormatter().format(_record("login with %s failed", token, exc=error))
    assert "\n" not in line
    entry = json.loads(line)
    assert set(entry) == {"time", "level", "logger", "message", "exception"}
    assert entry["level"] == "ERROR" and entry["logger"] == "mapwatch.bot"
    assert entry["message"] == "login with [DISCORD_TOKEN] failed"
    assert "ValueError: bad [DISCORD_TOKEN]" in entry["exception"] and "Traceback" in entry["exception"]
    assert entry["time"].endswith("+00:00")
    assert token not in line
    assert token not in TextFormatter().format(_record("login with %s failed", token, exc=error))
