"""The Discord client: slash commands only, no privileged intents, alerts from the event log.

The token comes only from $DISCORD_TOKEN and is never logged or echoed. The command tree
is synced on start only when the command set changed (a hash of its payload is kept in
the database); `mapwatch sync` syncs on demand.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import discord
from discord import app_commands
from discord.ext import tasks

from mapwatch.bot import redact
from mapwatch.bot.command_tree import install_commands
from mapwatch.bot.interactions import NO_PINGS, PageButton, Runner
from mapwatch.bot.sending import alert_edits, delivery, delivery_loop
from mapwatch.bot.sending.pacer import Pacer
from mapwatch.store.clock import utc_now
from mapwatch.store.settings_table import SourceSettings
from mapwatch.store.subscriptions import alert_messages, bot_state

log = logging.getLogger("mapwatch.bot")

SYNC_HASH_KEY = "command_tree_hash"


class MapwatchBot(discord.AutoShardedClient):
    """The bot: an AutoShardedClient, so the shard count comes from Discord's /gateway/bot
    (one shard below 2,500 servers) or from $MAPWATCH_SHARDS (`shard_count`). `metrics`
    (feeds.serving.metrics.Metrics): deliveries and Discord's rate-limit waits are counted there.
    `identify_spacing`: seconds between two shards' IDENTIFYs (discord.py's 5 s: Discord's
    limit for a bot whose /gateway/bot max_concurrency is 1; tests use 0)."""

    def __init__(self, db_path: str | Path | None, *, base_url: str = "", clock: Callable[[], datetime] = utc_now,
                 alert_interval: float = 30.0, sync: str = "auto", metrics: Any = None,
                 identify_spacing: float = 5.0, poll: bool = True, webhook_bases: Sequence[str] = (),
                 sources: SourceSettings | None = None, **client_kwargs: Any) -> None:
        discord.VoiceClient.warn_nacl = discord.VoiceClient.warn_dave = False  # no voice: no warning
        redact.install()  # webhook URLs in gateway events never reach a log
        super().__init__(intents=discord.Intents.default(), allowed_mentions=NO_PINGS, **client_kwargs)
        self.metrics = metrics
        self.identify_spacing = identify_spacing
        self._rate_log: Any = None
        self.runner = Runner(db_path, clock=clock, base_url=base_url, webhook_bases=webhook_bases, sources=sources)
        self.tree = app_commands.CommandTree(self)
        self.tree.error(self.runner.on_tree_error)
        install_commands(self.tree, self.runner)
        self.clock = clock
        self.alert_interval = alert_interval
        self.poll = poll  # False: no background delivery; the caller runs deliver_alerts() (tests)
        self.sync_mode = sync  # auto: when the command set changed; never; always
        self._alert_lock = asyncio.Lock()
        self.webhook_rounds = delivery_loop.WebhookRounds(self.runner.call, clock)
        self.pacer = Pacer()  # shared by alerts, follows and digests: no burst across channels
        self._poller: tasks.Loop | None = None
        self.synced = False

    async def before_identify_hook(self, shard_id: int | None, *, initial: bool = False) -> None:
        if not initial:
            await asyncio.sleep(self.identify_spacing)

    def shard_states(self) -> list[dict[str, Any]]:
        """Each shard: id, state (connected, disconnected) and heartbeat latency in seconds."""
        states = []
        for shard_id, info in sorted(self.shards.items()):
            closed = info.is_closed()
            latency = info.latency
            known = latency == latency and latency != float("inf")  # NaN or inf before the first heartbeat ack
            states.append({"id": shard_id, "state": "disconnected" if closed else "connected",
                           "latency_seconds": round(latency, 6) if known and not closed else None})
        return states

    async def setup_hook(self) -> None:
        if self.metrics is not None:
            from mapwatch.feeds.serving.metrics import RateLimitLog

            self._rate_log = RateLimitLog(self.metrics).install()
        self.add_dynamic_items(PageButton)
        if self.sync_mode != "never":
            await self.sync_if_changed(force=self.sync_mode == "always")
        if self.poll:
            self._poller = delivery_loop.start_polling(self, self.alert_interval, self.deliver_alerts,
                                                       self._prune_state, self.clock)

    async def close(self) -> None:
        if self._poller is not None:
            self._poller.cancel()
        await self.webhook_rounds.close()
        if self._rate_log is not None:
            self._rate_log.uninstall()
            self._rate_log = None
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

    # -- deliveries ---------------------------------------------------------------------
    async def deliver_alerts(self) -> int:
        """One round of deliveries (bot.sending.delivery_loop): pending track alerts, every instant
        follow's news and every digest that is due; cursors advance only after Discord
        accepted a message. Returns how many messages were sent to channels. Then a round of
        the webhooks starts beside it, outside the lock, unless one is still under way
        (bot.sending.delivery_loop.WebhookRounds; `webhook_rounds.wait()` waits for it)."""
        async with self._alert_lock:
            sent = await delivery_loop.deliver_all(self.runner.call, delivery.discord_sender(self),
                                                   delivery.discord_finder(self), self.pacer, self.clock,
                                                   self.metrics.delivery if self.metrics is not None else None,
                                                   edit=alert_edits.discord_editor(self))
        self.webhook_rounds.start()
        return sent

    async def _prune_state(self, now: datetime) -> int:
        removed: int = await self.runner.call(bot_state.prune_state, now)
        return removed + await self.runner.call(alert_messages.prune, now)


def build_tree_for_inspection() -> app_commands.CommandTree:
    """The command tree without connecting (for tests and docs)."""
    client = MapwatchBot(":memory:", sync="never")
    return client.tree


__all__ = ["MapwatchBot", "build_tree_for_inspection"]
