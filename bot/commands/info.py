"""/stats."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.bot.commands import Command
from mapwatch.bot.rendering import render, text
from mapwatch.bot.rendering.replies import Ctx, Embed, Field, Reply
from mapwatch.store.questions import queries
from mapwatch.store.subscriptions import bot_state

NEXT_REFRESH_KEY = "next_refresh"


def stats_core(db: Database, ctx: Ctx) -> Reply:
    s = queries.map_stats(db)
    nxt = bot_state.get_state(db, NEXT_REFRESH_KEY)
    fields = (
        Field("Papers", f"{s.papers:,} ({s.papers_with_page:,} with pages)", True),
        Field("Citations", f"{s.citations:,}", True),
        Field("Directions", f"{s.directions:,}", True),
        Field("Data through", render.day(s.newest_data_through), True),
        Field("Last refresh", render.when(s.last_ingest_at), True),
        Field("Next refresh", render.when(nxt) if nxt else "not scheduled (`mapwatch run` schedules it)", True),
    )
    footer = f"{text.plural(s.pages_rejected_now, 'page')} rejected now" if s.pages_rejected_now else ""
    return text.fit_reply(Reply(embeds=(Embed("The map", "", None, fields, footer, render.COLOR),)))


COMMANDS = [Command("stats", "Map size, newest data-through date, last and next refresh", (), stats_core)]
