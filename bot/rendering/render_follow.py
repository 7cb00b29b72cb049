"""Pure rendering of deliveries (track alerts, follows, digests) and digest previews, within Discord's limits.

Limits (docs/design.md, "3. Discord's limits"): content 2000; embed title 256, description 4096, 25 fields
(name 256, value 1024), footer 2048, 6000 characters in total per message, 10 embeds.
Long lists are summarised ("and N more"), never split into a burst of messages.

Mentions: text from pages is escaped so it can neither format nor ping. The only mention a
delivery may carry is the role chosen on /follow or /track: it is written as `<@&id>` in the
content and listed in `Delivery.role_ids`; the send site allows exactly those roles
(`discord.AllowedMentions(everyone=False, users=False, roles=[...])`), nothing else.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from mapwatch.bot.rendering.render import alert, day
from mapwatch.bot.rendering.replies import Embed, Field, Reply
from mapwatch.bot.rendering.text import (
    CONTENT_MAX,
    DESC_MAX,
    FIELD_NAME_MAX,
    FIELD_VALUE_MAX,
    FIELDS_MAX,
    FOOTER_MAX,
    SELF_MARK,
    TITLE_MAX,
    TOTAL_MAX,
    and_more,
    byline,
    clean,
    clip,
    clip_lines,
    embed_size,
    esc,
    intent_notes,
    link,
    plural,
    role_mention,
    safe_link,
    venue_mark,
)
from mapwatch.store.questions.types import PROVENANCE_NAMES, AlertCiter
from mapwatch.store.subscriptions.digests import Digest, DigestSection
from mapwatch.store.subscriptions.follows import Follow, FollowNews
from mapwatch.store.subscriptions.tracking import Alert

COLOR = 0x10B981
DIGEST_LINES = 5  # top citers named per digest section, before shrinking to fit
TITLE_LINK_MAX = 180  # a linked title in a delivery


FORUM_TAG_MAX = 20  # Discord's limit for a forum tag's name


@dataclass(frozen=True)
class ForumPost:
    """Where a delivery goes in a forum channel: the post `thread_id` (None: open a new post named
    `title`, tagged `tag` when the forum has or can take it); `keys`, the citing papers' ids (or a
    digest's key) the post holds; `resend`, a delivery that may have been posted already."""

    title: str
    tag: str
    keys: tuple[str, ...]
    thread_id: int | None = None
    resend: bool = False


def forum_tag(name: str) -> str:
    """A forum tag's name for a direction: one clean line within Discord's 20 characters."""
    return clip(clean(name), FORUM_TAG_MAX)


@dataclass(frozen=True)
class Delivery:
    """A message to post to a channel. `role_ids`: the only mentions it may make."""

    content: str
    embeds: tuple[Embed, ...]
    role_ids: tuple[int, ...] = ()
    thread_name: str = ""  # open a discussion thread on it, named so ("": none)
    forum: ForumPost | None = None  # the place is a forum channel: post there (bot.sending.delivery)


THREAD_NAME_MAX = 100  # Discord's limit for a thread's name


def thread_name(titles: Sequence[str], more: int = 0) -> str:
    """A discussion thread's name: the citing paper's title (the first one, "+N more" after it
    when the alert names several), one clean line, within Discord's 100 characters."""
    extra = len(titles) - 1 + more
    suffix = f" (+{extra} more)" if extra > 0 else ""
    first = clean(titles[0]) if titles else ""
    if not first:
        return clip(f"New citing papers{suffix}", THREAD_NAME_MAX)
    return clip(first, THREAD_NAME_MAX - len(suffix)) + suffix


def digest_post_title(mode: str, period: str) -> str:
    """A digest's forum post: "Daily digest · 1 Nov 2026" (the period's day, UTC)."""
    when = period[:10]
    with contextlib.suppress(ValueError):
        when = datetime.fromisoformat(period).astimezone(UTC).strftime("%-d %b %Y")
    return clip(f"{mode.capitalize()} digest · {when}", THREAD_NAME_MAX)


