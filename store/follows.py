"""Followed directions and digests, read from the event log with per-follow cursors.

A follow sends a channel (or a user's DMs) the direction's newly added citing papers: the
same entries as the direction's Atom feed, one per citing paper, at the first event that
made it cite a paper placed in the direction. A follow starts at the newest event when it
is created, so the direction's history does not flood the channel.

Delivery modes (for follows and for tracked papers, table `tracks`): `instant` (after each
refresh; tracks' instant alerts are store.tracking's) or a `daily` / `weekly` digest at the
scope's chosen local hour (weekly: on Mondays). Exactly once, as for alerts: the bot reads
what is pending up to a snapshot event id, posts, and only after Discord accepted the
message advances the cursors (`mark_follow_delivered`, `record_digest`). A digest period
is recorded in `digests` whether it was sent or quiet, so it is handled once; periods missed
while the bot was down collapse into one digest when it returns.

No discord here: plain frozen dataclasses out, the clock passed in.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mapwatch.store.clock import iso, parse_iso
from mapwatch.store.errors import BadOption
from mapwatch.store.feed_queries import last_event_id
from mapwatch.store.ids import arxiv_url
from mapwatch.store.types import AlertCiter, PaperRef
from sqlite_utils import Database

MODES = ("instant", "daily", "weekly")
DIGEST_MODES = ("daily", "weekly")
DEFAULT_HOUR = 9
DEFAULT_TIMEZONE = "UTC"
WEEKLY_WEEKDAY = 0  # weekly digests go out on Mondays
KEYWORD_MAX = 100
TIMEZONE_MAX = 64
_TZ_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*")


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
    mode: str
    role_id: int | None
    created_at: str
    created_by: int | None
    last_event_id: int
    last_delivery_at: str | None
    disabled_reason: str | None
    last_failure: str | None = None  # the last delivery Discord refused for good, and why

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

    @property
    def more(self) -> int:
        return max(0, self.total - len(self.citers))


@dataclass(frozen=True)
class DigestSettings:
    guild_id: int | None
    user_id: int | None
    hour: int
    timezone: str
    is_default: bool = False


@dataclass(frozen=True)
class DueDigest:
    place: Place
    mode: str
    period: datetime  # the scheduled time (UTC) this digest stands for


@dataclass(frozen=True)
class DigestSection:
    """One tracked paper or followed direction with something new, in a digest."""

    kind: str  # "direction" | "paper"
    item_id: int  # the follow's (or track's) id
    key: str  # direction slug, or paper id
    title: str  # direction name, or paper title
    url: str | None
    keyword: str | None
    role_id: int | None
    total: int  # new citing papers
    citers: tuple[AlertCiter, ...]  # the top ones, most cited first
    old_count: int | None = None  # a tracked paper's stated cited-by count, when it grew
    new_count: int | None = None
    unlisted: int = 0  # gained citers its page does not name

    @property
    def more(self) -> int:
        return max(0, self.total - len(self.citers))


@dataclass(frozen=True)
class Digest:
    place: Place
    mode: str
    period: str  # ISO 8601 UTC
    from_event_id: int
    upto_event_id: int
    sections: tuple[DigestSection, ...]
    follow_ids: tuple[int, ...]  # every follow the digest covers (quiet ones too): cursors advance
    track_ids: tuple[int, ...] = ()

    @property
    def quiet(self) -> bool:
        return not self.sections

    @property
    def role_ids(self) -> tuple[int, ...]:
        return tuple(sorted({s.role_id for s in self.sections if s.role_id is not None}))

    @property
    def papers(self) -> int:
        return sum(1 for s in self.sections if s.kind == "paper")

    @property
    def directions(self) -> int:
        return sum(1 for s in self.sections if s.kind == "direction")

    @property
    def citers(self) -> int:
        return sum(s.total for s in self.sections)


# -- helpers ------------------------------------------------------------------------------

def _clean_text(text: str) -> str:
    """Control and format characters out, whitespace collapsed."""
    kept = "".join(" " if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp") else ch for ch in text)
    return " ".join(kept.split())


def normalize_keyword(text: str | None) -> str | None:
    """A keyword as stored: cleaned, at most KEYWORD_MAX characters; empty means none."""
    if text is None:
        return None
    cleaned = _clean_text(text)
    if not cleaned:
        return None
    if len(cleaned) > KEYWORD_MAX:
        raise BadOption(f"The keyword is too long ({len(cleaned)} characters; at most {KEYWORD_MAX}).")
    return cleaned


def keyword_matches(keyword: str | None, title: str) -> bool:
    """Case-insensitive substring match on a title (plain text: no patterns, no SQL)."""
    return keyword is None or keyword.casefold() in _clean_text(title).casefold()


def normalize_mode(text: str | None) -> str:
    if text is None or not text.strip():
        return "instant"
    mode = text.strip().lower()
    if mode not in MODES:
        raise BadOption(f"Unknown mode “{_clean_text(text)[:40]}”: use instant, daily or weekly.")
    return mode


def zone(name: str) -> ZoneInfo:
    """An IANA time zone by name, or BadOption with a clear message."""
    cleaned = name.strip()
    if not _TZ_NAME.fullmatch(cleaned) or ".." in cleaned:
        raise BadOption(f"Unknown time zone “{_clean_text(name)[:TIMEZONE_MAX]}”: use a name such as UTC, "
                        "Europe/Paris or America/New_York.")
    try:
        return ZoneInfo(cleaned)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise BadOption(f"Unknown time zone “{cleaned}”: use a name such as UTC, Europe/Paris or "
                        "America/New_York.") from None


def _dm_user(guild_id: int | None, user_id: int | None) -> int | None:
    return user_id if guild_id is None else None


# -- follows ------------------------------------------------------------------------------

_FOLLOW_COLS = ("f.id, f.guild_id, f.channel_id, f.user_id, f.direction_slug, d.name, d.url, f.keyword, f.mode,"
                " f.role_id, f.created_at, f.created_by, f.last_event_id, f.last_delivery_at, f.disabled_reason,"
                " f.last_failure")
_FOLLOW_FROM = "follows f JOIN directions d ON d.slug = f.direction_slug"


def _follow(r: tuple) -> Follow:
    return Follow(*r)


def _find_follow(db: Database, guild_id: int | None, channel_id: int, dm_user: int | None,
                 slug: str) -> Follow | None:
    r = db.conn.execute(
        f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE coalesce(f.guild_id, 0) = ? AND f.channel_id = ?"
        " AND coalesce(f.user_id, 0) = ? AND f.direction_slug = ?",
        (guild_id or 0, channel_id, dm_user or 0, slug)).fetchone()
    return _follow(r) if r else None


def get_follow(db: Database, follow_id: int) -> Follow | None:
    r = db.conn.execute(f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE f.id = ?", (follow_id,)).fetchone()
    return _follow(r) if r else None


def add_follow(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None, direction_slug: str,
               keyword: str | None = None, mode: str | None = "instant", role_id: int | None = None,
               created_by: int | None, now: datetime) -> tuple[Follow, bool]:
    """Follow a direction in a channel (or, guild_id None, in `user_id`'s DMs).

    Returns the follow and whether it is new. Following again changes the keyword, mode
    and role and re-enables a disabled follow (from the newest event on); its cursor
    otherwise stays, so nothing pending is lost or repeated."""
    kw = normalize_keyword(keyword)
    md = normalize_mode(mode)
    if role_id is not None and guild_id is None:
        raise BadOption("Roles exist only in servers: leave out the role in a DM.")
    dm_user = _dm_user(guild_id, user_id)
    if not db.conn.execute("SELECT 1 FROM directions WHERE slug = ?", (direction_slug,)).fetchone():
        from mapwatch.store.errors import DirectionNotFound
        raise DirectionNotFound(direction_slug)
    with db.atomic():
        existing = _find_follow(db, guild_id, channel_id, dm_user, direction_slug)
        if existing:
            db.conn.execute(
                "UPDATE follows SET keyword = ?, mode = ?, role_id = ?, disabled_reason = NULL,"
                " last_event_id = CASE WHEN disabled_reason IS NULL THEN last_event_id"
                " ELSE max(last_event_id, (SELECT coalesce(max(id), 0) FROM events)) END WHERE id = ?",
                (kw, md, role_id, existing.id))
        else:
            db.conn.execute(
                "INSERT INTO follows (guild_id, channel_id, user_id, direction_slug, keyword, mode, role_id,"
                " created_at, created_by, last_event_id)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM events))",
                (guild_id, channel_id, dm_user, direction_slug, kw, md, role_id, iso(now), created_by))
        follow = _find_follow(db, guild_id, channel_id, dm_user, direction_slug)
    assert follow is not None
    return follow, existing is None


def remove_follow(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None,
                  direction_slug: str) -> bool:
    """Stop following here. False if the direction was not followed in this channel (or DMs)."""
    dm_user = _dm_user(guild_id, user_id)
    with db.atomic():
        cur = db.conn.execute(
            "DELETE FROM follows WHERE coalesce(guild_id, 0) = ? AND channel_id = ? AND coalesce(user_id, 0) = ?"
            " AND direction_slug = ?", (guild_id or 0, channel_id, dm_user or 0, direction_slug))
        db.conn.execute("DELETE FROM bot_state WHERE key LIKE ? AND CAST(substr(key, ?) AS INTEGER)"
                        " NOT IN (SELECT id FROM follows)", (FOLLOW_SENDING + "%", len(FOLLOW_SENDING) + 1))
    return cur.rowcount > 0


def list_follows(db: Database, *, guild_id: int | None, user_id: int | None,
                 limit: int = 500) -> tuple[Follow, ...]:
    """A server's follows (all its channels) or, in a DM, the user's own."""
    if guild_id is not None:
        where, params = "f.guild_id = ?", [guild_id]
    else:
        where, params = "f.guild_id IS NULL AND f.user_id = ?", [user_id]
    return tuple(_follow(r) for r in db.conn.execute(
        f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE {where} ORDER BY f.created_at, f.id LIMIT ?",
        [*params, limit]))


def _new_citers(db: Database, slug: str, after: int, upto: int) -> list[AlertCiter]:
    """Citing papers whose first citation of a paper placed in `slug` is in (after, upto]:
    the direction feed's entries added in that window, in event order."""
    c = db.conn
    rows = c.execute(
        "WITH fresh AS ("
        "  SELECT e.citing_id AS citing_id, min(e.id) AS first_id FROM events e"
        "  JOIN placements pl ON pl.paper_id = e.paper_id AND pl.direction_slug = :slug"
        "  WHERE e.kind = 'citation' AND e.id > :after AND e.id <= :upto GROUP BY e.citing_id)"
        " SELECT p.id, p.title, p.year, p.url, p.arxiv_url, p.cited_by, f.first_id, e.seen_at"
        " FROM fresh f JOIN papers p ON p.id = f.citing_id JOIN events e ON e.id = f.first_id"
        " WHERE NOT EXISTS (SELECT 1 FROM events o"
        "   JOIN placements op ON op.paper_id = o.paper_id AND op.direction_slug = :slug"
        "   WHERE o.citing_id = f.citing_id AND o.kind = 'citation' AND o.id <= :after)"
        " ORDER BY f.first_id",
        {"slug": slug, "after": after, "upto": upto}).fetchall()
    if not rows:
        return []
    ids = [r[0] for r in rows]
    cites: dict[str, list[PaperRef]] = {}
    for i in range(0, len(ids), 500):
        chunk = ids[i:i + 500]
        marks = ",".join("?" * len(chunk))
        for citing, pid, title, year in c.execute(
                "SELECT c.citing_id, p.id, p.title, p.year FROM citations c"
                " JOIN placements pl ON pl.paper_id = c.cited_id AND pl.direction_slug = ?"
                f" JOIN papers p ON p.id = c.cited_id WHERE c.citing_id IN ({marks})"
                " ORDER BY c.citing_id, p.cited_by DESC, p.id", (slug, *chunk)):
            cites.setdefault(citing, []).append(PaperRef(pid, title, year))
    return [AlertCiter(r[0], r[1], r[2], r[3], r[4] or arxiv_url(r[0]), r[5], r[6], r[7],
                     tuple(cites.get(r[0], ()))) for r in rows]


def most_cited_first(citers: list[AlertCiter]) -> list[AlertCiter]:
    return sorted(citers, key=lambda c: (-(c.cited_by or 0), c.event_id))


def follow_news(db: Database, follow: Follow, *, upto: int | None = None, limit: int = 10,
                order: str = "event") -> FollowNews:
    """The follow's new entries past its cursor (up to `upto`, default the newest event),
    keyword-filtered; the first `limit` in event order, or most cited first (order="cited")."""
    top = last_event_id(db) if upto is None else upto
    found = [c for c in _new_citers(db, follow.direction_slug, follow.last_event_id, top)
             if keyword_matches(follow.keyword, c.title)]
    if order == "cited":
        found = most_cited_first(found)
    return FollowNews(follow, tuple(found[:limit]), len(found), max(top, follow.last_event_id))


def pending_follow_alerts(db: Database, *, limit: int = 10, max_follows: int = 1000) -> list[FollowNews]:
    """For every enabled instant follow with events past its cursor in its direction: what
    to deliver. News with total 0 (nothing new to the direction, or no title matched the
    keyword) is returned too: the caller advances its cursor without posting."""
    upto = last_event_id(db)
    follows = [_follow(r) for r in db.conn.execute(
        f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM}"
        " WHERE f.disabled_reason IS NULL AND f.mode = 'instant' AND f.last_event_id < ?"
        " AND EXISTS (SELECT 1 FROM events e JOIN placements pl ON pl.paper_id = e.paper_id"
        "   AND pl.direction_slug = f.direction_slug WHERE e.id > f.last_event_id AND e.id <= ?"
        "   AND e.kind = 'citation')"
        " ORDER BY f.id LIMIT ?", (upto, upto, max_follows))]
    # A delivery that may have reached Discord (no answer, or a crash before the cursor moved)
    # is resent exactly as it was, with the same nonce, so Discord drops the repeat.
    caps = {int(k[len(FOLLOW_SENDING):]): (int(v), at) for k, v, at in db.conn.execute(
        "SELECT key, value, updated FROM bot_state WHERE key LIKE ?", (FOLLOW_SENDING + "%",))}
    out = []
    for f in follows:
        cap, since = caps.get(f.id, (0, None))
        if cap > f.last_event_id:
            out.append(replace(follow_news(db, f, upto=cap, limit=limit), sending_since=since))
        else:
            out.append(follow_news(db, f, upto=upto, limit=limit))
    return out


