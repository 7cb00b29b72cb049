"""Abuse through the bot: every command, every free-text option, hostile values (SQL, FTS5
syntax, control characters, 10,000 characters, unicode, mentions, markdown), over a database
whose titles and direction names carry @everyone, markdown and HTML. Every answer is accepted
by the fake Discord (which refuses anything over Discord's limits with a 400), allows no
mentions, holds no live mention and no control character; alerts about hostile papers too.
Extends tests/system/test_bot_e2e.py::test_hostile_options_get_clean_answers (4 values, 4 commands).
"""

from __future__ import annotations

import asyncio
import dataclasses
import re
import sqlite3
from pathlib import Path
from typing import Any

import discord
import pytest

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.commands import commands
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.model import ListedPaper, PaperList
from tests.conftest import seed_page, write_page
from tests.fakediscord import FakeDiscord, FakeMessage

pytest_plugins = ["tests.fakediscord.fixtures"]

MANAGE = discord.Permissions(manage_channels=True)
TITLE = ('@everyone @here <@1234567890> <@&42> <#99> **bold** __u__ ~~s~~ `code` ||spoiler|| '
         '[link](https://evil.example/) <script>alert(1)</script> &amp; \x01\x1b[31m\u202e\u200b > quote # h')
VALUES = [
    "'; DROP TABLE papers; --", '" OR 1=1 --', '"', "*", "NEAR(", "NEAR(a b, 5)", "OR", "a OR", "-", "- x",
    "AND NOT", "title:x", "^start", "{a b}:c", "(((", "papers_fts MATCH 'x'", "%_%", "\\", "",
    "\x00\x01\x1b[31mred\x7f\u202e\u200b", "line1\nline2\r\n\tend", "x" * 10_000, "é" * 10_000,
    "@everyone " * 1_000, "強化学習 🤖 ﷽ a\u0301\u0301\u0301 \u05e9\u05dc\u05d5\u05dd", TITLE,
    "https://arxiv.org/abs/2412.10400v99?x=<script>", "2412.10400" + "\x00",
]
SAMPLES = {"paper": "2412.10400", "direction": "Reinforcement learning for reasoning", "query": "reward",
           "sort": "cited"}
# Mentions from the hostile text, unescaped (the bot's own <#channel> of a track is fine).
LIVE_MENTION = re.compile(r"@(everyone|here)|(?<!\\)<(@[!&]?|#)(1234567890|42|99)>", re.IGNORECASE)
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e]")


def sample(o: Any) -> Any:
    """A valid value for an option (by name, else by kind)."""
    if o.name in SAMPLES:
        return SAMPLES[o.name]
    return {"paper": "2412.10400", "direction": SAMPLES["direction"], "text": "reward",
            "choice": o.choices[0] if o.choices else "", "int": 1}.get(o.kind, "x")


def check(msg: FakeMessage, what: str, *, echo: bool = False) -> None:
    """`echo`: an ephemeral answer that may quote the user's own input (only they see it;
    markup they typed may show, but never a raw @everyone/@here)."""
    assert msg.allowed_mentions == {"parse": []}, what
    text = msg.text()
    live = re.compile("@(everyone|here)", re.IGNORECASE) if echo else LIVE_MENTION
    assert not live.search(text), f"{what}: a live mention in {text[:300]!r}"
    assert not CONTROL.search(text), f"{what}: a control character in {text[:300]!r}"
    assert echo or "<script>" not in text or "\\<script" in text, what


@pytest.fixture
def hostile_db(db_path: Path, tmp_path: Path, clock) -> Path:
    """The seeds, then 2412.10400 again, a day newer, with a hostile title, direction name and
    a new hostile citer (so a track made in between gets an alert about it)."""
    ingest_paths(open_db(db_path), [SEEDS_DIR], clock=clock)
    page = seed_page("2412.10400")
    assert page.built_on_by is not None
    lst, first = page.built_on_by, page.placements[0]
    citer = ListedPaper(id="2611.99999", title=TITLE, year=2026, position=lst.shown + 1,
                        url="https://mlsanity.com/paper/2611.99999/")
    name = f"{first.direction} {TITLE}"
    placed = dataclasses.replace(first, direction=name, breadcrumb=f"{first.area} / {name}")
    page = dataclasses.replace(
        page, title=f"{page.title} {TITLE}", direction=name, placements=(placed, *page.placements[1:]),
        cited_by=page.cited_by + 1, data_through=page.data_through.replace(day=min(28, page.data_through.day + 1)),
        built_on_by=PaperList(shown=lst.shown + 1, total=lst.total + 1, items=(*lst.items, citer)))
    write_page(tmp_path / "hostile", page)
    return db_path


