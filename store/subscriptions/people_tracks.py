"""Tracks on a person or a team (docs/bot.md, "Following people and teams"): rows of `tracks`
whose `author_key` or `team_slug` is set instead of `paper_id`, so they share everything a
paper track has: the cursor, the sending markers (`alert-sending:<track>`), modes and
digests, roles, threads, forum posts, `/tracked`, disabling (store.subscriptions.deliveries).

What differs is what an alert holds: the subject's papers are computed when it is composed
(a person's papers as the sources name them now; a team's papers and its people's papers),
and the events past the cursor that concern any of them are grouped per citing paper: a
paper citing three of them is one entry, "X cites 3 of your papers".
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Literal

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import fill, named_row, named_rows
from mapwatch.store.errors import BadOption
from mapwatch.store.questions import teams as people
from mapwatch.store.questions.authors import with_alert_contexts
from mapwatch.store.questions.types import NewsOrder
from mapwatch.store.subscriptions import deliveries
from mapwatch.store.subscriptions.alert_hold import deliverable_upto
from mapwatch.store.subscriptions.follows import Place, normalize_mode
from mapwatch.store.subscriptions.kinds import Mode
from mapwatch.store.subscriptions.tracking import reenable_track

# For deliveries.remove: the column that names the subject (markers and cursors are TRACKS').
BY_AUTHOR = replace(deliveries.TRACKS, subject="author_key")
BY_TEAM = replace(deliveries.TRACKS, subject="team_slug")


@dataclass(frozen=True)
class SubjectTrack:
    id: int
    guild_id: int | None
    channel_id: int
    user_id: int | None
    author_key: str | None
    team_slug: str | None
    created_at: str
    created_by: int | None
    last_event_id: int
    last_alert_at: str | None
    disabled_reason: str | None
    mode: Mode
    role_id: int | None
    last_failure: str | None
    hide_self: bool = False  # `self:hide`: citing papers sharing an author with every paper they cite here left out
    name: str = ""  # the person's name or the team's, as lists show it

    @property
    def kind(self) -> Literal["author", "team"]:
        return "author" if self.author_key else "team"

    @property
    def subject(self) -> str:
        return self.author_key or self.team_slug or ""

    @property
    def place(self) -> Place:
        return Place(self.guild_id, self.channel_id, self.user_id)


@dataclass(frozen=True)
class SubjectAlert:
    """What a person's or team's track says next: events (cursor, upto_event_id]."""

    track: SubjectTrack
    news: people.News
    upto_event_id: int
    sending_since: str | None = None
    feed_url: str | None = None  # path of its feed (`feeds/authors/<id>.atom`), when it has one

    @property
    def quiet(self) -> bool:
        return not self.news.citers and not self.news.growth


_COLS = ("t.id, t.guild_id, t.channel_id, t.user_id, t.author_key, t.team_slug, t.created_at, t.created_by,"
         " t.last_event_id, t.last_alert_at, t.disabled_reason, t.mode, t.role_id, t.last_failure, t.hide_self")


def subject_name(db: Database, t: SubjectTrack) -> str:
    """The person's name or the team's, as lists show it."""
    if t.author_key:
        return people.person(db, t.author_key).name
    team = people.get_team(db, t.guild_id, t.team_slug) if t.guild_id is not None and t.team_slug else None
    return team.name if team else (t.team_slug or "")


def _track(db: Database, r: sqlite3.Row) -> SubjectTrack:
    t = fill(SubjectTrack, r, hide_self=bool(r["hide_self"]))
    return replace(t, name=subject_name(db, t))


def _find(db: Database, guild_id: int | None, channel_id: int, dm_user: int | None, author_key: str | None,
          team_slug: str | None) -> SubjectTrack | None:
    r = named_row(
        db, f"SELECT {_COLS} FROM tracks t WHERE t.paper_id IS NULL AND coalesce(t.guild_id, 0) = ?"
        " AND t.channel_id = ? AND coalesce(t.user_id, 0) = ? AND coalesce(t.author_key, '') = ?"
        " AND coalesce(t.team_slug, '') = ?",
        (guild_id or 0, channel_id, dm_user or 0, author_key or "", team_slug or ""))
    return _track(db, r) if r else None


def get_subject_track(db: Database, track_id: int) -> SubjectTrack | None:
    r = named_row(db, f"SELECT {_COLS} FROM tracks t WHERE t.id = ? AND t.paper_id IS NULL", (track_id,))
    return _track(db, r) if r else None


def add_subject_track(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None,
                      author_key: str | None = None, team_slug: str | None = None, created_by: int | None,
                      now: datetime, mode: str | None = None,
                      role_id: int | None = None, hide_self: bool = False) -> tuple[SubjectTrack, bool]:
    """Track a person (`author_key`) or one of the server's teams (`team_slug`) in a channel (or
    a person in `user_id`'s DMs). As store.subscriptions.tracking.add_track: tracking again
    re-enables a disabled track and sets its mode and role; only later events are alerted."""
    if bool(author_key) == bool(team_slug):
        raise ValueError("a track follows one person or one team")
    if team_slug and guild_id is None:
        raise BadOption("Teams belong to a server: track a team in one of its channels.")
    if team_slug and people.get_team(db, guild_id or 0, team_slug) is None:
        raise BadOption("No such team in this server: /team add creates one.")
    md = normalize_mode(mode)
    if role_id is not None and guild_id is None:
        raise BadOption("Roles exist only in servers: leave out the role in a DM.")
    dm_user = user_id if guild_id is None else None
    with db.atomic():
        existing = _find(db, guild_id, channel_id, dm_user, author_key, team_slug)
        if existing:
            if existing.disabled_reason or (existing.mode, existing.role_id, existing.hide_self) != (
                    md, role_id, hide_self):
                reenable_track(db, existing.id, md, role_id, hide_self)
                return _find(db, guild_id, channel_id, dm_user, author_key, team_slug) or existing, True
            return existing, False
        db.conn.execute(
            "INSERT INTO tracks (guild_id, channel_id, user_id, author_key, team_slug, created_at, created_by,"
            " last_event_id, mode, role_id, hide_self) VALUES (?, ?, ?, ?, ?, ?, ?,"
            " (SELECT coalesce(max(id), 0) FROM events), ?, ?, ?)",
            (guild_id, channel_id, dm_user, author_key, team_slug, iso(now), created_by, md, role_id, int(hide_self)))
        track = _find(db, guild_id, channel_id, dm_user, author_key, team_slug)
    assert track is not None
    return track, True


def remove_subject_track(db: Database, *, guild_id: int | None, channel_id: int, user_id: int | None,
                         author_key: str | None = None, team_slug: str | None = None) -> bool:
    """Stop tracking a person or team here. False if it was not tracked here."""
    kind, subject = (BY_AUTHOR, author_key) if author_key else (BY_TEAM, team_slug)
    return deliveries.remove(db, kind, subject or "", guild_id=guild_id, channel_id=channel_id,
                             dm_user=user_id if guild_id is None else None)


def list_subject_tracks(db: Database, *, guild_id: int | None, user_id: int | None,
                        limit: int = 500) -> tuple[SubjectTrack, ...]:
    """A server's tracks on people and teams (or, in a DM, the user's own)."""
    where, params = (("t.guild_id = ?", [guild_id]) if guild_id is not None
                     else ("t.guild_id IS NULL AND t.user_id = ?", [user_id]))
    return tuple(_track(db, r) for r in named_rows(
        db, f"SELECT {_COLS} FROM tracks t WHERE t.paper_id IS NULL AND {where} ORDER BY t.created_at, t.id LIMIT ?",
        [*params, limit]))


def feed_path(t: SubjectTrack, db: Database) -> str | None:
    """The subject's feed, relative to the feed server (None: a person known by name only)."""
    if t.author_key:
        return None if t.author_key.startswith(people.NAME_KEY) else f"feeds/authors/{t.author_key}.atom"
    team = people.get_team(db, t.guild_id, t.team_slug) if t.guild_id is not None and t.team_slug else None
    return f"feeds/teams/{team.feed_slug}.atom" if team else None


