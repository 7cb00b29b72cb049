"""The bot's token never leaves the process: `mapwatch run` with a known, unique DISCORD_TOKEN
against the fake Discord, logging at DEBUG, answers commands (one of them failing at Discord),
posts an alert, meets a forbidden channel; another run is refused its token. The token is in
no log line, no stdout/stderr, no message sent to Discord, no row of any table (and no byte of
the database files), no published file."""

from __future__ import annotations

import asyncio
import os
import secrets
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import discord
import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.subscriptions import tracking
from tests.fakediscord import FakeDiscord

pytest_plugins = ["tests.fakediscord.fixtures"]

ROOT = Path(__file__).resolve().parents[2]
TOKEN = f"MTA5ODc2NTQzMjEwMTIzNDU2Nw.Gsecret.{secrets.token_urlsafe(24)}"
REFUSED = f"MTA5ODc2NTQzMjEwOTk5OTk5OQ.Grefused.{secrets.token_urlsafe(24)}"
MANAGE = discord.Permissions(manage_channels=True)


def _db_values(db_path: Path) -> Iterator[tuple[str, str]]:
    """(table, value as text) of every column of every row of every table."""
    conn = sqlite3.connect(db_path)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        for table in tables:
            for row in conn.execute(f'SELECT * FROM "{table}"'):
                for value in row:
                    yield table, value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)
    finally:
        conn.close()


def _scan_db(db_path: Path, needles: list[str]) -> int:
    """Every column of every row of every table; then the raw bytes of the database files.
    Returns how many values were looked at."""
    seen = 0
    for table, text in _db_values(db_path):
        seen += 1
        assert not any(n in text for n in needles), f"the token is in table {table}"
    for suffix in ("", "-wal", "-shm"):
        f = Path(f"{db_path}{suffix}")
        if f.exists():
            data = f.read_bytes()
            assert not any(n.encode() in data for n in needles), f"the token is in {f.name}"
    return seen


@pytest.mark.parametrize("fake_config", [{"token": TOKEN}])
async def test_the_token_appears_nowhere(fake_discord: FakeDiscord, tmp_path: Path, clock,
                                         make_older_seeds) -> None:
    fake = fake_discord
    assert fake.token == TOKEN
    db_path, out, log = tmp_path / "m.db", tmp_path / "out", tmp_path / "run.log"
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    alerts, general = fake.guild.channel("alerts"), fake.channel
    for ch in (alerts, general):
        tracking.add_track(db, guild_id=fake.guild.id, channel_id=ch.id, user_id=None, paper_id="2412.10400",
                           created_by=fake.user.id, now=clock())
    db.close()
    fake.forbid_channel(general.id)  # its alert: 403, the track disabled (an error path)
    env = {**os.environ, **fake.env(), "MAPWATCH_LOG_LEVEL": "DEBUG", "MAPWATCH_ALERT_INTERVAL": "0.2"}
    assert env["DISCORD_TOKEN"] == TOKEN
    with log.open("w") as sink:
        # The first refresh (from the seeds, newer than the database) makes the alert.
        proc = subprocess.Popen([sys.executable, "-m", "mapwatch", "run", "--db", str(db_path), "--out", str(out),
                                 "--port", "0"], cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT)
    try:
        await fake.wait_for(lambda: fake.command_syncs and fake.identifies, 20)
        await fake.wait_channel_messages(alerts.id, 1, timeout=20)
        h = await fake.slash("paper", {"paper": "2412.10400"})
        assert (await h.wait_message(timeout=10)).embed["title"].startswith("Reinforcement")
        h = await fake.slash("paper", {"paper": "no such paper " + TOKEN[:6]})
        assert "No paper matches" in (await h.wait_message(timeout=10)).content
        h = await fake.slash("search", {"query": '"unbalanced NEAR( OR -x *'})
        await h.wait_message(timeout=10)
        h = await fake.slash("citers", {"paper": "2412.10400", "direction": "", "sort": "newest"})
        page = await fake.click(await h.wait_message(timeout=10), label="Next ▶")
        await page.wait_response()
        await fake.autocomplete("paper", {"paper": "rein"}, focused="paper")
        h = await fake.slash("tracked", {}, permissions=MANAGE)
        assert "403" in (await h.wait_message(timeout=10)).text()
        # Discord refuses an answer (400 on the callback): the bot logs the error with its traceback.
        fake.inject("POST /interactions/*", 400, {"message": "Invalid Form Body", "code": 50035})
        h = await fake.slash("stats", {})
        await fake.wait_for(lambda: "command error" in log.read_text(), 10)
        await fake.drop_gateway(code=None)  # a reconnect: RESUME carries the token too
        await fake.wait_resumed()
        # A malformed event crashes the bot side: logged with its traceback, then restarted.
        h = await fake.slash("citers", {"paper": "2412.10400"})
        await fake.click(await h.wait_message(timeout=10), label="Next ▶",
                         message_patch={"interaction_metadata": None})
        await fake.wait_for(lambda: "Discord bot crashed" in log.read_text(), 10)
    finally:
        proc.terminate()
        await asyncio.to_thread(proc.wait, 20)

    refused = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "mapwatch", "run", "--db", str(db_path), "--out", str(out), "--port", "0", cwd=ROOT,
        env={**env, "DISCORD_TOKEN": REFUSED}, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    seen: list[str] = []
    try:  # the bot side stops with one line; the feeds run on (until terminated)
        async with asyncio.timeout(60):
            while not any("Discord refused DISCORD_TOKEN" in s for s in seen):
                line = await refused.stdout.readline()
                assert line, "mapwatch run ended"
                seen.append(line.decode())
    finally:
        refused.terminate()
        rest, _ = await asyncio.wait_for(refused.communicate(), 30)
    r_out, r_err = "".join(seen) + rest.decode(), ""

    text = log.read_text()
    assert " DEBUG discord." in text, "not logging at DEBUG"
    assert "Traceback" in text  # the error paths were logged in full
    assert "Discord bot crashed (TypeError" in text  # the restart path too
    for needle in (TOKEN, REFUSED):
        assert needle not in text and needle not in r_out + r_err
        # Not even a large piece of it (a token cut at a line end, or its secret part).
        assert needle.rsplit(".", 1)[1][:12] not in text + r_out + r_err
    for rec in fake.requests:  # what the bot sent to Discord (the Authorization header aside)
        assert TOKEN not in repr((rec.path, rec.query, rec.json, rec.headers))
    assert not any(TOKEN in repr(p) for p in fake.gateway_received if p.get("op") not in (2, 6))
    assert any(p.get("op") == 6 for p in fake.gateway_received)  # a RESUME was sent (it holds the token)
    assert _scan_db(db_path, [TOKEN, REFUSED]) > 1000
    files = [f for f in out.rglob("*") if f.is_file()]
    assert files and not any(TOKEN.encode() in f.read_bytes() for f in files)