def citer_line(c: AlertCiter, *, with_cites: bool = True) -> str:
    year = f" ({c.year})" if c.year else ""
    counts = f" · cited by {c.cited_by}" if c.cited_by else ""
    line = f"• {link(c.title, c.url or c.arxiv_url, TITLE_LINK_MAX)}{year} · [`{esc(c.id)}`]({c.arxiv_url}){counts}"
    if not safe_link(c.arxiv_url):
        line = f"• {link(c.title, c.url, TITLE_LINK_MAX)}{year} · `{esc(c.id)}`{counts}"
    line += venue_mark(c.byline)
    if c.self_citation:
        line += f" · {SELF_MARK}"
    if c.provenance != "map":  # no map page names it yet
        line += f" · via {PROVENANCE_NAMES[c.provenance]}"
    if with_cites and c.cites:
        names = ", ".join(clip(esc(r.title), 60) for r in c.cites[:2])
        extra = f" and {len(c.cites) - 2} more" if len(c.cites) > 2 else ""
        line += f"\n  cites {names}{extra}"
    if by := byline(c.byline):
        line += f"\n  {by}"
    return line


def _mentions(role_ids: Sequence[int]) -> str:
    return " ".join(role_mention(r) for r in role_ids)


# -- instant delivery ---------------------------------------------------------------------------

def track_alert(a: Alert) -> Delivery:
    """A tracked paper's alert (bot.rendering.render.alert) as a delivery, mentioning the track's role."""
    reply = alert(a)
    roles = (a.track.role_id,) if a.track.role_id is not None else ()
    return Delivery(f"{_mentions(roles)} {reply.content}".strip(), reply.embeds, roles)


def follow_alert(news: FollowNews) -> Delivery:
    """One message for a follow's new citing papers: names, links, "and N more"."""
    f = news.follow
    name = clip(esc(f.direction_name), 150)
    title = clip(f"{plural(news.total, 'new citing paper')} in {esc(f.direction_name)}", TITLE_MAX)
    lines = [citer_line(c) for c in news.citers]
    desc = clip_lines(lines, DESC_MAX - 200, more=news.more)
    notes = intent_notes(f.intent, news.other_intent, news.unclassified)
    if notes:
        desc = clip((desc + "\n\n" if desc else "") + notes[0], DESC_MAX)
    footer = f"Titles matching “{clip(esc(f.keyword), 120)}” · " if f.keyword else ""
    footer += "/unfollow to stop"
    embed = Embed(title=title, description=desc, url=safe_link(f.direction_url), footer=clip(footer, FOOTER_MAX),
                  color=COLOR)
    roles = (f.role_id,) if f.role_id is not None else ()
    content = f"{_mentions(roles)} New in **{name}**".strip()
    return Delivery(clip(content, CONTENT_MAX), (embed,), roles)


# -- digests ------------------------------------------------------------------------------------

def _section_name(s: DigestSection) -> str:
    what = {"direction": "Direction", "author": "Person", "team": "Team"}.get(s.kind, "Paper")
    gained = plural(s.total, "new citer")
    if s.kind == "paper" and s.old_count is not None and s.new_count is not None and s.new_count > s.old_count:
        gained += f", cited by {s.old_count} → {s.new_count}"
    name = f"{what}: {esc(s.title)}"
    suffix = f" ({gained})"
    return clip(name, FIELD_NAME_MAX - len(suffix)) + suffix


def _section_value(s: DigestSection, lines: int) -> str:
    head = []
    if safe_link(s.url):
        head.append(f"[open]({s.url})" + (f" · titles matching “{clip(esc(s.keyword), 60)}”" if s.keyword else ""))
    elif s.keyword:
        head.append(f"titles matching “{clip(esc(s.keyword), 60)}”")
    if s.unlisted:
        head.append(f"{s.unlisted} not named on its page")
    body = [citer_line(c, with_cites=s.kind in ("author", "team")) for c in s.citers[:lines]]
    more = s.total - len(body)
    text = clip_lines(head + body, FIELD_VALUE_MAX, more=more) if (head or body or more) else ""
    return text or "\u200b"


def digest_summary(d: Digest) -> str:
    parts = []
    if d.directions:
        parts.append(plural(d.directions, "followed direction"))
    if d.papers:
        parts.append(plural(d.papers, "tracked paper"))
    if d.people:
        parts.append(f"{d.people} tracked {'person or team' if d.people == 1 else 'people and teams'}")
    what = " and ".join(parts) or "nothing"
    return f"{plural(d.citers, 'new citing paper')} across {what}"


