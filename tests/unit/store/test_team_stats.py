"""Who cites a team ("Beyond the anchors", part 5): /team stats and the team page's "Who cites
it". The counts are checked against plain SQL over the stored rows; self-citations are counted
apart, citers of unknown authors counted as such, citations older than the window left out; the
chart is a PNG Pillow opens, attached through the fake Discord and served next to the page."""

from __future__ import annotations

import io
from datetime import datetime, timedelta
from pathlib import Path

import discord
import pytest
from PIL import Image

from mapwatch.bot.commands import run_core
from mapwatch.bot.rendering import render_people
from mapwatch.bot.rendering.render import to_text
from mapwatch.bot.rendering.replies import Ctx
from mapwatch.feeds import people_feeds
from mapwatch.feeds.team_chart import team_chart_png
from mapwatch.store.database.db import open_db
from mapwatch.store.questions import team_stats
from mapwatch.store.questions import teams as people
from mapwatch.store.questions.authors import self_citations
from mapwatch.store.questions.person_names import group_people
from mapwatch.store.questions.types import Author
from mapwatch.store.records import AuthorRecord, Institution, OpenAlexWork
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions import teams
from tests import openapi_check
from tests.author_helpers import OTHER, SELF, WANG, store_authors
from tests.conftest import FakeClock, seed_page
from tests.fakediscord import FakeDiscord
from tests.follow_helpers import SURVEY, TECH, grow, make_bot, store_pages
from tests.htmlcheck import assert_good_page, assert_nothing_injected, parse_strict, text_of

pytest_plugins = ["tests.fakediscord.fixtures"]

GUILD = 111
MANAGE_ALL = discord.Permissions(manage_channels=True, manage_guild=True)
LATER = 100  # days from the seeds' first read to the new citers
ADA = AuthorRecord("Ada Lovelace", "A100", None, (Institution("Massachusetts Institute of Technology", "I63966007"),))
BOB = AuthorRecord("Bob Smith", "A200", None, (Institution("University of Oxford", "I40120149"),))
CAROL = AuthorRecord("Carol Jones", "A300", None, (Institution("Massachusetts Institute of Technology", "I63966007"),))
ADA_BY_NAME = AuthorRecord("A. Lovelace")  # no id: the one id'd person her name fits (Ada, A100)
EVE = AuthorRecord("Eve Adams", None, "0000-0002-1694-233X")  # an ORCID only
# (id, title, the team papers it cites, its authors, its venue)
NEW = [("2612.00001", "Ada and Bob cite the survey", (SURVEY,), (ADA, BOB), "NeurIPS"),
       ("2612.00002", "The survey's author cites it", (SURVEY,), (ADA, WANG), "NeurIPS"),  # a self-citation
       ("2612.00003", "A. Lovelace cites both", (SURVEY, TECH), (ADA_BY_NAME, CAROL), "neurips"),
       ("2612.00004", "Nobody knows who wrote this", (SURVEY,), (), None),  # authors not known yet
       ("2612.00005", "The survey's author cites both", (SURVEY, TECH), (WANG, BOB), "ICML"),  # not every one self
       ("2612.00006", "Eve cites the technical survey", (TECH,), (EVE,), "arXiv (Cornell University)")]


def setup(db, clock: FakeClock, guild: int = GUILD) -> None:
    """The seeds read on the clock's first day, their authors; LATER days on, six new citers with theirs."""
    store_pages(db, [seed_page(SURVEY), seed_page(TECH)], clock)
    store_authors(db, clock())
    clock.advance(days=LATER)
    survey, tech = seed_page(SURVEY), seed_page(TECH)
    survey = grow(survey, [(pid, title, 2026) for pid, title, cites, _, _ in NEW if SURVEY in cites])
    tech = grow(tech, [(pid, title, 2026) for pid, title, cites, _, _ in NEW if TECH in cites])
    store_pages(db, [survey, tech], clock)
    save_openalex(db, [OpenAlexWork(pid, f"W{n}", authors, venue, None)
                       for n, (pid, _, _, authors, venue) in enumerate(NEW) if authors], [p[0] for p in NEW], clock())
    team, _ = teams.ensure_team(db, guild, "Lab", 1, clock())
    teams.add_member(db, team, "paper", SURVEY, "The survey", 1, clock())
    teams.add_member(db, team, "paper", TECH, "The technical survey", 1, clock())


