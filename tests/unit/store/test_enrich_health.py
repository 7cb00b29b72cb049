"""Enrichment in /healthz and /metrics (feeds/serving/health.py, metrics.py; docs/operations.md,
"Enrichment's health"): each round of `mapwatch run`'s EnrichmentStage is told to both, per
source. A source failing 3 rounds in a row, or failing with no good round for over 24 hours,
makes enrichment (and /healthz's status) "degraded", still 200, naming the source and why; a
round that asked a source nothing counts neither way. Read over HTTP on loopback, /metrics with
prometheus_client's own parser."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from mapwatch.feeds.serving.health import Health
from mapwatch.feeds.serving.metrics import Metrics
from mapwatch.feeds.serving.server import start_server
from mapwatch.service.run import EnrichmentStage, run_all
from mapwatch.service.settings import RunSettings
from mapwatch.store.database.db import open_db
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.scholarly.enrich import EnrichSettings
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.subscriptions import tracking
from tests.metricscheck import Samples, get, parse, scrape, value
from tests.scholarly_fakes import ScholarlyFakes, from_seeds, serve_scholarly
from tests.waiting import async_wait_until

FAST = {s: Politeness(0.01, timeout=1.0, max_retry_after=5.0) for s in POLITENESS}


@pytest.fixture
def fakes(seeded_path: Path) -> Iterator[ScholarlyFakes]:
    db = open_db(seeded_path)
    try:
        data = from_seeds(db)
        papers = db.conn.execute("SELECT count(*) FROM papers").fetchone()[0]
    finally:
        db.close()
    assert papers > 60  # the seeds: more than one arXiv batch of 50 below
    with serve_scholarly(data) as served:
        yield served


@asynccontextmanager
async def served(tmp_path: Path, health: Health, metrics: Metrics) -> AsyncIterator[str]:
    """/healthz and /metrics of a feed server on loopback, as `mapwatch run` serves them."""
    (tmp_path / "public").mkdir(exist_ok=True)
    runner, port = await start_server(tmp_path / "public", "127.0.0.1", 0, health, metrics=metrics)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        await runner.cleanup()


async def healthz(base: str) -> tuple[int, dict[str, Any]]:
    status, _, body = await asyncio.to_thread(get, base + "/healthz")
    return status, json.loads(body)


async def metrics_of(base: str) -> Samples:
    return await asyncio.to_thread(scrape, base)


def stage_of(fakes: ScholarlyFakes, db_path: Path, health: Health, metrics: Metrics, clock: Any,
             sources: tuple[str, ...] = ("arxiv", "openalex"), limit: int = 10_000) -> EnrichmentStage:
    settings = EnrichSettings(sources, fakes.apis(), "team@example.org", politeness=FAST, limit=limit,
                              source_citations="off")
    return EnrichmentStage(db_path, settings, tracking.tracked_paper_ids, health=health, metrics=metrics, clock=clock)


async def one_round(stage: EnrichmentStage) -> None:
    await stage.after_refresh(None)
    assert stage.task is not None
    await asyncio.wait_for(stage.task, 30)


async def test_a_source_failing_three_rounds_in_a_row_makes_enrichment_degraded(
        fakes: ScholarlyFakes, seeded_path: Path, clock, tmp_path: Path) -> None:
    fakes.down("arxiv")  # OpenAlex answers
    health, metrics = Health(seeded_path, clock=clock), Metrics(seeded_path)
    stage = stage_of(fakes, seeded_path, health, metrics, clock)
    async with served(tmp_path, health, metrics) as base:
        status, body = await healthz(base)  # before any round: the sources are known, nothing failed
        assert status == 200 and body["status"] == "ok"
        assert body["enrichment"]["status"] == "ok" and body["enrichment"]["rounds"] == 0
        assert set(body["enrichment"]["sources"]) == {"arxiv", "openalex"}
        before = await metrics_of(base)
        assert value(before, "mapwatch_enrichment_rounds_total", outcome="ok") == 0
        assert value(before, "mapwatch_enrichment_failures_total", source="arxiv", kind="down") == 0
        assert value(before, "mapwatch_enrichment_last_success_timestamp_seconds", source="arxiv") == 0

        # Rounds when arXiv's failed papers are due again: at once, after 1 hour, after 2 more.
        await one_round(stage)
        status, body = await healthz(base)
        arxiv = body["enrichment"]["sources"]["arxiv"]
        assert status == 200 and body["status"] == "ok", body  # one failed round is not yet a trouble
        assert arxiv["failed_rounds"] == 1 and arxiv["last_failure"] == "unavailable (HTTP 503)"
        assert arxiv["due"] > 60 and arxiv["last_success"] is None
        openalex = body["enrichment"]["sources"]["openalex"]
        assert openalex["status"] == "ok" and openalex["last_success"] == "2026-11-01T12:00:00+00:00"
        clock.advance(hours=1)
        await one_round(stage)
        assert (await healthz(base))[1]["status"] == "ok"
        clock.advance(hours=2)
        await one_round(stage)  # OpenAlex was asked nothing in the last two: its last success stays

        status, body = await healthz(base)
        samples = await metrics_of(base)
    assert status == 200  # degraded, not failing: the map, the feeds and the alerts go on without a source
    assert body["status"] == "degraded"
    enrichment = body["enrichment"]
    assert enrichment["status"] == "degraded" and enrichment["rounds"] == 3
    assert enrichment["why"] == ["arxiv: failed 3 rounds in a row, the last: unavailable (HTTP 503)"]
    arxiv, openalex = enrichment["sources"]["arxiv"], enrichment["sources"]["openalex"]
    assert arxiv["status"] == "degraded" and arxiv["failed_rounds"] == 3
    assert arxiv["failing_since"] == "2026-11-01T12:00:00+00:00"
    assert arxiv["last_failure_at"] == "2026-11-01T15:00:00+00:00"
    assert openalex == {"status": "ok", "why": None, "due": 0, "last_success": "2026-11-01T12:00:00+00:00",
                        "failed_rounds": 0, "failing_since": None, "last_failure": None, "last_failure_at": None}
    assert enrichment["last_round"]["at"] == "2026-11-01T15:00:00+00:00" and enrichment["last_round"]["error"] is None

    assert value(samples, "mapwatch_enrichment_rounds_total", outcome="ok") == 3
    assert value(samples, "mapwatch_enrichment_rounds_total", outcome="failed") == 0
    assert value(samples, "mapwatch_enrichment_failures_total", source="arxiv", kind="down") == 3
    assert value(samples, "mapwatch_enrichment_failures_total", source="arxiv", kind="bad_answer") == 0
    assert value(samples, "mapwatch_enrichment_failures_total", source="openalex", kind="down") == 0
    assert value(samples, "mapwatch_enrichment_last_success_timestamp_seconds", source="arxiv") == 0
    assert value(samples, "mapwatch_enrichment_last_success_timestamp_seconds",
                 source="openalex") == clock.now.replace(hour=12).timestamp()
    assert value(samples, "mapwatch_enrichment_papers_due", source="arxiv") == arxiv["due"]
    assert value(samples, "mapwatch_enrichment_papers_due", source="openalex") == 0
    assert value(samples, "mapwatch_enrichment_round_duration_seconds") > 0

    # The source back: one good round and enrichment is ok again.
    fakes.fault["arxiv"] = None
    clock.advance(hours=4)
    await one_round(stage)
    again = health.enrichment
    assert again is not None and again.shown(clock())["status"] == "ok"
    assert again.sources["arxiv"].failed_rounds == 0


async def test_a_source_failing_with_no_good_round_for_a_day_makes_enrichment_degraded(
        fakes: ScholarlyFakes, seeded_path: Path, clock, tmp_path: Path) -> None:
    """One failed round is enough when the last good one is more than 24 hours old (a daily
    refresh, say): arXiv answers for the first 50 papers, then is down when the rest come due."""
    health, metrics = Health(seeded_path, clock=clock), Metrics(seeded_path)
    stage = stage_of(fakes, seeded_path, health, metrics, clock, sources=("arxiv",), limit=50)
    await one_round(stage)
    fakes.down("arxiv")
    clock.advance(hours=25)
    await one_round(stage)
    async with served(tmp_path, health, metrics) as base:
        status, body = await healthz(base)
        samples = await metrics_of(base)
    assert status == 200 and body["status"] == "degraded"
    assert body["enrichment"]["why"] == [
        "arxiv: failing, and no good round for 25 hours; the last: unavailable (HTTP 503)"]
    assert body["enrichment"]["sources"]["arxiv"]["failed_rounds"] == 1
    assert value(samples, "mapwatch_enrichment_last_success_timestamp_seconds",
                 source="arxiv") == clock.now.replace(day=1, hour=12).timestamp()
    assert value(samples, "mapwatch_enrichment_failures_total", source="arxiv", kind="down") == 1


async def test_a_round_that_raises_is_counted_and_shown(seeded_path: Path, clock, tmp_path: Path) -> None:
    health, metrics = Health(seeded_path, clock=clock), Metrics(seeded_path)
    settings = EnrichSettings(("s2",), {"s2": "http://127.0.0.1:9/graph/v1"}, politeness=FAST)

    def tracked(_db: object) -> list[str]:
        raise RuntimeError("the tracked papers could not be read")

    stage = EnrichmentStage(seeded_path, settings, tracked, health=health, metrics=metrics, clock=clock)
    await one_round(stage)  # the round raises before asking anything (logged)
    async with served(tmp_path, health, metrics) as base:
        status, body = await healthz(base)
        samples = await metrics_of(base)
    assert status == 200 and body["status"] == "degraded"
    assert body["enrichment"]["why"] == ["the last round failed: RuntimeError: the tracked papers could not be read"]
    assert body["enrichment"]["sources"]["s2"]["failed_rounds"] == 0  # no source's fault
    assert value(samples, "mapwatch_enrichment_rounds_total", outcome="failed") == 1
    assert value(samples, "mapwatch_enrichment_rounds_total", outcome="ok") == 0


async def test_run_tells_health_and_metrics_of_each_round(fakes: ScholarlyFakes, tmp_path: Path) -> None:
    """`mapwatch run`'s wiring (run_all): every source down, the first tick's round is in both."""
    fakes.down()
    stop = asyncio.Event()
    said: list[str] = []
    health = Health(tmp_path / "m.db")
    enrich = EnrichSettings(("arxiv", "openalex", "s2"), fakes.apis(), "team@example.org", politeness=FAST)
    settings = RunSettings(db_path=tmp_path / "m.db", source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0,
                           refresh="1h", enrich=enrich, before_alerts=0.0)
    task = asyncio.create_task(run_all(settings, say=said.append, stop=stop, health=health))
    try:
        await async_wait_until(lambda: health.enrichment is not None and health.enrichment.rounds >= 1, 30,
                               what="the first enrichment round")
        base = next(s for s in said if s.startswith("Feeds: ")).split()[1].rstrip("/")
        status, body = await healthz(base)
        samples = await metrics_of(base)
    finally:
        stop.set()
        await asyncio.wait_for(task, 15)
    assert status == 200
    sources = body["enrichment"]["sources"]
    # Semantic Scholar had nothing due (no tracked paper): asked nothing, it neither failed nor succeeded.
    assert {s: sources[s]["last_failure"] for s in sources} == {
        "arxiv": "unavailable (HTTP 503)", "openalex": "unavailable (HTTP 503)", "s2": None}
    for source, failed in (("arxiv", 1), ("openalex", 1), ("s2", 0)):
        assert value(samples, "mapwatch_enrichment_failures_total", source=source, kind="down") == failed
        assert value(samples, "mapwatch_enrichment_last_success_timestamp_seconds", source=source) == 0
    assert value(samples, "mapwatch_enrichment_rounds_total", outcome="ok") == 1
    assert value(samples, "mapwatch_enrichment_papers_due", source="arxiv") > 0


def test_the_metrics_text_parses_with_enrichment_series() -> None:
    """Before any round, as after: prometheus_client's parser reads the exposition."""
    metrics = Metrics(None)
    assert not [k for k in parse(metrics.render().decode()) if k[0].startswith("mapwatch_enrichment")]
    metrics.watch_enrichment(("arxiv", "s2"))
    samples = parse(metrics.render().decode())
    assert value(samples, "mapwatch_enrichment_failures_total", source="s2", kind="bound") == 0
    assert value(samples, "mapwatch_enrichment_papers_due", source="arxiv") == 0