FOLLOW_SENDING = "follow-sending:"  # bot_state key prefix: the delivery being posted for a follow (its upto)


def mark_follow_sending(db: Database, follow_id: int, upto_event_id: int, now: datetime) -> None:
    """Record, before posting, which delivery is being posted: until `mark_follow_delivered`,
    the follow's next delivery is this same one (see `pending_follow_alerts`). The marker
    keeps the time of the first try (`updated`), as store.tracking's does."""
    from mapwatch.store.tracking import mark_state

    mark_state(db, f"{FOLLOW_SENDING}{follow_id}", str(upto_event_id), now)


def mark_follow_failed(db: Database, follow_id: int, upto_event_id: int, failure: str, now: datetime) -> None:
    """Discord refused this delivery for good: record why (shown by /tracked) and move the
    cursor past it, so later citing papers are delivered."""
    with db.atomic():
        db.conn.execute("UPDATE follows SET last_event_id = max(last_event_id, ?), last_failure = ? WHERE id = ?",
                        (upto_event_id, f"{iso(now)}: {failure}"[:400], follow_id))
        db.conn.execute("DELETE FROM bot_state WHERE key = ?", (f"{FOLLOW_SENDING}{follow_id}",))


def mark_follow_delivered(db: Database, follow_id: int, upto_event_id: int, now: datetime, *,
                          sent: bool = True) -> None:
    """Record a delivery Discord accepted (sent) or a quiet skip (not sent): advance the
    cursor, never backwards; `last_delivery_at` moves only when a message went out."""
    with db.atomic():
        if sent:
            db.conn.execute("UPDATE follows SET last_event_id = max(last_event_id, ?), last_delivery_at = ?"
                            " WHERE id = ?", (upto_event_id, iso(now), follow_id))
        else:
            db.conn.execute("UPDATE follows SET last_event_id = max(last_event_id, ?) WHERE id = ?",
                            (upto_event_id, follow_id))
        db.conn.execute("DELETE FROM bot_state WHERE key = ?", (f"{FOLLOW_SENDING}{follow_id}",))


