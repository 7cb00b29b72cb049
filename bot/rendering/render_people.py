"""Pure rendering for people and teams: a person's or team's alert ("X cites 3 of your papers"),
the choice a name that fits several people gets, a server's teams, and their lines in /tracked.
Within Discord's limits, text from the sources escaped (it can neither format nor ping)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from mapwatch.bot.rendering.render import COLOR, day, tracked_lines, tracks_count
from mapwatch.bot.rendering.render_follow import Delivery, _mentions, follows_block
from mapwatch.bot.rendering.replies import Embed, Field, File, Reply
from mapwatch.bot.rendering.text import (
    CONTENT_MAX,
    DESC_MAX,
    FIELD_VALUE_MAX,
    FOOTER_MAX,
    SELF_MARK,
    TITLE_MAX,
    byline,
    citing_context,
    clean,
    clip,
    clip_lines,
    esc,
    fit_reply,
    link,
    plural,
    safe_link,
    venue_mark,
)
from mapwatch.store.clock import iso, parse_iso
from mapwatch.store.questions.team_stats import CitedBy, Tally
from mapwatch.store.questions.teams import Member, Person, Team
from mapwatch.store.questions.types import PROVENANCE_NAMES, AlertCiter
from mapwatch.store.subscriptions.follows import Follow
from mapwatch.store.subscriptions.people_tracks import SubjectAlert, SubjectTrack
from mapwatch.store.subscriptions.tracking import Track

TITLE_LINK_MAX = 160
RENEWED_NOTICE = timedelta(days=90)  # how long /team says a team's feed address was replaced


def whose(t: SubjectTrack) -> str:
    """Whose papers an alert is about: a team's are "your papers"; a person's, theirs by name."""
    return "your papers" if t.kind == "team" else f"{clip(esc(t.name), 80)}'s papers"


def cites_words(n: int, t: SubjectTrack) -> str:
    """"cites 3 of your papers", "cites one of Ada Lovelace's papers"."""
    return f"cites {'one' if n == 1 else n} of {whose(t)}"


def citer_entry(c: AlertCiter, t: SubjectTrack) -> str:
    """A citing paper, the subject's papers it cites, its authors, and a self-citation mark
    when it shares an author with one of them."""
    year = f" ({c.year})" if c.year else ""
    mark = venue_mark(c.byline) + (f" · {SELF_MARK}" if c.self_citation else "")
    if c.provenance != "map":  # no map page names it yet
        mark += f" · via {PROVENANCE_NAMES[c.provenance]}"
    head = f"• {link(c.title, c.url or c.arxiv_url, TITLE_LINK_MAX)}{year} · `{esc(c.id)}`{mark}"
    names = "; ".join(clip(esc(r.title), 70) for r in c.cites[:3])
    extra = f"; and {len(c.cites) - 3} more" if len(c.cites) > 3 else ""
    by = byline(c.byline)
    said = "".join(f"\n{line}" for line in citing_context(c.context))
    return f"{head}\n  {cites_words(len(c.cites), t)}: {names}{extra}" + (f"\n  {by}" if by else "") + said


def subject_label(t: SubjectTrack) -> str:
    return f"team **{clip(esc(t.name), 80)}**" if t.kind == "team" else f"**{clip(esc(t.name), 80)}**"


def subject_alert(a: SubjectAlert, base_url: str = "") -> Delivery:
    """One message per track and tick: each new citing paper once, with the subject's papers it
    cites; the growth of their stated counts; the one role chosen on /track."""
    t, n = a.track, a.news
    if len(n.citers) == 1 and n.total == 1:
        c = n.citers[0]
        title = clip(f"{esc(clean(c.title))}", TITLE_MAX - 40) + f" {cites_words(len(c.cites), t)}"
    elif n.total:
        title = f"{plural(n.total, 'new paper')} {'cites' if n.total == 1 else 'cite'} {whose(t)}"
    else:
        title = f"Citations of {whose(t)} grew"
    lines = [citer_entry(c, t) for c in n.citers]
    desc = clip_lines(lines, DESC_MAX - 600, more=n.total - len(n.citers)) if lines else ""
    if n.hidden:
        left = f"{n.hidden} self-{'citation' if n.hidden == 1 else 'citations'} left out (self:hide)."
        desc = (desc + "\n" if desc else "") + left
    if n.growth:
        grew = "; ".join(f"{clip(esc(g.paper.title), 60)} {g.old_count} → {g.new_count}"
                         + (f" ({g.unlisted} not named on its page)" if g.unlisted else "") for g in n.growth[:5])
        more = f"; and {len(n.growth) - 5} more" if len(n.growth) > 5 else ""
        desc = (desc + "\n\n" if desc else "") + clip(f"Cited by: {grew}{more}.", 550)
    url = f"{base_url.rstrip('/')}/{a.feed_url.replace('feeds/', '', 1).removesuffix('.atom')}/" \
        if base_url and a.feed_url else None
    stop = "/untrack team:" + clip(t.subject, 60) if t.kind == "team" else "/untrack author:" + clip(t.subject, 60)
    embed = Embed(title=clip(title, TITLE_MAX), description=desc, url=safe_link(url),
                  footer=clip(f"{stop} to stop", FOOTER_MAX), color=COLOR)
    roles = (t.role_id,) if t.role_id is not None else ()
    content = f"{_mentions(roles)} New for {subject_label(t)}".strip()
    return Delivery(clip(content, CONTENT_MAX), (embed,), roles)


def person_line(p: Person) -> str:
    ids = " · ".join(x for x in (p.author_id and f"OpenAlex `{p.author_id}`", p.orcid and f"ORCID `{p.orcid}`") if x)
    ex = f" · e.g. {link(p.example.title, p.example.url or p.example.arxiv_url, 90)} (`{p.example.id}`)" \
        if p.example else ""
    return f"• **{esc(clip(p.name, 80))}** · {ids or 'no id'} · {plural(p.papers, 'paper')} in the map{ex}"


def person_choice(ref: str, people: Sequence[Person], more: int, command: str) -> Reply:
    """A name that fits several people: the choice, only to the asker; never a guess."""
    lines = [person_line(p) for p in people]
    key = people[0].key if people else "A…"
    head = (f"“{esc(clip(ref, 100))}” fits {len(people) + more} people in the map. Choose one by its id, "
            f"e.g. `{command} author:{key}`:")
    return fit_reply(Reply(content=clip(head + "\n" + clip_lines(lines, CONTENT_MAX - len(head) - 10, more=more),
                                        CONTENT_MAX), ephemeral=True))


def member_line(m: Member) -> str:
    """A person of a team, with the id that names them alone."""
    return f"• {esc(clip(m.label, 80))} · `{esc(m.value)}`"


def member_choice(ref: str, team: Team, keys: Sequence[str]) -> Reply:
    """/team remove author:<name> when several of the team's people bear that name: the choice,
    only to the asker, and nothing removed (a name is never guessed)."""
    lines = [member_line(m) for m in team.members if m.kind == "author" and m.value in keys]
    head = (f"“{esc(clip(ref, 100))}” fits {len(keys)} people of **{esc(clip(team.name, 100))}**, so nobody was "
            f"removed. Run `/team remove name:{team.slug} author:<id>` with the id of the one to remove:")
    return fit_reply(Reply(content=clip(head + "\n" + clip_lines(lines, CONTENT_MAX - len(head) - 10), CONTENT_MAX),
                           ephemeral=True))


def renewed_feed(team: Team, now: datetime) -> str:
    """Said beside a team's feed address for 90 days after migration 0035 replaced it: the old
    one (8 characters after the name) could be guessed, and answers 404 now."""
    if not team.feed_renewed_at or parse_iso(iso(now)) - parse_iso(team.feed_renewed_at) > RENEWED_NOTICE:
        return ""
    return (f" (new since {day(team.feed_renewed_at)}: the old address, with 8 characters after the name, could "
            "be guessed and no longer answers; give feed readers this one)")


def team_list(teams: Sequence[Team], base_url: str, now: datetime) -> Reply:
    if not teams:
        return Reply(content="No teams in this server yet: `/team add name:<team> author:<ORCID, OpenAlex id or "
                             "name>` (or `paper:`) starts one.", ephemeral=True)
    embeds = []
    for team in teams[:10]:
        people = [m for m in team.members if m.kind == "author"]
        papers = [m for m in team.members if m.kind == "paper"]
        lines = [member_line(m) for m in people]
        lines += [f"• 📄 {esc(clip(m.label, 100))} · `{esc(m.value)}`" for m in papers]
        feed = f"{base_url.rstrip('/')}/feeds/teams/{team.feed_slug}.atom" if base_url else ""
        desc = clip_lines(lines, 3500) if lines else "Nobody yet."
        if feed:
            desc += f"\nFeed: <{feed}>{renewed_feed(team, now)}"
        embeds.append(Embed(title=clip(f"{esc(team.name)} ({team.slug})", TITLE_MAX), description=desc,
                            footer=f"{plural(len(people), 'person', 'people')} · {plural(len(papers), 'paper')}",
                            color=COLOR))
    more = f" (the first 10 of {len(teams)})" if len(teams) > 10 else ""
    return fit_reply(Reply(content=f"Teams of this server{more}: `/track team:<name>` follows one.",
                           embeds=tuple(embeds)))


def _tally_line(rank: int, t: Tally, person: bool) -> str:
    key = f" (`{esc(t.key)}`)" if person and not t.key.startswith("name:") else ""
    return f"{rank}. {esc(clip(t.label, 80))}{key} · {t.papers:,}"


def team_stats(team: Team, days: int, stats: CitedBy, png: bytes | None, base_url: str) -> Reply:
    """/team stats: who cited the team's papers in the last `days` days, its top institutions,
    people and venues (distinct citing papers each), what was counted apart, and the chart."""
    name = f"**{esc(clip(team.name, 100))}**"
    since = stats.since[:10]
    if not stats.papers:
        return Reply(content=f"Team {name} has no paper in the map yet: `/team add` adds people or papers.",
                     ephemeral=True)
    if not stats.citing:
        return Reply(content=f"No paper was first seen citing team {name}'s {plural(stats.papers, 'paper')} in the "
                             f"last {plural(days, 'day')} (since {since}).")
    head = (f"**{stats.citing:,}** {'paper was' if stats.citing == 1 else 'papers were'} first seen citing "
            f"{stats.cited:,} of the team's {plural(stats.papers, 'paper')} in the last {plural(days, 'day')} "
            f"(since {since}).")
    if stats.examined < stats.citing:
        head += f" The newest {stats.examined:,} of them are counted."
    apart = (f"Counted apart: **{plural(stats.self_citing, 'self-citation')}** (citing papers sharing an author "
             f"with every team paper they cite; in no list below). Of the other {stats.counted:,}, authors not "
             f"known yet: **{stats.authors_unknown:,}**; no venue known: {stats.no_venue:,}.")
    fields = []
    for heading, entries, total in stats.lists:
        lines = [_tally_line(n, t, heading == "People") for n, t in enumerate(entries, 1)]
        shown = f"{heading} (top {len(entries)} of {total:,})" if total > len(entries) else heading
        fields.append(Field(shown, clip_lines(lines, FIELD_VALUE_MAX) if lines else "none known yet"))
    page = f"{base_url.rstrip('/')}/teams/{team.feed_slug}/" if base_url else None
    embed = Embed(title=clip(f"Who cites {esc(clean(team.name))}", TITLE_MAX), description=f"{head}\n{apart}",
                  url=safe_link(page), fields=tuple(fields), color=COLOR,
                  footer="Each count: distinct citing papers, by when the map first saw the citation")
    files = (File(f"team-stats-{team.slug}.png", png, f"Who cites {clean(team.name)}: top institutions, people "
                                                       "and venues"),) if png else ()
    return fit_reply(Reply(embeds=(embed,), files=files))


def tracked(tracks: Sequence[Track], followed: Sequence[Follow], subjects: Sequence[SubjectTrack],
            in_dm: bool) -> Reply:
    """/tracked: the tracked papers, the followed directions, then the tracked people and teams,
    counted by kind in the footer ("3 tracks: 1 paper, 1 person, 1 team · 1 followed")."""
    if not (tracks or followed or subjects):
        return Reply(content=f"Nothing is tracked in {'these DMs' if in_dm else 'this server'}."
                             " Use /track <paper> to start.", ephemeral=True)
    where = "your DMs" if in_dm else "this server"
    blocks = [b for b in (tracked_lines(tracks),
                          follows_block(followed, in_dm=in_dm, limit=1900 if tracks else 3900),
                          "People and teams:\n" + subject_lines(subjects) if subjects else "") if b]
    desc = blocks[-1]
    for block in reversed(blocks[:-1]):  # the later blocks are bounded; the earlier take the room left
        desc = clip(block, DESC_MAX - len(desc) - 2) + "\n\n" + desc
    people = sum(t.kind == "author" for t in subjects)
    counts = [tracks_count(len(tracks), people, len(subjects) - people)] if tracks or subjects else []
    counts += [f"{len(followed)} followed"] if followed else []
    title = f"Tracked in {where}" if tracks or subjects else f"Followed in {where}"
    return fit_reply(Reply(embeds=(Embed(title, desc, None, (), " · ".join(counts), COLOR),)))


def subject_lines(tracks: Sequence[SubjectTrack]) -> str:
    """/tracked: one line per track on a person or a team."""
    lines = []
    for t in tracks:
        where = "DM" if t.guild_id is None else f"<#{t.channel_id}>"
        what = f"team “{esc(clip(t.name, 80))}”" if t.kind == "team" else f"{esc(clip(t.name, 80))} (`{t.subject}`)"
        how = t.mode + (f" · mentions role `{int(t.role_id)}`" if t.role_id is not None else "")
        line = (f"• {what} · {where} · {how} · since {day(t.created_at)} · last alert: "
                f"{day(t.last_alert_at) if t.last_alert_at else 'no alert yet'}")
        if t.disabled_reason:
            line += f" · **disabled**: {clean(t.disabled_reason)}"
        if t.last_failure:
            line += f" · last failed delivery: {clean(clip(t.last_failure, 200))}"
        lines.append(line)
    return clip_lines(lines, 1900)
