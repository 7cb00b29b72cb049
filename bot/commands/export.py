"""/export: the papers citing a paper (or any paper of one of this server's teams, or of a
person) as a BibTeX, CSV or RIS file, the one `mapwatch export citers` writes (feeds/bibliography.py)."""

from __future__ import annotations

import re

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt
from mapwatch.bot.commands.papers import PAPER_HELP
from mapwatch.bot.commands.people import one_person
from mapwatch.bot.commands.team import TEAM_HELP, one_of, server_team
from mapwatch.bot.rendering import text
from mapwatch.bot.rendering.replies import Ctx, File, Reply
from mapwatch.feeds.bibliography import EXTENSIONS, FORMAT_NAMES, FORMATS, write
from mapwatch.store.errors import BadOption
from mapwatch.store.questions import queries
from mapwatch.store.questions import teams as people
from mapwatch.store.questions.citer_records import citer_records, since_date

MAX_FILE_BYTES = 10 * 1024 * 1024  # what Discord takes from a bot in one attachment
_NOT_IN_NAME = re.compile(r"[^A-Za-z0-9.-]+")


def _subject(db: Database, ctx: Ctx, paper: str | None, team: str | None,
             author: str | None) -> tuple[set[str], str, str] | Reply:
    """(the papers, how the answer names them, the file name's stem), or the choice of people a
    name fits."""
    one_of(paper, author, team, what="Export the citers of one thing: a paper, a team or an author.")
    if paper and paper.strip():
        p = queries.resolve_paper(db, paper)
        return {p.id}, f"{text.esc(text.clip(p.title, 150))} (`{p.id}`)", p.id
    if team and team.strip():
        found = server_team(db, ctx, team)
        papers = people.team_papers(db, found)
        return (papers, f"team **{text.esc(text.clip(found.name, 100))}** ({text.plural(len(papers), 'paper')})",
                f"team-{found.slug}")
    person = one_person(db, author or "", "/export author:")
    if isinstance(person, Reply):
        return person
    papers = people.person_papers(db, person.key)
    return (papers, f"**{text.esc(text.clip(person.name, 100))}** (`{text.esc(person.key)}`, "
                    f"{text.plural(len(papers), 'paper')})", f"author-{person.key}")


def export_core(db: Database, ctx: Ctx, *, paper: str | None = None, team: str | None = None,
                author: str | None = None, format: str | None = None, since: str | None = None) -> Reply:
    fmt = (format or "bibtex").strip().lower()
    if fmt not in FORMATS:
        raise BadOption(f"format must be one of: {', '.join(FORMATS)}")
    day = since_date(since) if since and since.strip() else None
    subject = _subject(db, ctx, paper, team, author)
    if isinstance(subject, Reply):
        return subject
    papers, shown, stem = subject
    records = citer_records(db, papers, day)
    when = f", first seen since {day}" if day else ""
    if not records:
        return Reply(content=f"No paper in the map cites {shown}{when}: nothing to export.", ephemeral=True)
    data = write(records, fmt).encode("utf-8")
    if len(data) > MAX_FILE_BYTES:
        raise BadOption(f"That export is {len(data) / 2**20:.1f} MiB, more than Discord takes in one file: "
                        "narrow it with `since`, or run `mapwatch export citers` on the host.")
    selfs = sum(r.self_citation for r in records)
    name = FORMAT_NAMES[fmt]
    caption = (f"{text.plural(len(records), 'paper')} citing {shown}{when}, as {name}"
               + (f"; {text.plural(selfs, 'self-citation')} marked" if selfs else "") + ".")
    filename = f"citers-{_NOT_IN_NAME.sub('-', stem)}.{EXTENSIONS[fmt]}"
    return Reply(content=text.clip(caption, 2000),
                 files=(File(filename, data, f"Papers citing {stem} ({name})"),))


COMMANDS = [
    Command("export", "The papers citing a paper, a team's or an author's papers, as BibTeX, CSV or RIS",
            (Opt("paper", PAPER_HELP, "paper", required=False),
             Opt("team", f"or {TEAM_HELP}", required=False),
             Opt("author", "or an author: a name, an ORCID iD or an OpenAlex author id", required=False,
                 autocomplete="author"),
             Opt("format", "the file: BibTeX (default), CSV or RIS", "choice", required=False, choices=FORMATS,
                 choice_names=tuple(FORMAT_NAMES[f] for f in FORMATS)),
             Opt("since", "only citations first seen on or after this day (YYYY-MM-DD)", required=False)),
            export_core),
]
