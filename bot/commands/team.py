"""/team add|remove|list|stats, and the `author:` and `team:` options of /track and /untrack:
follow a person, or a server's named set of people and papers (docs/bot.md, "Following people
and teams"), and see who cites a team. Changing a team needs Manage Server; listing and its
stats do not."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt, here, int_option, stop_reply
from mapwatch.bot.commands.follow import apply_threads, delivery_words, parse_role, target, where_gets, where_words
from mapwatch.bot.commands.papers import PAPER_HELP
from mapwatch.bot.rendering import render_people, text
from mapwatch.bot.rendering.replies import Ctx, Reply
from mapwatch.store.errors import BadOption, NotAllowed
from mapwatch.store.questions import queries, team_stats
from mapwatch.store.questions import teams as people
from mapwatch.store.questions.authors import author_key
from mapwatch.store.subscriptions import digests, people_tracks, teams

MANAGE_SERVER = "You need the Manage Server permission to change this server's teams."
AUTHOR_HELP = "a person: an ORCID, an OpenAlex author id, or a name as the papers give it"
TEAM_HELP = "one of this server's teams (/team list)"
TEAM_NAME_HELP = "the team's name (a new name starts a team)"
GROUPS = {"team": "This server's teams: named sets of people and papers that /track team: follows"}


def _server(ctx: Ctx) -> int:
    if ctx.guild_id is None:
        raise BadOption("Teams belong to a server: run this in one of its channels.")
    return ctx.guild_id


def server_team(db: Database, ctx: Ctx, ref: str) -> people.Team:
    """This server's team by slug or name; BadOption (naming its teams) when it has none such."""
    gid = _server(ctx)
    found = people.find_team(db, gid, ref)
    if found is None:
        names = ", ".join(f"`{t.slug}`" for t in people.list_teams(db, gid)[:10])
        raise BadOption(f"No team “{text.clip(text.esc(ref), 60)}” in this server."
                        + (f" Its teams: {names}." if names else " /team add starts one."))
    return found


def one_of(paper: str | None, author: str | None, team: str | None = None, *, what: str) -> None:
    """Exactly one of them given; BadOption(`what`) otherwise."""
    given = [x for x in (paper, author, team) if x and x.strip()]
    if len(given) != 1:
        raise BadOption(what)


def _feed(ctx: Ctx, path: str | None) -> str:
    return f" Its feed: <{ctx.base_url}/{path}>." if path and ctx.base_url else ""


# -- /track and /untrack on a person or a team ------------------------------------------------

def track_subject(db: Database, ctx: Ctx, *, paper: str | None = None, author: str | None = None,
                  team: str | None = None, mode: str | None = None, role: Any = None, threads: str | None = None,
                  channel: Any = None, hide_self: bool = False) -> Reply:
    """/track author:<person> or /track team:<team> (the caller checked Manage Channels)."""
    one_of(paper, author, team, what="Track one thing at a time: a paper, an author or a team.")
    key, team_slug, label = None, None, ""
    if author:
        person = people.resolve_person(db, author)  # several people for a name: PersonChoice, never a guess
        key, label = person.key, f"**{text.esc(text.clip(person.name, 100))}**"
        count = person.papers
    else:
        found = server_team(db, ctx, team or "")
        team_slug, label, count = found.slug, f"team **{text.esc(text.clip(found.name, 100))}**", len(
            people.team_papers(db, found))
    here_id, ctx = ctx.channel_id, target(db, ctx, channel, threads)
    if threads and threads.strip().lower() == "on" and ctx.guild_id is None:
        raise BadOption("Threads exist only in a server's channels, not in DMs.")
    track, new = people_tracks.add_subject_track(db, guild_id=ctx.guild_id, channel_id=ctx.channel_id,
                                                 user_id=ctx.user_id, author_key=key, team_slug=team_slug,
                                                 created_by=ctx.user_id, now=ctx.now, mode=mode,
                                                 role_id=parse_role(role), hide_self=hide_self)
    settings = digests.get_digest_settings(db, guild_id=ctx.guild_id, user_id=ctx.user_id)
    how = delivery_words(track.mode, track.role_id, settings) + apply_threads(db, ctx, "track", track.id, threads, new)
    where = where_words(ctx, here_id)
    option = f"author:{key}" if key else f"team:{team_slug}"
    if not new:
        return Reply(content=f"Already tracking {label} in {where} ({how}).", ephemeral=True)
    whose = "their" if key else "its"  # a person's, a team's
    papers = (f"{whose} paper in the map" if count == 1 else f"any of {whose} {count:,} papers in the map" if count
              else f"any of {whose} papers in the map (none is known yet: alerts begin once the sources name them)")
    return text.fit_reply(Reply(content=f"Tracking {label}: {where_gets(ctx, here_id)} an alert when {papers} gains"
                                        f" citers, one per citing paper, {how}."
                                        f"{_feed(ctx, people_tracks.feed_path(track, db))} /untrack {option} to stop."))


def untrack_subject(db: Database, ctx: Ctx, *, author: str | None = None, team: str | None = None) -> Reply:
    one_of(None, author, team, what="Untrack one thing at a time: a paper, an author or a team.")
    if author:
        key = people.key_of(author) or people.resolve_person(db, author).key
        shown = f"`{text.esc(key)}`"
        gone = people_tracks.remove_subject_track(db, **here(ctx), author_key=key)
    else:
        found = server_team(db, ctx, team or "")
        shown = f"team **{text.esc(text.clip(found.name, 100))}**"
        gone = people_tracks.remove_subject_track(db, **here(ctx), team_slug=found.slug)
    return stop_reply(gone, shown, "{} is not tracked here.", "Stopped tracking {} here.")


