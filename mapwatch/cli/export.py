"""`mapwatch export citers PAPER | --team NAME | --author ID --format bibtex|csv|ris`: the papers
citing a paper, or any paper of a team or a person, as a bibliography file on standard output
(docs/enrichment.md, "Exporting citers").

A team is named by its slug (or its name, any case), as `/team list` shows it; teams belong to
servers, so a slug that several servers chose needs `--guild ID` as well. A person is named as
/author takes them: an OpenAlex author id, an ORCID, `name:<name>` or a name that fits one person.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from mapwatch.cli.options import ActionParser
from mapwatch.store.errors import EXIT_OK, BadSetting

if TYPE_CHECKING:
    from sqlite_utils import Database

FORMATS = ("bibtex", "csv", "ris")  # feeds/bibliography.py's, spelt here so that --help loads nothing


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("export", help="write the papers citing a paper, a team or a person as BibTeX, CSV or RIS")
    actions = p.add_subparsers(dest="what", metavar="WHAT", required=True, parser_class=ActionParser)
    citers = actions.add_parser(
        "citers", help="the papers citing a paper, or any paper of a team or a person",
        usage="mapwatch export citers (PAPER | --team NAME [--guild ID] | --author ID) --format bibtex|csv|ris "
              "[--since DATE] [--db FILE]",
        description="Write one record per paper citing PAPER (or any paper of a team or a person) to standard "
                    "output: authors, title, year, venue, arXiv eprint, DOI, URL, when mapwatch first saw the "
                    "citation and where from (the map, OpenAlex or Semantic Scholar), and whether it is a "
                    "self-citation. Exit 0: written; 1: no such paper, team or person; 2: usage error (neither "
                    "or both of PAPER and --team/--author, a team slug several servers use without --guild, a "
                    "name several people share).")
    citers.add_argument("paper", nargs="?", metavar="PAPER", help="an arXiv id (or arXiv or map URL)")
    whose = citers.add_mutually_exclusive_group()
    whose.add_argument("--team", metavar="NAME",
                       help="instead of PAPER: every paper of this team (its slug, as /team list shows it)")
    whose.add_argument("--author", metavar="ID",
                       help="instead of PAPER: every paper of this person (OpenAlex author id, ORCID, name:<name>, "
                            "or a name that fits one person)")
    citers.add_argument("--guild", metavar="ID", type=int,
                        help="with --team: the Discord server the team belongs to (needed when several have it)")
    citers.add_argument("--format", required=True, choices=FORMATS, metavar="bibtex|csv|ris",
                        help="the file format")
    citers.add_argument("--since", metavar="DATE", type=since_arg,
                        help="only citations first seen on or after this day (YYYY-MM-DD)")
    citers.set_defaults(func=cmd_citers, usage_error=citers.error)


def since_arg(text: str) -> str:
    from mapwatch.store.errors import BadOption
    from mapwatch.store.questions.citer_records import since_date

    try:
        return since_date(text)
    except BadOption as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("since ")) from None


def cmd_citers(args: argparse.Namespace) -> int:
    from mapwatch.feeds.bibliography import write
    from mapwatch.store.database.db import open_db
    from mapwatch.store.questions.citer_records import citer_records

    given = [x for x in (args.paper, args.team, args.author) if x is not None]
    if len(given) != 1:
        args.usage_error("give PAPER, or --team NAME, or --author ID (one of them)")
    if args.guild is not None and args.team is None:
        args.usage_error("--guild goes with --team")
    db = open_db(args.db, create=False)
    try:
        papers = subject_papers(db, args)
        text = write(citer_records(db, papers, args.since), args.format)
    finally:
        db.close()
    sys.stdout.buffer.write(text.encode("utf-8"))  # UTF-8 whatever the locale
    sys.stdout.flush()
    return EXIT_OK


def subject_papers(db: Database, args: argparse.Namespace) -> set[str]:
    """The papers whose citers are exported: PAPER, the team's or the person's. An unknown one
    raises a MapwatchError (exit 1); a team or a name that needs more raises BadSetting (exit 2)."""
    from mapwatch.store.errors import BadOption
    from mapwatch.store.questions import authors, queries, teams

    if args.paper is not None:
        return {queries.resolve_paper(db, args.paper).id}
    if args.team is not None:
        if args.guild is not None:
            found = teams.find_team(db, args.guild, args.team)
            if found is None:
                raise BadOption(f"no team {args.team[:60]!r} in server {args.guild}")
            return teams.team_papers(db, found)
        called = teams.teams_called(db, args.team)
        if not called:
            raise BadOption(f"no team {args.team[:60]!r} in any server (/team list shows a server's teams)")
        if len(called) > 1:
            servers = ", ".join(str(t.guild_id) for t in called)
            raise BadSetting(f"--team {called[0].slug}: {len(called)} servers have a team of that name (server ids "
                             f"{servers}): add --guild ID")
        return teams.team_papers(db, called[0])
    people = authors.find_people(db, args.author)
    if not people:
        raise teams.PersonNotFound(" ".join(args.author.split())[:100])
    if len(people) > 1:
        keys = ", ".join(p.key for p in people[:10]) + (", …" if len(people) > 10 else "")
        raise BadSetting(f"--author {' '.join(args.author.split())[:60]!r} fits {len(people)} people: give one "
                         f"of their ids ({keys})")
    return teams.person_papers(db, people[0].key)
