"""Crash safety of alert delivery: `mapwatch run` (pointed at the fake Discord of this test
process) killed with SIGKILL at random moments while it posts alerts, then restarted on the
same database until nothing is pending.

60 tracks (30 generated papers, two channels) and two waves of new citations (the second
lands in the middle of the kills, as a refresh from another process). After every kill the
database passes `integrity_check`; at the end every track's alerts, as Discord created them
(a repeated enforced nonce returns the first message), cover consecutive event ranges, each
announcing exactly its range's citers: no alert sent twice, none lost.

The first kill always waits for the run's first posts (the fake Discord counts them), so it
lands while alerts are being posted whatever the machine's speed; at least one kill must
land so: after the run posted, with alerts still pending.

CI: 4 kills. Long form: `ALERT_KILLS=40 python -m pytest -m slow -s tests/system/test_crash_alerts.py`.
"""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.subscriptions import tracking
from tests import pagegen
from tests.fakediscord import FakeDiscord
from tests.system.test_discord_faults import check_exactly_once, cursors, delivered, pending
from tests.waiting import async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]

ROOT = Path(__file__).resolve().parents[2]
TRACKED = 30


async def _setup(fake: FakeDiscord, tmp: Path, clock) -> tuple[Path, list[Path]]:
    corpus = pagegen.generate(150, seed=5)
    pagegen.write(tmp / "v1", corpus.v1)
    half = len(corpus.v2) // 2
    waves = [tmp / "wave-a", tmp / "wave-b"]
    pagegen.write(waves[0], corpus.v2[half:])  # citing pages first: the tracked papers' own pages later
    pagegen.write(waves[1], corpus.v2[:half])
    (tmp / "nothing").mkdir()
    db_path = tmp / "m.db"
    db = open_db(db_path)
    ingest_paths(db, [tmp / "v1"], clock=clock)
    for ch in (fake.guild.channel("alerts"), fake.channel):
        for i in range(TRACKED):
            tracking.add_track(db, guild_id=fake.guild.id, channel_id=ch.id, user_id=None,
                               paper_id=pagegen.paper_id(i), created_by=fake.user.id, now=clock())
    db.close()
    return db_path, waves


def _start(fake: FakeDiscord, tmp: Path, db_path: Path, log: Path) -> subprocess.Popen:
    env = {**os.environ, **fake.env(), "MAPWATCH_ALERT_INTERVAL": "0.2"}
    with log.open("a") as out:
        return subprocess.Popen([sys.executable, "-m", "mapwatch", "run", "--db", str(db_path), "--source",
                                 str(tmp / "nothing"), "--out", str(tmp / "out"), "--port", "0"],
                                cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)


def _ingest(db_path: Path, folder: Path, clock) -> None:
    clock.advance(days=1)
    db = open_db(db_path)
    try:
        ingest_paths(db, [folder], clock=clock)
    finally:
        db.close()


def _check_db(db_path: Path) -> None:
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


async def kill_loop(fake: FakeDiscord, tmp: Path, clock, kills: int, seed: int) -> dict[str, int]:
    rng = random.Random(seed)
    db_path, waves = await _setup(fake, tmp, clock)
    start = {tid: c for tid, (c, _) in cursors(db_path).items()}
    await asyncio.to_thread(_ingest, db_path, waves[0], clock)
    expected_first = await asyncio.to_thread(pending, db_path)
    assert expected_first >= 4
    log = tmp / "run.log"
    posts = fake.requests_to
    figures = {"kills": 0, "kills_while_posting": 0}
    for k in range(kills):
        if k == kills // 2:
            await asyncio.to_thread(_ingest, db_path, waves[1], clock)  # a refresh elsewhere, meanwhile
        before = len(posts("POST", "/channels/*/messages"))
        waiting = await asyncio.to_thread(pending, db_path)
        proc = _start(fake, tmp, db_path, log)
        try:
            # While posting (the first kill always, so that one lands there on any machine):
            # after a random number of further posts, leaving some unsent.
            if waiting and (k == 0 or rng.random() < 0.7):
                target = before + rng.randint(1, max(1, waiting - 1))
                await fake.wait_for(lambda t=target, p=proc: len(posts("POST", "/channels/*/messages")) >= t
                                    or p.poll() is not None, 30)
            else:  # anywhere from start-up on
                await asyncio.sleep(rng.uniform(0.1, 3.0))  # on purpose: a random moment
        except TimeoutError:  # nothing left to post: the kill lands between ticks
            pass
        finally:
            proc.kill()  # SIGKILL
            await asyncio.to_thread(proc.wait)
        figures["kills"] += 1
        if len(posts("POST", "/channels/*/messages")) > before and await asyncio.to_thread(pending, db_path):
            figures["kills_while_posting"] += 1  # this run had posted, and had more to post
        await asyncio.to_thread(_check_db, db_path)
        check_exactly_once(fake, db_path, start, settled=False)
    if kills < 2:
        await asyncio.to_thread(_ingest, db_path, waves[1], clock)
    proc = _start(fake, tmp, db_path, log)  # the last run: until nothing is pending
    try:
        def settled() -> bool:
            if not pending(db_path):
                return True
            assert proc.poll() is None, log.read_text()[-3000:]
            return False

        await async_wait_until(lambda: asyncio.to_thread(settled), 60, what="every alert sent (none pending)",
                               interval=0.2)
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, 20)
    check_exactly_once(fake, db_path, start)
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
    figures["alerts"] = sum(len(u) for u in delivered(fake).values())
    figures["posts"] = len(posts("POST", "/channels/*/messages"))
    figures["resends_dropped_by_nonce"] = fake.nonce_repeats
    assert figures["alerts"] > expected_first  # the second wave too
    return figures


async def test_alert_delivery_killed_at_random_moments(fake_discord: FakeDiscord, tmp_path: Path, clock) -> None:
    started = time.monotonic()
    fig = await kill_loop(fake_discord, tmp_path, clock, kills=4, seed=int(os.environ.get("ALERT_SEED", "2")))
    assert fig["kills_while_posting"] >= 1, f"no kill landed while alerts were being posted: {fig}"
    print(f"\nalert crash: {fig} in {time.monotonic() - started:.1f}s")


@pytest.mark.slow
async def test_alert_delivery_killed_at_random_moments_long(fake_discord: FakeDiscord, tmp_path: Path,
                                                            clock) -> None:
    kills = int(os.environ.get("ALERT_KILLS", "30"))
    started = time.monotonic()
    fig = await kill_loop(fake_discord, tmp_path, clock, kills=kills,
                          seed=int(os.environ.get("ALERT_SEED", str(time.time_ns()))))
    assert fig["kills"] >= kills
    assert fig["kills_while_posting"] >= 1, f"no kill landed while alerts were being posted: {fig}"
    print(f"\nalert crash (long): {fig} in {time.monotonic() - started:.1f}s")
