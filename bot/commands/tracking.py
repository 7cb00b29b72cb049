"""/track, /untrack, /tracked: alerts in a channel (or in DMs) when a paper gains citers."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt, check_manage, here, stop_reply
from mapwatch.bot.commands.follow import (
    CHANNEL_HELP,
    INTENT_HELP,
    MODE_HELP,
    SELF,
    SELF_HELP,
    THREADS,
    THREADS_HELP,
    apply_threads,
    delivery_words,
    intent_words,
    parse_intent,
    parse_role,
    parse_self,
    self_words,
    target,
    where_gets,
    where_words,
)
from mapwatch.bot.commands.papers import PAPER_HELP
from mapwatch.bot.commands.team import AUTHOR_HELP, TEAM_HELP, track_subject, untrack_subject
from mapwatch.bot.rendering import render_people, text
from mapwatch.bot.rendering.replies import Ctx, Reply
from mapwatch.store.errors import BadOption
from mapwatch.store.questions import queries
from mapwatch.store.subscriptions import digests, follows, kinds, people_tracks, tracking
from mapwatch.store.subscriptions.kinds import INTENTS

MANAGE = "You need the Manage Channels permission to change what this channel tracks."
UNTRACK_REFUSAL = "You need the Manage Channels permission to stop tracking a paper in this channel."


def track_core(db: Database, ctx: Ctx, *, paper: str | None = None, author: str | None = None,
               team: str | None = None, mode: str | None = None, role: Any = None,
               threads: str | None = None, channel: Any = None, self: str | None = None,
               intent: str | None = None) -> Reply:
    check_manage(ctx, MANAGE)
    hide_self = parse_self(self)
    only_intent = parse_intent(intent)
    if (author or team) and only_intent:
        raise BadOption("intent: applies to a paper's track (and to /follow), not to a person's or a team's.")
    if author or team:  # a person or a team (bot/commands/team.py)
        return track_subject(db, ctx, paper=paper, author=author, team=team, mode=mode, role=role, threads=threads,
                             channel=channel, hide_self=hide_self)
    if not paper or not paper.strip():
        raise BadOption("Give a paper, an author or a team to track.")
    found = queries.resolve_paper(db, paper)
    here_id, ctx = ctx.channel_id, target(db, ctx, channel, threads)
    if threads and threads.strip().lower() == "on" and ctx.guild_id is None:
        raise BadOption("Threads exist only in a server's channels, not in DMs.")
    track, new = tracking.add_track(db, guild_id=ctx.guild_id, channel_id=ctx.channel_id, user_id=ctx.user_id,
                                    paper_id=found.id, created_by=ctx.user_id, now=ctx.now, mode=mode,
                                    role_id=parse_role(role), hide_self=hide_self, intent=only_intent)
    where = where_words(ctx, here_id)
    title = text.esc(text.clip(found.title, 200))
    settings = digests.get_digest_settings(db, guild_id=ctx.guild_id, user_id=ctx.user_id)
    how = (delivery_words(track.mode, track.role_id, settings) + apply_threads(db, ctx, "track", track.id, threads, new)
           + self_words(track.hide_self) + intent_words(track.intent))
    if not new:
        return Reply(content=f"Already tracking {title} (`{found.id}`) in {where} ({how}).", ephemeral=True)
    return text.fit_reply(Reply(content=f"Tracking {title} (`{found.id}`): {where_gets(ctx, here_id)} an alert when it "
                                          f"gains citers, {how}. /untrack to stop."))


def untrack_core(db: Database, ctx: Ctx, *, paper: str | None = None, author: str | None = None,
                 team: str | None = None, channel: Any = None) -> Reply:
    check_manage(ctx, UNTRACK_REFUSAL)
    ctx = target(db, ctx, channel, None)
    if author or team:
        if paper:
            raise BadOption("Untrack one thing at a time: a paper, an author or a team.")
        return untrack_subject(db, ctx, author=author, team=team)
    if not paper or not paper.strip():
        raise BadOption("Give the paper, author or team to stop tracking.")
    p = queries.resolve_paper(db, paper)
    return stop_reply(tracking.remove_track(db, **here(ctx), paper_id=p.id), f"{text.esc(text.clip(p.title, 200))}"
                      f" (`{p.id}`)", "{} is not tracked here.", "Stopped tracking {} here.")


def tracked_core(db: Database, ctx: Ctx) -> Reply:
    g, u = ctx.guild_id, ctx.user_id
    return render_people.tracked(tracking.list_tracks(db, guild_id=g, user_id=u),
                                 follows.list_follows(db, guild_id=g, user_id=u),
                                 people_tracks.list_subject_tracks(db, guild_id=g, user_id=u), g is None)


COMMANDS = [
    Command("track", "Alert this channel when a paper, a person's or a team's, gains citers (needs Manage Channels)",
            (Opt("paper", PAPER_HELP, "paper", required=False),
             Opt("author", AUTHOR_HELP, required=False), Opt("team", TEAM_HELP, required=False),
             Opt("mode", MODE_HELP, "choice", required=False, choices=kinds.MODES),
             Opt("role", "a role to mention in these alerts (only that role is ever mentioned)", "role",
                 required=False),
             Opt("threads", THREADS_HELP, "choice", required=False, choices=THREADS),
             Opt("channel", CHANNEL_HELP, "channel", required=False),
             Opt("self", SELF_HELP, "choice", required=False, choices=SELF),
             Opt("intent", INTENT_HELP, "choice", required=False, choices=INTENTS)), track_core, manage=True,
            refusal=MANAGE),
    Command("untrack", "Stop alerting this channel about a paper (needs Manage Channels)",
            (Opt("paper", PAPER_HELP, "paper", autocomplete="tracked", required=False),
             Opt("author", "the person to stop tracking (their id or name)", required=False),
             Opt("team", "the team to stop tracking", required=False),
             Opt("channel", "the channel to stop it in (default: here)", "channel", required=False)),
            untrack_core, manage=True, refusal=UNTRACK_REFUSAL),
    Command("tracked", "This server's tracked papers and followed directions: where, mode, since, last delivery",
            (), tracked_core),
]
