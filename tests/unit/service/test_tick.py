"""The tick of `mapwatch run` (mapwatch/service/tick.py), its parts as `run` builds them, on a real
database and the bundled seeds: the tracked papers are read once and handed on (the refresh
fetches them first, the enrichment step gets them in the tick's result), and the directions'
ranks are a step of the tick, not of the store's refresh."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mapwatch.feeds.tick_report import TickResult
from mapwatch.service.tick import Publish, Refresh, Tick
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.questions import graph
from mapwatch.store.subscriptions.tracking import add_track, tracked_paper_ids
from tests.conftest import FakeClock

SURVEY = "2412.10400"


def test_a_tick_reads_the_tracked_papers_once_and_ranks_the_directions(tmp_path: Path, clock: FakeClock) -> None:
    db_path = tmp_path / "m.db"
    db = open_db(db_path)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # (`mapwatch ingest` computes no ranks)
    add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=SURVEY, created_by=3, now=clock())
    assert db.conn.execute("SELECT count(*) FROM direction_ranks").fetchone() == (0,)
    db.close()
    reads: list[tuple[str, ...]] = []
    seen: list[TickResult] = []

    def tracked(d: object) -> list[str]:
        ids = tracked_paper_ids(d)  # type: ignore[arg-type]
        reads.append(tuple(ids))
        return ids

    async def enrich(result: TickResult) -> None:
        seen.append(result)

    tick = Tick(db_path, Refresh(str(SEEDS_DIR), priority=tracked), Publish(tmp_path / "out", "http://feeds.example"),
                enrich=enrich, nice=None)
    try:
        result = asyncio.run(tick.run(clock()))
    finally:
        tick.close()
    assert reads == [(SURVEY,)]  # read once, by the refresh
    assert seen == [result] and result.tracked == (SURVEY,)  # handed to the enrichment step
    db = open_db(db_path)
    try:
        ranked = graph.direction_ranks(db, "lr/reinforcement-learning-for-reasoning")
        assert [p.paper.id for p in ranked.papers] == [SURVEY, "2507.04136"]  # the tick's ranks step
        assert ranked.computed_at == clock().isoformat(timespec="seconds")
    finally:
        db.close()
