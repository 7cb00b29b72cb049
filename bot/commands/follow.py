"""/follow, /unfollow, /digest-time, /digest-preview: a direction's new citing papers in a
channel, instantly or as a daily or weekly digest, optionally mentioning one role."""

from __future__ import annotations

import re
from typing import Any

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt, check_manage, here, stop_reply
from mapwatch.bot.commands.directions import DIRECTION_HELP
from mapwatch.bot.rendering import render_follow, text
from mapwatch.bot.rendering.replies import Ctx, Reply
from mapwatch.store.errors import BadChoice, BadOption
from mapwatch.store.questions import queries
from mapwatch.store.questions.types import Direction
from mapwatch.store.subscriptions import digests, follows, kinds
from mapwatch.store.subscriptions.kinds import INTENTS, Intent

MANAGE = "You need the Manage Channels permission to change what this channel follows."
UNFOLLOW_REFUSAL = "You need the Manage Channels permission to stop following a direction in this channel."
DIGEST_TIME_REFUSAL = "You need the Manage Channels permission to change when this server's digests come."
KEYWORD_HELP = "only citing papers whose title contains this (any case)"
MODE_HELP = "instant (after each refresh, the default), daily or weekly (a digest)"
ROLE_HELP = "a role to mention in these deliveries (only that role is ever mentioned)"
HOUR_HELP = "the local hour of digests, 0-23"
TZ_HELP = "a time zone such as UTC (the default), Europe/Paris or America/New_York"
CHANNEL_HELP = "post there instead of here: a text channel, or a forum (a post per citing paper)"
_CHANNEL = re.compile(r"^\s*(?P<forum>forum:)?(?:<#)?(?P<id>\d{1,20})>?\s*$")
THREADS_HELP = "on: each alert opens a discussion thread (server text channels; off by default)"
THREADS = ("on", "off")
SELF_HELP = "hide: leave out self-citations (a citing paper sharing an author); show, the default, marks them"
SELF = ("show", "hide")


def parse_self(value: str | None) -> bool:
    """`self:hide` -> True (leave self-citations out); `show` or nothing -> False."""
    v = (value or "show").strip().lower()
    if v not in SELF:
        raise BadChoice("self", v, SELF)
    return v == "hide"


def self_words(hide: bool) -> str:
    return ", self-citations left out" if hide else ""


INTENT_HELP = "only citations of this intent, as Semantic Scholar says: methodology, background, result"


def parse_intent(value: str | None) -> Intent | None:
    """`intent:methodology|background|result` -> that intent; nothing -> None (every citation)."""
    v = (value or "").strip().lower()
    if not v:
        return None
    for known in INTENTS:
        if v == known:
            return known
    raise BadChoice("intent", v, INTENTS)


def intent_words(intent: Intent | None) -> str:
    return f", only citations whose intent is {intent} (Semantic Scholar)" if intent else ""
_ROLE = re.compile(r"^\s*(?:<@&)?(\d{1,20})>?\s*$")


def parse_role(role: Any) -> int | None:
    """A role option: a discord Role (its id), an id, or a `<@&id>` mention; None when absent."""
    if role is None or role == "":
        return None
    if isinstance(role, int) and not isinstance(role, bool):
        return role
    rid = getattr(role, "id", None)
    if isinstance(rid, int):
        return rid
    m = _ROLE.match(str(role))
    if not m:
        raise BadOption("The role must be a server role (or its id).")
    return int(m.group(1))


def parse_hour(hour: Any) -> int:
    if isinstance(hour, int) and not isinstance(hour, bool):
        return hour
    try:
        return int(str(hour).strip())
    except ValueError:
        raise BadOption("The hour is a whole number from 0 to 23.") from None


def apply_threads(db: Database, ctx: Ctx, kind: str, item_id: int, threads: str | None, new: bool) -> str:
    """Record `threads:on|off` for a track or follow (a new one: off unless asked), and the words
    that say so ("" when off). Threads exist only in a server's channels."""
    from mapwatch.store.subscriptions import team_channels

    choice = (threads or "").strip().lower()
    if choice and choice not in THREADS:
        raise BadChoice("threads", choice, THREADS)
    if choice == "on" and ctx.guild_id is None:
        raise BadOption("Threads exist only in a server's channels, not in DMs.")
    if choice or new:
        team_channels.set_threads(db, kind, item_id, choice == "on")
    on = team_channels.has_threads(db, kind, item_id)
    return ", each alert opening a discussion thread" if on else ""


def target(db: Database, ctx: Ctx, channel: Any, threads: str | None) -> Ctx:
    """The context a /track or /follow acts on: here, or the `channel` option's channel (its id,
    `<#id>`, or `forum:<id>` for a forum, which the Discord layer passes for a forum channel).
    A forum is remembered (store.subscriptions.team_channels): its alerts become posts."""
    from dataclasses import replace

    from mapwatch.store.subscriptions import team_channels

    if channel is None or channel == "":
        return ctx
    if ctx.guild_id is None:
        raise BadOption("A channel can be chosen only in a server.")
    m = _CHANNEL.match(str(channel))
    if not m:
        raise BadOption("The channel must be one of this server's channels (or its id).")
    if m["forum"]:
        if (threads or "").strip().lower() == "on":
            raise BadOption("In a forum each alert is a post of its own already: threads are for text channels.")
        team_channels.add_forum(db, ctx.guild_id, int(m["id"]), ctx.now)
    return replace(ctx, channel_id=int(m["id"]))


