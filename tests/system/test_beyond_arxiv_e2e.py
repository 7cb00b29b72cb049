"""End to end: `mapwatch run` (run_all) against the fake Discord and a loopback fake of OpenAlex.
A journal article OpenAlex lists as citing the tracked survey is alerted once, linked by its DOI
and named with its venue; `/paper <DOI>` and `/citers` show it. Restarted, with OpenAlex now
listing the same work's arXiv version and a second journal citer, the next alert names the
second only: the merged work is one citer, and nobody is alerted about it again."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

from mapwatch.service.run import run_all
from mapwatch.service.settings import RunSettings
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.records import OpenAlexWork
from mapwatch.store.scholarly.enrich import EnrichSettings
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions import tracking
from tests import openapi_check
from tests.fakediscord import FakeDiscord
from tests.scholarly_fakes import ScholarlyFakes, journal_work, serve_scholarly
from tests.waiting import async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]

SURVEY, SURVEY_WORK = "2412.10400", "W4405000000"
DOI, SECOND = "10.1016/j.jrs.2026.01.002", "10.1145/3711111.3722222"
ARXIV_VERSION = "2611.00077"


def _settings(db_path: Path, tmp_path: Path, fake: FakeDiscord, fakes: ScholarlyFakes) -> RunSettings:
    politeness = {s: Politeness(0.01, timeout=20.0) for s in POLITENESS}
    enrich = EnrichSettings(("openalex",), fakes.apis(), "team@example.org", politeness=politeness)
    return RunSettings(db_path=db_path, source=str(SEEDS_DIR), out_dir=tmp_path / "out", port=0, refresh="1h",
                       enrich=enrich, before_alerts=5.0, token=fake.token, alert_interval=0.2,
                       client_kwargs={"guild_ready_timeout": 0.05})


def _merged(db_path: Path) -> bool:
    db = open_db(db_path)
    try:
        return db.conn.execute("SELECT 1 FROM paper_aliases WHERE alias = ?", [DOI]).fetchone() is not None
    finally:
        db.close()


async def test_a_journal_citer_is_alerted_once_and_its_arxiv_version_is_not_news(
        fake_discord: FakeDiscord, tmp_path: Path, clock) -> None:
    fake = fake_discord
    db_path = tmp_path / "m.db"
    db = open_db(db_path)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    save_openalex(db, [OpenAlexWork(SURVEY, SURVEY_WORK, (), None, None)], [SURVEY], clock())
    channel = fake.guild.channel("alerts").id
    tracking.add_track(db, guild_id=fake.guild.id, channel_id=channel, user_id=None, paper_id=SURVEY,
                       created_by=fake.user.id, now=clock())
    db.close()
    today = datetime.now(UTC).date().isoformat()  # (the service runs on the real clock)
    fakes = ScholarlyFakes()
    fakes.new_works[today] = [journal_work(DOI, "W900", "Reward Models in the Wild", 2026, [SURVEY_WORK])]
    with serve_scholarly(fakes):
        stop = asyncio.Event()
        task = asyncio.create_task(run_all(_settings(db_path, tmp_path, fake, fakes), say=lambda _: None, stop=stop))
        try:
            [first] = await fake.wait_channel_messages(channel, 1, timeout=60)
            paper = await (await fake.slash("paper", {"paper": f"https://doi.org/{DOI}"})).wait_message()
            listed = await (await fake.slash("citers", {"paper": SURVEY, "direction": "", "sort": "newest"})
                            ).wait_message()
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)
        desc = first.embed["description"]
        assert first.embed["title"].endswith(": 1 new citer")
        assert f"(https://doi.org/{DOI})" in desc and "in Journal of Reward Studies" in desc and "Ana Lima" in desc
        assert paper.embed["title"] == "Reward Models in the Wild"
        assert f"DOI [{DOI}](https://doi.org/{DOI})" in paper.embed["description"]
        assert listed.embed["description"].count(f"`{DOI}`") == 1  # one line (its id once)

        # OpenAlex merges the work's arXiv version into it, and lists a second journal citer.
        fakes.new_works[today] = [
            journal_work(DOI, "W900", "Reward Models in the Wild", 2026, [SURVEY_WORK], arxiv_id=ARXIV_VERSION),
            journal_work(SECOND, "W901", "A Second Journal Citer", 2026, [SURVEY_WORK], venue="KDD")]
        db = open_db(db_path)
        with db.atomic():  # asked again now, not in an hour
            db.conn.execute("DELETE FROM recent_citers_asked")
        db.close()
        stop = asyncio.Event()
        task = asyncio.create_task(run_all(_settings(db_path, tmp_path, fake, fakes), say=lambda _: None, stop=stop))
        try:
            [_, second] = await fake.wait_channel_messages(channel, 2, timeout=60)
            await async_wait_until(lambda: _merged(db_path), 30, what="the journal citer merged into its arXiv version")
        finally:
            stop.set()
            await asyncio.wait_for(task, 15)
    assert _merged(db_path)
    desc = second.embed["description"]
    assert second.embed["title"].endswith(": 1 new citer") and SECOND in desc and "in KDD" in desc
    assert ARXIV_VERSION not in desc and DOI not in desc  # the same work: not news again
    assert len(fake.requests_to("POST", f"/channels/{channel}/messages")) == 2
    assert openapi_check.recorded_errors(fake.requests) == []
