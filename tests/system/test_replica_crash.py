"""A lost disk, restored from the Litestream replica (docs/operations.md, "Replication (Litestream)").

Each round runs `mapwatch run` under `litestream replicate -exec` (the shipped
litestream.yml, a file replica), refreshing generated map pages every second from a folder
that changes between ticks (12 pages a step) and posting alerts to the fake Discord. Then a
large change (700 pages: two transactions of the tick's store) and, once the tick committed
its first transaction and before it finished, both processes are killed with SIGKILL; the
database, its WAL and shm, and Litestream's folder are deleted (the disk is lost),
`litestream restore -if-db-not-exists -if-replica-exists` brings it back, and the next round
starts on it.

After each round: `integrity_check` is ok; every refresh and every event this test saw
committed more than `BOUND` seconds before the kill (Litestream's monitor interval plus its
sync interval, and a margin for the poll) is in the restored database; the feeds republished
from it hold no entry id twice, and every entry seen before the kill whose event is older
than the bound keeps its id and title; no alert is sent twice (the bot's cursors come back
with the data; a resend carries the same nonce, which Discord drops) and none is lost
(`check_exactly_once`, then a last run that delivers everything pending). Figures: the
refreshes and page versions lost per round, how many kills landed mid-refresh, restore times.

CI: 2 rounds. Long form: `REPLICA_ROUNDS=10 python -m pytest -m slow -s tests/system/test_replica_crash.py`.
Skipped, with the reason, when the `litestream` binary (the replicate extra) is not installed.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.replica import meta_dir, replica_status
from mapwatch.store.subscriptions import tracking
from tests import pagegen
from tests.fakediscord import FakeDiscord
from tests.system.test_discord_faults import alerts_past, check_exactly_once, cursors, delivered, pending
from tests.waiting import async_poll, async_wait_until

pytest_plugins = ["tests.fakediscord.fixtures"]

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "litestream.yml"
BOUND = 2.5  # seconds: monitor-interval 1 s + sync-interval 1 s (litestream.yml), and a margin for the poll
STEP = 12  # pages changed in the folder between ticks
BIG_STEP = 700  # pages changed before the kill: two transactions (store/database/ingest.py BATCH_SIZE, 500)
TRACKED = 20


def litestream_binary() -> str | None:
    here = Path(sys.executable).parent / "litestream"
    return str(here) if here.is_file() else shutil.which("litestream")


LITESTREAM = litestream_binary()
pytestmark = pytest.mark.skipif(LITESTREAM is None, reason="the litestream binary is not installed: "
                                "pip install -e '.[replicate]' (the test extra includes it)")


class Site:
    """The map folder `mapwatch run` refreshes from: a few pages change at each step. `folder`
    is a symbolic link, so that a large step appears at once (a tick sees all of it or none)."""

    def __init__(self, folder: Path, n: int, seed: int) -> None:
        corpus = pagegen.generate(n, seed=seed)
        self.folder, self.v2, self.step_no = folder, corpus.v2, 0
        target = folder.with_name(f"{folder.name}-0")
        pagegen.write(target, corpus.v1)
        folder.symlink_to(target, target_is_directory=True)
        self.rng = random.Random(seed)

    def step(self, size: int = STEP) -> None:
        self.step_no += 1
        k = self.step_no
        pages = self.v2[(k - 1) * STEP:k * STEP] if size == STEP else []  # new citations first, then newer counts
        if not pages:
            picked = self.rng.sample(self.v2, size)
            pages = [dataclasses.replace(p, data_through=p.data_through + timedelta(days=k),
                                         cited_by=p.cited_by + k) for p in picked]
        if size == STEP:
            pagegen.write(self.folder, pages)
            return
        target = self.folder.with_name(f"{self.folder.name}-{k}")
        shutil.copytree(self.folder.resolve(), target)  # copy2: unchanged pages keep their mtime
        pagegen.write(target, pages)
        link = self.folder.with_name(f"{self.folder.name}.new")
        link.symlink_to(target, target_is_directory=True)
        os.replace(link, self.folder)


def _env(fake: FakeDiscord, db: Path, replica: Path) -> dict[str, str]:
    return {**os.environ, **fake.env(), "MAPWATCH_ALERT_INTERVAL": "0.2", "MAPWATCH_REFRESH": "1s",
            "MAPWATCH_DB": str(db), "MAPWATCH_REPLICA": replica.as_uri()}


def _start(fake: FakeDiscord, tmp: Path, db: Path, replica: Path, log: Path) -> subprocess.Popen:
    assert LITESTREAM
    run = (f"{sys.executable} -m mapwatch run --db {db} --source {tmp / 'site'} --out {tmp / 'out'} "
           "--port 0")
    with log.open("a") as out:
        return subprocess.Popen([LITESTREAM, "replicate", "-config", str(CONFIG), "-exec", run],
                                cwd=ROOT, env=_env(fake, db, replica), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)  # one process group: litestream and mapwatch


def _kill(proc: subprocess.Popen) -> None:
    os.killpg(proc.pid, signal.SIGKILL)  # both, at once: the machine is gone
    proc.wait()


def _refreshes(db: Path) -> int:
    """The last finished refresh (ingests row) in the database, read-only; 0 when none."""
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return 0
    try:
        return conn.execute("SELECT coalesce(max(id), 0) FROM ingests WHERE finished_at IS NOT NULL").fetchone()[0]
    except sqlite3.Error:
        return 0
    finally:
        conn.close()


def _progress(db: Path) -> tuple[int, int, int]:
    """(page versions stored, the last finished refresh, the last event), read-only, one transaction."""
    try:
        conn = sqlite3.connect(f"{db.resolve().as_uri()}?mode=ro", uri=True, timeout=2)
    except sqlite3.Error:
        return 0, 0, 0
    try:
        with conn:
            return conn.execute("SELECT (SELECT count(*) FROM snapshots), (SELECT coalesce(max(id), 0) FROM ingests"
                                " WHERE finished_at IS NOT NULL), (SELECT coalesce(max(id), 0) FROM events)").fetchone()
    except sqlite3.Error:
        return 0, 0, 0
    finally:
        conn.close()


def _lose_disk(db: Path) -> None:
    for f in (db, Path(f"{db}-wal"), Path(f"{db}-shm")):
        f.unlink(missing_ok=True)
    shutil.rmtree(meta_dir(db), ignore_errors=True)


def _restore(fake: FakeDiscord, db: Path, replica: Path) -> float:
    assert LITESTREAM
    started = time.monotonic()
    subprocess.run([LITESTREAM, "restore", "-config", str(CONFIG), "-if-db-not-exists", "-if-replica-exists",
                    str(db)], env=_env(fake, db, replica), check=True, capture_output=True, timeout=120)
    return time.monotonic() - started


def _feeds(out: Path) -> dict[str, list[tuple[str, str, str]]]:
    """Per feed file: (id, link, title) of each entry."""
    import feedparser

    feeds = {}
    for f in sorted(out.rglob("*.atom")):
        parsed = feedparser.parse(f.read_bytes())
        feeds[str(f.relative_to(out))] = [(e.get("id", ""), e.get("link", ""), e.get("title", ""))
                                          for e in parsed.entries]
    return feeds


FEED_LIMIT = 100  # entries a feed lists (the newest; mapwatch/service/tick.py `limit`)


def _event_of(entry_id: str) -> int | None:
    """The event behind a count entry (`…/count/EVENT`); citer entries are named by their papers."""
    head, _, tail = entry_id.rpartition("/count/")
    return int(tail) if head and tail.isdigit() else None


def _check_feeds(before: dict[str, list[tuple[str, str, str]]], after: dict[str, list[tuple[str, str, str]]],
                 must_event: int) -> None:
    """No entry id twice in a feed; every entry seen before the kill whose event was committed
    more than BOUND before it keeps its id and its title (unless pushed out of the window)."""
    for name, entries in after.items():
        ids = Counter(i for i, _, _ in entries)
        assert not [i for i, n in ids.items() if n > 1], f"{name}: an entry id twice"
    for name, entries in before.items():
        now = {i: title for i, _, title in after.get(name, [])}
        for i, _, title in entries:
            event = _event_of(i)
            if i.rpartition("/citer/")[0] or (event is not None and event <= must_event):
                assert i in now or len(now) >= FEED_LIMIT, f"{name}: {title!r} ({i}) is gone"
                assert now.get(i, title) == title, f"{name}: {i} was {title!r}, now {now[i]!r}"


def _check_db(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()


TICK_DONE = "mapwatch.scheduler: refresh: Read"  # the run's log line after each refresh and publish


def _ticks(log: Path) -> int:
    return log.read_text(errors="replace").count(TICK_DONE) if log.exists() else 0


async def _published_since(mark: int, proc: subprocess.Popen, log: Path) -> None:
    """Until the run refreshed and published once more than `mark` ticks in its log."""
    def published() -> bool:
        if _ticks(log) > mark:
            return True
        assert proc.poll() is None, log.read_text()[-3000:]
        return False

    await async_wait_until(published, 60, what=f"a publish after the log's {mark} ticks", interval=0.2)


async def replica_rounds(fake: FakeDiscord, tmp: Path, clock, rounds: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    site = Site(tmp / "site", 1000, seed=11)
    db, replica, out, log = tmp / "data" / "m.db", tmp / "replica", tmp / "out", tmp / "run.log"
    conn = open_db(db)
    ingest_paths(conn, [site.folder], clock=clock)
    for i in range(TRACKED):
        tracking.add_track(conn, guild_id=fake.guild.id, channel_id=fake.channel.id, user_id=None,
                           paper_id=pagegen.paper_id(i), created_by=fake.user.id, now=clock())
    conn.close()
    start = {tid: c for tid, (c, _) in cursors(db).items()}
    figures: dict[str, list] = {"refreshes_lost": [], "page_versions_lost": [], "restore_s": [], "refreshes": [],
                                 "txids_behind": [], "kills_mid_refresh": []}
    lost: set[object] = set()  # the messages of alerts for events a restore lost (within the sync interval)
    for _ in range(rounds):
        mark = _ticks(log)
        proc = _start(fake, tmp, db, replica, log)
        try:
            await _published_since(mark, proc, log)
        except BaseException:
            _kill(proc)
            raise
        seen: list[tuple[float, int, int]] = []  # (when, last refresh and last event committed by then)
        deadline = time.monotonic() + rng.uniform(2.5, 5.0)
        next_step = 0.0
        while time.monotonic() < deadline:  # the folder changes between ticks; kill at a random moment
            if time.monotonic() >= next_step:
                site.step()
                next_step = time.monotonic() + 1.0
            _, r_now, e_now = await asyncio.to_thread(_progress, db)
            seen.append((time.monotonic(), r_now, e_now))
            if proc.poll() is not None:
                pytest.fail(log.read_text()[-3000:])
            await asyncio.sleep(rng.uniform(0.05, 0.25))  # on purpose: looks at random moments till the kill
        # The kill: mid-refresh. A large change (more pages than a transaction's batch), and
        # the kill once the tick committed its first batch, before its last (no new ingests row).
        site.step(BIG_STEP)
        stored, done, _ = await asyncio.to_thread(_progress, db)

        def first_batch_committed() -> bool:
            nonlocal stored, done
            s_now, r_now, e_now = _progress(db)
            seen.append((time.monotonic(), r_now, e_now))  # noqa: B023 (called in this round only)
            if r_now != done:  # a tick finished meanwhile: count from there
                stored, done = s_now, r_now
                return False
            return s_now > stored

        await async_poll(lambda: asyncio.to_thread(first_batch_committed), 10, interval=0.01)  # or kill at 10 s
        killed_at = time.monotonic()
        _kill(proc)
        feeds_before = _feeds(out)  # what feed readers could have seen by the kill
        if _progress(db)[0] > stored and _refreshes(db) == done:
            figures["kills_mid_refresh"].append(1)  # pages of the tick stored, the tick unfinished
        on_disk = _refreshes(db)
        versions_on_disk = _progress(db)[0]
        status = replica_status(db, replica.as_uri(), time.time())
        if status and status.local_txid and status.replica_txid:
            figures["txids_behind"].append(status.local_txid - status.replica_txid)
        must_have = max((r for t, r, _ in seen if t < killed_at - BOUND), default=0)
        must_event = max((e for t, _, e in seen if t < killed_at - BOUND), default=0)
        _lose_disk(db)
        figures["restore_s"].append(round(_restore(fake, db, replica), 2))
        _check_db(db)
        restored = _refreshes(db)
        assert restored >= must_have, f"refresh {must_have}, committed {BOUND} s before the kill, is lost"
        assert _progress(db)[2] >= must_event, f"event {must_event}, committed {BOUND} s before the kill, is lost"
        figures["refreshes_lost"].append(on_disk - restored)
        figures["page_versions_lost"].append(versions_on_disk - _progress(db)[0])  # the killed tick's batch too
        figures["refreshes"].append(on_disk)
        restored_events = _progress(db)[2]
        lost |= alerts_past(fake, restored_events)
        check_exactly_once(fake, db, start, settled=False, restored=True, lost=frozenset(lost))
        # Back up: the feeds republished from the restored database keep their ids.
        mark = _ticks(log)
        proc = _start(fake, tmp, db, replica, log)
        try:
            await _published_since(mark, proc, log)
            _check_feeds(feeds_before, _feeds(out), must_event)
        finally:
            _kill(proc)
        _check_db(db)  # killed again at once: the local file is whole (no restore this time)
    proc = _start(fake, tmp, db, replica, log)  # the last run: until nothing is pending
    try:
        def settled() -> bool:
            if not pending(db):
                return True
            assert proc.poll() is None, log.read_text()[-3000:]
            return False

        await async_wait_until(lambda: asyncio.to_thread(settled), 60, what="every alert sent (none pending)",
                               interval=0.2)
    finally:
        proc.terminate()  # litestream passes SIGTERM on to mapwatch and waits for it
        await asyncio.to_thread(proc.wait, 30)
    check_exactly_once(fake, db, start, restored=True, lost=frozenset(lost))
    assert "Traceback" not in log.read_text(), log.read_text()[-3000:]
    alerts = sum(len(u) for u in delivered(fake).values())
    assert alerts > 0
    assert figures["kills_mid_refresh"], "no kill landed mid-refresh"
    return {**figures, "kills_mid_refresh": len(figures["kills_mid_refresh"]), "rounds": rounds, "alerts": alerts,
            "alerts_for_lost_events": len(lost),
            "resends_dropped_by_nonce": fake.nonce_repeats}


async def test_replica_restored_after_lost_disk(fake_discord: FakeDiscord, tmp_path: Path, clock) -> None:
    started = time.monotonic()
    fig = await replica_rounds(fake_discord, tmp_path, clock, rounds=2,
                               seed=int(os.environ.get("REPLICA_SEED", "3")))
    print(f"\nreplica rounds: {fig} in {time.monotonic() - started:.1f}s")


@pytest.mark.slow
async def test_replica_restored_after_lost_disk_long(fake_discord: FakeDiscord, tmp_path: Path, clock) -> None:
    rounds = int(os.environ.get("REPLICA_ROUNDS", "10"))
    started = time.monotonic()
    fig = await replica_rounds(fake_discord, tmp_path, clock, rounds=rounds,
                               seed=int(os.environ.get("REPLICA_SEED", str(time.time_ns()))))
    assert fig["rounds"] == rounds
    print(f"\nreplica rounds (long): {fig} in {time.monotonic() - started:.1f}s")
