"""Faults at Discord (the local fake): 429 per route and global, 5xx, 403 on a channel, a
gateway drop and resume, a restart on the same database. Commands still answer, alerts
recover, and no alert is sent twice or lost.

Every alert carries the nonce ``t<track>e<upto event id>``: the messages the fake created
tell, per track, which (cursor, upto] ranges were delivered. After every round the delivered
ranges of each track are distinct, increasing and end at the paper's newest event.

Long form: ``FAULT_ROUNDS=40 python -m pytest -m slow -s tests/system/test_discord_faults.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import sqlite3
from collections import defaultdict
from pathlib import Path

import discord
import pytest

from mapwatch.bot.client import MapwatchBot
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.subscriptions import tracking
from tests.fakediscord import FakeDiscord

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
PAPERS = ("2412.10400", "2507.04136")
NONCE = re.compile(r"t(\d+)e(\d+)")
GAINED = re.compile(r": (\d+) new citers?$")


def make_bot(db_path: Path, **kw) -> MapwatchBot:
    kw.setdefault("poll", False)  # ticks are driven by the test: no background delivery races them
    return MapwatchBot(db_path, base_url="http://feeds.example", guild_ready_timeout=0.05, **kw)


def delivered(fake: FakeDiscord) -> dict[int, list[int]]:
    """Per track id: the upto event ids of the alert messages Discord created, in order."""
    return {t: [u for u, _ in msgs] for t, msgs in alert_messages(fake).items()}


def _alerts(fake: FakeDiscord) -> dict[int, list[tuple[object, int, int]]]:
    """Per track id: (message key, upto event id, citers the title announces) of each alert
    message created, in the order they were."""
    out: dict[int, list[tuple[object, int, int]]] = defaultdict(list)
    for key, msg in fake.messages.items():
        m = NONCE.fullmatch(str(msg.body.get("nonce") or ""))
        if msg.kind == "channel" and m and not msg.deleted:
            gained = GAINED.search(msg.embed["title"])
            assert gained, msg.embed["title"]
            out[int(m[1])].append((key, int(m[2]), int(gained[1])))
    return out


def alert_messages(fake: FakeDiscord) -> dict[int, list[tuple[int, int]]]:
    """Per track id: (upto event id, citers the title announces) of each alert message created."""
    return {t: [(upto, gained) for _, upto, gained in rows] for t, rows in _alerts(fake).items()}


def alerts_past(fake: FakeDiscord, event_id: int) -> set[object]:
    """The messages created so far of alerts for events past `event_id`: those a restore that
    kept events up to `event_id` lost the events of. By message, not by event id: after the
    restore the ids are given again, and an alert for the new events may end at the same id."""
    return {key for rows in _alerts(fake).values() for key, upto, _ in rows if upto > event_id}


def gained_between(conn: sqlite3.Connection, paper_id: str, lo: int, hi: int) -> int:
    """What an alert for events (lo, hi] of a paper announces (as bot.rendering.render.alert counts)."""
    n, old, new = conn.execute(
        "SELECT sum(kind = 'citation'), min(old_count), max(new_count) FROM events"
        " WHERE paper_id = ? AND id > ? AND id <= ?", (paper_id, lo, hi)).fetchone()
    return n or (new - old if new is not None and old is not None else 0)


def expected_uptos(db_path: Path) -> dict[int, int]:
    """Per enabled track: the newest event of its paper (where its cursor must end)."""
    conn = sqlite3.connect(db_path)
    try:
        return dict(conn.execute(
            "SELECT t.id, (SELECT max(e.id) FROM events e WHERE e.paper_id = t.paper_id) FROM tracks t"
            " WHERE t.disabled_reason IS NULL"))
    finally:
        conn.close()


def cursors(db_path: Path) -> dict[int, tuple[int, str | None]]:
    conn = sqlite3.connect(db_path)
    try:
        return {r[0]: (r[1], r[2]) for r in conn.execute("SELECT id, last_event_id, disabled_reason FROM tracks")}
    finally:
        conn.close()


def pending(db_path: Path) -> int:
    db = open_db(db_path)
    try:
        return len(tracking.pending_alerts(db))
    finally:
        db.close()


def sending(db_path: Path) -> dict[int, int]:
    """Alerts recorded as being posted (store.subscriptions.deliveries.mark_sending), per track."""
    conn = sqlite3.connect(db_path)
    try:
        return {int(k.split(":")[1]): int(v) for k, v in conn.execute(
            "SELECT key, value FROM bot_state WHERE key LIKE 'alert-sending:%'")}
    finally:
        conn.close()


def check_exactly_once(fake: FakeDiscord, db_path: Path, start: dict[int, int], *, settled: bool = True,
                       restored: bool = False, lost: frozenset[object] = frozenset()) -> None:
    """Per track: the alerts Discord created cover consecutive event ranges (start, u1], (u1, u2],
    ... each announcing exactly the citers of its range (none twice), and the cursor is at
    the last; `settled`: nothing is pending any more. `restored`: the database was restored from
    a replica, which may lack the last writes (the cursor's and the "sending" record's) made
    within the replica's sync interval: the cursor may then stand at any earlier alert, and the
    alerts past it are resent with their nonce (Discord drops them; the settled check counts).
    `lost`: the messages (`alerts_past`) of alerts sent for events a restore lost (committed within the
    replica's sync interval): their event ids are given again to the events stored anew, so
    those alerts are left out. After a restore, what each range announces is not compared with
    the database (ids of lost events may have been reissued); no alert twice, their order and
    the cursor still are."""
    msgs = {t: [(u, g) for key, u, g in rows if key not in lost] for t, rows in _alerts(fake).items()}
    conn = sqlite3.connect(db_path)
    try:
        papers = dict(conn.execute("SELECT id, paper_id FROM tracks"))
        for track_id, sent in msgs.items():
            lo = start[track_id]
            for upto, gained in sent:
                if restored:  # a restore may reissue the ids of events it lost: the ranges' order counts
                    break
                assert gained == gained_between(conn, papers[track_id], lo, upto), (
                    f"track {track_id}: the alert up to event {upto} announces {gained} citers, "
                    f"but events ({lo}, {upto}] hold {gained_between(conn, papers[track_id], lo, upto)}")
                lo = upto
    finally:
        conn.close()
    got = {t: [u for u, _ in sent] for t, sent in msgs.items()}
    for track_id, (cursor, disabled) in cursors(db_path).items():
        uptos = got.get(track_id, [])
        assert len(uptos) == len(set(uptos)), f"track {track_id}: an alert was sent twice: {uptos}"
        assert uptos == sorted(uptos), f"track {track_id}: out of order {uptos}"
        assert all(u > start[track_id] for u in uptos)
        last = uptos[-1] if uptos else start[track_id]
        if restored and not settled and cursor != last:
            assert cursor in [start[track_id], *uptos[:-1]], (track_id, cursor, uptos)
            marker = sending(db_path).get(track_id)
            assert marker is None or marker in uptos, (track_id, marker, uptos)
        elif not settled and cursor != last:
            # Killed between Discord's acceptance and the cursor update: the alert is recorded
            # as being sent, so the next run resends exactly it (same nonce).
            prev = uptos[-2] if len(uptos) > 1 else start[track_id]
            assert cursor == prev and sending(db_path).get(track_id) == last, (track_id, cursor, uptos)
        else:
            assert cursor == last, (track_id, cursor, uptos)
        if settled and disabled is None:  # nothing pending: no event of the paper past the cursor
            assert cursor >= expected_uptos(db_path)[track_id], track_id


async def _track_everywhere(fake: FakeDiscord, channels) -> None:
    for ch in channels:
        for pid in PAPERS:
            h = await fake.slash("track", {"paper": pid}, channel_id=ch.id, permissions=MANAGE)
            assert "Tracking" in (await h.wait_message()).content


def _older(make_older_seeds, rounds: int) -> list[Path]:
    """Folders of the seeds, each a little newer than the last; the real seeds last."""
    return [make_older_seeds(n) for n in range(rounds, 0, -1)] + [SEEDS_DIR]


async def _ingest(db_path: Path, folder: Path, clock) -> None:
    clock.advance(days=1)
    db = open_db(db_path)
    try:
        await asyncio.to_thread(ingest_paths, db, [folder], clock=clock)
    finally:
        db.close()


async def test_alerts_and_commands_through_every_fault(fake_discord: FakeDiscord, db_path: Path, clock,
                                                       make_older_seeds) -> None:
    fake = fake_discord
    steps = _older(make_older_seeds, 6)
    ingest_paths(open_db(db_path), [steps[0]], clock=clock)
    alerts, general = fake.guild.channel("alerts"), fake.channel
    route = "POST /channels/*/messages"
    bot = make_bot(db_path)
    async with fake.connected(bot):
        await _track_everywhere(fake, (alerts, general))
        start = {tid: c for tid, (c, _) in cursors(db_path).items()}
        assert len(start) == 4

        # 1. 429 on the route (twice), then a global 429: discord.py waits retry_after and resends.
        await _ingest(db_path, steps[1], clock)
        fake.rate_limit(route, retry_after=0.05, times=2)
        assert await bot.deliver_alerts() == 4
        await _ingest(db_path, steps[2], clock)
        fake.rate_limit(route, retry_after=0.1, is_global=True, times=1)
        assert await bot.deliver_alerts() == 4
        assert sum(r.status == 429 for r in fake.requests_to("POST", "/channels/*/messages")) == 3
        check_exactly_once(fake, db_path, start)

        # 2. 500 (discord.py retries it within the call) and 503 (not retried: the next tick does).
        await _ingest(db_path, steps[3], clock)
        fake.server_error(route, 500, times=1)
        fake.inject(f"POST /channels/{alerts.id}/messages", 503, {"message": "unavailable", "code": 0}, times=2)
        assert await bot.deliver_alerts() == 2  # general's two; both of #alerts got a 503
        check_exactly_once(fake, db_path, start, settled=False)
        assert await bot.deliver_alerts() == 2  # the retry tick
        assert await bot.deliver_alerts() == 0
        check_exactly_once(fake, db_path, start)

        # 3. A command while the interaction callback is rate limited, then while it fails once.
        fake.rate_limit("POST /interactions/*", retry_after=0.05, times=1)
        h = await fake.slash("paper", {"paper": PAPERS[0]})
        assert (await h.wait_message()).embed["title"].startswith("Reinforcement Learning")

        # 4. 403 on #general: its tracks are disabled (and say why); #alerts still gets its alerts.
        fake.forbid_channel(general.id)
        await _ingest(db_path, steps[4], clock)
        assert await bot.deliver_alerts() == 2
        reasons = [r for _, r in cursors(db_path).values() if r]
        assert len(reasons) == 2 and all("403" in r for r in reasons)
        check_exactly_once(fake, db_path, start)
        h = await fake.slash("tracked", {})
        assert "403" in (await h.wait_message()).text()

        # 5. The gateway drops (TCP, no close frame); a command sent meanwhile is replayed on
        # RESUME and answered; alerts written meanwhile are delivered after.
        await fake.drop_gateway(code=None)
        h = await fake.slash("paper", {"paper": PAPERS[1]})
        await _ingest(db_path, steps[5], clock)
        await fake.wait_resumed()
        assert PAPERS[1] in (await h.wait_message()).text()
        assert await bot.deliver_alerts() == 2
        check_exactly_once(fake, db_path, start)

    # 6. A restart on the same database: nothing is sent again; the next change is sent once.
    bot2 = make_bot(db_path)
    async with fake.connected(bot2):
        assert await bot2.deliver_alerts() == 0
        await _ingest(db_path, steps[6], clock)
        await fake.drop_gateway(code=4000)  # a close frame this time
        await fake.wait_resumed(count=2)
        assert await bot2.deliver_alerts() == 2
        assert await bot2.deliver_alerts() == 0
    check_exactly_once(fake, db_path, start)
    per_track = {t: len(u) for t, u in delivered(fake).items()}
    # the #alerts tracks got every round (6); #general's the three before its 403 ... plus 1.
    assert sorted(per_track.values()) == [3, 3, 6, 6], per_track
    assert fake.unknown_routes == []


async def test_a_resend_after_a_lost_answer_is_not_a_second_message(fake_discord: FakeDiscord, db_path: Path,
                                                                    clock, make_older_seeds) -> None:
    """Discord accepted the post but the bot never learnt it (a 502 answered the retry's first
    try after acceptance is indistinguishable from a crash before the cursor moved): the
    resend carries the same enforced nonce and Discord returns the first message."""
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(3)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": PAPERS[0]}, channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        await _ingest(db_path, SEEDS_DIR, clock)
        track_id, cursor = next((t, c) for t, (c, _) in cursors(db_path).items())
        assert await bot.deliver_alerts() == 1
        # The crash between Discord's acceptance and the cursor update: put the cursor back.
        conn = sqlite3.connect(db_path)
        with conn:
            conn.execute("UPDATE tracks SET last_event_id = ? WHERE id = ?", (cursor, track_id))
        conn.close()
        assert await bot.deliver_alerts() == 1  # the bot thinks it sent it
        assert fake.nonce_repeats == 1
        assert len(fake.channel_messages(alerts.id)) == 1
        assert len(fake.requests_to("POST", f"/channels/{alerts.id}/messages")) == 2


@pytest.mark.slow
async def test_random_faults_long(fake_discord: FakeDiscord, db_path: Path, clock, make_older_seeds) -> None:
    """Long form: random faults before each of FAULT_ROUNDS rounds of new events."""
    fake = fake_discord
    rounds = int(os.environ.get("FAULT_ROUNDS", "20"))
    rng = random.Random(int(os.environ.get("FAULT_SEED", "7")))
    steps = _older(make_older_seeds, rounds)
    ingest_paths(open_db(db_path), [steps[0]], clock=clock)
    chans = [fake.guild.channel("alerts"), fake.channel]
    figures: dict[str, int] = defaultdict(int)
    async with contextlib.AsyncExitStack() as stack:
        bot = await stack.enter_async_context(fake.connected(make_bot(db_path)))
        await _track_everywhere(fake, chans)
        start = {tid: c for tid, (c, _) in cursors(db_path).items()}
        for step in steps[1:]:
            fault = rng.choice(["429", "429-global", "500", "503", "drop", "restart", "none"])
            figures[fault] += 1
            if fault == "429":
                fake.rate_limit("POST /channels/*/messages", retry_after=0.05, times=rng.randint(1, 3))
            elif fault == "429-global":
                fake.rate_limit("POST /channels/*/messages", retry_after=0.05, is_global=True)
            elif fault == "500":
                fake.server_error("POST /channels/*/messages", 502)
            elif fault == "503":
                fake.inject("POST /channels/*/messages", 503, {"message": "x", "code": 0}, times=rng.randint(1, 4))
            elif fault == "drop":
                await fake.drop_gateway(code=rng.choice([None, 4000]))
                await fake.wait_resumed(count=fake.resumes + 1)
            elif fault == "restart":
                await bot.close()
                bot = await stack.enter_async_context(fake.connected(make_bot(db_path)))
            await _ingest(db_path, step, clock)
            h = await fake.slash("paper", {"paper": rng.choice(PAPERS)})
            await h.wait_message()
            for _ in range(8):  # ticks until nothing is pending (a 503 makes a tick send nothing)
                await bot.deliver_alerts()
                if not await asyncio.to_thread(pending, db_path):
                    break
            fake.clear_faults()
            check_exactly_once(fake, db_path, start)
    figures["alerts"] = sum(len(u) for u in delivered(fake).values())
    assert figures["alerts"] >= rounds  # every round changed at least one tracked paper
    print(f"\ndiscord faults: {rounds} rounds, {dict(figures)}, "
          f"{len(fake.requests_to('POST', '/channels/*/messages'))} posts")


async def test_an_alert_whose_answer_was_lost_is_not_repeated_by_the_next(fake_discord: FakeDiscord, db_path: Path,
                                                                          clock, make_older_seeds) -> None:
    """Discord created the message but the bot got an error back (or crashed before moving
    the cursor); then new events arrive. The resend must be the same alert (same nonce, which
    Discord drops), and the new events a second alert: no citer announced twice."""
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(6)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": PAPERS[0]}, channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        start = {tid: c for tid, (c, _) in cursors(db_path).items()}
        await _ingest(db_path, make_older_seeds(3), clock)
        fake.lose_answer("POST /channels/*/messages", 503)
        assert await bot.deliver_alerts() == 0  # the bot saw a 503; Discord has the message
        assert len(fake.channel_messages(alerts.id)) == 1
        await _ingest(db_path, SEEDS_DIR, clock)  # three more citers before the next tick
        while await bot.deliver_alerts():
            pass
        check_exactly_once(fake, db_path, start)
        assert [m.embed["title"].rsplit(": ", 1)[1] for m in fake.channel_messages(alerts.id)] == [
            "3 new citers", "3 new citers"]
        assert fake.nonce_repeats == 1


async def test_a_follow_delivery_whose_answer_was_lost_is_not_repeated(fake_discord: FakeDiscord, db_path: Path,
                                                                       clock, make_older_seeds) -> None:
    """The same for /follow: the resend is the same delivery (same nonce), new citers come next."""
    fake = fake_discord
    ingest_paths(open_db(db_path), [make_older_seeds(6)], clock=clock)
    alerts = fake.guild.channel("alerts")
    bot = make_bot(db_path)
    async with fake.connected(bot):
        h = await fake.slash("follow", {"direction": "Reinforcement learning for reasoning"}, channel_id=alerts.id,
                             permissions=MANAGE)
        await h.wait_message()
        await _ingest(db_path, make_older_seeds(3), clock)
        fake.lose_answer("POST /channels/*/messages", 503)
        assert await bot.deliver_alerts() == 0  # the bot saw a 503; Discord has the message
        await _ingest(db_path, SEEDS_DIR, clock)
        for _ in range(3):
            await bot.deliver_alerts()
        msgs = [m for m in fake.channel_messages(alerts.id) if str(m.body.get("nonce", "")).startswith("f")]
        listed = [re.findall(r"^• .*?`(\d{4}\.\d{4,5})`", m.embed["description"], re.MULTILINE) for m in msgs]
        every = [pid for ids in listed for pid in ids]
        assert len(msgs) == 2 and all(listed), listed
        assert len(every) == len(set(every)), f"a citer delivered twice: {listed}"
        assert fake.nonce_repeats == 1
