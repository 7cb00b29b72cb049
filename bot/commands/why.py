"""/why: where a citation is known from and since when, or why mapwatch does not know it."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt
from mapwatch.bot.rendering.render_why import why_card
from mapwatch.bot.rendering.replies import Ctx, Reply
from mapwatch.store.questions import why

CITED_HELP = "the cited paper: arXiv id, arXiv or map URL, or title"
CITER_HELP = "the paper citing it: arXiv id (in the map or not), DOI, arXiv or map URL, or title"


def why_core(db: Database, ctx: Ctx, *, paper: str, citer: str) -> Reply:
    paper_id, citer_id = why.resolve_pair(db, paper, citer, ctx.now.date())
    return why_card(why.why(db, paper_id, citer_id, ctx.sources))


COMMANDS = [
    Command("why", "Where a citation is known from and since when, or why it is missing",
            (Opt("paper", CITED_HELP, "paper"), Opt("citer", CITER_HELP, "paper")), why_core),
]
