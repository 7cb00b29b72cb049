"""`mapwatch run` with every scholarly source down or hanging: it serves, refreshes and alerts
as before, and says once per round which source is down (issue 29)."""

from __future__ import annotations

import asyncio
import logging
import urllib.request
from pathlib import Path

import pytest

from mapwatch.service.run import run_all
from mapwatch.service.settings import RunSettings
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.environment import Environment
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.scholarly.enrich import EnrichSettings
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.subscriptions import tracking
from tests.fakediscord import FakeDiscord
from tests.scholarly_fakes import ScholarlyFakes, serve_scholarly
from tests.waiting import async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]
SOURCES = ("arxiv", "openalex", "s2")


def _get(url: str) -> int:
    with urllib.request.urlopen(url, timeout=5) as r:
        return r.status


@pytest.mark.parametrize("fault", ["down", "slow"])
async def test_run_with_every_source_down_still_refreshes_and_alerts(
        fake_discord: FakeDiscord, tmp_path: Path, make_older_seeds, clock, caplog: pytest.LogCaptureFixture,
        fault: str) -> None:
    caplog.set_level(logging.INFO, logger="mapwatch.enrich")
    db_path = tmp_path / "m.db"
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    alerts = fake_discord.guild.channel("alerts")
    tracking.add_track(db, guild_id=fake_discord.guild.id, channel_id=alerts.id, user_id=None,
                       paper_id="2412.10400", created_by=fake_discord.user.id, now=clock())
    db.close()
    fakes = ScholarlyFakes(slow_seconds=60.0)
    fakes.down(how=fault)
    with serve_scholarly(fakes):
        politeness = {s: Politeness(0.01, timeout=30.0 if fault == "slow" else 2.0) for s in POLITENESS}
        enrich = EnrichSettings(SOURCES, fakes.apis(), "team@example.org", politeness=politeness)
        said: list[str] = []
        stop = asyncio.Event()
        settings = RunSettings(db_path=db_path, source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0,
                               refresh="2s", enrich=enrich, before_alerts=1.0, token=fake_discord.token,
                               alert_interval=0.2, client_kwargs={"guild_ready_timeout": 0.05})
        task = asyncio.create_task(run_all(settings, say=said.append, stop=stop))
        try:
            # The first tick's refresh stores the newer seeds and the alert goes out, sources or not:
            # the sources get a second before the alerts, then the alerts go out without them.
            msgs = await fake_discord.wait_channel_messages(alerts.id, 1, timeout=30)
            assert "3 new citers" in msgs[0].embed["title"]
            index = next(s for s in said if s.startswith("Feeds: ")).split()[1]
            assert await asyncio.to_thread(_get, index + "feeds/papers/2412.10400.atom") == 200
            if fault == "down":
                # Rounds end at once: one line per source and round, then a summary.
                await async_wait_until(lambda: sum(r.getMessage().startswith("enrichment: arxiv:")
                                                   for r in caplog.records) >= 2, 20,
                                       what="two enrichment rounds' summaries")
            else:
                await async_wait_until(lambda: len(fakes.requests) >= 3, 20,
                                       what="a request to every source (none answering)")
                # Time passing is the point: another tick (2 s) comes and starts no round beside the hanging one.
                await asyncio.sleep(2.5)  # on purpose: see above
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)  # the hanging round is cancelled, not awaited
    messages = [r.getMessage() for r in caplog.records if r.name == "mapwatch.enrich"]
    rounds: list[list[str]] = [[]]  # the lines of each round, which ends with its summary
    for m in messages:
        rounds[-1].append(m)
        if m.startswith("enrichment: arxiv:"):
            rounds.append([])
    if fault == "down":
        assert len(rounds) >= 3, messages
        for lines in rounds:  # a source down is said once a round, not once a paper or batch
            for s in SOURCES:
                assert sum(m.startswith(f"enrichment: {s} is unavailable this round") for m in lines) <= 1, lines
        first = rounds[0]
        for s in SOURCES:
            assert f"enrichment: {s} is unavailable this round (HTTP 503); the map, feeds and alerts go on, " \
                   "enrichment resumes next round" in first
        # The second round asks only what the first did not reach (the failed are asked after an hour).
        assert [m for m in rounds[1] if "is unavailable this round" in m] == [
            "enrichment: openalex is unavailable this round (HTTP 503); the map, feeds and alerts go on, "
            "enrichment resumes next round"]
    else:
        assert not any("unavailable" in m for m in messages)  # still waiting when the process stopped
        assert any("the last round is still running" in m for m in messages), messages
        # One request each before the first tick's alerts (left at the bound), and one each of the
        # hanging round, the only one: later ticks had no new citers to ask about.
        assert len(fakes.requests) == 6
        late = [m for m in messages if m.startswith("before alerts: ") and "still answering after 1 s" in m]
        assert sorted(m.split()[2] for m in late) == sorted(SOURCES), messages  # once per source and tick
    assert len(fake_discord.requests_to("POST", f"/channels/{alerts.id}/messages")) == 1


async def test_run_with_enrichment_off_adds_nothing(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mapwatch.enrich")
    stop = asyncio.Event()
    said: list[str] = []
    enrich = EnrichSettings.from_environment(Environment.read())  # MAPWATCH_ENRICH=off (conftest)
    settings = RunSettings(db_path=tmp_path / "m.db", source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0,
                           enrich=enrich)
    task = asyncio.create_task(run_all(settings, say=said.append, stop=stop))
    await async_wait_until(lambda: any(s.startswith("Refreshing from") for s in said), 20,
                           what="the first refresh to start")
    await asyncio.sleep(0.5)  # on purpose: the run goes on a while, and enrichment (off) adds nothing meanwhile
    stop.set()
    await asyncio.wait_for(task, 10)
    assert not [r for r in caplog.records if r.name == "mapwatch.enrich"]