def subject_alert(db: Database, t: SubjectTrack, upto: int, *, limit: int = 10, order: NewsOrder = "event",
                  sending_since: str | None = None) -> SubjectAlert:
    """The track's events in (cursor, upto] that concern its papers, grouped per citing paper."""
    papers = people.subject_papers(db, guild_id=t.guild_id, author_key=t.author_key, team_slug=t.team_slug)
    found = people.news(db, papers, t.last_event_id, upto, limit=limit, order=order, hide_self=t.hide_self)
    found = replace(found, citers=tuple(with_alert_contexts(db, found.citers)))
    return SubjectAlert(t, found, max(found.upto_event_id, t.last_event_id), sending_since, feed_path(t, db))


def pending_subject_alerts(db: Database, *, limit: int = 10, max_tracks: int = 1000) -> list[SubjectAlert]:
    """For every enabled instant track on a person or team with events past its cursor that
    concern its papers: the alert to send. A quiet one (only counts that did not grow) is
    returned too: the caller moves its cursor without posting."""
    top = deliverable_upto(db)  # the alert hold (store/subscriptions/alert_hold.py)
    tracks = [_track(db, r) for r in named_rows(
        db, f"SELECT {_COLS} FROM tracks t WHERE t.paper_id IS NULL AND t.disabled_reason IS NULL"
        " AND t.mode = 'instant' AND t.last_event_id < ? ORDER BY t.id LIMIT ?", (top, max_tracks))]
    caps = deliveries.markers(db, deliveries.TRACKS)
    out = []
    for t in tracks:
        # An alert that may have reached Discord is recomposed up to the same event and sent
        # with the same nonce (store.subscriptions.tracking does the same for papers).
        again = deliveries.resend(caps, t.id, t.last_event_id)
        hi = again[0] if again else top
        a = subject_alert(db, t, hi, limit=limit, sending_since=again[1] if again else None)
        # Nothing about its papers: quiet, its cursor moves to `hi` (a paper its person is
        # credited with later is alerted from then on, not from the track's old cursor).
        out.append(a if not a.quiet else replace(a, upto_event_id=max(hi, t.last_event_id)))
    return out


def digest_sections(db: Database, place: Place, mode: str, upto: int,
                    limit: int) -> tuple[list[tuple[SubjectTrack, SubjectAlert]], list[SubjectTrack]]:
    """For a place's digest: its enabled tracks on people and teams of that mode, and of those
    the ones with something new up to `upto` (most cited citers first)."""
    tracks = [_track(db, r) for r in named_rows(
        db, f"SELECT {_COLS} FROM tracks t WHERE t.paper_id IS NULL AND t.disabled_reason IS NULL AND t.mode = ?"
        " AND coalesce(t.guild_id, 0) = ? AND t.channel_id = ? AND coalesce(t.user_id, 0) = ? ORDER BY t.id",
        (mode, place.guild_id or 0, place.channel_id, place.user_id or 0))]
    busy = []
    for t in tracks:
        a = subject_alert(db, t, upto, limit=limit, order="cited")
        if not a.quiet:
            busy.append((t, a))
    return busy, tracks
