"""Tracked papers and their alerts, read from the event log with a per-track cursor.

A track starts at the newest event when it is created (only later citations are
alerted). Delivery is exactly-once: the bot reads `pending_alerts`, marks the alert as
being sent, posts, and only after Discord accepted the message records it delivered, which
advances the cursor in one statement (store.subscriptions, the same for tracks and follows).
A failed post leaves the cursor where it was, so the next tick retries; a restart finds
nothing new.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import fill, named_cursor, named_row, named_rows, one_column
from mapwatch.store.errors import BadOption
from mapwatch.store.questions import authors
from mapwatch.store.questions.paper_rows import PAPER_COLS, named_listed_paper, named_paper
from mapwatch.store.questions.queries import directions_of
from mapwatch.store.questions.types import CitationRow, PaperRow, Provenance, from_sources
from mapwatch.store.subscriptions import deliveries
from mapwatch.store.subscriptions.alert_hold import deliverable_upto
from mapwatch.store.subscriptions.follows import normalize_mode
from mapwatch.store.subscriptions.kinds import Intent, Mode


@dataclass(frozen=True)
class Track:
    id: int
    guild_id: int | None
    channel_id: int
    user_id: int | None
    paper_id: str
    paper_title: str
    created_at: str
    created_by: int | None
    last_event_id: int
    last_alert_at: str | None
    disabled_reason: str | None
    mode: Mode = "instant"  # daily, weekly: a digest (store.subscriptions.digests)
    role_id: int | None = None  # the one role its alerts mention
    last_failure: str | None = None  # the last alert Discord refused for good, and why
    hide_self: bool = False  # `self:hide`: self-citations are left out of its alerts
    intent: Intent | None = None  # `intent:`: only citations Semantic Scholar gives this intent


@dataclass(frozen=True)
class Alert:
    """What one track's next message says: events (cursor, upto_event_id]."""

    track: Track
    paper: PaperRow
    new_citers: tuple[CitationRow, ...]  # the first `limit`, in event order
    more: int  # new citers past the limit
    old_count: int | None  # stated cited-by before and after, when it grew
    new_count: int | None
    unlisted: int  # gained citers the page does not name
    upto_event_id: int
    sending_since: str | None = None  # first tried at (a resend of an alert that may have been posted)
    hidden: int = 0  # self-citations left out (`self:hide`)
    other_intent: int = 0  # citations of another intent left out (`intent:`)
    unclassified: int = 0  # citations Semantic Scholar has not classified, left out (`intent:`)

    @property
    def quiet(self) -> bool:
        """Nothing left to say once the self-citations (and, with `intent:`, the citations of
        other or no intent) are left out: no citer, no count growth past them, none unlisted.
        It is skipped, its cursor moved."""
        left = self.hidden + self.other_intent + self.unclassified
        grew = (self.new_count - self.old_count if self.new_count is not None and self.old_count is not None
                else 0)
        if self.track.intent is not None:  # growth alone says nothing of intent
            grew = 0
        return bool(left) and not self.new_citers and not self.more and not self.unlisted and grew <= left


# Named like Track's fields: `_track` fills one from them.
_TRACK_COLS = ("t.id, t.guild_id, t.channel_id, t.user_id, t.paper_id, p.title AS paper_title, t.created_at,"
               " t.created_by, t.last_event_id, t.last_alert_at, t.disabled_reason, t.mode, t.role_id, t.last_failure,"
               " t.hide_self, t.intent")


def _track(r: sqlite3.Row) -> Track:
    return fill(Track, r, hide_self=bool(r["hide_self"]))


def _scope(guild_id: int | None, user_id: int | None) -> tuple[str, list[Any]]:
    """Tracks visible from a server (all its channels) or, in a DM, the user's own."""
    if guild_id is not None:
        return "t.guild_id = ?", [guild_id]
    return "t.guild_id IS NULL AND t.user_id = ?", [user_id]


def reenable_track(db: Database, track_id: int, mode: str, role_id: int | None, hide_self: bool,
                   intent: Intent | None = None) -> None:
    """Tracking again: the mode, role, `hide_self` and `intent` as given, a disabled track enabled
    with its cursor moved to now (the events while it was disabled are not alerted)."""
    db.conn.execute(
        "UPDATE tracks SET mode = ?, role_id = ?, hide_self = ?, intent = ?, last_event_id = CASE WHEN"
        " disabled_reason IS NULL THEN last_event_id ELSE max(last_event_id, (SELECT coalesce(max(id), 0)"
        " FROM events)) END, disabled_reason = NULL WHERE id = ?", (mode, role_id, int(hide_self), intent, track_id))