def where_words(ctx: Ctx, here_id: int | None = None) -> str:
    if ctx.guild_id is None:
        return "your DMs"
    return "this channel" if here_id is None or here_id == ctx.channel_id else f"<#{ctx.channel_id}>"


def where_gets(ctx: Ctx, here_id: int | None = None) -> str:
    """Where alerts go, with its verb: "this channel gets", "<#1> gets", "your DMs get"."""
    return where_words(ctx, here_id) + (" get" if ctx.guild_id is None else " gets")


def delivery_words(mode: str, role_id: int | None, settings: digests.DigestSettings | None = None) -> str:
    if mode == "instant":
        when = "after each refresh"
    else:
        at = f"{settings.hour:02d}:00 {settings.timezone}" if settings else "the digest hour"
        when = f"in a {mode} digest at {at}" + (" on Mondays" if mode == "weekly" else "")
    return when + (f", mentioning <@&{int(role_id)}>" if role_id is not None else "")


def shown_name(d: Direction) -> str:
    return text.esc(text.clip(d.name, 150))


def follow_core(db: Database, ctx: Ctx, *, direction: str, keyword: str | None = None, mode: str | None = None,
                role: Any = None, threads: str | None = None, channel: Any = None, self: str | None = None,
                intent: str | None = None) -> Reply:
    check_manage(ctx, MANAGE)
    hide_self = parse_self(self)
    only_intent = parse_intent(intent)
    d = queries.resolve_direction(db, direction)
    here_id, ctx = ctx.channel_id, target(db, ctx, channel, threads)
    if threads and threads.strip().lower() == "on" and ctx.guild_id is None:
        raise BadOption("Threads exist only in a server's channels, not in DMs.")
    f, new = follows.add_follow(db, guild_id=ctx.guild_id, channel_id=ctx.channel_id, user_id=ctx.user_id,
                                direction_slug=d.slug, keyword=keyword, mode=mode, role_id=parse_role(role),
                                created_by=ctx.user_id, now=ctx.now, hide_self=hide_self, intent=only_intent)
    threaded = (apply_threads(db, ctx, "follow", f.id, threads, new) + self_words(f.hide_self)
                + intent_words(f.intent))
    settings = digests.get_digest_settings(db, guild_id=ctx.guild_id, user_id=ctx.user_id)
    name = shown_name(d)
    only = f" whose title contains “{text.esc(f.keyword)}”" if f.keyword else ""
    verb = "Following" if new else "Updated: following"
    said = (f"{verb} **{name}** in {where_words(ctx, here_id)}: its newly added citing papers{only} arrive "
            f"{delivery_words(f.mode, f.role_id, settings)}{threaded}. Starting now (the feed holds the history). "
            "/unfollow to stop.")
    return Reply(content=text.clip(said, text.CONTENT_MAX))


def unfollow_core(db: Database, ctx: Ctx, *, direction: str, channel: Any = None) -> Reply:
    check_manage(ctx, UNFOLLOW_REFUSAL)
    ctx = target(db, ctx, channel, None)
    d = queries.resolve_direction(db, direction)
    return stop_reply(follows.remove_follow(db, **here(ctx), direction_slug=d.slug), f"**{shown_name(d)}**",
                      "{} is not followed here.", "Stopped following {} here.")


def digest_time_core(db: Database, ctx: Ctx, *, hour: Any, timezone: str | None = None) -> Reply:
    check_manage(ctx, DIGEST_TIME_REFUSAL)
    s = digests.set_digest_settings(db, guild_id=ctx.guild_id, user_id=ctx.user_id, hour=parse_hour(hour),
                                    timezone=timezone, updated_by=ctx.user_id, now=ctx.now)
    scope = "This server's" if ctx.guild_id is not None else "Your"
    return Reply(content=f"{scope} digests now come at {s.hour:02d}:00 {s.timezone}: daily ones every day, "
                         "weekly ones on Mondays.")


def digest_preview_core(db: Database, ctx: Ctx) -> Reply:
    place = follows.Place(ctx.guild_id, ctx.channel_id, ctx.user_id if ctx.guild_id is None else None)
    return render_follow.digest_preview(digests.preview_digests(db, place, ctx.now))


COMMANDS = [
    Command("follow", "Send this channel a direction's new citing papers (needs Manage Channels)",
            (Opt("direction", DIRECTION_HELP, "direction"), Opt("keyword", KEYWORD_HELP, required=False),
             Opt("mode", MODE_HELP, "choice", required=False, choices=kinds.MODES),
             Opt("role", ROLE_HELP, "role", required=False),
             Opt("threads", THREADS_HELP, "choice", required=False, choices=THREADS),
             Opt("channel", CHANNEL_HELP, "channel", required=False),
             Opt("self", SELF_HELP, "choice", required=False, choices=SELF),
             Opt("intent", INTENT_HELP, "choice", required=False, choices=INTENTS)), follow_core, manage=True,
            refusal=MANAGE),
    Command("unfollow", "Stop sending this channel a direction's new citing papers (needs Manage Channels)",
            (Opt("direction", DIRECTION_HELP, "direction"),
             Opt("channel", "the channel to stop it in (default: here)", "channel", required=False)),
            unfollow_core, manage=True, refusal=UNFOLLOW_REFUSAL),
    Command("digest-time", "When this server's daily and weekly digests come (needs Manage Channels)",
            (Opt("hour", HOUR_HELP, "int", min_value=0, max_value=23), Opt("timezone", TZ_HELP, required=False)),
            digest_time_core, manage=True, refusal=DIGEST_TIME_REFUSAL),
    Command("digest-preview", "What this channel's next digest would hold, now (only you see it)", (),
            digest_preview_core),
]