S2_KEY = f"s2k-{secrets.token_urlsafe(24)}"


def test_the_semantic_scholar_key_appears_nowhere(seeded_path: Path, clock) -> None:
    """$MAPWATCH_S2_KEY goes to Semantic Scholar in its `x-api-key` header and nowhere else:
    `mapwatch enrich` at DEBUG, with the source answering, down, hanging up and malformed, says
    nothing of it on stdout or stderr, and no byte of the database holds it."""
    from tests.scholarly_fakes import from_seeds, serve_scholarly

    db = open_db(seeded_path)
    tracking.add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id="2412.10400", created_by=3, now=clock())
    tracking.add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id="2507.04136", created_by=3, now=clock())
    data = from_seeds(db)
    db.close()
    said = []
    with serve_scholarly(data) as fakes:
        env = {**os.environ, **fakes.env(), "MAPWATCH_ENRICH": "s2", "MAPWATCH_S2_KEY": S2_KEY,
               "MAPWATCH_LOG_LEVEL": "DEBUG", "PYTHONPATH": str(ROOT)}
        for fault in (None, "down", "refuse", "malformed", "429-long"):
            fakes.fault["s2"] = fault
            if fault is not None:  # everything due again
                with sqlite3.connect(seeded_path) as conn:
                    conn.execute("DELETE FROM enrichment_fetches")
                    conn.execute("DELETE FROM citation_contexts WHERE cited_id = '2507.04136'")
            r = subprocess.run([sys.executable, "-m", "mapwatch", "enrich", "--db", str(seeded_path)], cwd=ROOT,
                               env=env, capture_output=True, text=True, timeout=120)
            assert r.returncode == (0 if fault is None else 1), r.stderr
            said.append(r.stdout + r.stderr)
    assert all(q.headers.get("x-api-key") == S2_KEY for q in fakes.seen("s2"))
    assert len(fakes.seen("s2")) >= 6
    text = "\n".join(said)
    assert "s2 is unavailable this round (HTTP 503)" in text and "answered badly" in text
    assert S2_KEY not in text and S2_KEY[4:16] not in text
    for q in fakes.requests:
        assert S2_KEY not in repr((q.path, q.query))
    _scan_db(seeded_path, [S2_KEY])


ECHOED = ["reversed", "upper", "url-encoded lower", "basic auth", "a piece of 12", "cut at its end"]


@pytest.mark.parametrize("form", ECHOED)
def test_an_answer_echoing_the_key_in_any_form_leaves_none_of_it(seeded_path: Path, clock, form: str) -> None:
    """Semantic Scholar answers with a redirect whose Location repeats the key in another form
    (tests/unit/store/test_polite_scrub.py: reversed, upper-cased, URL-encoded, base64 in a Basic
    credential, a piece of it): `mapwatch enrich` reports the source down with the redirect (exit
    1) and stores the reason for the tracked papers, and no piece of 8 characters of the key, in any
    case and either direction, is in its output or in any row. Before, only an exact copy was
    taken out."""
    from tests.scholarly_fakes import from_seeds, serve_scholarly
    from tests.unit.store.test_polite_scrub import ECHOES, KEY, leaks

    db = open_db(seeded_path)
    tracking.add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id="2412.10400", created_by=3, now=clock())
    data = from_seeds(db)
    db.close()
    with serve_scholarly(data) as fakes:
        fakes.fault["s2"] = "echo"
        fakes.echo = lambda key: f"https://evil.example/k/{ECHOES[form].replace(KEY, key)}?page=2"
        env = {**os.environ, **fakes.env(), "MAPWATCH_ENRICH": "s2", "MAPWATCH_S2_KEY": KEY,
               "MAPWATCH_LOG_LEVEL": "DEBUG", "PYTHONPATH": str(ROOT)}
        r = subprocess.run([sys.executable, "-m", "mapwatch", "enrich", "--db", str(seeded_path)], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
    assert [q.headers.get("x-api-key") for q in fakes.seen("s2")] == [KEY]
    assert r.returncode == 1 and "s2 is unavailable this round (HTTP 301, redirected to 'https://evil.example/k/" \
        in r.stderr, r.stderr
    reasons = [text for table, text in _db_values(seeded_path) if table == "enrichment_fetches"
               and text.startswith("HTTP 301, redirected to 'https://evil.example/k/")]
    assert reasons and all("…" in reason for reason in reasons)
    everything = "\n".join([r.stdout, r.stderr, *(text for _, text in _db_values(seeded_path))])
    assert leaks(everything) == [] and ECHOES[form] not in everything
