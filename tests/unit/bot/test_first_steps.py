"""A newcomer's first steps with `mapwatch ask` on a fresh clone: a choice option given bare words,
a mistyped ORCID iD, a /graph picture, the feeds' address, and the replies' counts."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from mapwatch.bot.commands import run_core
from mapwatch.bot.rendering import render
from mapwatch.bot.rendering.replies import File
from mapwatch.cli import main
from mapwatch.cli.ask import AskError, parse_slash, write_attachments
from mapwatch.store.person_ids import orcid, orcid_misprint
from tests.bot_helpers import ctx

ROOT = Path(__file__).resolve().parents[3]
SURVEY = "2412.10400"
TITLE = "Reinforcement Learning Enhanced LLMs: A Survey"


def ask_error(command: str) -> str:
    with pytest.raises(AskError) as e:
        parse_slash(command)
    return str(e.value)


def answer(db, command: str, /, **options: object) -> tuple[str, bool]:
    everything = dataclasses.replace(ctx(), can_manage_guild=True, can_manage_webhooks=True)
    reply, ok = run_core(db, everything, command, options)
    return render.to_text(reply), ok


# -- 1. bare words that reach a choice option -------------------------------------------------

def test_bare_words_in_a_choice_option_say_how_they_were_read_and_what_was_meant() -> None:
    said = ask_error("/follow Reward modeling and RLHF")
    assert said == ("mode is instant, daily or weekly, not “and”. Bare words fill the options in turn: “Reward "
                    "modeling and RLHF” was read as direction:Reward keyword:modeling mode:and role:RLHF. "
                    "Did you mean “/follow direction:Reward modeling and RLHF”?")
    said = ask_error(f"/citers {TITLE}")
    assert said.startswith("sort is cited or newest, not “Enhanced LLMs: A Survey”.")
    assert said.endswith(f"Did you mean “/citers paper:{TITLE}”?")
    # The options typed by name stay in the suggestion, and what it suggests is read as meant.
    said = ask_error("/follow Reward modeling and RLHF mode:daily")
    suggested = re.search(r"Did you mean “(.+)”\?$", said)
    assert suggested and suggested.group(1) == "/follow direction:Reward modeling and RLHF mode:daily"
    assert parse_slash(suggested.group(1)) == ("follow", {"direction": "Reward modeling and RLHF",
                                                         "mode": "daily"})
    # A value typed by name is only told what the option takes; any case is taken.
    assert ask_error(f"/citers {SURVEY} sort:oldest") == "sort is cited or newest, not “oldest”."
    assert parse_slash(f"/citers {SURVEY} sort:Newest")[1]["sort"] == "newest"


def test_every_choice_option_is_refused_in_the_same_words_where_discord_would_not(seeded) -> None:
    for name, options, said in [
        ("citers", {"paper": SURVEY, "sort": "oldest"}, "sort is cited or newest, not “oldest”."),
        ("track", {"paper": SURVEY, "mode": "hourly"}, "mode is instant, daily or weekly, not “hourly”."),
        ("track", {"paper": SURVEY, "threads": "maybe"}, "threads is on or off, not “maybe”."),
        ("follow", {"direction": "Reward modeling and RLHF", "self": "*all*"},
         "self is show or hide, not “\\*all\\*”."),  # escaped: shown as typed
        ("related", {"paper": SURVEY, "exclude_direct": "perhaps"}, "exclude_direct is yes or no, not “perhaps”."),
    ]:
        text, ok = answer(seeded, name, **options)
        assert not ok and text.startswith(said), (name, text)


# -- 2. an ORCID iD with a wrong check digit ---------------------------------------------------

def test_an_orcid_with_a_wrong_check_digit_is_said_to_be_one_not_searched_as_a_name(seeded) -> None:
    assert orcid("0000-0002-1825-0097") and orcid("https://orcid.org/0000-0002-1694-233X")
    assert orcid_misprint("0000-0002-1825-0097") is None and orcid_misprint("Ingrid Halvorsen") is None
    wrong = "0000-0002-1825-0098 is not a valid ORCID (its check digit should be 7, by ISO 7064 MOD 11-2)"
    assert orcid_misprint("https://orcid.org/0000-0002-1825-0098") == wrong
    assert orcid_misprint("0000-0002-1694-2339") == ("0000-0002-1694-2339 is not a valid ORCID (its check digit "
                                                     "should be X, by ISO 7064 MOD 11-2)")
    for name, options in [("author", {"author": "0000-0002-1825-0098"}),
                          ("track", {"author": "0000-0002-1825-0098"}),
                          ("untrack", {"author": "0000-0002-1825-0098"}),
                          ("team add", {"name": "Reading group", "author": " 0000-0002-1825-0098"}),
                          ("webhook", {"url": "https://discord.com/api/webhooks/1/x",
                                       "author": "0000-0002-1825-0098"})]:
        text, ok = answer(seeded, name, **options)
        assert not ok and text.startswith(wrong), (name, text)
    assert seeded.conn.execute("SELECT count(*) FROM tracks").fetchone()[0] == 0
    assert seeded.conn.execute("SELECT count(*) FROM teams").fetchone()[0] == 0


# -- 3. attachments under ask -------------------------------------------------------------------

def test_ask_writes_the_graph_picture_and_the_count_chart_and_says_where(
        make_older_seeds, db_path: Path, clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.pages.files import SEEDS_DIR

    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # two snapshots: /paper has a chart
    db.close()
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)
    assert main(["ask", "--db", str(db_path), f"/graph {SURVEY}"]) == 0
    out = capsys.readouterr().out
    picture = here / f"graph-{SURVEY}.png"
    assert picture.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert f"[attachment written to ./graph-{SURVEY}.png, {picture.stat().st_size:,} bytes]" in out
    assert main(["ask", "--db", str(db_path), f"/paper {SURVEY}"]) == 0
    out = capsys.readouterr().out
    chart = here / f"cited-by-{SURVEY}.png"
    assert chart.read_bytes().startswith(b"\x89PNG") and f"written to ./cited-by-{SURVEY}.png" in out


def test_attachment_names_are_made_safe_and_never_overwrite_the_database(tmp_path: Path) -> None:
    database = tmp_path / "m.db"
    database.write_bytes(b"SQLite format 3\x00")
    saved, problem = write_attachments([File("../../up/.hidden name?.png", b"one"), File("graph-hep-th/9901001.png",
                                                                                        b"two")], database, tmp_path)
    assert not problem and sorted(p.name for p in tmp_path.iterdir()) == ["9901001.png", "hidden_name_.png", "m.db"]
    assert saved == {"../../up/.hidden name?.png": str(tmp_path / "hidden_name_.png"),
                     "graph-hep-th/9901001.png": str(tmp_path / "9901001.png")}
    saved, problem = write_attachments([File("m.db", b"not a database")], database, tmp_path)
    assert saved == {} and "must not overwrite the database itself" in problem
    assert database.read_bytes() == b"SQLite format 3\x00"


# -- 5. one address for the feeds ----------------------------------------------------------------

def test_ask_gives_the_address_run_prints_and_serves(seeded_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from mapwatch.feeds.serving.server import default_base_url

    monkeypatch.delenv("MAPWATCH_BASE_URL", raising=False)
    monkeypatch.delenv("PORT", raising=False)
    assert default_base_url() == "http://127.0.0.1:8080"  # `run` with no --host, --port, $PORT
    assert main(["ask", "--db", str(seeded_path), "/feed"]) == 0
    out = capsys.readouterr().out
    assert "http://127.0.0.1:8080/feeds.opml" in out and "localhost" not in out
    monkeypatch.setenv("PORT", "9000")  # run listens on $PORT: ask's links follow it
    assert main(["ask", "--db", str(seeded_path), f"/paper {SURVEY}"]) == 0
    assert f"http://127.0.0.1:9000/feeds/papers/{SURVEY}.atom" in capsys.readouterr().out


# -- 8. counts in replies -----------------------------------------------------------------------

def test_replies_say_one_of_a_thing_in_the_singular(seeded) -> None:
    text, _ = answer(seeded, "paper", paper=SURVEY)
    assert "(1 stored snapshot)" in text
    seeded.conn.execute("UPDATE papers SET cited_by = 1, refs_in_map = 1, refs_total = 1 WHERE id = ?", [SURVEY])
    text, _ = answer(seeded, "paper", paper=SURVEY)
    assert "Cited by **1** paper in the map" in text and "Builds on **1** of its 1 reference that is in the map" in text
    text, _ = answer(seeded, "paper", paper="2502.05078")  # known from a list: no citer, one reference
    assert "(0 citers, 1 reference known)" in text
    text, _ = answer(seeded, "refs", paper="2502.05078")
    assert "1 reference in the map known by name" in text
    text, _ = answer(seeded, "search", query="SofT-GRPO Gumbel")
    assert "1 paper matches in titles and abstracts." in text
    text, _ = answer(seeded, "rising", days="1")
    assert "in the last day " in text and "1 days" not in text
    seeded.conn.execute("DELETE FROM placements WHERE direction_slug = 'alignment/reward-modeling-and-rlhf'"
                        " AND paper_id = '2507.04136'")
    text, _ = answer(seeded, "direction", direction="Reward modeling and RLHF")
    assert "1 paper placed here." in text
    text, _ = answer(seeded, "directions")
    assert "· 1 paper ·" in text and "2 directions in 2 areas." in text


# Placeholders before a plural noun that are never 1: a file's size in bytes, a list of more than
# one ("total > 1"), a fixed number of steps, and words that are no count.
NEVER_ONE = {
    ("render.py", "{len(attached.data):,} bytes"),
    ("render_message.py", "{total} papers"),
    ("render_graph.py", "{max_steps} steps"),
    ("render_graph.py", "{r.days} days"),  # after `"day" if r.days == 1`
    ("team.py", "{count} papers"),  # after `if count == 1`
    ("team.py", "{count:,} papers"),  # after `if count == 1`
    ("render.py", "{v.total_papers:,} papers"),  # "at least 5,000 papers": only past the cap
    ("team.py", "{whose} papers"),
    ("team.py", "{papers} gains"),
    ("follow.py", "{scope} digests"),
    ("render_slack.py", "{len(blocks) - BLOCKS_MAX + 1} more parts"),  # past BLOCKS_MAX: 2 or more
}


VERBS = ("is", "was", "has", "does", "its", "as", "this", "his", "yes", "cites", "builds", "matches", "says", "goes",
         "gets", "keeps", "sends")  # words after a placeholder ending in s that are no plural noun


def test_no_reply_puts_a_count_before_a_plural_without_plural() -> None:
    """The grep that found "1 papers": a placeholder right before a plural word, in the code that
    words the replies, is written with text.plural (or is one that is never 1)."""
    found = set()
    for folder in ("bot/rendering", "bot/commands"):
        for path in sorted((ROOT / folder).glob("*.py")):
            for line in path.read_text(encoding="utf-8").splitlines():
                for m in re.finditer(r"\{[^{}]+\}\*{0,2} (?:more )?[a-z-]+s\b", line):
                    counted = not m.group(0).startswith(("{plural(", "{text.plural("))
                    if counted and m.group(0).rsplit(" ", 1)[1] not in VERBS:
                        found.add((path.name, m.group(0)))
    assert found <= NEVER_ONE, sorted(found - NEVER_ONE)
