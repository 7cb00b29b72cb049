"""/direction, /directions, /feed."""

from __future__ import annotations

from dataclasses import replace

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt
from mapwatch.bot.rendering import render, text
from mapwatch.bot.rendering.replies import Ctx, Embed, Reply
from mapwatch.store.questions import queries

DIRECTION_HELP = "a research direction: its name, slug or map URL"


def direction_core(db: Database, ctx: Ctx, *, direction: str) -> Reply:
    from mapwatch.bot.commands.graph import pagerank_field

    d = queries.resolve_direction(db, direction)
    reply = render.direction_card(queries.direction_view(db, d.slug), ctx.base_url)
    ranked = pagerank_field(db, d.slug)
    if ranked is None or not reply.embeds:
        return reply
    e = reply.embeds[0]
    fields = (*e.fields[:1], ranked, *e.fields[1:])  # after "Most cited papers"
    return text.fit_reply(Reply(content=reply.content, embeds=(replace(e, fields=fields), *reply.embeds[1:])))


def directions_core(db: Database, ctx: Ctx) -> Reply:
    return render.directions_list(queries.directions_by_area(db))


def feed_core(db: Database, ctx: Ctx, *, direction: str | None = None) -> Reply:
    base = ctx.base_url
    opml = f"{base}/feeds.opml"
    if direction and direction.strip():
        d = queries.resolve_direction(db, direction)
        desc = (f"Paste into a feed reader: {render.feed_url(base, d.slug)}\n"
                f"Every direction at once (OPML, for import): {opml}")
        return text.fit_reply(Reply(embeds=(Embed(f"Feed: {text.esc(d.name)}", desc, None, (),
                                                   "New citing papers of this direction's papers",
                                                   render.COLOR),)))
    lines = [f"• {text.esc(d.name)}: {render.feed_url(base, d.slug)}"
             for a in queries.directions_by_area(db) for d in a.directions]
    desc = (f"All direction feeds (OPML, import into a reader): {opml}\nThe feed index: {base}/\n\n"
            + text.clip_lines(lines, 3000))
    return text.fit_reply(Reply(embeds=(Embed("Feeds", desc, None, (), "One Atom feed per direction",
                                               render.COLOR),)))


COMMANDS = [
    Command("direction", "A direction's most cited papers, newest citing papers and feed",
            (Opt("direction", DIRECTION_HELP, "direction"),), direction_core),
    Command("directions", "Every direction, grouped by area, with paper counts", (), directions_core),
    Command("feed", "The feed URL of a direction (or of all of them) to paste into a reader",
            (Opt("direction", DIRECTION_HELP, "direction", required=False),), feed_core),
]
