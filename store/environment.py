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
ENRICH_SOURCES = ("arxiv", "openalex", "s2")  # the open scholarly sources, in the order a round asks them
DEFAULT_ENRICH = "arxiv,openalex,s2"  # all three: free, and asked at their published rates (docs/enrichment.md)
DEFAULT_ARXIV_API = "https://export.arxiv.org/api/query"
DEFAULT_OPENALEX_API = "https://api.openalex.org"
DEFAULT_S2_API = "https://api.semanticscholar.org/graph/v1"
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
    admin_listen: str = ""  # MAPWATCH_ADMIN_LISTEN
    enrich: str = ""  # MAPWATCH_ENRICH
    arxiv_api: str = ""  # MAPWATCH_ARXIV_API
    openalex_api: str = ""  # MAPWATCH_OPENALEX_API
    s2_api: str = ""  # MAPWATCH_S2_API
    s2_key: str = ""  # MAPWATCH_S2_KEY
    contact: str = ""  # MAPWATCH_CONTACT
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
        return settings.replica(self.replica, "$MAPWATCH_REPLICA") if self.replica.strip() else None

    def webhook_bases(self) -> tuple[str, ...]:
        """Webhook URL bases accepted besides Discord's and Slack's own: the Discord-compatible
        API of $MAPWATCH_DISCORD_API and a Slack-compatible base in $MAPWATCH_SLACK_WEBHOOKS."""
        slack = settings.webhook_base(self.slack_webhooks, "$MAPWATCH_SLACK_WEBHOOKS") if self.slack_webhooks else ""
        return tuple(v for v in (self.discord_api, slack) if v)

    def admin_address(self) -> tuple[str, int] | None:
        """$MAPWATCH_ADMIN_LISTEN (HOST:PORT): where /healthz and /metrics are served instead
        of the public port; None when unset (they are on the public port)."""
        return settings.listen_address(self.admin_listen, "$MAPWATCH_ADMIN_LISTEN") if self.admin_listen else None

    # -- the open scholarly sources (docs/enrichment.md) ------------------------------------

    def enrich_sources(self) -> tuple[str, ...]:
        """The sources enrichment asks: $MAPWATCH_ENRICH, comma-separated names of
        `ENRICH_SOURCES` (any case, any order: asked in that order), or `off` (none);
        unset: all three."""
        raw = self.enrich.strip().lower() or DEFAULT_ENRICH
        if raw in ("off", "none"):
            return ()
        names = [n.strip() for n in raw.split(",") if n.strip()]
        unknown = [n for n in names if n not in ENRICH_SOURCES]
        if unknown or not names:
            raise BadSetting(f"$MAPWATCH_ENRICH must be off or sources from {','.join(ENRICH_SOURCES)} separated "
                             f"by commas, not {settings.shown(self.enrich)}")
        return tuple(n for n in ENRICH_SOURCES if n in names)

    def source_apis(self) -> dict[str, str]:
        """Each source's base URL: $MAPWATCH_ARXIV_API, $MAPWATCH_OPENALEX_API, $MAPWATCH_S2_API
        (an http(s) address with a host; a trailing slash dropped), else the source's own."""
        given = {"arxiv": (self.arxiv_api, "$MAPWATCH_ARXIV_API", DEFAULT_ARXIV_API),
                 "openalex": (self.openalex_api, "$MAPWATCH_OPENALEX_API", DEFAULT_OPENALEX_API),
                 "s2": (self.s2_api, "$MAPWATCH_S2_API", DEFAULT_S2_API)}
        return {source: settings.api_base(value.strip(), name) if value.strip() else default
                for source, (value, name, default) in given.items()}

    def s2_api_key(self) -> str | None:
        """The Semantic Scholar API key: only from $MAPWATCH_S2_KEY; a secret like the bot's
        token, sent in the `x-api-key` header alone, never logged, echoed or stored."""
        key = self.s2_key.strip()
        if key and not key.isprintable():
            raise BadSetting("$MAPWATCH_S2_KEY must be printable characters (the key itself is not shown)")
        return key or None

    def contact_address(self) -> str | None:
        """$MAPWATCH_CONTACT: the e-mail address the sources' polite pools ask for (it goes
        into the User-Agent and OpenAlex's `mailto`); None when unset."""
        raw = self.contact.strip()
        return settings.email(raw, "$MAPWATCH_CONTACT") if raw else None

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


# Field -> the variable it holds: every variable mapwatch reads (tests/unit/store/test_environment.py
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
