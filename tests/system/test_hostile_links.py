"""Hostile link schemes: only http(s) links from pages are stored, and none other is shown.

Each place a link comes from (the page's own `HTML:` link, its `arXiv:` link, a direction
link, a list link) is tried with a table of hostile spellings: the page is rejected with its
line and reason. Then rows written as an older version could have written them (hostile
URLs put straight into the database) go through every output: the published feeds (hrefs
and escaped content), the OPML, the index page, `mapwatch ask`, and the bot's answers,
embeds, buttons, alerts and follow deliveries through the fake Discord. Every hostile link
carries the marker EVIL, which no title has: it must appear in no output.
"""

from __future__ import annotations

import html
import re
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import discord
import feedparser
import pytest

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.commands import run_core
from mapwatch.bot.interactions import to_embed
from mapwatch.bot.rendering.render import to_text
from mapwatch.bot.rendering.replies import Ctx
from mapwatch.cli.ask import parse_slash
from mapwatch.feeds.publish import publish
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.errors import ParseError
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.parse import parse_page
from mapwatch.store.urls import safe_http_url
from tests.fakediscord import FakeDiscord

pytest_plugins = ["tests.fakediscord.fixtures"]

ROOT = Path(__file__).resolve().parents[2]
MANAGE = discord.Permissions(manage_channels=True)
SEED = (SEEDS_DIR / "2412.10400.txt").read_text(encoding="utf-8")
# Hostile spellings; "{id}" is the paper's id, so the link still looks like a map link.
IN_PAGES = [
    "javascript:EVIL//mlsanity.com/paper/{id}/",
    "JaVaScRiPt:EVIL//mlsanity.com/paper/{id}/",
    "JAVASCRIPT:EVIL//mlsanity.com/paper/{id}/",
    "\x01javascript:EVIL//mlsanity.com/paper/{id}/",
    "javascript&colon;EVIL//mlsanity.com/paper/{id}/",
    "&#106;avascript:EVIL//mlsanity.com/paper/{id}/",
    "&#x6A;avascript&#x3A;EVIL//mlsanity.com/paper/{id}/",
    "javascript%3AEVIL//mlsanity.com/paper/{id}/",
    "data:text/html;base64,EVIL//mlsanity.com/paper/{id}/",
    "DATA:text/html,EVIL//mlsanity.com/paper/{id}/",
    "vbscript:EVIL//mlsanity.com/paper/{id}/",
    "file:///EVIL/mlsanity.com/paper/{id}/",
    "//EVIL.example/paper/{id}/",
    "https:EVIL/paper/{id}/",
    "https:///EVIL/paper/{id}/",
    "ftp://EVIL.example/paper/{id}/",
    "https://mlsanity.com/" + "EVIL" * 500 + "/paper/{id}/",  # plain, but over 2,000 characters
]
# Only in stored rows: whitespace a page line cannot carry, NUL (a page with it is binary).
IN_ROWS = [
    *IN_PAGES,
    " javascript:EVIL//mlsanity.com/paper/{id}/",
    "java\tscript:EVIL//mlsanity.com/paper/{id}/",
    "java\nscript:EVIL//mlsanity.com/paper/{id}/",
    "jav\r\nascript:EVIL//mlsanity.com/paper/{id}/",
    "\x00javascript:EVIL//mlsanity.com/paper/{id}/",
    "\u2028javascript:EVIL//mlsanity.com/paper/{id}/",
    "https://mlsanity.com/paper/{id}/\"><script>EVIL</script>",
    "https://mlsanity.com/paper/{id}/ onmouseover=EVIL",
]


def hostile(template: str, paper_id: str = "2412.10400") -> str:
    return template.replace("{id}", paper_id)


# -- the helper -------------------------------------------------------------------------------

@pytest.mark.parametrize("template", IN_ROWS)
def test_helper_refuses_every_hostile_spelling(template: str) -> None:
    assert safe_http_url(hostile(template)) is None


@pytest.mark.parametrize(("url", "expected"), [
    ("https://mlsanity.com/paper/2412.10400/", "https://mlsanity.com/paper/2412.10400/"),
    ("HTTP://mlsanity.com/x?a=1&b=2#c", "http://mlsanity.com/x?a=1&b=2#c"),
    ("  https://arxiv.org/abs/2412.10400\n", "https://arxiv.org/abs/2412.10400"),
    ("ht\ttps://arxiv.org/abs/2412.10400", "https://arxiv.org/abs/2412.10400"),  # as a browser reads it
    ("https://[::1]:8080/paper/1/", "https://[::1]:8080/paper/1/"),
    (None, None), ("", None), ("https://", None), ("https://[::1/x", None), ("https://x:99999/", None),
])
def test_helper_keeps_http_links(url: str | None, expected: str | None) -> None:
    assert safe_http_url(url) == expected


