"""/track, /untrack, /tracked: alerts in a channel (or in DMs) when a paper gains citers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlite_utils import Database

from bot import render
from bot.commands import Command, Opt
from bot.commands.papers import PAPER_HELP
from bot.replies import Ctx, Reply
from store import queries, tracking
from store.errors import NotAllowed

if TYPE_CHECKING:
    from bot.glue import Runner

MANAGE = "You need the Manage Channels permission to change what this channel tracks."


def _check(ctx: Ctx) -> None:
    if ctx.guild_id is not None and not ctx.can_manage:
        raise NotAllowed(MANAGE)


def track_core(db: Database, ctx: Ctx, *, paper: str) -> Reply:
    _check(ctx)
    found = queries.resolve_paper(db, paper)
    _track, new = tracking.add_track(db, guild_id=ctx.guild_id, channel_id=ctx.channel_id, user_id=ctx.user_id,
                                     paper_id=found.id, created_by=ctx.user_id, now=ctx.now)
    where = "this channel" if ctx.guild_id is not None else "your DMs"
    title = render.esc(render.clip(found.title, 200))
    if not new:
        return Reply(content=f"Already tracking {title} (`{found.id}`) in {where}.", ephemeral=True)
    return render.fit_reply(Reply(content=f"Tracking {title} (`{found.id}`): {where} gets an alert when it "
                                          "gains citers. /untrack to stop."))


def untrack_core(db: Database, ctx: Ctx, *, paper: str) -> Reply:
    _check(ctx)
    found = queries.resolve_paper(db, paper)
    gone = tracking.remove_track(db, guild_id=ctx.guild_id, channel_id=ctx.channel_id, user_id=ctx.user_id,
                                 paper_id=found.id)
    title = render.esc(render.clip(found.title, 200))
    if not gone:
        return Reply(content=f"{title} (`{found.id}`) is not tracked here.", ephemeral=True)
    return render.fit_reply(Reply(content=f"Stopped tracking {title} (`{found.id}`) here."))


def tracked_core(db: Database, ctx: Ctx) -> Reply:
    tracks = tracking.list_tracks(db, guild_id=ctx.guild_id, user_id=ctx.user_id)
    return render.tracked_list(tracks, ctx.guild_id is None)


COMMANDS = [
    Command("track", "Alert this channel when a paper gains citers (needs Manage Channels)",
            (Opt("paper", PAPER_HELP, "paper"),), track_core, manage=True),
    Command("untrack", "Stop alerting this channel about a paper (needs Manage Channels)",
            (Opt("paper", PAPER_HELP, "paper"),), untrack_core, manage=True),
    Command("tracked", "This server's tracked papers: channel, since when, last alert", (), tracked_core),
]


def install(tree: Any, runner: Runner) -> None:
    import discord
    from discord import app_commands

    manage = discord.Permissions(manage_channels=True)

    @app_commands.command(name="track", description=COMMANDS[0].description)
    @app_commands.describe(paper=PAPER_HELP)
    @app_commands.default_permissions(manage)
    @app_commands.check(runner.manage_check)
    async def track(interaction: discord.Interaction, paper: str) -> None:
        await runner.run(interaction, "track", paper=paper)

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
