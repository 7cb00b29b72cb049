"""Shared helpers for the bot tests: a seeded database and a context."""

from __future__ import annotations

from datetime import UTC, datetime

from mapwatch.bot.rendering.replies import Ctx

GUILD, CHANNEL, USER = 111, 222, 333


def ctx(guild: int | None = GUILD, channel: int = CHANNEL, user: int = USER, *, manage: bool = True) -> Ctx:
    return Ctx(guild_id=guild, channel_id=channel, user_id=user, now=datetime(2026, 11, 2, tzinfo=UTC),
               can_manage=manage, base_url="http://feeds.example")