async def test_every_command_with_hostile_options_over_hostile_titles(fake_discord: FakeDiscord, hostile_db: Path,
                                                                      tmp_path: Path, clock) -> None:
    fake = fake_discord
    alerts = fake.guild.channel("alerts")
    bot = MapwatchBot(hostile_db, base_url="http://feeds.example", guild_ready_timeout=0.05, poll=False)
    before = sqlite3.connect(hostile_db).execute("SELECT count(*) FROM papers").fetchone()
    answered = 0
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": "2412.10400"}, channel_id=alerts.id, permissions=MANAGE)
        check(await h.wait_message(), "/track")
        clock.advance(days=1)
        await asyncio.to_thread(ingest_paths, open_db(hostile_db), [tmp_path / "hostile"], clock=clock)
        assert await bot.deliver_alerts() == 1
        alert = fake.channel_messages(alerts.id)[0]
        check(alert, "the alert")
        assert alert.embed["title"].endswith(": 1 new citer") and len(alert.embed["title"]) <= 256

        for name, cmd in sorted(commands().items(), key=lambda kv: kv[0] in ("track", "untrack")):
            defaults = {o.name: sample(o) for o in cmd.options if o.required or o.name in SAMPLES}
            free = [o.name for o in cmd.options if o.kind in ("text", "paper", "direction")]
            runs = [dict(defaults)] + [{**defaults, opt: v} for opt in free for v in VALUES]
            for opts in runs:
                h = await fake.slash(name, opts, channel_id=alerts.id, permissions=MANAGE)
                what = f"/{name} {str(opts)[:80]!r}"
                msg = await h.wait_message()  # a 400 over Discord's limits would raise here
                check(msg, what, echo=h.ephemeral and opts != defaults)
                answered += 1
                if msg.buttons():  # the next page of a paged answer is clean too
                    enabled = [b for b in msg.buttons() if not b.get("disabled")]
                    if enabled:
                        turned = await fake.click(msg, enabled[-1]["custom_id"])
                        data = (await turned.wait_response())["data"]
                        assert LIVE_MENTION.search(str(data.get("embeds"))) is None, what
        for focused in ("paper", "direction"):
            for v in VALUES:
                cmd = "paper" if focused == "paper" else "direction"
                choices = await fake.autocomplete(cmd, {focused: v}, focused=focused)
                assert len(choices) <= 25 and all(len(c["name"]) <= 100 for c in choices)
                # Choice names are plain text (no markdown, no mentions), shown as they are.
                assert not [c for c in choices if re.search("@(everyone|here)", c["name"]) or CONTROL.search(c["name"])]
    for msg in fake.messages.values():  # everything the bot sent, follow-ups and edits included
        assert msg.allowed_mentions == {"parse": []}, (msg.kind, msg.text()[:200])
    assert fake.unknown_routes == []
    conn = sqlite3.connect(hostile_db)
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert conn.execute("SELECT count(*) FROM papers").fetchone() == (before[0] + 1,)  # the hostile citer only
    assert conn.execute("SELECT count(*) FROM tracks").fetchone() == (0,)  # /untrack removed it; no hostile one
    print(f"\nbot abuse: {answered} answers, {len(VALUES)} hostile values")


def test_mapwatch_ask_with_hostile_options(hostile_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The terminal path to the same commands: one clear answer or one error line, no traceback."""
    from mapwatch.cli import main

    monkeypatch.chdir(tmp_path)  # where ask writes a /paper chart

    for name in ("paper", "search", "citers", "direction", "refs"):
        for v in VALUES:
            if "\x00" in v:  # argv cannot carry NUL
                continue
            code = main(["ask", f"/{name} {v}", "--db", str(hostile_db)])
            out, err = capsys.readouterr()
            assert code in (0, 1, 2), (name, v[:40])
            assert (out.strip() or err.strip()) and "Traceback" not in out + err, (name, v[:40])
            assert len(err.splitlines()) <= 1, (name, v[:40], err[:300])
            assert not CONTROL.search(out + err), (name, v[:40], (out + err)[:300])  # no terminal escapes
