"""Digests: a place's daily or weekly message about its followed directions and tracked
papers alike, at the place's chosen local hour (weekly: on Mondays).

A digest period is recorded in `digests` whether it was sent or quiet, so it is handled
once; periods missed while the bot was down collapse into one digest when it returns.
Exactly once, as for alerts: the bot composes what is pending up to a snapshot event id,
posts, and only after Discord accepted the message records the period (`record_digest`),
which advances every covered follow's and track's cursor in one transaction.

No discord here: plain frozen dataclasses out, the clock passed in.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlite_utils import Database

from mapwatch.store.clock import iso, parse_iso
from mapwatch.store.database.rows import named_row, named_rows, scalar
from mapwatch.store.errors import BadOption
from mapwatch.store.ids import paper_link
from mapwatch.store.questions import authors
from mapwatch.store.questions.provenance import with_provenance
from mapwatch.store.questions.types import AlertCiter, PaperRef
from mapwatch.store.subscriptions import deliveries, people_tracks
from mapwatch.store.subscriptions.alert_hold import deliverable_upto
from mapwatch.store.subscriptions.follows import (
    Place,
    clean_text,
    dm_recipient,
    follow_news,
    follows_of,
    most_cited_first,
)
from mapwatch.store.subscriptions.kinds import DIGEST_MODES, TRACK_SECTIONS, DigestMode, SectionKind, digest_mode

DEFAULT_HOUR = 9
DEFAULT_TIMEZONE = "UTC"
WEEKLY_WEEKDAY = 0  # weekly digests go out on Mondays
TIMEZONE_MAX = 64
_TZ_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_+\-]*(/[A-Za-z0-9_+\-]+)*")


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
    mode: DigestMode
    period: datetime  # the scheduled time (UTC) this digest stands for


@dataclass(frozen=True)
class DigestSection:
    """One tracked paper or followed direction with something new, in a digest."""

    kind: SectionKind
    item_id: int  # the follow's (or track's) id
    key: str  # direction slug, paper id, author key or team slug
    title: str  # direction name, paper title, the person's or the team's name
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
    mode: DigestMode
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
    def people(self) -> int:
        """Sections about a tracked person or team."""
        return sum(1 for s in self.sections if s.kind in ("author", "team"))

    @property
    def directions(self) -> int:
        return sum(1 for s in self.sections if s.kind == "direction")

    @property
    def citers(self) -> int:
        return sum(s.total for s in self.sections)


def zone(name: str) -> ZoneInfo:
    """An IANA time zone by name, or BadOption with a clear message."""
    cleaned = name.strip()
    if not _TZ_NAME.fullmatch(cleaned) or ".." in cleaned:
        raise BadOption(f"Unknown time zone “{clean_text(name)[:TIMEZONE_MAX]}”: use a name such as UTC, "
                        "Europe/Paris or America/New_York.")
    try:
        return ZoneInfo(cleaned)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise BadOption(f"Unknown time zone “{cleaned}”: use a name such as UTC, Europe/Paris or "
                        "America/New_York.") from None



def disable_follows_in(db: Database, place: Place, reason: str, *, mode: str | None = None) -> int:
    """Disable a place's follows and tracks (of one mode, or all): a digest found the channel
    gone or forbidden. Returns how many were disabled."""
    n = 0
    with db.atomic():
        for kind in (deliveries.FOLLOWS, deliveries.TRACKS):
            sql = (f"UPDATE {kind.table} SET disabled_reason = ? WHERE disabled_reason IS NULL"
                   " AND coalesce(guild_id, 0) = ? AND channel_id = ? AND coalesce(user_id, 0) = ?")
            params: list[Any] = [reason[:300], place.guild_id or 0, place.channel_id, place.user_id or 0]
            if mode is not None:
                sql += " AND mode = ?"
                params.append(mode)
            n += db.conn.execute(sql, params).rowcount
    return n


# -- digest schedule ----------------------------------------------------------------------

def get_digest_settings(db: Database, *, guild_id: int | None, user_id: int | None) -> DigestSettings:
    """A server's (or, guild_id None, a user's DM) digest hour and time zone; 09:00 UTC if unset."""
    dm_user = dm_recipient(guild_id, user_id)
    r = named_row(db, "SELECT hour, timezone FROM digest_settings WHERE coalesce(guild_id, 0) = ?"
                  " AND coalesce(user_id, 0) = ?", (guild_id or 0, dm_user or 0))
    if r is None:
        return DigestSettings(guild_id, dm_user, DEFAULT_HOUR, DEFAULT_TIMEZONE, is_default=True)
    return DigestSettings(guild_id, dm_user, r["hour"], r["timezone"])


def set_digest_settings(db: Database, *, guild_id: int | None, user_id: int | None, hour: int,
                        timezone: str | None = None, updated_by: int | None, now: datetime) -> DigestSettings:
    """Set the digest hour (0-23) and, when given, the time zone (kept otherwise; UTC at first)."""
    if isinstance(hour, bool) or not isinstance(hour, int) or not 0 <= hour <= 23:
        raise BadOption("The hour is a whole number from 0 to 23 (local time of the chosen time zone).")
    tz_name = str(zone(timezone).key) if timezone is not None and timezone.strip() else None
    dm_user = dm_recipient(guild_id, user_id)
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


def _digest_places(db: Database) -> list[tuple[Place, DigestMode, str]]:
    """(place, mode, earliest created_at) for every place with enabled digest-mode follows or tracks."""
    found: dict[tuple[Place, DigestMode], str] = {}
    for g, ch, u, m, since in db.conn.execute(
            "SELECT guild_id, channel_id, user_id, mode, created_at FROM follows"
            " WHERE disabled_reason IS NULL AND mode IN ('daily', 'weekly')"
            " UNION ALL SELECT guild_id, channel_id, user_id, mode, created_at FROM tracks"
            " WHERE disabled_reason IS NULL AND mode IN ('daily', 'weekly')"):
        key = (Place(g, ch, u), digest_mode(m))
        if key not in found or since < found[key]:
            found[key] = since
    return [(p, m, since) for (p, m), since in sorted(
        found.items(), key=lambda kv: (kv[0][0].guild_id or 0, kv[0][0].channel_id, kv[0][0].user_id or 0, kv[0][1]))]


def last_digest_period(db: Database, place: Place, mode: str) -> datetime | None:
    last = scalar(
        db, "SELECT max(period) FROM digests WHERE coalesce(guild_id, 0) = ? AND channel_id = ?"
        " AND coalesce(user_id, 0) = ? AND mode = ?",
        (place.guild_id or 0, place.channel_id, place.user_id or 0, mode))
    return parse_iso(last) if last else None


def _settings_for(db: Database, place: Place) -> DigestSettings:
    return get_digest_settings(db, guild_id=place.guild_id, user_id=place.user_id)


def digest_schedule(db: Database, now: datetime) -> list[tuple[Place, DigestMode, datetime]]:
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


def compose_digest(db: Database, place: Place, mode: DigestMode, period: datetime | str, *, upto: int | None = None,
                   limit: int = 5) -> Digest:
    """What a place's digest holds: every enabled follow (and tracked paper) of that mode
    with something new past its cursor, up to `upto` (default: the newest event)."""
    top = deliverable_upto(db) if upto is None else upto  # the alert hold (store/subscriptions/alert_hold.py)
    follows = follows_of(db, place, mode)
    sections: list[DigestSection] = []
    for f in follows:
        news = follow_news(db, f, upto=top, limit=limit, order="cited")
        if news.total:
            sections.append(DigestSection("direction", f.id, f.direction_slug, f.direction_name, f.direction_url,
                                          f.keyword, f.role_id, news.total, news.citers))
    tracks = named_rows(
        db, "SELECT t.id, t.paper_id, p.title, p.url, p.arxiv_url, t.role_id, t.last_event_id, t.hide_self"
        " FROM tracks t JOIN papers p ON p.id = t.paper_id WHERE t.disabled_reason IS NULL AND t.mode = ?"
        " AND coalesce(t.guild_id, 0) = ? AND t.channel_id = ? AND coalesce(t.user_id, 0) = ?"
        " ORDER BY p.title COLLATE NOCASE, t.id",
        (mode, place.guild_id or 0, place.channel_id, place.user_id or 0))
    for t in tracks:
        tid, pid, title, url, arxiv = t["id"], t["paper_id"], t["title"], t["url"], t["arxiv_url"]
        role, cursor, hide_self = t["role_id"], t["last_event_id"], t["hide_self"]
        citers, old_count, new_count, unlisted = paper_news(db, pid, cursor, top)
        if hide_self:  # `self:hide`: the self-citations are left out, and the growth they make
            every = authors.with_alert_bylines(db, citers)
            citers = [c for c in every if not c.only_self]
            if new_count is not None and old_count is not None:
                new_count = max(old_count, new_count - (len(every) - len(citers)))
        grew = old_count is not None and new_count is not None and new_count > old_count
        if citers or grew:
            top_citers = tuple(authors.with_alert_bylines(db, most_cited_first(citers)[:limit]))
            sections.append(DigestSection("paper", tid, pid, title, url or arxiv, None, role, len(citers), top_citers,
                                          old_count if grew else None, new_count if grew else None, unlisted))
    busy, subject_tracks = people_tracks.digest_sections(db, place, mode, top, limit)
    for st, a in busy:  # people and teams (store.subscriptions.people_tracks)
        sections.append(DigestSection(st.kind, st.id, st.subject, st.name, None, None, st.role_id, a.news.total,
                                      a.news.citers, unlisted=sum(g.unlisted for g in a.news.growth)))
    cursors = ([f.last_event_id for f in follows] + [t["last_event_id"] for t in tracks]
               + [t.last_event_id for t in subject_tracks])
    period_text = period if isinstance(period, str) else iso(period)
    return Digest(place, mode, period_text, min(cursors, default=top), max([top, *cursors]), tuple(sections),
                  tuple(f.id for f in follows), tuple(t["id"] for t in tracks) + tuple(t.id for t in subject_tracks))


def paper_news(db: Database, paper_id: str, after: int, upto: int) -> tuple[list[AlertCiter], int | None, int | None,
                                                                           int]:
    """A tracked paper's events in (after, upto]: its new citers (event order), and how its
    stated cited-by count moved (old, new, how many gained citers its page does not name)."""
    c = db.conn
    me = named_row(c, "SELECT id, title, year FROM papers WHERE id = ?", (paper_id,))
    cites = (PaperRef(me["id"], me["title"], me["year"]),) if me else ()
    rows = named_rows(
        c, "SELECT p.id, p.title, p.year, p.url, p.arxiv_url, p.cited_by, e.id AS event_id, e.seen_at FROM events e"
        " JOIN papers p ON p.id = e.citing_id WHERE e.paper_id = ? AND e.kind = 'citation' AND e.id > ?"
        " AND e.id <= ? ORDER BY e.id", (paper_id, after, upto))
    counts = named_row(
        c, "SELECT min(old_count) AS old_count, max(new_count) AS new_count, coalesce(sum(unlisted), 0) AS unlisted"
        " FROM events WHERE paper_id = ? AND kind = 'count' AND id > ? AND id <= ?", (paper_id, after, upto))
    assert counts is not None  # an aggregate always has its one row
    citers = with_provenance(db, [AlertCiter(
        id=r["id"], title=r["title"], year=r["year"], url=r["url"], arxiv_url=r["arxiv_url"] or paper_link(r["id"]),
        cited_by=r["cited_by"], event_id=r["event_id"], seen_at=r["seen_at"], cites=cites) for r in rows])
    old_count, new_count, unlisted = counts["old_count"], counts["new_count"], counts["unlisted"]
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
        for table, stamp, kinds, ids in (("follows", "last_delivery_at", ("direction",), digest.follow_ids),
                                         ("tracks", "last_alert_at", TRACK_SECTIONS, digest.track_ids)):
            listed = {s.item_id for s in digest.sections if s.kind in kinds}
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
