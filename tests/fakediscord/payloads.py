"""Builders of Discord API payloads (plain dicts) shaped the way discord.py 2.7 reads them.

Pure functions: no I/O, no state. The keys are the ones discord.py accesses with ``data[...]``
(missing ones raise ``KeyError`` deep inside the library), plus the usual optional ones so
that objects built from them look like the real thing.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

DISCORD_EPOCH_MS = 1420070400000
#: Every permission bit set (what a guild owner or an administrator has).
ALL_PERMISSIONS = (1 << 51) - 1
#: Permissions of an ordinary member (view, send, embed, attach, history, use app commands...).
MANAGE_CHANNELS = 1 << 4
#: Permissions of an ordinary member: view, send, embed links, attach files, read history,
#: add reactions, use application commands (no Manage Channels, no Administrator).
MEMBER_PERMISSIONS = (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 6) | (1 << 31)
ADMINISTRATOR = 1 << 3
#: Discord's default attachment size limit for a bot without boosts (10 MiB).
ATTACHMENT_SIZE_LIMIT = 10 * 1024 * 1024

_counter = itertools.count(1)


def snowflake() -> int:
    """A new, unique, time-based snowflake id."""
    ms = int(time.time() * 1000) - DISCORD_EPOCH_MS
    return (ms << 22) | (next(_counter) & 0x3FFFFF)


def iso_now() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class FakeUser:
    id: int
    username: str
    bot: bool = False

    def payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.username,
            "discriminator": "0",
            "global_name": None,
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
            "flags": 0,
        }


@dataclass
class FakeChannel:
    id: int
    name: str
    guild_id: int | None = None
    type: int = 0  # 0 text, 1 DM, 4 category, 5 announcement, 11 public thread, 15 forum
    position: int = 0
    recipient: FakeUser | None = None  # for DMs
    parent_id: int | None = None  # a thread's channel (text or forum)
    owner_id: int | None = None  # who opened a thread
    archive_minutes: int = 0  # a thread's auto_archive_duration
    tags: list[dict[str, Any]] = field(default_factory=list)  # a forum's available_tags
    applied_tags: list[str] = field(default_factory=list)  # a forum post's tags (ids)

    def payload(self) -> dict[str, Any]:
        if self.type == 1:
            recipients = [self.recipient.payload()] if self.recipient else []
            return {"id": str(self.id), "type": 1, "last_message_id": None, "recipients": recipients, "flags": 0}
        data: dict[str, Any] = {
            "id": str(self.id),
            "type": self.type,
            "name": self.name,
            "position": self.position,
            "permission_overwrites": [],
            "nsfw": False,
            "parent_id": None,
            "topic": None,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "flags": 0,
        }
        if self.guild_id is not None:
            data["guild_id"] = str(self.guild_id)
        if self.type in (10, 11, 12):
            data.update(parent_id=str(self.parent_id), owner_id=str(self.owner_id or 0), message_count=0,
                        member_count=1, total_message_sent=0, applied_tags=list(self.applied_tags),
                        thread_metadata={"archived": False, "auto_archive_duration": self.archive_minutes or 1440,
                                         "archive_timestamp": iso_now(), "locked": False})
            for key in ("position", "permission_overwrites", "topic"):
                data.pop(key, None)
        if self.type == 15:
            data.update(available_tags=[dict(t) for t in self.tags], default_reaction_emoji=None,
                        default_sort_order=None, default_forum_layout=0, default_thread_rate_limit_per_user=0)
        return data


@dataclass
class FakeRole:
    id: int
    name: str
    permissions: int = MEMBER_PERMISSIONS
    position: int = 0

    def payload(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "name": self.name,
            "permissions": str(self.permissions),
            "position": self.position,
            "color": 0,
            "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
            "hoist": False,
            "managed": False,
            "mentionable": False,
            "icon": None,
            "unicode_emoji": None,
            "flags": 0,
        }


@dataclass
class FakeGuild:
    """A guild the fake announces on the gateway. The @everyone role has the guild's id."""

    id: int
    name: str = "Test Guild"
    channels: list[FakeChannel] = field(default_factory=list)
    roles: list[FakeRole] = field(default_factory=list)
    owner_id: int = 1

    def channel(self, name: str) -> FakeChannel:
        for ch in self.channels:
            if ch.name == name:
                return ch
        raise KeyError(name)

    def payload(self, bot_user: FakeUser) -> dict[str, Any]:
        roles = self.roles or [FakeRole(self.id, "@everyone")]
        return {
            "id": str(self.id),
            "name": self.name,
            "unavailable": False,
            "large": False,
            "member_count": 2,
            "owner_id": str(self.owner_id),
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "banner": None,
            "description": None,
            "features": [],
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "mfa_level": 0,
            "nsfw_level": 0,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": "en-US",
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "afk_channel_id": None,
            "afk_timeout": 300,
            "application_id": None,
            "vanity_url_code": None,
            "joined_at": iso_now(),
            "roles": [r.payload() for r in roles],
            "channels": [c.payload() for c in self.channels],
            "members": [member_payload(bot_user, roles=[])],
            "emojis": [],
            "stickers": [],
            "threads": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "voice_states": [],
            "presences": [],
        }

    def partial(self) -> dict[str, Any]:
        return {"id": str(self.id), "locale": "en-US", "features": []}


