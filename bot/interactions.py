"""The thin layer between discord.py and the pure command cores.

`Runner.run` is what every slash-command wrapper calls: build the context, run the core
off the event loop (deferring when it is slow), turn the Reply into a Discord message
with no pings allowed, and map every error to a friendly ephemeral answer.

bot/interactions.py may import (mapwatch/layers.py): store/, bot/rendering, bot/commands.
The sending loop imports it (to_embed), and the client both.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import re
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import discord
from discord import app_commands
from sqlite_utils import Database

from mapwatch.bot.commands import Command, commands, error_reply, refusal, run_core
from mapwatch.bot.rendering import text
from mapwatch.bot.rendering.replies import Ctx, Embed, Pager, Reply
from mapwatch.store.clock import utc_now
from mapwatch.store.database.db import open_db
from mapwatch.store.errors import NotAllowed
from mapwatch.store.questions import autocomplete
from mapwatch.store.settings_table import SourceSettings
from mapwatch.store.subscriptions import bot_state, tracking

log = logging.getLogger("mapwatch.bot")

NO_PINGS = discord.AllowedMentions.none()
DEFER_AFTER = 2.0  # seconds: answer within Discord's 3 s or defer first
PAGE_ID = re.compile(r"mwp:(?P<cmd>[a-z]+):(?P<page>\d+):(?P<dir>[pn]):(?P<args>.*)")
CUSTOM_ID_MAX = 100


class Runner:
    """Runs commands for the client. One database connection per worker thread (WAL lets
    readers run beside the refresh)."""

    def __init__(self, db_path: str | Path | None, *, clock: Callable[[], datetime] = utc_now,
                 base_url: str = "", webhook_bases: Sequence[str] = (), sources: SourceSettings | None = None) -> None:
        self.db_path = db_path
        self.clock = clock
        self.base_url = base_url
        self.webhook_bases = tuple(webhook_bases)
        self.sources = sources or SourceSettings()  # what /why says of the open sources
        self.commands: dict[str, Command] = commands()
        self._local = threading.local()

    # -- database, off the loop ---------------------------------------------------------
    def db(self) -> Database:
        conn = getattr(self._local, "db", None)
        if conn is None:
            conn = self._local.db = open_db(self.db_path, migrate=False)
        return conn

    async def call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        return await asyncio.to_thread(lambda: fn(self.db(), *args, **kw))

    # -- context ------------------------------------------------------------------------
    def ctx(self, interaction: discord.Interaction) -> Ctx:
        in_guild = interaction.guild_id is not None
        perms = interaction.permissions
        return Ctx(guild_id=interaction.guild_id, channel_id=interaction.channel_id or 0,
                   user_id=interaction.user.id, now=self.clock(),
                   can_manage=(not in_guild) or bool(perms and perms.manage_channels), base_url=self.base_url,
                   can_manage_webhooks=in_guild and bool(perms and perms.manage_webhooks),
                   can_manage_guild=in_guild and bool(perms and perms.manage_guild),
                   webhook_bases=self.webhook_bases, sources=self.sources)

    def manage_check(self, interaction: discord.Interaction) -> bool:
        """Enforced for /track and /untrack: Manage Channels in a server (any DM is fine)."""
        if interaction.guild_id is None:
            return True
        if interaction.permissions.manage_channels:
            return True
        raise app_commands.CheckFailure("manage_channels")

    def webhooks_check(self, interaction: discord.Interaction) -> bool:
        """Enforced for /webhook: Manage Webhooks, in a server."""
        if interaction.guild_id is not None and interaction.permissions.manage_webhooks:
            return True
        raise app_commands.CheckFailure("manage_webhooks")

    # -- commands -----------------------------------------------------------------------
    async def run(self, interaction: discord.Interaction, name: str, /, **options: Any) -> None:
        ctx = self.ctx(interaction)
        await self.answer(interaction, name, ctx, options, edit=False)

    async def answer(self, interaction: discord.Interaction, name: str, ctx: Ctx, options: dict[str, Any],
                     *, edit: bool) -> None:
        task = asyncio.ensure_future(self.call(run_core, ctx, name, options))
        done, _ = await asyncio.wait({task}, timeout=DEFER_AFTER)
        deferred = False
        if not done:
            deferred = True
            if edit:
                await interaction.response.defer()
            else:
                await interaction.response.defer(thinking=True)
        try:
            reply, _ok = await task
        except Exception as e:  # never a traceback to the user
            log.exception("/%s failed", name)
            reply = error_reply(e)
        await self.send(interaction, reply, edit=edit, deferred=deferred)

    async def send(self, interaction: discord.Interaction, reply: Reply, *, edit: bool = False,
                   deferred: bool = False) -> None:
        reply = text.fit_reply(reply)
        kw: dict[str, Any] = {"content": reply.content or None, "embeds": [to_embed(e) for e in reply.embeds]}
        view = await self.page_view(reply.pager) if reply.pager else None
        if edit and (not reply.ephemeral or reply.pager is not None):  # a page of an ephemeral list too
            kw["view"] = view
            if deferred:
                await interaction.edit_original_response(**kw, allowed_mentions=NO_PINGS)
            else:
                await interaction.response.edit_message(**kw, allowed_mentions=NO_PINGS)
            return
        if view is not None:
            kw["view"] = view
        if reply.files:
            kw["files"] = [discord.File(__import__("io").BytesIO(f.data), filename=f.filename,
                                        description=f.description or None) for f in reply.files]
        if deferred or interaction.response.is_done():
            await interaction.followup.send(**kw, ephemeral=reply.ephemeral, allowed_mentions=NO_PINGS)
        else:
            await interaction.response.send_message(**kw, ephemeral=reply.ephemeral, allowed_mentions=NO_PINGS)

    # -- paging -------------------------------------------------------------------------
    async def page_view(self, pager: Pager) -> discord.ui.View:
        key = await self.call(page_key, pager.args, self.clock())
        view = discord.ui.View(timeout=None)
        prev_page, next_page = max(0, pager.page - 1), min(pager.pages - 1, pager.page + 1)
        view.add_item(PageButton(pager.command, prev_page, key, f"mwp:{pager.command}:{prev_page}:p:{key}",
                                 label="◀ Previous", disabled=pager.page <= 0))
        view.add_item(PageButton(pager.command, next_page, key, f"mwp:{pager.command}:{next_page}:n:{key}",
                                 label="Next ▶",
                                 disabled=pager.page + 1 >= pager.pages))
        return view

    async def turn_page(self, interaction: discord.Interaction, cmd: str, page: int, key: str) -> None:
        args = await self.call(page_args, key)
        if args is None or cmd not in self.commands or not self.commands[cmd].paged:
            await interaction.response.send_message("This list has expired: run the command again.",
                                                    ephemeral=True, allowed_mentions=NO_PINGS)
            return
        await self.answer(interaction, cmd, self.ctx(interaction), {**args, "page": page}, edit=True)

    # -- autocomplete -------------------------------------------------------------------
    async def paper_autocomplete(self, interaction: discord.Interaction,
                                 current: str) -> list[app_commands.Choice[str]]:
        found = await self.call(autocomplete.autocomplete_papers, current or "")
        return [app_commands.Choice(name=text.clip(text.clean(c.name), text.CHOICE_MAX), value=c.value) for c in found]

    async def direction_autocomplete(self, interaction: discord.Interaction,
                                     current: str) -> list[app_commands.Choice[str]]:
        found = await self.call(autocomplete.autocomplete_directions, current or "")
        return [app_commands.Choice(name=text.clip(text.clean(c.name), text.CHOICE_MAX), value=c.value) for c in found]

    async def author_autocomplete(self, interaction: discord.Interaction,
                                  current: str) -> list[app_commands.Choice[str]]:
        found = await self.call(autocomplete.autocomplete_authors, current or "")
        return [app_commands.Choice(name=text.clip(text.clean(c.name), text.CHOICE_MAX), value=c.value) for c in found]

    async def author_name_autocomplete(self, interaction: discord.Interaction,
                                       current: str) -> list[app_commands.Choice[str]]:
        found = await self.call(autocomplete.autocomplete_authors, current or "", by_name=True)
        return [app_commands.Choice(name=text.clip(text.clean(c.name), text.CHOICE_MAX), value=c.value) for c in found]

    async def tracked_autocomplete(self, interaction: discord.Interaction,
                                   current: str) -> list[app_commands.Choice[str]]:
        tracks = await self.call(lambda db: tracking.list_tracks(db, guild_id=interaction.guild_id,
                                                                 user_id=interaction.user.id))
        cur = (current or "").lower()
        out = [app_commands.Choice(name=text.clip(f"{t.paper_id} · {text.clean(t.paper_title)}", text.CHOICE_MAX),
                                   value=t.paper_id)
               for t in tracks if (interaction.guild_id is None or t.channel_id == interaction.channel_id)
               and (cur in t.paper_id.lower() or cur in t.paper_title.lower())]
        return out[:25] or await self.paper_autocomplete(interaction, current)

    # -- errors -------------------------------------------------------------------------
    async def on_tree_error(self, interaction: discord.Interaction, error: app_commands.AppCommandError) -> None:
        if isinstance(error, app_commands.CheckFailure):
            reply = error_reply(NotAllowed(refusal(interaction.command.name if interaction.command else "")))
        else:
            log.error("command error: %s", error, exc_info=error)
            reply = error_reply(getattr(error, "original", error))
        try:
            await self.send(interaction, reply)
        except discord.HTTPException:
            log.warning("could not send the error reply")


def to_embed(e: Embed) -> discord.Embed:
    # Every embed sent to Discord passes here: its link once more through the one rule.
    emb = discord.Embed(title=e.title or None, description=e.description or None, url=text.safe_link(e.url),
                        color=e.color)
    for f in e.fields:
        emb.add_field(name=f.name, value=f.value, inline=f.inline)
    if e.footer:
        emb.set_footer(text=e.footer)
    return emb


def page_key(db: Any, args: dict[str, Any], now: datetime) -> str:
    """Paging state for a button's custom_id: inline JSON when it fits, else stored by hash
    (in bot_state), so buttons keep working after a restart."""
    raw = json.dumps(args, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    if len(raw) <= CUSTOM_ID_MAX - 30 and not raw.startswith("@"):
        return raw
    digest = hashlib.sha256(raw.encode()).hexdigest()[:20]
    bot_state.set_state(db, f"{bot_state.PAGE_STATE}{digest}", raw, now)
    return "@" + digest


def page_args(db: Any, key: str) -> dict[str, Any] | None:
    raw = bot_state.get_state(db, f"{bot_state.PAGE_STATE}{key[1:]}") if key.startswith("@") else key
    try:
        args = json.loads(raw) if raw else None
    except ValueError:
        return None
    return args if isinstance(args, dict) else None


class PageButton(discord.ui.DynamicItem[discord.ui.Button], template=PAGE_ID):
    """A page button of any paged answer, handled from its custom_id alone (survives restarts)."""

    def __init__(self, cmd: str, page: int, key: str, custom_id: str, *, label: str = "page",
                 disabled: bool = False) -> None:
        super().__init__(discord.ui.Button(custom_id=custom_id, label=label, disabled=disabled,
                                           style=discord.ButtonStyle.secondary))
        self.cmd, self.page, self.key = cmd, page, key

    @classmethod
    async def from_custom_id(cls, interaction: discord.Interaction, item: discord.ui.Item[Any],
                             match: re.Match[str]) -> PageButton:
        return cls(match["cmd"], int(match["page"]), match["args"], getattr(item, "custom_id", None) or "")

    async def callback(self, interaction: discord.Interaction) -> None:
        runner: Runner = interaction.client.runner  # type: ignore[attr-defined]
        await runner.turn_page(interaction, self.cmd, self.page, self.key)
