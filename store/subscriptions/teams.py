"""A server's teams (/team): named sets of people and papers, kept per server (tables `teams`,
`team_members`); `/track team:<name>` follows all of a team (store.subscriptions.people_tracks).

A team's feed address is `/feeds/teams/<feed_slug>.atom`, where `feed_slug` is the team's slug
and 160 random bits in 32 base-32 letters (`feed_slug`): unique across every server of a
deployment and not guessable, so a team's list is read only by those given its address. (Until
migration 0035 the suffix was 8 hex digits, 32 bits: a client guessing thousands of addresses a
second found one in days. That migration gave every team a new address.)
"""

from __future__ import annotations

import base64
import re
import secrets
import unicodedata
from datetime import datetime

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import one_column, scalar
from mapwatch.store.errors import BadOption
from mapwatch.store.questions.teams import Team, get_team
from mapwatch.store.subscriptions.follows import clean_text

NAME_MAX = 60
TEAMS_MAX = 25  # per server
MEMBERS_MAX = 200  # per team
_NOT_SLUG = re.compile(r"[^a-z0-9]+")
FEED_TOKEN_BYTES = 20  # 160 random bits: 32 base-32 letters


def feed_slug(slug: str) -> str:
    """A new feed address for the team of `slug`: its slug (at most 40 characters) and 160 random
    bits as 32 lower-case base-32 letters (`reading-group-x3v…`, at most 73 characters)."""
    token = base64.b32encode(secrets.token_bytes(FEED_TOKEN_BYTES)).decode("ascii").lower()
    return f"{slug[:40].strip('-')}-{token}"


def team_slug(name: str) -> str:
    """A team's slug: its name in lower-case ASCII letters and digits joined by hyphens."""
    folded = unicodedata.normalize("NFKD", name).encode("ascii", "ignore").decode().lower()
    return _NOT_SLUG.sub("-", folded).strip("-")[:NAME_MAX]


def clean_name(name: str) -> str:
    text = clean_text(name or "")
    if not text:
        raise BadOption("A team needs a name.")
    if len(text) > NAME_MAX:
        raise BadOption(f"A team's name is at most {NAME_MAX} characters.")
    if not team_slug(text):
        raise BadOption("A team's name needs a letter or a digit (a-z, 0-9).")
    return text


def ensure_team(db: Database, guild_id: int, name: str, created_by: int | None, now: datetime) -> tuple[Team, bool]:
    """The server's team of that name, created when new. (team, created)."""
    shown = clean_name(name)
    slug = team_slug(shown)
    with db.atomic():
        found = get_team(db, guild_id, slug)
        if found:
            return found, False
        n = scalar(db.conn, "SELECT count(*) FROM teams WHERE guild_id = ?", (guild_id,))
        if n >= TEAMS_MAX:
            raise BadOption(f"A server keeps at most {TEAMS_MAX} teams: remove one first.")
        db.conn.execute("INSERT INTO teams (guild_id, slug, name, feed_slug, created_at, created_by)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        (guild_id, slug, shown, feed_slug(slug), iso(now), created_by))
        team = get_team(db, guild_id, slug)
    assert team is not None
    return team, True


def add_member(db: Database, team: Team, kind: str, value: str, label: str, added_by: int | None,
               now: datetime) -> bool:
    """Add a person (kind "author", an author key) or a paper to a team. False: already there."""
    if kind not in ("author", "paper"):
        raise ValueError("a member is an author or a paper")
    with db.atomic():
        n = scalar(db.conn, "SELECT count(*) FROM team_members WHERE guild_id = ? AND team_slug = ?",
                            (team.guild_id, team.slug))
        if n >= MEMBERS_MAX:
            raise BadOption(f"A team holds at most {MEMBERS_MAX} people and papers.")
        cur = db.conn.execute(
            "INSERT INTO team_members (guild_id, team_slug, kind, value, label, added_at, added_by)"
            " VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (team.guild_id, team.slug, kind, value, clean_text(label)[:200] or value, iso(now), added_by))
    return cur.rowcount == 1


def remove_member(db: Database, team: Team, kind: str, value: str) -> bool:
    with db.atomic():
        cur = db.conn.execute("DELETE FROM team_members WHERE guild_id = ? AND team_slug = ? AND kind = ?"
                              " AND value = ?", (team.guild_id, team.slug, kind, value))
    return cur.rowcount == 1


def team_tracks(db: Database, team: Team) -> list[int]:
    """The channels whose tracks follow the team."""
    return one_column(db, "SELECT channel_id FROM tracks WHERE guild_id = ? AND team_slug = ? ORDER BY channel_id",
                  (team.guild_id, team.slug))


def delete_team(db: Database, team: Team) -> None:
    """Remove a team and its members (its tracks are removed first: the caller checks)."""
    with db.atomic():
        db.conn.execute("DELETE FROM team_members WHERE guild_id = ? AND team_slug = ?", (team.guild_id, team.slug))
        db.conn.execute("DELETE FROM webhooks WHERE guild_id = ? AND target_kind = 'team' AND target = ?",
                        (team.guild_id, team.slug))
        db.conn.execute("DELETE FROM teams WHERE guild_id = ? AND slug = ?", (team.guild_id, team.slug))
