"""A newcomer's first steps with `mapwatch ask` on a fresh clone: a choice option given bare words,
a mistyped ORCID iD, a /graph picture, the feeds' address, and the replies' counts."""

from __future__ import annotations

import dataclasses
import re

import pytest

from mapwatch.bot.commands import run_core
from mapwatch.bot.rendering import render
from mapwatch.cli.ask import AskError, parse_slash
from mapwatch.store.scholarly.records import orcid, orcid_misprint
from tests.bot_helpers import ctx

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