def disable_follow(db: Database, follow_id: int, reason: str) -> None:
    """The channel is gone or forbids the bot: stop delivering there, and say why in /tracked."""
    with db.atomic():
        db.conn.execute("UPDATE follows SET disabled_reason = ? WHERE id = ?", (reason[:300], follow_id))
        db.conn.execute("DELETE FROM bot_state WHERE key = ?", (f"{FOLLOW_SENDING}{follow_id}",))


def disable_follows_in(db: Database, place: Place, reason: str, *, mode: str | None = None) -> int:
    """Disable a place's follows and tracks (of one mode, or all): a digest found the channel
    gone or forbidden. Returns how many were disabled."""
    n = 0
    with db.atomic():
        for table in ("follows", "tracks"):
            sql = (f"UPDATE {table} SET disabled_reason = ? WHERE disabled_reason IS NULL"
                   " AND coalesce(guild_id, 0) = ? AND channel_id = ? AND coalesce(user_id, 0) = ?")
            params: list = [reason[:300], place.guild_id or 0, place.channel_id, place.user_id or 0]
            if mode is not None:
                sql += " AND mode = ?"
                params.append(mode)
            n += db.conn.execute(sql, params).rowcount
    return n


# -- digest schedule ----------------------------------------------------------------------

def get_digest_settings(db: Database, *, guild_id: int | None, user_id: int | None) -> DigestSettings:
    """A server's (or, guild_id None, a user's DM) digest hour and time zone; 09:00 UTC if unset."""
    dm_user = _dm_user(guild_id, user_id)
    r = db.conn.execute("SELECT hour, timezone FROM digest_settings WHERE coalesce(guild_id, 0) = ?"
                        " AND coalesce(user_id, 0) = ?", (guild_id or 0, dm_user or 0)).fetchone()
    if r is None:
        return DigestSettings(guild_id, dm_user, DEFAULT_HOUR, DEFAULT_TIMEZONE, is_default=True)
    return DigestSettings(guild_id, dm_user, r[0], r[1])