def add_track(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None,
              paper_id: str, created_by: int | None, now: datetime, mode: str | None = None,
              role_id: int | None = None, hide_self: bool = False,
              intent: Intent | None = None) -> tuple[Track, bool]:
    """Track `paper_id` in a channel (or, with guild_id None, in `user_id`'s DMs).
    Returns the track and whether it is new or changed; tracking again re-enables a
    disabled track and sets the delivery mode (default instant), role, `hide_self` and `intent`
    as given."""
    md = normalize_mode(mode)
    if role_id is not None and guild_id is None:
        raise BadOption("Roles exist only in servers: leave out the role in a DM.")
    dm_user = user_id if guild_id is None else None
    with db.atomic():
        existing = _find(db, guild_id, channel_id, dm_user, paper_id)
        if existing:
            if existing.disabled_reason or (existing.mode, existing.role_id, existing.hide_self,
                                            existing.intent) != (md, role_id, hide_self, intent):
                reenable_track(db, existing.id, md, role_id, hide_self, intent)
                return _find(db, guild_id, channel_id, dm_user, paper_id) or existing, True
            return existing, False
        db.conn.execute(
            "INSERT INTO tracks (guild_id, channel_id, user_id, paper_id, created_at, created_by, last_event_id,"
            " mode, role_id, hide_self, intent)"
            " VALUES (?, ?, ?, ?, ?, ?, (SELECT coalesce(max(id), 0) FROM events), ?, ?, ?, ?)",
            (guild_id, channel_id, dm_user, paper_id, iso(now), created_by, md, role_id, int(hide_self), intent))
        track = _find(db, guild_id, channel_id, dm_user, paper_id)
    assert track is not None
    return track, True


def _find(db: Database, guild_id: int | None, channel_id: int, user_id: int | None, paper_id: str) -> Track | None:
    r = named_row(
        db, f"SELECT {_TRACK_COLS} FROM tracks t JOIN papers p ON p.id = t.paper_id"
        " WHERE coalesce(t.guild_id, 0) = ? AND t.channel_id = ? AND coalesce(t.user_id, 0) = ? AND t.paper_id = ?",
        (guild_id or 0, channel_id, user_id or 0, paper_id))
    return _track(r) if r else None


def remove_track(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None,
                 paper_id: str) -> bool:
    """Stop tracking in this channel (or these DMs). False if it was not tracked here."""
    return deliveries.remove(db, deliveries.TRACKS, paper_id, guild_id=guild_id, channel_id=channel_id,
                                dm_user=user_id if guild_id is None else None)


def list_tracks(db: Database, *, guild_id: int | None, user_id: int | None, limit: int = 500) -> tuple[Track, ...]:
    where, params = _scope(guild_id, user_id)
    return tuple(_track(r) for r in named_cursor(
        db, f"SELECT {_TRACK_COLS} FROM tracks t JOIN papers p ON p.id = t.paper_id WHERE {where}"
        " ORDER BY t.created_at, t.id LIMIT ?", [*params, limit]))


def pending_alerts(db: Database, *, limit: int = 10, max_tracks: int = 1000) -> list[Alert]:
    """For every enabled track whose paper has events past its cursor: the alert to send."""
    c = db.conn
    out: list[Alert] = []
    top = deliverable_upto(db)  # the alert hold (store/subscriptions/alert_hold.py)
    tracks = [_track(r) for r in named_cursor(
        c, f"SELECT {_TRACK_COLS} FROM tracks t JOIN papers p ON p.id = t.paper_id"
        " WHERE t.disabled_reason IS NULL AND t.mode = 'instant'"
        " AND EXISTS (SELECT 1 FROM events e WHERE e.paper_id = t.paper_id AND e.id > t.last_event_id"
        " AND e.id <= ?) ORDER BY t.id LIMIT ?", (top, max_tracks))]
    caps = deliveries.markers(db, deliveries.TRACKS)
    for t in tracks:
        # An alert that may have reached Discord (no answer, or a crash before the cursor
        # moved) is resent exactly as it was, with the same nonce, so Discord drops the
        # repeat; later events go in the next alert.
        again = deliveries.resend(caps, t.id, t.last_event_id)
        out.append(compose_alert(db, t, again[0] if again else top, limit=limit,
                                 sending_since=again[1] if again else None))
    return out


