"""Followed directions, read from the event log with a per-follow cursor.

A follow sends a channel (or a user's DMs) the direction's newly added citing papers: the
same entries as the direction's Atom feed, one per citing paper, at the first event that
made it cite a paper placed in the direction. A follow starts at the newest event when it
is created, so the direction's history does not flood the channel.

Delivery modes (for follows and for tracked papers, table `tracks`): `instant` (after each
refresh; tracks' instant alerts are store.subscriptions.tracking's) or a `daily` / `weekly` digest
(store.subscriptions.digests). Exactly once, as for alerts: the bot reads what is pending up to a snapshot
event id, marks it as being sent, posts, and only after Discord accepted the message
advances the cursor (store.subscriptions, the same for tracks and follows).

No discord here: plain frozen dataclasses out, the clock passed in.
"""

from __future__ import annotations

import sqlite3
import unicodedata
from dataclasses import dataclass, replace
from datetime import datetime

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import fill, named_row, named_rows, rows_in_chunks
from mapwatch.store.errors import BadChoice, BadOption, DirectionNotFound
from mapwatch.store.ids import paper_link
from mapwatch.store.questions import authors
from mapwatch.store.questions.feed_queries import last_event_id
from mapwatch.store.questions.provenance import with_provenance
from mapwatch.store.questions.types import AlertCiter, NewsOrder, PaperRef
from mapwatch.store.subscriptions import deliveries
from mapwatch.store.subscriptions.alert_hold import deliverable_upto
from mapwatch.store.subscriptions.kinds import MODES, Intent, Mode

KEYWORD_MAX = 100


# -- data ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class Place:
    """Where deliveries go: a server channel, or (guild_id None) a user's DM channel."""

    guild_id: int | None
    channel_id: int
    user_id: int | None  # set only in DMs


@dataclass(frozen=True)
class Follow:
    id: int
    guild_id: int | None
    channel_id: int
    user_id: int | None
    direction_slug: str
    direction_name: str
    direction_url: str | None
    keyword: str | None
    mode: Mode
    role_id: int | None
    created_at: str
    created_by: int | None
    last_event_id: int
    last_delivery_at: str | None
    disabled_reason: str | None
    last_failure: str | None = None  # the last delivery Discord refused for good, and why
    hide_self: bool = False  # `self:hide`: leave out citers whose every citation of the direction is a self-citation
    intent: Intent | None = None  # `intent:`: only citers whose citation of the direction has this intent

    @property
    def place(self) -> Place:
        return Place(self.guild_id, self.channel_id, self.user_id)


@dataclass(frozen=True)
class FollowNews:
    """What a follow's next delivery holds: its new entries in events (cursor, upto_event_id]."""

    follow: Follow
    citers: tuple[AlertCiter, ...]  # the first `limit` (event order, or most cited first)
    total: int  # every new entry that matches the keyword
    upto_event_id: int
    sending_since: str | None = None  # first tried at (a resend of a delivery that may have been posted)
    other_intent: int = 0  # new entries left out: Semantic Scholar gives their citations another intent
    unclassified: int = 0  # ... or has not classified them (yet)

    @property
    def more(self) -> int:
        return max(0, self.total - len(self.citers))



# -- helpers ------------------------------------------------------------------------------

def clean_text(text: str) -> str:
    """Control and format characters out, whitespace collapsed."""
    kept = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text)
    return " ".join(kept.split())


def normalize_keyword(text: str | None) -> str | None:
    """A keyword as stored: cleaned, at most KEYWORD_MAX characters; empty means none."""
    if text is None:
        return None
    cleaned = clean_text(text)
    if not cleaned:
        return None
    if len(cleaned) > KEYWORD_MAX:
        raise BadOption(f"The keyword is too long ({len(cleaned)} characters; at most {KEYWORD_MAX}).")
    return cleaned


def keyword_matches(keyword: str | None, title: str) -> bool:
    """Case-insensitive substring match on a title (plain text: no patterns, no SQL)."""
    return keyword is None or keyword.casefold() in clean_text(title).casefold()


def normalize_mode(text: str | None) -> str:
    if text is None or not text.strip():
        return "instant"
    mode = text.strip().lower()
    if mode not in MODES:
        raise BadChoice("mode", clean_text(text), MODES)
    return mode



def dm_recipient(guild_id: int | None, user_id: int | None) -> int | None:
    return user_id if guild_id is None else None


# -- follows ------------------------------------------------------------------------------

_FOLLOW_COLS = ("f.id, f.guild_id, f.channel_id, f.user_id, f.direction_slug, d.name AS direction_name,"
                " d.url AS direction_url, f.keyword, f.mode,"
                " f.role_id, f.created_at, f.created_by, f.last_event_id, f.last_delivery_at, f.disabled_reason,"
                " f.last_failure, f.hide_self, f.intent")
_FOLLOW_FROM = "follows f JOIN directions d ON d.slug = f.direction_slug"