def set_digest_settings(db: Database, *, guild_id: int | None, user_id: int | None, hour: int,
                        timezone: str | None = None, updated_by: int | None, now: datetime) -> DigestSettings:
    """Set the digest hour (0-23) and, when given, the time zone (kept otherwise; UTC at first)."""
    if isinstance(hour, bool) or not isinstance(hour, int) or not 0 <= hour <= 23:
        raise BadOption("The hour is a whole number from 0 to 23 (local time of the chosen time zone).")
    tz_name = str(zone(timezone).key) if timezone is not None and timezone.strip() else None
    dm_user = _dm_user(guild_id, user_id)
    with db.atomic():
        current = get_digest_settings(db, guild_id=guild_id, user_id=dm_user)
        name = tz_name or current.timezone
        db.conn.execute(
            "INSERT INTO digest_settings (guild_id, user_id, hour, timezone, updated_at, updated_by)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(coalesce(guild_id, 0), coalesce(user_id, 0))"
            " DO UPDATE SET hour = excluded.hour, timezone = excluded.timezone, updated_at = excluded.updated_at,"
            " updated_by = excluded.updated_by",
            (guild_id, dm_user, hour, name, iso(now), updated_by))
    return get_digest_settings(db, guild_id=guild_id, user_id=dm_user)