@pytest.fixture
def lab(db, clock: FakeClock):
    setup(db, clock)
    return people.find_team(db, GUILD, "lab")


def ctx(now: datetime) -> Ctx:
    return Ctx(GUILD, 222, 333, now, can_manage=True, base_url="http://feeds.example")


# -- the counts, against plain SQL -----------------------------------------------------------------

def expected(db, papers: set[str], since: str) -> dict:
    """What the lists should hold, by plain SQL over the stored rows (and self_citations' rule)."""
    marks = ",".join("?" * len(papers))
    pairs = db.conn.execute(f"SELECT citing_id, cited_id FROM citations WHERE cited_id IN ({marks})"
                            " AND first_seen >= ?", [*sorted(papers), since]).fetchall()
    citing = {a for a, _ in pairs}
    own = self_citations(db, [tuple(p) for p in pairs])
    selfs = {a for a in citing if all((a, b) in own for x, b in pairs if x == a)}
    others = sorted(citing - selfs)
    marks = ",".join("?" * len(others))
    named = {r[0] for r in db.conn.execute(f"SELECT DISTINCT paper_id FROM paper_authors WHERE paper_id IN ({marks})",
                                           others)}

    def tally(sql: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for key, paper in db.conn.execute(sql.format(marks=marks), others):
            out.setdefault(key, set()).add(paper)
        return out

    institutions = tally("SELECT i.name, pai.paper_id FROM paper_author_institutions pai JOIN institutions i"
                         " ON i.id = pai.institution_id WHERE pai.paper_id IN ({marks})")
    people_ = tally("SELECT coalesce(author_id, orcid, 'name:' || name), paper_id FROM paper_authors"
                    " WHERE paper_id IN ({marks})")
    venues = tally("SELECT lower(w.venue), w.paper_id FROM openalex_works w WHERE w.paper_id IN ({marks})"
                   " AND w.venue IS NOT NULL AND w.venue NOT LIKE 'arXiv%'")
    return {"citing": len(citing), "self": selfs, "unknown": len(others) - len(named),
            "institutions": {k: len(v) for k, v in institutions.items()},
            "people": people_, "venues": {k: len(v) for k, v in venues.items()}}


def test_the_counts_match_the_database_and_the_window(db, clock: FakeClock, lab) -> None:
    papers = people.team_papers(db, lab)
    assert papers == {SURVEY, TECH}
    since = team_stats.since_days(clock(), 90)
    st = team_stats.cited_by(db, papers, since)
    want = expected(db, papers, since)
    # the window: only the six new citers (the seeds' were first seen LATER days ago)
    assert st.citing == want["citing"] == len(NEW) and st.cited == 2 and st.papers == 2
    # self-citations apart: the survey's author citing only it; citing both (one not self), not apart
    assert want["self"] == {"2612.00002"} and st.self_citing == 1 and st.counted == 5
    assert st.authors_unknown == want["unknown"] == 1
    assert {t.label: t.papers for t in st.institutions} == want["institutions"] == {
        "Massachusetts Institute of Technology": 2, "University of Oxford": 2, "Zhejiang University": 1}
    # people: "A. Lovelace" (no id) is Ada (A100), the one person of that name; the self-citation's Ada not counted
    by_sql = {k: len(v) for k, v in want["people"].items()}
    assert by_sql.pop("name:A. Lovelace") == 1 and by_sql["A100"] == 1
    by_sql["A100"] = len(want["people"]["A100"] | want["people"]["name:A. Lovelace"])
    assert {t.key: t.papers for t in st.people} == by_sql == {
        "A100": 2, "A200": 2, "A300": 1, "A5023888391": 1, "0000-0002-1694-233X": 1}
    assert [t.label for t in st.people][:2] == ["Ada Lovelace", "Bob Smith"]  # most first, then by name
    # venues in any case, arXiv itself none
    assert {t.key: t.papers for t in st.venues} == want["venues"] == {"neurips": 2, "icml": 1}
    assert st.venues[0].label == "NeurIPS" and st.no_venue == 2  # the unknown authors' and Eve's
    # a wider window takes in the seeds' citers too: still as the SQL says
    since = team_stats.since_days(clock(), 365)
    st, want = team_stats.cited_by(db, papers, since), expected(db, papers, since)
    assert st.citing == want["citing"] > len(NEW) and st.self_citing == len(want["self"]) == 1
    # SELF shares the survey's first author, but cites the technical survey too (no author of it known): counted
    assert SELF not in want["self"] and st.authors_unknown == want["unknown"]
    assert {t.label: t.papers for t in st.institutions} == want["institutions"]
    assert "Peking University" in want["institutions"]  # OTHER's, first seen with the seeds
    assert OTHER not in want["self"]
    # a narrow window that ends before the new citers' first sighting holds nothing of theirs
    assert team_stats.cited_by(db, papers, team_stats.since_days(clock(), 0)).citing == 0


def test_the_lists_are_cut_to_the_top_and_the_citers_counted_bounded(db, clock: FakeClock, lab) -> None:
    papers, since = people.team_papers(db, lab), team_stats.since_days(clock(), 90)
    st = team_stats.cited_by(db, papers, since, top=1)
    assert len(st.institutions) == len(st.people) == len(st.venues) == 1
    assert (st.institutions_total, st.people_total, st.venues_total) == (3, 5, 2)
    assert st.examined == st.citing == len(NEW)
    # at most `limit` citing papers counted: those first seen the latest (here at one instant: the highest ids)
    few = team_stats.cited_by(db, papers, since, limit=3)
    assert (few.citing, few.examined, few.cited, few.self_citing, few.authors_unknown) == (6, 3, 2, 0, 1)
    assert {t.key: t.papers for t in few.venues} == {"icml": 1} and few.no_venue == 2
    assert {t.key for t in few.people} == {"A5023888391", "A200", "0000-0002-1694-233X"}
    reply = render_people.team_stats(lab, 90, few, None, "")
    assert "The newest 3 of them are counted." in reply.embeds[0].description and not reply.files


def test_people_are_told_apart_as_everywhere() -> None:
    rows = [Author("Ingrid Halvorsen", "A1"), Author("I. Halvorsen"), Author("Inga Halvorsen"),
            Author("Ingrid Halvorsen", None, "0000-0001-0000-0001"), Author("Bob Smith", "A2"),
            Author("Bob Smith", "A3"), Author("Bob Smith"), Author("Jo Li", "A9", "0000-0001-0000-0009"),
            Author("J. Li", "A8", "0000-0001-0000-0009")]
    # Ingrid's id, her ORCID and her initial are one person; Inga is another; a name two ids
    # share is never guessed; an ORCID in common joins two OpenAlex ids
    assert group_people(rows) == [(0, 1, 3), (2,), (4,), (5,), (6,), (7, 8)]


# -- /team stats -------------------------------------------------------------------------------------

def png_size(data: bytes) -> tuple[int, int]:
    with Image.open(io.BytesIO(data)) as img:
        img.verify()
    with Image.open(io.BytesIO(data)) as img:
        assert img.format == "PNG"
        return img.size


def test_team_stats_answers_with_the_chart(db, clock: FakeClock, lab) -> None:
    reply, ok = run_core(db, ctx(clock()), "team stats", {"name": "Lab"})
    assert ok
    [embed] = reply.embeds
    assert embed.title == "Who cites Lab" and embed.url == f"http://feeds.example/teams/{lab.feed_slug}/"
    assert "**6** papers were first seen citing 2 of the team's 2 papers in the last 90 days" in embed.description
    assert "**1 self-citation**" in embed.description and "authors not known yet: **1**" in embed.description
    fields = {f.name: f.value for f in embed.fields}
    assert fields["People"].startswith("1. Ada Lovelace (`A100`) · 2\n2. Bob Smith (`A200`) · 2")
    assert "Massachusetts Institute of Technology · 2" in fields["Institutions"]
    assert fields["Venues"] == "1. NeurIPS · 2\n2. ICML · 1"
    [chart] = reply.files
    assert chart.filename == "team-stats-lab.png" and png_size(chart.data)[0] == 900
    # days: the seeds' citers too; out of bounds, or another server's team: a short answer only to the asker
    wide, _ = run_core(db, ctx(clock()), "team stats", {"name": "lab", "days": "365"})
    assert "in the last 365 days" in wide.embeds[0].description
    assert "Peking University" in {f.name: f.value for f in wide.embeds[0].fields}["Institutions"]
    for opts in ({"name": "Lab", "days": "0"}, {"name": "Lab", "days": "many"}, {"name": "Other lab"}):
        r, ok = run_core(db, ctx(clock()), "team stats", opts)
        assert not ok and r.ephemeral, opts
    quiet, ok = run_core(db, ctx(clock() + timedelta(days=2)), "team stats", {"name": "Lab", "days": "1"})
    assert ok and not quiet.files and "No paper was first seen citing team **Lab**'s 2 papers" in quiet.content
    text = to_text(run_core(db, ctx(clock()), "team stats", {"name": "Lab"})[0])
    assert "[attachment: team-stats-lab.png," in text


def test_the_chart_is_a_png_and_a_hostile_label_draws(db, clock: FakeClock, lab) -> None:
    st = team_stats.cited_by(db, people.team_papers(db, lab), team_stats.since_days(clock(), 365))
    png = team_chart_png(st, "Lab $\\frac{1}{0}$ [x](http://evil.example)")
    assert png is not None and png_size(png) == (900, 64 + sum(26 + 24 * max(1, len(e)) + 18 for _, e, _ in st.lists))
    assert team_chart_png(team_stats.cited_by(db, set(), "2026-01-01"), "Lab") is None  # nothing to draw


async def test_team_stats_attaches_the_chart_in_discord(fake_discord: FakeDiscord, db_path: Path,
                                                        clock: FakeClock) -> None:
    db = open_db(db_path)
    setup(db, clock, fake_discord.guild.id)
    db.close()
    bot = make_bot(db_path, clock)
    async with fake_discord.connected(bot):
        synced = {c["name"]: c for c in fake_discord.commands()}
        assert "stats" in {o["name"] for o in synced["team"]["options"]}
        h = await fake_discord.slash("team stats", {"name": "Lab", "days": 90})
        msg = await h.wait_message()
        assert not h.ephemeral and msg.embed["title"] == "Who cites Lab"
        assert [a["filename"] for a in msg.attachments] == ["team-stats-lab.png"]
        [upload] = msg.files
        assert upload.filename == "team-stats-lab.png" and png_size(upload.data)[0] == 900
        uploads = [r for r in fake_discord.requests if r.files]
    assert uploads and openapi_check.recorded_errors([r for r in fake_discord.requests if not r.files]) == []
    for r in uploads:  # discord.py numbers a message's attachments 0, 1, …: Discord takes them, its spec says strings
        body = {**r.json, **({"data": {**r.json["data"], "attachments": [
            {**a, "id": str(a["id"])} for a in r.json["data"]["attachments"]]}} if "data" in r.json else {
            "attachments": [{**a, "id": str(a["id"])} for a in r.json["attachments"]]})}
        assert openapi_check.request_errors(r.method, r.path, body) == [], r.path


# -- the team's page ---------------------------------------------------------------------------------

def test_the_team_page_shows_who_cites_it(db, clock: FakeClock, lab) -> None:
    s = people_feeds.subject(db, people_feeds.TEAM_PAGE, lab.feed_slug)
    assert s is not None
    html = people_feeds.build_file(db, people_feeds.TEAM_PAGE, lab.feed_slug, "http://feeds.example", 50, clock())
    assert html is not None
    root = assert_good_page(html, "team page")
    assert_nothing_injected(root, "team page")
    [section] = [el for el in root.iter("section") if el.get("aria-labelledby") == "who-cites"]
    assert text_of(section.find("h2")) == "Who cites it"
    st = people_feeds.stats(db, s, clock())
    assert st.since == team_stats.since_day_start(clock(), people_feeds.STATS_DAYS) == "2026-11-11T00:00:00+00:00"
    tables = {text_of(t.find("thead/tr/th[2]")): [[text_of(td) for td in tr.findall("td")]
                                                  for tr in t.findall("tbody/tr")] for t in section.iter("table")}
    assert tables["Institution"] == [[str(n), t.label, str(t.papers)] for n, t in enumerate(st.institutions, 1)]
    assert tables["Person"][0] == ["1", "Ada Lovelace", "2"] and len(tables["Person"]) == st.people_total
    assert tables["Venue"] == [["1", "NeurIPS", "2"], ["2", "ICML", "1"]]
    note = text_of(section.find("p"))
    assert "since 11 November 2026 (the last 90 days): 6, citing 2 of its 2 papers" in note
    assert "1 self-citation " in note and "authors not known yet: 1" in note
    [img] = section.iter("img")
    assert img.get("src") == "who-cites.png" and img.get("alt")
    chart = people_feeds.build_file(db, people_feeds.TEAM_CHART, lab.feed_slug, "", 50, clock())
    assert chart is not None and png_size(chart) == (900, int(img.get("height")))
    assert people_feeds.route(f"/teams/{lab.feed_slug}/who-cites.png") == (people_feeds.TEAM_CHART, lab.feed_slug)


async def test_the_page_and_chart_are_served_with_an_etag_of_the_day(db_path: Path, clock: FakeClock,
                                                                     tmp_path: Path) -> None:
    import aiohttp

    from mapwatch.feeds.serving.ondemand import PaperCache
    from mapwatch.feeds.serving.server import start_server

    db = open_db(db_path)
    setup(db, clock)
    slug = people.find_team(db, GUILD, "lab").feed_slug
    db.close()
    out = tmp_path / "public"
    out.mkdir()
    runner, port = await start_server(out, "127.0.0.1", 0, papers=PaperCache(db_path, "http://feeds.example",
                                                                              clock=clock))
    try:
        async with aiohttp.ClientSession() as session:
            async def get(path: str, etag: str | None = None) -> tuple[int, str, bytes, str]:
                async with session.get(f"http://127.0.0.1:{port}{path}",
                                       headers={"If-None-Match": etag} if etag else {}) as r:
                    return r.status, r.headers.get("ETag", ""), await r.read(), r.headers.get("Content-Type", "")

            status, tag, body, kind = await get(f"/teams/{slug}/who-cites.png")
            assert status == 200 and kind == "image/png" and png_size(body)[0] == 900
            assert (await get(f"/teams/{slug}/who-cites.png", tag))[0] == 304
            status, page_tag, html, _ = await get(f"/teams/{slug}/")
            assert status == 200 and b'src="who-cites.png"' in html
            parse_strict(html)
            clock.advance(days=1)  # the window moved: new bytes may follow, so a new ETag
            assert (await get(f"/teams/{slug}/who-cites.png", tag))[0] == 200
            assert (await get(f"/teams/{slug}/", page_tag))[0] == 200
            assert (await get("/teams/no-such-team-1234/who-cites.png"))[0] == 404
    finally:
        await runner.cleanup()
