"""/export: the citers of a paper, a team or a person as an attached BibTeX, CSV or RIS file, through
its core (as `mapwatch ask` runs it) and through the real discord.py client against the fake Discord."""

from __future__ import annotations

import csv
import io
from dataclasses import replace
from pathlib import Path

import bibtexparser
import pytest
import rispy

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.rendering import render
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.subscriptions import teams
from tests.author_helpers import OTHER, SELF, SURVEY, WANG, store_authors, work
from tests.bot_helpers import GUILD, ctx
from tests.fakediscord import FakeDiscord
from tests.system.test_bot_commands import ask

pytest_plugins = ["tests.fakediscord.fixtures"]


def survey_citers(db) -> set[str]:
    return {r for (r,) in db.conn.execute("SELECT citing_id FROM citations WHERE cited_id = ?", (SURVEY,))}


@pytest.fixture
def with_authors(seeded, clock):
    store_authors(seeded, clock())
    return seeded


def test_export_attaches_one_record_per_citer_in_each_format(with_authors) -> None:
    expected = survey_citers(with_authors)
    r, ok = ask(with_authors, "export", paper=SURVEY)  # BibTeX unless told
    assert ok and not r.ephemeral and [f.filename for f in r.files] == [f"citers-{SURVEY}.bib"]
    assert r.content.startswith(f"{len(expected)} papers citing Reinforcement Learning Enhanced LLMs")
    assert "1 self-citation marked" in r.content
    library = bibtexparser.parse_string(r.files[0].data.decode("utf-8"))
    assert library.failed_blocks == [] and {e["eprint"] for e in library.entries} == expected
    assert {e["eprint"]: e["mapwatch-self-citation"] for e in library.entries}[SELF] == "true"

    r, ok = ask(with_authors, "export", paper=SURVEY, format="csv")
    rows = {row["arxiv_id"]: row for row in csv.DictReader(io.StringIO(r.files[0].data.decode(), newline=""))}
    assert ok and r.files[0].filename.endswith(".csv") and set(rows) == expected
    assert rows[SELF]["self_citation"] == "true" and rows[OTHER]["self_citation"] == "false"

    r, ok = ask(with_authors, "export", paper=SURVEY, format="ris", since="2026-11-01")
    refs = rispy.loads(r.files[0].data.decode())
    assert ok and r.files[0].filename.endswith(".ris") and len(refs) == len(expected)
    assert "first seen since 2026-11-01" in r.content
    r, ok = ask(with_authors, "export", paper=SURVEY, since="2027-01-01")
    assert ok and r.ephemeral and r.files == () and "nothing to export" in r.content


def test_export_of_a_team_and_of_a_person(with_authors, clock) -> None:
    team, _ = teams.ensure_team(with_authors, GUILD, "Reading group", 1, clock())
    teams.add_member(with_authors, team, "author", WANG.author_id or "", WANG.name, 1, clock())
    r, ok = ask(with_authors, "export", team="reading-group", format="csv")
    assert ok and r.files[0].filename == "citers-team-reading-group.csv" and "team **Reading group**" in r.content
    cited = {SURVEY, SELF}
    expected = {c for (c,) in with_authors.conn.execute(
        "SELECT DISTINCT citing_id FROM citations WHERE cited_id IN (?, ?)", sorted(cited))}
    assert {row["arxiv_id"] for row in csv.DictReader(io.StringIO(r.files[0].data.decode()))} == expected
    r2, ok2 = ask(with_authors, "export", author=WANG.orcid or "", format="csv")
    assert ok2 and r2.files[0].data == r.files[0].data  # the team is Wang
    assert r2.files[0].filename == f"citers-author-{WANG.author_id}.csv"
    # teams are a server's: another server, or a DM, has none of that name
    r, ok = ask(with_authors, "export", replace(ctx(), guild_id=GUILD + 1), team="reading-group")
    assert not ok and r.ephemeral and "No team" in render.to_text(r)
    r, ok = ask(with_authors, "export", ctx(guild=None), team="reading-group")
    assert not ok and "Teams belong to a server" in render.to_text(r)


def test_export_asks_which_person_a_shared_name_means(with_authors, clock) -> None:
    from mapwatch.store.records import AuthorRecord
    from mapwatch.store.scholarly.saved import save_openalex

    save_openalex(with_authors, [work(OTHER, AuthorRecord("Shuhe Wang", "A5999999999"))], [OTHER], clock())
    r, ok = ask(with_authors, "export", author="Shuhe Wang")
    text = render.to_text(r)
    assert ok and r.ephemeral and r.files == () and "Run /export author: again" in text and "A5999999999" in text


@pytest.mark.parametrize("options, says", [
    ({}, "Export the citers of one thing"),
    ({"paper": SURVEY, "team": "x"}, "Export the citers of one thing"),
    ({"paper": "9999.99999"}, "No paper matches"),
    ({"paper": SURVEY, "format": "xml"}, "format must be one of: bibtex, csv, ris"),
    ({"paper": SURVEY, "since": "yesterday"}, "since must be a date as YYYY-MM-DD"),
    ({"author": "Nobody Known"}, "No author matches"),
])
def test_export_mistakes_are_short_answers_only_the_asker_sees(seeded, options: dict[str, str], says: str) -> None:
    r, ok = ask(seeded, "export", **options)
    assert not ok and r.ephemeral and r.files == () and says in render.to_text(r)


async def test_export_file_reaches_discord_and_parses(fake_discord: FakeDiscord, db_path: Path, clock) -> None:
    db = open_db(db_path)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    store_authors(db, clock())
    expected = survey_citers(db)
    db.close()
    bot = MapwatchBot(db_path, base_url="http://feeds.example", guild_ready_timeout=0.05, alert_interval=60)
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("export", {"paper": SURVEY, "format": "bibtex"})
        msg = await h.wait_message()
        assert [f.filename for f in msg.files] == [f"citers-{SURVEY}.bib"]
        assert msg.attachments[0]["filename"] == f"citers-{SURVEY}.bib"
        library = bibtexparser.parse_string(msg.files[0].data.decode("utf-8"))
        assert library.failed_blocks == [] and {e["eprint"] for e in library.entries} == expected
        h = await fake_discord.slash("export", {"paper": SURVEY, "format": "ris"})
        msg = await h.wait_message()
        assert len(rispy.loads(msg.files[0].data.decode("utf-8"))) == len(expected)
        h = await fake_discord.slash("export", {"paper": "9999.99999"})
        msg = await h.wait_message()
        assert h.ephemeral and not msg.files and "No paper matches" in msg.text()