def _slot_day(d: date, mode: str) -> bool:
    return mode == "daily" or d.weekday() == WEEKLY_WEEKDAY


def _slot(d: date, hour: int, tz: ZoneInfo) -> datetime:
    return datetime(d.year, d.month, d.day, hour, tzinfo=tz).astimezone(UTC)


def next_digest_at(settings: DigestSettings, mode: str, last_delivered: datetime, now: datetime) -> datetime:
    """When the next digest is due (UTC). `last_delivered` is the period of the last digest
    handled (or, before the first one, when the place began to want digests).

    The first scheduled time after `last_delivered`; if that is already past (the bot was
    down, or is just late), the latest scheduled time not after `now` instead, so missed
    periods collapse into one digest. Due when the result is <= now; the result is the
    period to record."""
    if mode not in DIGEST_MODES:
        raise ValueError(f"not a digest mode: {mode}")
    tz = zone(settings.timezone)
    d = last_delivered.astimezone(tz).date() - timedelta(days=1)
    while not (_slot_day(d, mode) and _slot(d, settings.hour, tz) > last_delivered):
        d += timedelta(days=1)
    first = _slot(d, settings.hour, tz)
    if first > now:
        return first
    d = now.astimezone(tz).date() + timedelta(days=1)
    while not (_slot_day(d, mode) and _slot(d, settings.hour, tz) <= now):
        d -= timedelta(days=1)
    return _slot(d, settings.hour, tz)