def digest_embed(d: Digest, *, heading: str | None = None, budget: int = TOTAL_MAX) -> Embed:
    """The digest as one embed: a field per section (most active first), shrunk to fit."""
    sections = sorted(d.sections, key=lambda s: (-s.total, s.title.casefold(), s.item_id))
    title = heading or f"{d.mode.capitalize()} digest"
    desc = digest_summary(d)
    lines = DIGEST_LINES
    shown = min(len(sections), FIELDS_MAX - 1)
    while True:
        fields = [Field(_section_name(s), _section_value(s, lines)) for s in sections[:shown]]
        if shown < len(sections):
            rest = sections[shown:]
            names = ", ".join(clip(esc(s.title), 40) for s in rest[:5])
            fields.append(Field(and_more(len(rest)), clip(names + (", …" if len(rest) > 5 else ""),
                                                                  FIELD_VALUE_MAX)))
        embed = Embed(title=clip(title, TITLE_MAX), description=desc, fields=tuple(fields),
                      footer="/tracked lists what this channel follows", color=COLOR)
        if embed_size(embed) <= budget or (lines == 0 and shown == 0):
            return embed
        if lines > 0:
            lines -= 1
        else:
            shown -= 1


def digest_message(d: Digest) -> Delivery:
    """One message per channel and period: every tracked paper and followed direction with
    something new. Mentions the roles chosen on them (and only those)."""
    roles = d.role_ids
    content = f"{_mentions(roles)} {d.mode.capitalize()} digest: {digest_summary(d)}".strip()
    return Delivery(clip(content, CONTENT_MAX), (digest_embed(d),), roles)


def _when(ts: datetime) -> str:
    """Discord shows <t:…> in each reader's own time; the UTC time is for text output."""
    unix = int(ts.timestamp())
    return f"<t:{unix}:f> ({ts.astimezone(UTC):%Y-%m-%d %H:%M} UTC)"


def digest_preview(previews: Sequence[tuple[Digest, datetime]]) -> Reply:
    """/digest-preview: what each of the channel's next digests would hold now (ephemeral)."""
    if not previews:
        return Reply(content="This channel gets no digests: `/follow <direction> mode:daily` or "
                             "`/track <paper> mode:weekly` sets one up.", ephemeral=True)
    lines, embeds = [], []
    budget = TOTAL_MAX
    for d, at in previews[:10]:
        if d.quiet:
            lines.append(f"Next {d.mode} digest {_when(at)}: nothing new so far (a quiet period sends nothing).")
            continue
        lines.append(f"Next {d.mode} digest {_when(at)}: {digest_summary(d)}. No role is mentioned in a preview.")
        if budget > 300:
            e = digest_embed(d, heading=f"Next {d.mode} digest (preview)", budget=budget)
            embeds.append(e)
            budget -= embed_size(e)
    return Reply(content=clip("\n".join(lines), CONTENT_MAX), embeds=tuple(embeds), ephemeral=True)


# -- /tracked ---------------------------------------------------------------------------------------

def _day(ts: str | None) -> str:
    return day(ts) if ts else "none yet"


def follow_line(f: Follow, *, in_dm: bool = False) -> str:
    """What, where, mode, since, last delivery, disabled and why: one line per follow."""
    where = "your DMs" if in_dm or f.guild_id is None else f"<#{int(f.channel_id)}>"
    bits = [f"{link(f.direction_name, f.direction_url, 120)}", where, f.mode]
    if f.keyword:
        bits.append(f"titles matching “{clip(esc(f.keyword), 60)}”")
    if f.role_id is not None:
        bits.append(f"mentions role `{int(f.role_id)}`")
    if f.intent:
        bits.append(f"intent:{f.intent}")
    bits.append(f"since {_day(f.created_at)}")
    bits.append(f"last delivery {_day(f.last_delivery_at)}")
    line = "• " + " · ".join(bits)
    if f.disabled_reason:
        line += f"\n  disabled: {clip(esc(f.disabled_reason), 200)} (/follow again to resume)"
    if f.last_failure:
        line += f"\n  last failed delivery: {clip(esc(f.last_failure), 200)}"
    return line


def follows_field(follows: Sequence[Follow], *, in_dm: bool = False) -> Field | None:
    """The follows as one embed field for /tracked (None when there are none)."""
    if not follows:
        return None
    lines = [follow_line(f, in_dm=in_dm) for f in follows]
    return Field(f"Followed directions ({len(follows)})", clip_lines(lines, FIELD_VALUE_MAX))


def follows_block(follows: Sequence[Follow], *, in_dm: bool = False, limit: int = 3000) -> str:
    """The follows as text for a description (for /tracked, beside the tracked papers)."""
    if not follows:
        return ""
    lines = [follow_line(f, in_dm=in_dm) for f in follows]
    return f"**Followed directions ({len(follows)})**\n" + clip_lines(lines, limit)