def member_payload(user: FakeUser, *, roles: list[int], permissions: int | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "user": user.payload(),
        "roles": [str(r) for r in roles],
        "joined_at": iso_now(),
        "premium_since": None,
        "nick": None,
        "avatar": None,
        "deaf": False,
        "mute": False,
        "pending": False,
        "flags": 0,
        "communication_disabled_until": None,
    }
    if permissions is not None:
        data["permissions"] = str(permissions)
    return data


def application_payload(app_id: int, bot_user: FakeUser, owner: FakeUser) -> dict[str, Any]:
    return {
        "id": str(app_id),
        "name": bot_user.username,
        "description": "",
        "icon": None,
        "bot_public": True,
        "bot_require_code_grant": False,
        "owner": owner.payload(),
        "team": None,
        "verify_key": "0" * 64,
        "flags": 0,
        "summary": "",
        "rpc_origins": [],
        "interactions_endpoint_url": None,
        "redirect_uris": [],
        "tags": [],
        "bot": bot_user.payload(),
    }


def message_payload(
    body: dict[str, Any],
    *,
    message_id: int,
    channel_id: int,
    author: FakeUser,
    guild_id: int | None = None,
    attachments: list[dict[str, Any]] | None = None,
    webhook_id: int | None = None,
    interaction_metadata: dict[str, Any] | None = None,
    edited: bool = False,
) -> dict[str, Any]:
    """A message object as Discord returns it, built from a create/edit request body."""
    data: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "type": 0 if interaction_metadata is None else 20,
        "content": body.get("content") or "",
        "author": author.payload(),
        "timestamp": iso_now(),
        "edited_timestamp": iso_now() if edited else None,
        "tts": bool(body.get("tts", False)),
        "mention_everyone": False,
        "mentions": [],
        "mention_roles": [],
        "mention_channels": [],
        "attachments": attachments or [],
        "embeds": body.get("embeds") or [],
        "components": body.get("components") or [],
        "reactions": [],
        "pinned": False,
        "flags": int(body.get("flags") or 0),
    }
    if guild_id is not None:
        data["guild_id"] = str(guild_id)
    if webhook_id is not None:
        data["webhook_id"] = str(webhook_id)
        data["application_id"] = str(webhook_id)
    if interaction_metadata is not None:
        data["interaction_metadata"] = interaction_metadata
    return data


def error_payload(code: int, message: str, errors: dict[str, Any] | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {"message": message, "code": code}
    if errors:
        data["errors"] = errors
    return data