# -- /team ------------------------------------------------------------------------------------

def _check(ctx: Ctx) -> int:
    gid = _server(ctx)
    if not ctx.can_manage_guild:
        raise NotAllowed(MANAGE_SERVER)
    return gid


def team_add_core(db: Database, ctx: Ctx, *, name: str, author: str | None = None,
                  paper: str | None = None) -> Reply:
    gid = _check(ctx)
    one_of(paper, author, what="Add one member at a time: an author or a paper.")
    if author:
        person = people.resolve_person(db, author)
        kind, value, label = "author", person.key, person.name
        shown = f"**{text.esc(text.clip(person.name, 100))}** (`{person.key}`, {text.plural(person.papers, 'paper')})"
    else:
        p = queries.resolve_paper(db, paper or "")
        kind, value, label = "paper", p.id, p.title
        shown = f"{text.esc(text.clip(p.title, 150))} (`{p.id}`)"
    found, created = teams.ensure_team(db, gid, name, ctx.user_id, ctx.now)
    added = teams.add_member(db, found, kind, value, label, ctx.user_id, ctx.now)
    team_name = f"**{text.esc(text.clip(found.name, 100))}**"
    if not added:
        return Reply(content=f"{shown} is already in {team_name}.", ephemeral=True)
    start = f"New team {team_name} (`{found.slug}`)" if created else f"Team {team_name}"
    feed = _feed(ctx, f'feeds/teams/{found.feed_slug}.atom')
    if feed:
        feed = feed.removesuffix(".") + render_people.renewed_feed(found, ctx.now) + "."
    return text.fit_reply(Reply(content=f"{start}: added {shown}. `/track team:{found.slug}` sends its alerts "
                                        f"to a channel.{feed}"))


def team_remove_core(db: Database, ctx: Ctx, *, name: str, author: str | None = None,
                     paper: str | None = None) -> Reply:
    """Remove a member; without one, the whole team (once no channel tracks it)."""
    _check(ctx)
    found = server_team(db, ctx, name)
    team_name = f"**{text.esc(text.clip(found.name, 100))}**"
    if not (author or paper):
        channels = teams.team_tracks(db, found)
        if channels:
            where = ", ".join(f"<#{c}>" for c in channels[:5])
            raise BadOption(f"{team_name} is tracked in {where}: `/untrack team:{found.slug}` there first.")
        teams.delete_team(db, found)
        return Reply(content=f"Team {team_name} removed.")
    one_of(paper, author, what="Remove one member at a time: an author or a paper.")
    if author:
        keys = _people_named(found, author)
        if len(keys) > 1:
            return render_people.member_choice(author.strip(), found, keys)
        kind, value = "author", keys[0] if keys else author.strip()
    else:
        kind, value = "paper", queries.resolve_paper(db, paper or "").id
    gone = teams.remove_member(db, found, kind, value)
    return Reply(content=f"Removed `{text.esc(value)}` from {team_name}." if gone else
                 f"`{text.esc(text.clip(value, 100))}` is not in {team_name}.", ephemeral=not gone)


def _people_named(team: people.Team, author: str) -> list[str]:
    """The keys of the team's people `author` names: the one whose id it is (an ORCID or OpenAlex
    id, or a member's key as /team list shows it), else every one bearing that name, in any case."""
    ref = author.strip()
    key = author_key(ref) or people.key_of(ref)  # a misprinted ORCID is said so, never taken for a name
    if key:
        return [key]
    members = [m for m in team.members if m.kind == "author"]
    by_key = [m.value for m in members if m.value == ref]
    return by_key or [m.value for m in members if m.label.casefold() == ref.casefold()]


def team_list_core(db: Database, ctx: Ctx) -> Reply:
    return render_people.team_list(people.list_teams(db, _server(ctx)), ctx.base_url, ctx.now)


def team_stats_core(db: Database, ctx: Ctx, *, name: str, days: Any = None) -> Reply:
    """Who cited the team's papers in the last `days` days, with the chart (drawn here: cores run
    off the bot's event loop)."""
    from mapwatch.feeds.team_chart import team_chart_png

    found = server_team(db, ctx, name)
    n = int_option(days, "days", 1, team_stats.DAYS_MAX, team_stats.DEFAULT_DAYS)
    stats = team_stats.cited_by(db, people.team_papers(db, found), team_stats.since_days(ctx.now, n))
    return render_people.team_stats(found, n, stats, team_chart_png(stats, found.name), ctx.base_url)


COMMANDS = [
    Command("team add", "Add a person or a paper to one of this server's teams (needs Manage Server)",
            (Opt("name", TEAM_NAME_HELP), Opt("author", AUTHOR_HELP, required=False),
             Opt("paper", PAPER_HELP, "paper", required=False)), team_add_core),
    Command("team remove", "Remove a person or a paper from a team, or the team (needs Manage Server)",
            (Opt("name", "the team's name"), Opt("author", "the person to remove (their id or name)", required=False),
             Opt("paper", PAPER_HELP, "paper", required=False)), team_remove_core),
    Command("team list", "This server's teams: their people, papers and feeds", (), team_list_core),
    Command("team stats", "Who cites a team most: top institutions, people and venues, with a chart",
            (Opt("name", TEAM_HELP),
             Opt("days", f"how many days back (default {team_stats.DEFAULT_DAYS})", "int", required=False,
                 min_value=1, max_value=team_stats.DAYS_MAX)),
            team_stats_core),
]
