"""The Discord client: slash commands only, no privileged intents, alerts from the event log.

The token comes only from $DISCORD_TOKEN and is never logged or echoed. The command tree
is synced on start only when the command set changed (a hash of its payload is kept in
the database); `mapwatch sync` syncs on demand.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import discord
from discord import app_commands
from mapwatch.bot import delivery, follow_delivery, render
from mapwatch.bot.commands import MODULES
from mapwatch.bot.interactions import NO_PINGS, PageButton, Runner
from mapwatch.bot.pacer import Pacer, per_channel
from mapwatch.bot.render_follow import Delivery
from mapwatch.store import bot_state, tracking
from mapwatch.store.clock import utc_now
from mapwatch.store.follows import Place

log = logging.getLogger("mapwatch.bot")

SYNC_HASH_KEY = "command_tree_hash"
PRUNE_EVERY = timedelta(hours=1)  # how often bot_state is bounded (store.bot_state.prune_state)


class MapwatchBot(discord.Client):
    def __init__(self, db_path: str | Path | None, *, base_url: str = "", clock: Callable[[], datetime] = utc_now,
                 alert_interval: float = 30.0, sync: str = "auto", **client_kwargs: Any) -> None:
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # no voice: no warning
        super().__init__(intents=discord.Intents.default(), allowed_mentions=NO_PINGS, **client_kwargs)
        self.runner = Runner(db_path, clock=clock, base_url=base_url)
        self.tree = app_commands.CommandTree(self)
        self.tree.on_error = self.runner.on_tree_error
        install_commands(self.tree, self.runner)
        self.clock = clock
        self.alert_interval = alert_interval
        self.sync_mode = sync  # auto: when the command set changed; never; always
        self._alert_lock = asyncio.Lock()
        self.pacer = Pacer()  # shared by alerts, follows and digests: no burst across channels
        self._poller: asyncio.Task | None = None
        self.synced = False

    async def setup_hook(self) -> None:
        self.add_dynamic_items(PageButton)
        if self.sync_mode != "never":
            await self.sync_if_changed(force=self.sync_mode == "always")
        self._poller = asyncio.create_task(self._poll_alerts(), name="mapwatch-alerts")

    async def close(self) -> None:
        if self._poller:
            self._poller.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._poller
        await super().close()

    # -- command sync -------------------------------------------------------------------
    def tree_hash(self) -> str:
        payload = [c.to_dict(self.tree) for c in self.tree.get_commands()]
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    async def sync_if_changed(self, *, force: bool = False) -> bool:
        digest = self.tree_hash()
        stored = await self.runner.call(bot_state.get_state, SYNC_HASH_KEY)
        if stored == digest and not force:
            log.info("command set unchanged: not syncing")
            return False
        synced = await self.tree.sync()
        await self.runner.call(bot_state.set_state, SYNC_HASH_KEY, digest, self.clock())
        log.info("synced %d commands", len(synced))
        self.synced = True
        return True

    # -- alerts -------------------------------------------------------------------------
    async def _poll_alerts(self) -> None:
        await self.wait_until_ready()
        pruned_at: datetime | None = None
        while not self.is_closed():
            try:
                await self.deliver_alerts()
            except Exception:
                log.exception("alert delivery failed; retrying next tick")
            if pruned_at is None or self.clock() - pruned_at >= PRUNE_EVERY:
                pruned_at = self.clock()
                try:
                    removed = await self.runner.call(bot_state.prune_state, pruned_at)
                    if removed:
                        log.info("pruned %d rows of bot state", removed)
                except Exception:
                    log.exception("pruning the bot state failed; trying again later")
            await asyncio.sleep(self.alert_interval)

    async def deliver_alerts(self) -> int:
        """Send every pending alert, then every instant follow's news and every digest that is
        due; cursors advance only after Discord accepted a message. Every post waits for the
        shared pacer. Returns how many messages were sent."""
        async with self._alert_lock:
            sent = await self._deliver_track_alerts()
            sender = follow_delivery.discord_sender(self)
            sent += await follow_delivery.deliver_follows(self.runner.call, sender, self.pacer, self.clock,
                                                          find=delivery.discord_finder(self))
            sent += await follow_delivery.deliver_digests(self.runner.call, sender, self.pacer, self.clock)
        return sent

    async def _deliver_track_alerts(self) -> int:
        sent = 0
        call = self.runner.call
        alerts = await call(tracking.pending_alerts)
        alerts, later = per_channel(alerts, key=lambda a: (a.track.guild_id, a.track.channel_id))
        if later:
            log.info("%d alerts wait for the next tick (per-channel limit)", len(later))
        send, find = delivery.discord_sender(self), delivery.discord_finder(self)
        for a in alerts:
            reply = render.alert(a)
            role = a.track.role_id
            content = f"<@&{int(role)}> {reply.content}".strip() if role is not None else reply.content
            message = Delivery(content, reply.embeds, (role,) if role is not None else ())
            tid, upto = a.track.id, a.upto_event_id
            # The nonce (enforced) lets Discord drop a repeat if we crash between its
            # acceptance and our cursor update and resend within a few minutes; later than
            # that, the channel's recent messages are searched for it (bot.delivery).
            nonce = f"t{tid}e{upto}"[:25]
            await call(bot_state.mark_alert_sending, tid, upto, self.clock())
            place = Place(a.track.guild_id, a.track.channel_id, a.track.user_id)
            result = await delivery.post(send, find, self.pacer, place, message, nonce, a.sending_since, self.clock())
            if await delivery.settle(
                    call, f"alert for track {tid}", nonce, result, self.clock(),
                    delivered=lambda _r, tid=tid, upto=upto: call(tracking.mark_delivered, tid, upto, self.clock()),
                    disable=lambda why, tid=tid: call(tracking.disable_track, tid, why),
                    give_up=lambda why, tid=tid, upto=upto: call(tracking.mark_failed, tid, upto, why, self.clock())):
                sent += not result.found
        return sent


def install_commands(tree: app_commands.CommandTree, runner: Runner) -> None:
    import importlib

    for name in MODULES:
        importlib.import_module(name).install(tree, runner)


async def sync_commands(token: str, db_path: str | None) -> int:
    """`mapwatch sync`: log in, sync the tree, remember its hash."""
    from mapwatch.bot import config
    from mapwatch.bot.discord_endpoints import from_environment
    from mapwatch.store.db import open_db

    from_environment()
    open_db(db_path).close()  # the schema
    client = MapwatchBot(db_path, base_url=config.base_url(), sync="never")
    async with client:
        await client.login(token)
        synced = await client.tree.sync()
        await client.runner.call(bot_state.set_state, SYNC_HASH_KEY, client.tree_hash(), utc_now())
    return len(synced)


def build_tree_for_inspection() -> app_commands.CommandTree:
    """The command tree without connecting (for tests and docs)."""
    client = MapwatchBot(":memory:", sync="never")
    return client.tree


__all__ = ["MapwatchBot", "build_tree_for_inspection", "install_commands", "sync_commands"]