def _digest_places(db: Database) -> list[tuple[Place, str, str]]:
    """(place, mode, earliest created_at) for every place with enabled digest-mode follows or tracks."""
    found: dict[tuple[Place, str], str] = {}
    for g, ch, u, m, since in db.conn.execute(
            "SELECT guild_id, channel_id, user_id, mode, created_at FROM follows"
            " WHERE disabled_reason IS NULL AND mode IN ('daily', 'weekly')"
            " UNION ALL SELECT guild_id, channel_id, user_id, mode, created_at FROM tracks"
            " WHERE disabled_reason IS NULL AND mode IN ('daily', 'weekly')"):
        key = (Place(g, ch, u), m)
        if key not in found or since < found[key]:
            found[key] = since
    return [(p, m, since) for (p, m), since in sorted(
        found.items(), key=lambda kv: (kv[0][0].guild_id or 0, kv[0][0].channel_id, kv[0][0].user_id or 0, kv[0][1]))]


def last_digest_period(db: Database, place: Place, mode: str) -> datetime | None:
    r = db.conn.execute(
        "SELECT max(period) FROM digests WHERE coalesce(guild_id, 0) = ? AND channel_id = ?"
        " AND coalesce(user_id, 0) = ? AND mode = ?",
        (place.guild_id or 0, place.channel_id, place.user_id or 0, mode)).fetchone()
    return parse_iso(r[0]) if r and r[0] else None


def _settings_for(db: Database, place: Place) -> DigestSettings:
    return get_digest_settings(db, guild_id=place.guild_id, user_id=place.user_id)


def digest_schedule(db: Database, now: datetime) -> list[tuple[Place, str, datetime]]:
    """Every place and digest mode in use, with when its next digest is due."""
    out = []
    for place, mode, since in _digest_places(db):
        ref = parse_iso(since)
        last = last_digest_period(db, place, mode)
        if last is not None and last > ref:
            ref = last
        out.append((place, mode, next_digest_at(_settings_for(db, place), mode, ref, now)))
    return out


def due_digests(db: Database, now: datetime) -> list[DueDigest]:
    """The digests to compose and send now (at most one per place and mode)."""
    return [DueDigest(p, m, at) for p, m, at in digest_schedule(db, now) if at <= now]


def compose_digest(db: Database, place: Place, mode: str, period: datetime | str, *, upto: int | None = None,
                   limit: int = 5) -> Digest:
    """What a place's digest holds: every enabled follow (and tracked paper) of that mode
    with something new past its cursor, up to `upto` (default: the newest event)."""
    top = last_event_id(db) if upto is None else upto
    follows = [_follow(r) for r in db.conn.execute(
        f"SELECT {_FOLLOW_COLS} FROM {_FOLLOW_FROM} WHERE f.disabled_reason IS NULL AND f.mode = ?"
        " AND coalesce(f.guild_id, 0) = ? AND f.channel_id = ? AND coalesce(f.user_id, 0) = ?"
        " ORDER BY d.name, f.id", (mode, place.guild_id or 0, place.channel_id, place.user_id or 0))]
    sections: list[DigestSection] = []
    for f in follows:
        news = follow_news(db, f, upto=top, limit=limit, order="cited")
        if news.total:
            sections.append(DigestSection("direction", f.id, f.direction_slug, f.direction_name, f.direction_url,
                                          f.keyword, f.role_id, news.total, news.citers))
    tracks = db.conn.execute(
        "SELECT t.id, t.paper_id, p.title, p.url, p.arxiv_url, t.role_id, t.last_event_id"
        " FROM tracks t JOIN papers p ON p.id = t.paper_id WHERE t.disabled_reason IS NULL AND t.mode = ?"
        " AND coalesce(t.guild_id, 0) = ? AND t.channel_id = ? AND coalesce(t.user_id, 0) = ?"
        " ORDER BY p.title COLLATE NOCASE, t.id",
        (mode, place.guild_id or 0, place.channel_id, place.user_id or 0)).fetchall()
    for tid, pid, title, url, arxiv, role, cursor in tracks:
        citers, old_count, new_count, unlisted = paper_news(db, pid, cursor, top)
        grew = old_count is not None and new_count is not None and new_count > old_count
        if citers or grew:
            top_citers = tuple(most_cited_first(citers)[:limit])
            sections.append(DigestSection("paper", tid, pid, title, url or arxiv, None, role, len(citers), top_citers,
                                          old_count if grew else None, new_count if grew else None, unlisted))
    cursors = [f.last_event_id for f in follows] + [t[6] for t in tracks]
    period_text = period if isinstance(period, str) else iso(period)
    return Digest(place, mode, period_text, min(cursors, default=top), max([top, *cursors]), tuple(sections),
                  tuple(f.id for f in follows), tuple(t[0] for t in tracks))


