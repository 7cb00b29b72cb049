"""The environment, read once: every setting mapwatch takes from an environment variable.

`Environment.read()` copies the variables of `NAMES` (README, "Configuration") out of the
process environment in one pass; `mapwatch` does it once at start (mapwatch.cli) and makes
it `current()` while the command runs. The commands pass what they use on; the few deep
readers (the database's path and busy timeout, a tick's deadline, background priority) ask
`current()`. Nothing else reads os.environ.

Each accessor checks its variable with store.settings when it is used, so a bad value is a
usage error (BadSetting: exit 2, one line naming the variable) of the commands that use it
and of no other.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields

from mapwatch.store import settings
from mapwatch.store.errors import BadSetting

DEFAULT_DB = "mapwatch.db"
DEFAULT_PORT = 8080
DEFAULT_FEEDS_DIR = "public"
DEFAULT_BUSY_TIMEOUT_MS = 10_000
DEFAULT_TICK_DEADLINE = 1800.0  # seconds a tick's crawl may take at most
DEFAULT_NICE = 10  # `mapwatch run`'s refresh thread, when $MAPWATCH_BACKGROUND_NICE is not set
MAX_NICE = 19
DEFAULT_ALERT_INTERVAL = 30.0
MAX_SHARDS = 4096  # far above Discord's need for any one bot (one shard per 2,500 servers)
LOG_FORMATS = ("text", "json")


@dataclass(frozen=True)
class Environment:
    """The raw values ("" when unset) of every variable mapwatch reads, field by field."""

    db: str = ""  # MAPWATCH_DB
    busy_timeout: str = ""  # MAPWATCH_BUSY_TIMEOUT
    source: str = ""  # MAPWATCH_SOURCE
    feeds_dir: str = ""  # MAPWATCH_FEEDS_DIR
    base_url: str = ""  # MAPWATCH_BASE_URL
    port: str = ""  # PORT
    refresh: str | None = None  # MAPWATCH_REFRESH (None when unset: the scheduler's default)
    tick_deadline: str = ""  # MAPWATCH_TICK_DEADLINE
    header_timeout: str = ""  # MAPWATCH_HEADER_TIMEOUT
    max_connections: str = ""  # MAPWATCH_MAX_CONNECTIONS
    background_nice: str = ""  # MAPWATCH_BACKGROUND_NICE
    alert_interval: str = ""  # MAPWATCH_ALERT_INTERVAL
    log_level: str = ""  # MAPWATCH_LOG_LEVEL
    discord_token: str = ""  # DISCORD_TOKEN
    discord_api: str = ""  # MAPWATCH_DISCORD_API
    discord_gateway: str = ""  # MAPWATCH_DISCORD_GATEWAY
    shards: str = ""  # MAPWATCH_SHARDS
    log_format: str = ""  # MAPWATCH_LOG_FORMAT
    replica: str = ""  # MAPWATCH_REPLICA
    slack_webhooks: str = ""  # MAPWATCH_SLACK_WEBHOOKS
    webhook_key: str = ""  # MAPWATCH_WEBHOOK_KEY (store.secret_box)

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> Environment:
        """One pass over the environment (os.environ unless given): each variable read once."""
        env = os.environ if environ is None else environ
        values = {field: env.get(name) or "" for field, name in NAMES.items() if field != "refresh"}
        return cls(**values, refresh=env.get(NAMES["refresh"]))

    # -- the store -------------------------------------------------------------------------

    def database(self) -> str:
        """The database file: $MAPWATCH_DB, else ./mapwatch.db."""
        return self.db or DEFAULT_DB

    def busy_timeout_ms(self) -> int:
        """How long a command waits for another process's write lock: $MAPWATCH_BUSY_TIMEOUT
        seconds (default 10); past it, "database is locked" (README, "Exit status")."""
        raw = self.busy_timeout.strip()
        if not raw:
            return DEFAULT_BUSY_TIMEOUT_MS
        try:
            seconds = float(raw)
        except ValueError:
            seconds = -1.0
        if not 0 <= seconds <= 86_400:
            raise BadSetting(f"$MAPWATCH_BUSY_TIMEOUT must be seconds (0 to 86400), not {raw!r}")
        return int(seconds * 1000)

    def nice_steps(self, default: int | None = DEFAULT_NICE) -> int | None:
        """How many steps lower background work runs: $MAPWATCH_BACKGROUND_NICE (0 to 19; 0
        leaves the priority alone), else `default`."""
        raw = self.background_nice.strip()
        if not raw:
            return default
        try:
            steps = int(raw)
        except ValueError:
            steps = -1
        if not 0 <= steps <= MAX_NICE:
            raise BadSetting(f"$MAPWATCH_BACKGROUND_NICE must be a whole number from 0 to {MAX_NICE}, not {raw!r}")
        return steps

    def deadline_seconds(self) -> float:
        """$MAPWATCH_TICK_DEADLINE in seconds (default 30 minutes)."""
        raw = self.tick_deadline.strip()
        if not raw:
            return DEFAULT_TICK_DEADLINE
        try:
            seconds = float(raw)
        except ValueError:
            seconds = -1.0
        if not 0 < seconds <= 86_400:
            raise BadSetting(f"$MAPWATCH_TICK_DEADLINE must be seconds (more than 0, at most 86400), not {raw!r}")
        return seconds

    def source_or(self, default: str) -> str:
        """$MAPWATCH_SOURCE (a folder, or a URL with a host), else `default`."""
        return settings.http_source(self.source, "$MAPWATCH_SOURCE") if self.source else default

    # -- the feeds -------------------------------------------------------------------------

    def feeds_folder(self) -> str:
        """$MAPWATCH_FEEDS_DIR, else ./public: a folder, or nothing yet."""
        return settings.out_folder(self.feeds_dir or DEFAULT_FEEDS_DIR, "$MAPWATCH_FEEDS_DIR")

    def given_base_url(self) -> str | None:
        """$MAPWATCH_BASE_URL checked (an http(s) address with a host); None when unset."""
        url = self.base_url.strip()
        return settings.base_url(url, "$MAPWATCH_BASE_URL") if url else None

    def listen_port(self) -> int:
        """$PORT, else 8080."""
        return settings.port(self.port or DEFAULT_PORT, "$PORT")

    def local_base_url(self) -> str:
        """Where the feeds are served, as links in answers: $MAPWATCH_BASE_URL, else local."""
        return self.given_base_url() or f"http://localhost:{self.listen_port()}"

    def header_timeout_seconds(self, default: float) -> float:
        raw = self.header_timeout.strip()
        try:
            timeout = float(raw) if raw else default
        except ValueError:
            timeout = float("nan")
        if not 0 < timeout <= 3600:  # NaN fails every comparison
            raise BadSetting(f"$MAPWATCH_HEADER_TIMEOUT must be seconds (more than 0, at most 3600), not {raw!r}")
        return timeout

    def connection_cap(self, default: int) -> int:
        raw = self.max_connections.strip()
        if raw and not (raw.isdigit() and int(raw) >= 1):
            raise BadSetting(f"$MAPWATCH_MAX_CONNECTIONS must be a whole number of at least 1, not {raw!r}")
        return int(raw) if raw else default

    # -- the bot and the service -----------------------------------------------------------

    def token(self) -> str | None:
        """The bot token: only from $DISCORD_TOKEN; never logged, echoed or stored."""
        return self.discord_token.strip() or None

    def discord_endpoints(self) -> tuple[str | None, str | None]:
        """$MAPWATCH_DISCORD_API and $MAPWATCH_DISCORD_GATEWAY (None: unset), each with a host."""
        api, gateway = self.discord_api or None, self.discord_gateway or None
        return (settings.endpoint_url(api, "$MAPWATCH_DISCORD_API") if api else None,
                settings.endpoint_url(gateway, "$MAPWATCH_DISCORD_GATEWAY", websocket=True) if gateway else None)

    def alert_seconds(self) -> float:
        """Seconds between checks of the event log for alerts: $MAPWATCH_ALERT_INTERVAL (kept
        within 0.2 to 60); not a number is a usage error."""
        raw = self.alert_interval.strip()
        if not raw:
            return DEFAULT_ALERT_INTERVAL
        return min(60.0, max(0.2, settings.seconds(raw, "$MAPWATCH_ALERT_INTERVAL", 0.0, 86_400.0)))

    def shard_count(self) -> int | None:
        """$MAPWATCH_SHARDS: the number of gateway shards (1 to 4096); unset: Discord's
        recommendation from /gateway/bot. Not a whole number in range is a usage error."""
        raw = self.shards.strip()
        if not raw:
            return None
        if not raw.isdigit():
            raise BadSetting(f"$MAPWATCH_SHARDS must be a whole number of shards (1 to {MAX_SHARDS:,}), not {raw!r}")
        return settings.bounded_int(int(raw), "$MAPWATCH_SHARDS", 1, MAX_SHARDS)

    def replica_url(self) -> str | None:
        """$MAPWATCH_REPLICA (the Litestream replica's URL), or None when no replica is configured."""
        return self.replica.strip() or None

    def webhook_bases(self) -> tuple[str, ...]:
        """Webhook URL bases accepted besides Discord's and Slack's own: the Discord-compatible
        API of $MAPWATCH_DISCORD_API and a Slack-compatible base in $MAPWATCH_SLACK_WEBHOOKS."""
        return tuple(v for v in (self.discord_api, self.slack_webhooks) if v)

    def log_format_name(self) -> str:
        """$MAPWATCH_LOG_FORMAT (text or json; unset: text); anything else is a usage error."""
        name = self.log_format.strip().lower() or "text"
        if name not in LOG_FORMATS:
            raise BadSetting(f"$MAPWATCH_LOG_FORMAT must be text or json, not {self.log_format!r}")
        return name

    def log_level_name(self) -> str:
        """$MAPWATCH_LOG_LEVEL (any case), else INFO."""
        level = self.log_level.strip().upper() or "INFO"
        if level not in logging.getLevelNamesMapping() or level == "NOTSET":
            raise BadSetting(f"$MAPWATCH_LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, "
                             f"not {self.log_level!r}")
        return level


# Field -> the variable it holds: every variable mapwatch reads (tests/test_environment.py
# checks each is documented and that nothing else reads the environment).
NAMES = {f.name: ("PORT" if f.name == "port" else "DISCORD_TOKEN" if f.name == "discord_token"
                  else f"MAPWATCH_{f.name.upper()}") for f in fields(Environment)}

_installed: list[Environment] = []


def current() -> Environment:
    """The environment the running command read at start; outside a command (a library
    call), the process environment as it is now."""
    return _installed[-1] if _installed else Environment.read()


@contextlib.contextmanager
def installed(env: Environment) -> Iterator[Environment]:
    """Make `env` the `current()` one while a command runs."""
    _installed.append(env)
    try:
        yield env
    finally:
        _installed.pop()