def _follow(r: sqlite3.Row) -> Follow:
    return fill(Follow, r, hide_self=bool(r["hide_self"]))


def _find_follow(db: Database, guild_id: int | None, channel_id: int, dm_user: int | None,
                 slug: str) -> Follow | None:
    r = named_row(
        db, f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE coalesce(f.guild_id, 0) = ? AND f.channel_id = ?"
        " AND coalesce(f.user_id, 0) = ? AND f.direction_slug = ?",
        (guild_id or 0, channel_id, dm_user or 0, slug))
    return _follow(r) if r else None


def get_follow(db: Database, follow_id: int) -> Follow | None:
    r = named_row(db, f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE f.id = ?", (follow_id,))
    return _follow(r) if r else None


def add_follow(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None, direction_slug: str,
               keyword: str | None = None, mode: str | None = "instant", role_id: int | None = None,
               created_by: int | None, now: datetime, hide_self: bool = False,
               intent: Intent | None = None) -> tuple[Follow, bool]:
    """Follow a direction in a channel (or, guild_id None, in `user_id`'s DMs).

    Returns the follow and whether it is new. Following again changes the keyword, mode,
    role and `hide_self` and re-enables a disabled follow (from the newest event on); its cursor
    otherwise stays, so nothing pending is lost or repeated."""
    kw = normalize_keyword(keyword)
    md = normalize_mode(mode)
    if role_id is not None and guild_id is None:
        raise BadOption("Roles exist only in servers: leave out the role in a DM.")
    dm_user = dm_recipient(guild_id, user_id)
    if not db.conn.execute("SELECT 1 FROM directions WHERE slug = ?", (direction_slug,)).fetchone():
        raise DirectionNotFound(direction_slug)
    with db.atomic():
        existing = _find_follow(db, guild_id, channel_id, dm_user, direction_slug)
        if existing:
            db.conn.execute(
                "UPDATE follows SET keyword = ?, mode = ?, role_id = ?, hide_self = ?, intent = ?,"
                " disabled_reason = NULL, last_event_id = CASE WHEN disabled_reason IS NULL THEN last_event_id"
                " ELSE max(last_event_id, (SELECT coalesce(max(id), 0) FROM events)) END WHERE id = ?",
                (kw, md, role_id, int(hide_self), intent, existing.id))
        else:
            db.conn.execute(
                "INSERT INTO follows (guild_id, channel_id, user_id, direction_slug, keyword, mode, role_id,"
                " created_at, created_by, last_event_id, hide_self, intent)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM events), ?, ?)",
                (guild_id, channel_id, dm_user, direction_slug, kw, md, role_id, iso(now), created_by,
                 int(hide_self), intent))
        follow = _find_follow(db, guild_id, channel_id, dm_user, direction_slug)
    assert follow is not None
    return follow, existing is None


def remove_follow(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None,
                  direction_slug: str) -> bool:
    """Stop following here. False if the direction was not followed in this channel (or DMs)."""
    return deliveries.remove(db, deliveries.FOLLOWS, direction_slug, guild_id=guild_id, channel_id=channel_id,
                                dm_user=dm_recipient(guild_id, user_id))


def list_follows(db: Database, *, guild_id: int | None, user_id: int | None,
                 limit: int = 500) -> tuple[Follow, ...]:
    """A server's follows (all its channels) or, in a DM, the user's own."""
    where, params = (("f.guild_id = ?", [guild_id]) if guild_id is not None
                     else ("f.guild_id IS NULL AND f.user_id = ?", [user_id]))
    return tuple(_follow(r) for r in named_rows(
        db, f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE {where} ORDER BY f.created_at, f.id LIMIT ?",
        [*params, limit]))


def follows_of(db: Database, place: Place, mode: str) -> list[Follow]:
    """A place's enabled follows of one delivery mode, by direction name."""
    return [_follow(r) for r in named_rows(
        db, f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE f.disabled_reason IS NULL AND f.mode = ?"
        " AND coalesce(f.guild_id, 0) = ? AND f.channel_id = ? AND coalesce(f.user_id, 0) = ?"
        " ORDER BY d.name, f.id", (mode, place.guild_id or 0, place.channel_id, place.user_id or 0))]


def _new_citers(db: Database, slug: str, after: int, upto: int) -> list[AlertCiter]:
    """Citing papers whose first citation of a paper placed in `slug` is in (after, upto]:
    the direction feed's entries added in that window, in event order."""
    c = db.conn
    rows = named_rows(
        c, "WITH fresh AS ("
        "  SELECT e.citing_id AS citing_id, min(e.id) AS first_id FROM events e"
        "  JOIN placements pl ON pl.paper_id = e.paper_id AND pl.direction_slug = :slug"
        "  WHERE e.kind = 'citation' AND e.id > :after AND e.id <= :upto GROUP BY e.citing_id)"
        " SELECT p.id, p.title, p.year, p.url, p.arxiv_url, p.cited_by, f.first_id AS event_id, e.seen_at"
        " FROM fresh f JOIN papers p ON p.id = f.citing_id JOIN events e ON e.id = f.first_id"
        " WHERE NOT EXISTS (SELECT 1 FROM events o"
        "   JOIN placements op ON op.paper_id = o.paper_id AND op.direction_slug = :slug"
        "   WHERE o.citing_id = f.citing_id AND o.kind = 'citation' AND o.id <= :after)"
        " ORDER BY f.first_id",
        {"slug": slug, "after": after, "upto": upto})
    if not rows:
        return []
    ids = [r["id"] for r in rows]
    cites: dict[str, list[PaperRef]] = {}
    for citing, pid, title, year in rows_in_chunks(
            c, "SELECT c.citing_id, p.id, p.title, p.year FROM citations c"
            " JOIN placements pl ON pl.paper_id = c.cited_id AND pl.direction_slug = ?"
            " JOIN papers p ON p.id = c.cited_id WHERE c.citing_id IN ({})"
            " ORDER BY c.citing_id, p.cited_by DESC, p.id", ids, [slug]):
        cites.setdefault(citing, []).append(PaperRef(pid, title, year))
    return with_provenance(db, [AlertCiter(
        id=r["id"], title=r["title"], year=r["year"], url=r["url"], arxiv_url=r["arxiv_url"] or paper_link(r["id"]),
        cited_by=r["cited_by"], event_id=r["event_id"], seen_at=r["seen_at"], cites=tuple(cites.get(r["id"], ())))
        for r in rows])


def of_intent(db: Database, citers: list[AlertCiter], intent: Intent) -> tuple[list[AlertCiter], int, int]:
    """The citers one of whose citations of the papers they are listed for citing Semantic
    Scholar gives `intent`; and how many it gives other intents only, and how many none."""
    said: dict[str, set[str]] = {}
    for cited in dict.fromkeys(r.id for c in citers for r in c.cites):
        for citing, intents in authors.intents_of(db, cited, [c.id for c in citers
                                                              if any(r.id == cited for r in c.cites)]).items():
            said.setdefault(citing, set()).update(intents)
    kept = [c for c in citers if intent in said.get(c.id, ())]
    unclassified = sum(1 for c in citers if c.id not in said)
    return kept, len(citers) - len(kept) - unclassified, unclassified


def most_cited_first(citers: list[AlertCiter]) -> list[AlertCiter]:
    return sorted(citers, key=lambda c: (-(c.cited_by or 0), c.event_id))


def follow_news(db: Database, follow: Follow, *, upto: int | None = None, limit: int = 10,
                order: NewsOrder = "event") -> FollowNews:
    """The follow's new entries past its cursor (up to `upto`, default the newest event),
    keyword-filtered; the first `limit` in event order, or most cited first (order="cited")."""
    top = last_event_id(db) if upto is None else upto
    found = [c for c in _new_citers(db, follow.direction_slug, follow.last_event_id, top)
             if keyword_matches(follow.keyword, c.title)]
    other = unclassified = 0
    if follow.intent:
        found, other, unclassified = of_intent(db, found, follow.intent)
    if follow.hide_self:  # every new entry's authors are read, to leave out the self-citations
        found = [c for c in authors.with_alert_bylines(db, found) if not c.only_self]
    if order == "cited":
        found = most_cited_first(found)
    shown = found[:limit] if follow.hide_self else authors.with_alert_bylines(db, found[:limit])
    return FollowNews(follow, tuple(shown), len(found), max(top, follow.last_event_id), None, other, unclassified)


def pending_follow_alerts(db: Database, *, limit: int = 10, max_follows: int = 1000) -> list[FollowNews]:
    """For every enabled instant follow with events past its cursor in its direction: what
    to deliver. News with total 0 (nothing new to the direction, or no title matched the
    keyword) is returned too: the caller advances its cursor without posting."""
    upto = deliverable_upto(db)  # the alert hold (store/subscriptions/alert_hold.py)
    follows = [_follow(r) for r in named_rows(
        db, f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM}"
        " WHERE f.disabled_reason IS NULL AND f.mode = 'instant' AND f.last_event_id < ?"
        " AND EXISTS (SELECT 1 FROM events e JOIN placements pl ON pl.paper_id = e.paper_id"
        "   AND pl.direction_slug = f.direction_slug WHERE e.id > f.last_event_id AND e.id <= ?"
        "   AND e.kind = 'citation')"
        " ORDER BY f.id LIMIT ?", (upto, upto, max_follows))]
    # A delivery that may have reached Discord (no answer, or a crash before the cursor moved)
    # is resent exactly as it was, with the same nonce, so Discord drops the repeat.
    caps = deliveries.markers(db, deliveries.FOLLOWS)
    out = []
    for f in follows:
        again = deliveries.resend(caps, f.id, f.last_event_id)
        if again:
            out.append(replace(follow_news(db, f, upto=again[0], limit=limit), sending_since=again[1]))
        else:
            out.append(follow_news(db, f, upto=upto, limit=limit))
    return out
