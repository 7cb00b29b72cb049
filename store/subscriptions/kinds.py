"""The subscriptions' closed vocabularies, and the two kinds of subscription.

Tracked papers (table `tracks`) and followed directions (table `follows`) differ in their
tables and sending markers (`Kind`); shared by `deliveries` (which settles deliveries) and
`bot_state` (which prunes orphan markers), so neither imports the other for it. The
`Literal` aliases name every value a mode, a digest section or a webhook may take; the
tuples beside them are derived from the aliases, so each vocabulary is written once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

Mode = Literal["instant", "daily", "weekly"]  # how a track or follow delivers (daily, weekly: a digest)
DigestMode = Literal["daily", "weekly"]
SectionKind = Literal["direction", "paper", "author", "team"]  # what a digest section is about
TrackSection = Literal["paper", "author", "team"]  # the digest sections of tracks
WebhookKind = Literal["discord", "slack"]  # whose incoming webhook a URL is
WebhookTarget = Literal["paper", "direction"]  # what a webhook follows
ThreadKind = Literal["track", "follow"]  # what a channel's per-item threads are kept for
Intent = Literal["methodology", "background", "result"]  # Semantic Scholar's citation intents (`intent:`)

MODES: tuple[Mode, ...] = get_args(Mode)
DIGEST_MODES: tuple[DigestMode, ...] = get_args(DigestMode)
TRACK_SECTIONS: tuple[TrackSection, ...] = get_args(TrackSection)
THREAD_KINDS: tuple[ThreadKind, ...] = get_args(ThreadKind)
INTENTS: tuple[Intent, ...] = get_args(Intent)


@dataclass(frozen=True)
class Kind:
    """What a track and a follow differ in: their table, the column naming what they follow,
    the key prefix of their sending markers and the column of their last delivery."""

    table: str
    subject: str
    marker: str
    delivered_at: str


TRACKS = Kind("tracks", "paper_id", "alert-sending:", "last_alert_at")
FOLLOWS = Kind("follows", "direction_slug", "follow-sending:", "last_delivery_at")
KINDS = (TRACKS, FOLLOWS)


def digest_mode(value: str) -> DigestMode:
    """`value` (a stored `mode`) as a digest mode; ValueError for any other."""
    for mode in DIGEST_MODES:
        if value == mode:
            return mode
    raise ValueError(f"not a digest mode: {value!r}")