def paper_news(db: Database, paper_id: str, after: int, upto: int) -> tuple[list[AlertCiter], int | None, int | None,
                                                                           int]:
    """A tracked paper's events in (after, upto]: its new citers (event order), and how its
    stated cited-by count moved (old, new, how many gained citers its page does not name)."""
    c = db.conn
    me = c.execute("SELECT id, title, year FROM papers WHERE id = ?", (paper_id,)).fetchone()
    cites = (PaperRef(*me),) if me else ()
    rows = c.execute(
        "SELECT p.id, p.title, p.year, p.url, p.arxiv_url, p.cited_by, e.id, e.seen_at FROM events e"
        " JOIN papers p ON p.id = e.citing_id WHERE e.paper_id = ? AND e.kind = 'citation' AND e.id > ?"
        " AND e.id <= ? ORDER BY e.id", (paper_id, after, upto)).fetchall()
    old_count, new_count, unlisted = c.execute(
        "SELECT min(old_count), max(new_count), coalesce(sum(unlisted), 0) FROM events"
        " WHERE paper_id = ? AND kind = 'count' AND id > ? AND id <= ?", (paper_id, after, upto)).fetchone()
    citers = [AlertCiter(r[0], r[1], r[2], r[3], r[4] or arxiv_url(r[0]), r[5], r[6], r[7], cites)
              for r in rows]
    return citers, old_count, new_count, unlisted


def record_digest(db: Database, digest: Digest, now: datetime, *, message_id: int | None = None,
                  failure: str | None = None) -> bool:
    """Record a digest period handled: posted (Discord accepted it), quiet (nothing to
    send) or refused for good by Discord (`failure`: not sent, the reason kept in the row
    and on each of its follows and tracks, for /tracked). Advances every covered item's
    cursor, in one transaction. Returns False, and changes nothing, when that period was
    already recorded."""
    p = digest.place
    sent = 0 if digest.quiet or failure else 1
    with db.atomic():
        cur = db.conn.execute(
            "INSERT INTO digests (guild_id, channel_id, user_id, mode, period, from_event_id, upto_event_id,"
            " papers, directions, citers, sent, message_id, delivered_at, failure)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (p.guild_id, p.channel_id, p.user_id, digest.mode, digest.period, digest.from_event_id,
             digest.upto_event_id, digest.papers, digest.directions, digest.citers, sent,
             message_id, iso(now), failure))
        if cur.rowcount == 0:
            return False
        if failure:
            text = f"{iso(now)}: {failure}"[:400]
            for table, ids in (("follows", digest.follow_ids), ("tracks", digest.track_ids)):
                for item_id in ids:
                    db.conn.execute(f"UPDATE {table} SET last_event_id = max(last_event_id, ?), last_failure = ?"
                                    " WHERE id = ?", (digest.upto_event_id, text, item_id))
            return True
        # Every follow and track of the digest moves its cursor past the period; those it
        # listed also record the delivery.
        for table, stamp, kind, ids in (("follows", "last_delivery_at", "direction", digest.follow_ids),
                                        ("tracks", "last_alert_at", "paper", digest.track_ids)):
            listed = {s.item_id for s in digest.sections if s.kind == kind}
            for item_id in ids:
                db.conn.execute(
                    f"UPDATE {table} SET last_event_id = max(last_event_id, ?),"
                    f" {stamp} = CASE WHEN ? THEN ? ELSE {stamp} END WHERE id = ?",
                    (digest.upto_event_id, item_id in listed, iso(now), item_id))
    return True


def preview_digests(db: Database, place: Place, now: datetime, *, limit: int = 5) -> list[tuple[Digest, datetime]]:
    """For /digest-preview: each digest mode this place uses, what its next digest would
    hold if it were composed now, and when it is due."""
    out = []
    for p, mode, at in digest_schedule(db, now):
        if p == place:
            out.append((compose_digest(db, place, mode, at, limit=limit), at))
    return out