# -- where links come from: each rejects the page, with its line and reason -------------------

def _page_with(place: str, link: str) -> tuple[str, int]:
    """The seed page with one link replaced by `link`; the line it is on."""
    old = {"self": "https://mlsanity.com/paper/2412.10400/",
           "arxiv": "https://arxiv.org/abs/2412.10400",
           "direction": "https://mlsanity.com/lr/reinforcement-learning-for-reasoning/",
           "list": "https://mlsanity.com/paper/2509.02547/"}[place]
    assert SEED.count(old) == 1, place
    text = SEED.replace(old, link)
    line = text[:text.index(link)].count("\n") + 1
    return text, line


@pytest.mark.parametrize("template", IN_PAGES)
@pytest.mark.parametrize("place", ["self", "arxiv", "direction", "list"])
def test_a_hostile_link_rejects_the_page(place: str, template: str) -> None:
    link = hostile(template, "2509.02547" if place == "list" else "2412.10400")
    text, line = _page_with(place, link)
    with pytest.raises(ParseError) as e:
        parse_page(text.encode())
    assert e.value.line == line, (place, link, str(e.value))
    what = {"self": "HTML link", "arxiv": "arXiv link", "direction": "direction link",
            "list": "list item"}[place]
    assert e.value.reason.startswith(what), e.value.reason
    if place != "list" or "/paper/" in link:
        assert "not an http(s) link" in e.value.reason, e.value.reason


def test_a_bare_arxiv_id_in_the_header_becomes_its_arxiv_link() -> None:
    page = parse_page(SEED.replace("https://arxiv.org/abs/2412.10400", "2412.10400v2").encode())
    assert page.arxiv_url == "https://arxiv.org/abs/2412.10400"


