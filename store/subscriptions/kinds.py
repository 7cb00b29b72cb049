"""The two subscription kinds, tracked papers (table `tracks`) and followed directions
(table `follows`): what their tables and sending markers differ in. Shared by `deliveries`
(which settles deliveries) and `bot_state` (which prunes orphan markers), so neither
imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass


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
