"""/track, /untrack, /tracked: alerts in a channel (or in DMs) when a paper gains citers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mapwatch.bot import render, text
from mapwatch.bot.commands import Command, Opt
from mapwatch.bot.commands.papers import PAPER_HELP
from mapwatch.bot.replies import Ctx, Reply
from mapwatch.store import queries, tracking
from mapwatch.store.errors import NotAllowed
from sqlite_utils import Database

if TYPE_CHECKING:
    from mapwatch.bot.interactions import Runner

MANAGE = "You need the Manage Channels permission to change what this channel tracks."
UNTRACK_REFUSAL = "You need the Manage Channels permission to stop tracking a paper in this channel."


def _check(ctx: Ctx, message: str = MANAGE) -> None:
    if ctx.guild_id is not None and not ctx.can_manage:
        raise NotAllowed(message)


def track_core(db: Database, ctx: Ctx, *, paper: str, mode: str | None = None, role: Any = None) -> Reply:
    from mapwatch.bot.commands.follow import delivery_words, parse_role
    from mapwatch.store import follows

    _check(ctx)
    found = queries.resolve_paper(db, paper)
    track, new = tracking.add_track(db, guild_id=ctx.guild_id, channel_id=ctx.channel_id, user_id=ctx.user_id,
                                    paper_id=found.id, created_by=ctx.user_id, now=ctx.now, mode=mode,
                                    role_id=parse_role(role))
    where = "this channel" if ctx.guild_id is not None else "your DMs"
    title = text.esc(text.clip(found.title, 200))
    settings = follows.get_digest_settings(db, guild_id=ctx.guild_id, user_id=ctx.user_id)
    how = delivery_words(track.mode, track.role_id, settings)
    if not new:
        return Reply(content=f"Already tracking {title} (`{found.id}`) in {where} ({how}).", ephemeral=True)
    return text.fit_reply(Reply(content=f"Tracking {title} (`{found.id}`): {where} gets an alert when it "
                                          f"gains citers, {how}. /untrack to stop."))


def untrack_core(db: Database, ctx: Ctx, *, paper: str) -> Reply:
    _check(ctx, UNTRACK_REFUSAL)
    found = queries.resolve_paper(db, paper)
    gone = tracking.remove_track(db, guild_id=ctx.guild_id, channel_id=ctx.channel_id, user_id=ctx.user_id,
                                 paper_id=found.id)
    title = text.esc(text.clip(found.title, 200))
    if not gone:
        return Reply(content=f"{title} (`{found.id}`) is not tracked here.", ephemeral=True)
    return text.fit_reply(Reply(content=f"Stopped tracking {title} (`{found.id}`) here."))


def tracked_core(db: Database, ctx: Ctx) -> Reply:
    from mapwatch.bot import render_follow
    from mapwatch.bot.replies import Embed
    from mapwatch.store import follows

    tracks = tracking.list_tracks(db, guild_id=ctx.guild_id, user_id=ctx.user_id)
    followed = follows.list_follows(db, guild_id=ctx.guild_id, user_id=ctx.user_id)
    in_dm = ctx.guild_id is None
    if not followed:
        return render.tracked_list(tracks, in_dm)
    block = render_follow.follows_block(followed, in_dm=in_dm, limit=1900 if tracks else 3900)
    if not tracks:
        title = "Followed in your DMs" if in_dm else "Followed in this server"
        return text.fit_reply(Reply(embeds=(Embed(title, block, None, (), f"{len(followed)} followed",
                                                    render.COLOR),)))
    listed = render.tracked_list(tracks, in_dm)
    first = listed.embeds[0]
    desc = text.clip(first.description, 4096 - len(block) - 2) + "\n\n" + block
    footer = f"{first.footer} · {len(followed)} followed"
    return text.fit_reply(Reply(embeds=(Embed(first.title, desc, first.url, first.fields, footer, first.color),)))


COMMANDS = [
    Command("track", "Alert this channel when a paper gains citers (needs Manage Channels)",
            (Opt("paper", PAPER_HELP, "paper"),
             Opt("mode", "instant (after each refresh, the default), daily or weekly (a digest)", "choice",
                 required=False, choices=("instant", "daily", "weekly")),
             Opt("role", "a role to mention in these alerts (only that role is ever mentioned)", "role",
                 required=False)), track_core, manage=True, refusal=MANAGE),
    Command("untrack", "Stop alerting this channel about a paper (needs Manage Channels)",
            (Opt("paper", PAPER_HELP, "paper"),), untrack_core, manage=True, refusal=UNTRACK_REFUSAL),
    Command("tracked", "This server's tracked papers and followed directions: where, mode, since, last delivery",
            (), tracked_core),
]


def install(tree: Any, runner: Runner) -> None:
    import discord
    from discord import app_commands

    manage = discord.Permissions(manage_channels=True)

    from mapwatch.bot.commands.follow import MODE_HELP, annotate, mode_choices

    @app_commands.command(name="track", description=COMMANDS[0].description)
    @app_commands.describe(paper=PAPER_HELP, mode=MODE_HELP, role=COMMANDS[0].options[2].description)
    @app_commands.choices(mode=mode_choices())
    @app_commands.default_permissions(manage)
    @app_commands.check(runner.manage_check)
    @annotate(role=discord.Role | None)
    async def track(interaction: discord.Interaction, paper: str, mode: str | None = None,
                    role: Any = None) -> None:
        await runner.run(interaction, "track", paper=paper, mode=mode, role=role.id if role else None)

    @app_commands.command(name="untrack", description=COMMANDS[1].description)
    @app_commands.describe(paper=PAPER_HELP)
    @app_commands.default_permissions(manage)
    @app_commands.check(runner.manage_check)
    async def untrack(interaction: discord.Interaction, paper: str) -> None:
        await runner.run(interaction, "untrack", paper=paper)

    @app_commands.command(name="tracked", description=COMMANDS[2].description)
    async def tracked(interaction: discord.Interaction) -> None:
        await runner.run(interaction, "tracked")

    track.autocomplete("paper")(runner.paper_autocomplete)
    untrack.autocomplete("paper")(runner.tracked_autocomplete)
    for cmd in (track, untrack, tracked):
        tree.add_command(cmd)
