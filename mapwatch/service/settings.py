"""What `mapwatch run` is told: one frozen `RunSettings`, built once by the command
(mapwatch.cli.run, from its arguments and the environment it started with) and handed to
`run_all`, which composes the service from it. Nothing below reads the environment for these.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mapwatch.bot.supervisor import BOT_BACKOFF
from mapwatch.feeds.serving.connections import Limits
from mapwatch.store.settings_table import (
    DEFAULT_BEFORE_ALERTS,
    DEFAULT_HOST,
    DEFAULT_NICE,
    DEFAULT_PORT,
    DEFAULT_RANKS_WHOLE_EVERY,
)

if TYPE_CHECKING:
    from mapwatch.store.scholarly.enrich import EnrichSettings

__all__ = ["RunSettings"]


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """Every value `mapwatch run` uses, by what it is for. The defaults are a library call's
    (no bot, no enrichment, no admin port); the command fills each from its setting."""

    # where: the database, the source, the feeds (the options of `refresh` and `serve`)
    db_path: str | Path  # --db, else $MAPWATCH_DB: the one file every part opens for itself
    replica: str | None = None  # $MAPWATCH_REPLICA: its Litestream replica, for /healthz and /metrics
    source: str  # --source, else $MAPWATCH_SOURCE
    out_dir: str | Path  # --out, else $MAPWATCH_FEEDS_DIR
    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    base_url: str | None = None  # --base-url, else $MAPWATCH_BASE_URL; None: http://<host>:<port>
    # the tick
    refresh: str | None = None  # $MAPWATCH_REFRESH: an interval or a cron expression; None: 1 hour
    tick_deadline: float | None = None  # $MAPWATCH_TICK_DEADLINE, seconds; None: 30 minutes
    nice: int | None = DEFAULT_NICE  # $MAPWATCH_BACKGROUND_NICE: the tick's threads, steps lower
    enrich: EnrichSettings | None = None  # $MAPWATCH_ENRICH and the sources' settings; None: no round
    before_alerts: float = DEFAULT_BEFORE_ALERTS  # $MAPWATCH_BEFORE_ALERTS (0: none)
    ranks_whole_every: timedelta = timedelta(seconds=DEFAULT_RANKS_WHOLE_EVERY)  # $MAPWATCH_RANKS_WHOLE_EVERY
    # the feed server
    limits: Limits = field(default_factory=Limits)  # $MAPWATCH_HEADER_TIMEOUT, _MAX_CONNECTIONS, _NOT_FOUND_BURST
    admin: tuple[str, int] | None = None  # $MAPWATCH_ADMIN_LISTEN; None: /healthz, /metrics on the public port
    # the Discord bot
    token: str | None = None  # $DISCORD_TOKEN; None: no bot
    discord_api: str | None = None  # $MAPWATCH_DISCORD_API; None: Discord's
    discord_gateway: str | None = None  # $MAPWATCH_DISCORD_GATEWAY; None: Discord's
    shards: int | None = None  # $MAPWATCH_SHARDS; None: Discord's recommendation
    webhook_bases: tuple[str, ...] = ()  # what /webhook accepts besides Discord's and Slack's (store.environment)
    alert_interval: float = 30.0  # $MAPWATCH_ALERT_INTERVAL: seconds between polls of the event log
    bot_backoff: float = BOT_BACKOFF  # seconds before the first restart after a crash (then doubled)
    client_kwargs: Mapping[str, Any] = field(default_factory=dict)  # for discord.py's client (tests)