def compose_alert(db: Database, t: Track, hi: int, *, limit: int = 10, sending_since: str | None = None) -> Alert:
    """The alert of track `t` about its paper's events (t.last_event_id, hi]: the same alert
    whenever it is composed again (a resend, or an edit once its citers' authors are known)."""
    c = db.conn
    upto, n_citers, old_count, new_count, unlisted = c.execute(
        "SELECT max(id), sum(kind = 'citation'), min(old_count), max(new_count), coalesce(sum(unlisted), 0)"
        " FROM events WHERE paper_id = ? AND id > ? AND id <= ?", (t.paper_id, t.last_event_id, hi)).fetchone()
    shown, left = alert_citers(db, t.paper_id, t.last_event_id, hi, limit, hide_self=t.hide_self, intent=t.intent)
    row = named_row(c, f"SELECT {PAPER_COLS} FROM papers p WHERE p.id = ?", (t.paper_id,))
    assert row is not None  # a track's paper is never deleted
    paper = named_paper(row)
    return Alert(t, paper, shown, max(0, (n_citers or 0) - len(shown) - left.total), old_count, new_count,
                 unlisted, upto, sending_since, left.hidden, left.other_intent, left.unclassified)


def get_track(db: Database, track_id: int) -> Track | None:
    row = named_row(db, f"SELECT {_TRACK_COLS} FROM tracks t JOIN papers p ON p.id = t.paper_id WHERE t.id = ?",
                    (track_id,))
    return _track(row) if row is not None else None


@dataclass(frozen=True)
class LeftOut:
    """The new citers an alert leaves out: self-citations (`self:hide`), and with `intent:`
    those Semantic Scholar gives another intent and those it has not classified (yet)."""

    hidden: int = 0
    other_intent: int = 0
    unclassified: int = 0

    @property
    def total(self) -> int:
        return self.hidden + self.other_intent + self.unclassified


def alert_citers(db: Database, paper_id: str, after: int, upto: int, limit: int, *,
                 hide_self: bool = False, intent: Intent | None = None) -> tuple[tuple[CitationRow, ...], LeftOut]:
    """A paper's new citers in events (after, upto], the first `limit` in event order, each with
    its byline, its self-citation mark and the sentences citing the paper (store/questions/authors.py);
    with `hide_self`, the self-citations are left out; with `intent`, the citations Semantic
    Scholar does not say have it. Returns them and what was left out."""
    c = db.conn
    hidden: set[str] = set()
    other: set[str] = set()
    unclassified: set[str] = set()
    if hide_self or intent:
        every = one_column(c, "SELECT citing_id FROM events WHERE paper_id = ? AND id > ? AND id <= ?"
                              " AND kind = 'citation'", (paper_id, after, upto))
        if hide_self:
            hidden = authors.self_citers(db, paper_id, every)
        if intent:
            said = authors.intents_of(db, paper_id, every)
            unclassified = {p for p in every if not said.get(p)} - hidden
            other = {p for p in every if said.get(p) and intent not in said[p]} - hidden
    out = hidden | other | unclassified
    rows = [r for r in named_rows(
        c, f"SELECT {PAPER_COLS}, e.seen_at AS first_seen FROM events e JOIN papers p ON p.id = e.citing_id"
        " WHERE e.paper_id = ? AND e.id > ? AND e.id <= ? AND e.kind = 'citation' ORDER BY e.id LIMIT ?",
        (paper_id, after, upto, limit + len(out))) if r["id"] not in out][:limit]
    ids = [r["id"] for r in rows]
    dirs = directions_of(db, ids)
    known_from = _provenance(db, paper_id, ids)
    shown = authors.with_bylines(db, [replace(named_listed_paper(r, dirs), provenance=known_from.get(r["id"], "map"))
                                      for r in rows], paper_id)
    return authors.with_contexts(db, shown, paper_id), LeftOut(len(hidden), len(other), len(unclassified))


def _provenance(db: Database, paper_id: str, citing_ids: list[str]) -> dict[str, Provenance]:
    """Where each citation of `paper_id` by `citing_ids` is known from, when not the map."""
    if not citing_ids:
        return {}
    marks = ",".join("?" * len(citing_ids))
    return {citing: from_sources([p]) for citing, p in db.conn.execute(
        f"SELECT citing_id, provenance FROM citations WHERE cited_id = ? AND citing_id IN ({marks})"
        " AND provenance != 'map'", [paper_id, *citing_ids])}


def tracked_paper_ids(db: Database) -> list[str]:
    """Papers some enabled track follows: a refresh with a page budget fetches these first."""
    return one_column(db, "SELECT DISTINCT paper_id FROM tracks WHERE disabled_reason IS NULL AND paper_id IS NOT NULL"
                          " ORDER BY paper_id")