def test_ingest_reports_the_issue_example_and_stores_nothing_of_it(tmp_path: Path) -> None:
    link = "javascript:alert(document.cookie)//mlsanity.com/paper/2412.10400/"
    text, line = _page_with("self", link)
    page = tmp_path / "pages" / "evil.txt"
    page.parent.mkdir()
    page.write_text(text, encoding="utf-8")
    db = tmp_path / "m.db"
    proc = subprocess.run([sys.executable, "-m", "mapwatch", "ingest", str(page.parent), "--db", str(db)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stderr
    assert f"rejected: {page.resolve()}:{line}: HTML link is not an http(s) link" in proc.stderr
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT count(*) FROM papers").fetchone() == (0,)
    assert conn.execute("SELECT count(*) FROM ingest_errors").fetchone() == (1,)


# -- outputs, over rows an older version could have stored ------------------------------------

def corrupt(db_path: Path) -> None:
    """Every paper's map and arXiv link, and every direction link, hostile (in rotation)."""
    conn = sqlite3.connect(db_path)
    with conn:
        ids = [r[0] for r in conn.execute("SELECT id FROM papers ORDER BY id")]
        for i, pid in enumerate(ids):
            conn.execute("UPDATE papers SET url = ?, arxiv_url = ? WHERE id = ?",
                         (hostile(IN_ROWS[i % len(IN_ROWS)], pid), hostile(IN_ROWS[(i + 3) % len(IN_ROWS)], pid),
                          pid))
        slugs = [r[0] for r in conn.execute("SELECT slug FROM directions ORDER BY slug")]
        for i, slug in enumerate(slugs):
            conn.execute("UPDATE directions SET url = ? WHERE slug = ?", (hostile(IN_ROWS[i % len(IN_ROWS)]), slug))
    assert sum("EVIL" in url for (url,) in conn.execute("SELECT url FROM papers")) == len(ids)
    conn.close()


def no_marker(text: str, what: str) -> None:
    decoded = html.unescape(html.unescape(text))
    at = decoded.lower().find("evil")
    assert at < 0, f"{what}: a hostile link leaked: {decoded[max(0, at - 80):at + 120]!r}"


@pytest.fixture
def stored(tmp_path: Path, clock) -> Path:
    db_path = tmp_path / "m.db"
    db = open_db(db_path)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    db.close()
    corrupt(db_path)
    return db_path


def same_site(href: str) -> bool:
    """A relative link between published pages: a plain path, no scheme, no host."""
    return bool(re.fullmatch(r"[A-Za-z0-9._~/?=#%-]*", href)) and not href.startswith("//") and ":" not in href


def test_feeds_opml_and_index_show_no_hostile_link(stored: Path, tmp_path: Path) -> None:
    out = tmp_path / "public"
    db = open_db(stored)
    publish(db, out, "http://feeds.example")
    db.close()
    files = sorted(p for p in out.rglob("*") if p.is_file() and p.suffix != ".png")
    kinds = {p.suffix for p in files}
    assert {".atom", ".opml", ".html"} <= kinds
    hrefs = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        no_marker(text, f.name)
        for href in re.findall(r'(?:href|htmlUrl|xmlUrl)="([^"]*)"', text):
            target = html.unescape(href)
            if f.suffix == ".html" and same_site(target):
                continue  # the web pages' links to each other and to their stylesheet
            assert safe_http_url(target) == target, (f.name, href)
            hrefs += 1
        if f.suffix == ".atom":
            feed = feedparser.parse(text)
            for e in feed.entries:
                assert e.link.startswith("https://arxiv.org/abs/"), e.link  # the fallback: the arXiv page
                for href in re.findall(r'href="([^"]*)"', e.content[0].value):
                    assert href.startswith("https://arxiv.org/abs/"), href
    assert hrefs > 100


ASKED = ["/paper 2412.10400", "/paper 2509.02547", "/citers 2412.10400", "/refs 2412.10400",
         "/direction Reinforcement learning for reasoning", "/directions", "/search reinforcement",
         "/rising", "/related 2412.10400"]


def test_answers_show_no_hostile_link(stored: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mapwatch.cli import main

    db = open_db(stored)
    ctx = Ctx(guild_id=None, channel_id=1, user_id=1, now=datetime(2026, 11, 2, tzinfo=UTC),
              base_url="http://feeds.example")
    for asked in ASKED:
        name, options = parse_slash(asked)
        reply, ok = run_core(db, ctx, name, options)
        assert ok, asked
        no_marker(to_text(reply), asked)
        for e in reply.embeds:
            assert e.url is None or safe_http_url(e.url) == e.url, (asked, e.url)
            for url in re.findall(r"\]\(([^)]*)\)", e.description + "".join(f.value for f in e.fields)):
                assert safe_http_url(url) == url, (asked, url)
            no_marker(str(to_embed(e).to_dict()), asked)
        assert main(["ask", asked, "--db", str(stored)]) == 0
        no_marker(capsys.readouterr().out, f"mapwatch ask {asked}")
    db.close()


def _message_dict(msg: Any) -> str:
    return repr(msg.embeds) + msg.text() + repr(msg.buttons())


async def test_discord_answers_alerts_and_follows_show_no_hostile_link(
        fake_discord: FakeDiscord, tmp_path: Path, clock, make_older_seeds) -> None:
    fake = fake_discord
    db_path = tmp_path / "m.db"
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    db.close()
    alerts = fake.guild.channel("alerts")
    bot = MapwatchBot(db_path, base_url="http://feeds.example", guild_ready_timeout=0.05, poll=False)
    async with fake.connected(bot):
        h = await fake.slash("track", {"paper": "2412.10400"}, channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        h = await fake.slash("follow", {"direction": "Reinforcement learning for reasoning"},
                             channel_id=alerts.id, permissions=MANAGE)
        await h.wait_message()
        clock.advance(days=1)
        db = open_db(db_path)
        ingest_paths(db, [SEEDS_DIR], clock=clock)  # new citers: an alert and a follow delivery
        db.close()
        corrupt(db_path)
        assert await bot.deliver_alerts() >= 2
        posted = fake.channel_messages(alerts.id)
        assert len(posted) >= 2
        for msg in posted:
            no_marker(_message_dict(msg), "an alert or follow delivery")
            for e in msg.embeds:
                assert "url" not in e or safe_http_url(e["url"]) == e["url"], e.get("url")
        checked = 0
        for asked in ASKED:
            name, options = parse_slash(asked)
            h = await fake.slash(name, options, channel_id=alerts.id)
            msg = await h.wait_message()
            no_marker(_message_dict(msg), asked)
            for e in msg.embeds:
                assert "url" not in e or safe_http_url(e["url"]) == e["url"], (asked, e.get("url"))
            for b in msg.buttons():  # page buttons carry no link at all
                assert "url" not in b, b
                if not b.get("disabled"):
                    turned = await fake.click(msg, b["custom_id"])
                    no_marker(repr((await turned.wait_response())["data"]), f"{asked}, next page")
            checked += 1
    assert checked == len(ASKED)
