"""/author: a person's papers in the map and their newest citers, by name, ORCID or OpenAlex id."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt
from mapwatch.bot.rendering import render
from mapwatch.bot.rendering.replies import Ctx, Reply
from mapwatch.store.errors import BadOption
from mapwatch.store.questions import authors

AUTHOR_HELP = "a name (whole, or its start), an ORCID iD or an OpenAlex author id"


def one_person(db: Database, author: str, again: str = "/author") -> authors.Person | Reply:
    """The one person `author` names, or, when several fit the name, the answer listing them with
    the ids to pick one by (never a guess; `again` is the command to run again with one). Nobody:
    BadOption, a short answer only the asker sees."""
    people = authors.find_people(db, author)
    if not people:
        raise BadOption(f"No author matches “{' '.join(author.split())[:100]}” among the papers whose authors are "
                        "known. Try the whole name, an ORCID iD (0000-0002-1825-0097) or an OpenAlex id (A5023888391).")
    if len(people) > 1:
        return render.people_choice(author, people, again)
    return people[0]


def author_core(db: Database, ctx: Ctx, *, author: str) -> Reply:
    """One person: their card. Several people fit the name: a choice, with the ids to pick one
    by (never a guess). Nobody: a short answer only the asker sees."""
    found = one_person(db, author)
    return found if isinstance(found, Reply) else render.author_card(authors.author_view(db, found))


COMMANDS = [
    Command("author", "A person's papers in the map and their newest citers",
            (Opt("author", AUTHOR_HELP, autocomplete="author"),), author_core),
]
