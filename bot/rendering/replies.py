"""What a command answers, as plain data: the Discord layer and `mapwatch ask` both
turn a Reply into output. No discord import here."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from mapwatch.store.settings_table import SourceSettings


@dataclass(frozen=True)
class Field:
    name: str
    value: str
    inline: bool = False


@dataclass(frozen=True)
class Embed:
    title: str = ""
    description: str = ""
    url: str | None = None
    fields: tuple[Field, ...] = ()
    footer: str = ""
    color: int | None = None


@dataclass(frozen=True)
class Pager:
    """A paged answer: `command` called again with `args` and another `page` (0-based)."""

    command: str
    args: dict[str, Any]
    page: int
    pages: int


@dataclass(frozen=True)
class File:
    filename: str
    data: bytes
    description: str = ""


@dataclass(frozen=True)
class Reply:
    content: str = ""
    embeds: tuple[Embed, ...] = ()
    ephemeral: bool = False
    pager: Pager | None = None
    files: tuple[File, ...] = ()


@dataclass(frozen=True)
class Ctx:
    """Where and by whom a command runs. guild_id None: a DM."""

    guild_id: int | None
    channel_id: int
    user_id: int
    now: datetime
    can_manage: bool = False  # the user has Manage Channels here (always True in a DM)
    base_url: str = ""  # where the feeds are served, without a trailing slash
    can_manage_webhooks: bool = False  # the user has Manage Webhooks here
    can_manage_guild: bool = False  # the user has Manage Server here (/team add, /team remove)
    webhook_bases: tuple[str, ...] = ()  # webhook URL bases /webhook accepts besides Discord's and Slack's
    sources: SourceSettings = field(default_factory=SourceSettings)  # the sources asked here, as /why says
