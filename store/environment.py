"""The environment, read once: the values of store.settings_table's variables, parsed when used.

`Environment.read()` copies the variables of the table (docs/configuration.md, "Configuration")
out of the process environment in one pass; `mapwatch` does it once at start (mapwatch.cli)
and makes it `current()` while the command runs; it also hands it to the command as `args.environment`
(`of_command(args)`). The commands pass what they use on (a value, or the Environment
itself); the few deep readers left ask `current()`: `open_db` (store.database.db) for the
database's default path, its busy timeout and whether a replica is configured, since every
connection of every command and thread is opened there, and store.secret_box for the webhook
key, read where a webhook URL is sealed or opened. Nothing else reads os.environ.

Each value is parsed by its table entry when it is asked for (`value(name)`), so a bad value
is a usage error (BadSetting: exit 2, one line naming the variable) of the commands that use
it and of no other. The accessors below are named shortcuts of `value()`.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from types import MappingProxyType
from typing import Any

from mapwatch.store.settings_table import (
    BY_NAME,
    DEFAULT_NICE,
    NAMES,
    SECRETS,
    BeyondArxivMode,
    SourceCitationsMode,
    SourceSettings,
)


@dataclass(frozen=True)
class Environment:
    """The raw values ("" when unset) of every variable of the table, by variable name."""

    raw_values: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        unknown = set(self.raw_values) - set(NAMES)
        if unknown:
            raise KeyError(f"not a setting of store.settings_table: {sorted(unknown)}")
        object.__setattr__(self, "raw_values", MappingProxyType(dict(self.raw_values)))

    @classmethod
    def read(cls, environ: Mapping[str, str] | None = None) -> Environment:
        """One pass over the environment (os.environ unless given): each variable read once."""
        env = os.environ if environ is None else environ
        return cls({name: env.get(name) or "" for name in NAMES})

    def raw(self, name: str) -> str:
        """The variable's text as given ("" when unset); a secret's too (never to be shown)."""
        if name not in BY_NAME:
            raise KeyError(name)
        return self.raw_values.get(name, "")

    def value(self, name: str) -> Any:
        """The variable parsed by its table entry: BadSetting (naming it) when it is bad."""
        return BY_NAME[name].parse(self.raw(name))

    # -- the store -------------------------------------------------------------------------

    def database(self) -> str:
        """The database file: $MAPWATCH_DB, else ./mapwatch.db."""
        return str(self.value("MAPWATCH_DB"))

    def busy_timeout_ms(self) -> int:
        """How long a command waits for another process's write lock: $MAPWATCH_BUSY_TIMEOUT
        seconds (default 10); past it, "database is locked" (docs/getting-started.md, "Exit status")."""
        return int(self.value("MAPWATCH_BUSY_TIMEOUT"))

    def db_cache_kib(self) -> int:
        """SQLite's page cache for each connection: $MAPWATCH_DB_CACHE_MIB (default 16), in KiB."""
        return int(self.value("MAPWATCH_DB_CACHE_MIB")) * 1024

    def nice_steps(self, default: int | None = DEFAULT_NICE) -> int | None:
        """How many steps lower background work runs: $MAPWATCH_BACKGROUND_NICE (0 to 19; 0
        leaves the priority alone), else `default`."""
        steps: int | None = self.value("MAPWATCH_BACKGROUND_NICE")
        return default if steps is None else steps

    def deadline_seconds(self) -> float:
        """$MAPWATCH_TICK_DEADLINE in seconds (default 30 minutes)."""
        return float(self.value("MAPWATCH_TICK_DEADLINE"))

    def ranks_whole_every(self) -> timedelta:
        """$MAPWATCH_RANKS_WHOLE_EVERY: how old a direction's whole PageRank computation may be
        before a change computes it whole again rather than by a push (default a day)."""
        return timedelta(seconds=float(self.value("MAPWATCH_RANKS_WHOLE_EVERY")))

    def before_alerts_seconds(self) -> float:
        """$MAPWATCH_BEFORE_ALERTS: seconds a tick gives the sources before its alerts (0: none)."""
        return float(self.value("MAPWATCH_BEFORE_ALERTS"))

    def source_or(self, default: str) -> str:
        """$MAPWATCH_SOURCE (a folder, or a URL with a host), else `default`."""
        source: str | None = self.value("MAPWATCH_SOURCE")
        return default if source is None else source

    # -- the feeds -------------------------------------------------------------------------

    def feeds_folder(self) -> str:
        """$MAPWATCH_FEEDS_DIR, else ./public: a folder, or nothing yet."""
        return str(self.value("MAPWATCH_FEEDS_DIR"))

    def given_base_url(self) -> str | None:
        """$MAPWATCH_BASE_URL checked (an http(s) address with a host); None when unset."""
        url: str | None = self.value("MAPWATCH_BASE_URL")
        return url

    def listen_port(self) -> int:
        """$PORT, else 8080."""
        return int(self.value("PORT"))

    def header_timeout_seconds(self, default: float) -> float:
        timeout: float | None = self.value("MAPWATCH_HEADER_TIMEOUT")
        return default if timeout is None else timeout

    def connection_cap(self, default: int) -> int:
        cap: int | None = self.value("MAPWATCH_MAX_CONNECTIONS")
        return default if cap is None else cap

    def not_found_burst(self, default: int) -> int:
        burst: int | None = self.value("MAPWATCH_NOT_FOUND_BURST")
        return default if burst is None else burst

    # -- the bot and the service -----------------------------------------------------------

    def refresh_schedule(self) -> str | None:
        """$MAPWATCH_REFRESH as given (None when unset: the scheduler's default); the
        scheduler parses it (mapwatch.service.schedule.parse_schedule)."""
        schedule: str | None = self.value("MAPWATCH_REFRESH")
        return schedule

    def token(self) -> str | None:
        """The bot token: only from $DISCORD_TOKEN; never logged, echoed or stored."""
        token: str | None = self.value("DISCORD_TOKEN")
        return token

    def discord_endpoints(self) -> tuple[str | None, str | None]:
        """$MAPWATCH_DISCORD_API and $MAPWATCH_DISCORD_GATEWAY (None: unset), each with a host."""
        return self.value("MAPWATCH_DISCORD_API"), self.value("MAPWATCH_DISCORD_GATEWAY")

    def alert_seconds(self) -> float:
        """Seconds between checks of the event log for alerts: $MAPWATCH_ALERT_INTERVAL (kept
        within 0.2 to 60); not a number is a usage error."""
        return float(self.value("MAPWATCH_ALERT_INTERVAL"))

    def shard_count(self) -> int | None:
        """$MAPWATCH_SHARDS: the number of gateway shards (1 to 4096); unset: Discord's
        recommendation from /gateway/bot. Not a whole number in range is a usage error."""
        shards: int | None = self.value("MAPWATCH_SHARDS")
        return shards

    def replica_url(self) -> str | None:
        """$MAPWATCH_REPLICA (the Litestream replica's URL), or None when no replica is configured."""
        url: str | None = self.value("MAPWATCH_REPLICA")
        return url

    def webhook_bases(self) -> tuple[str, ...]:
        """Webhook URL bases accepted besides Discord's and Slack's own: the Discord-compatible
        API of $MAPWATCH_DISCORD_API (as given) and a Slack-compatible base in $MAPWATCH_SLACK_WEBHOOKS."""
        slack: str = self.value("MAPWATCH_SLACK_WEBHOOKS")
        return tuple(v for v in (self.raw("MAPWATCH_DISCORD_API"), slack) if v)

    def admin_address(self) -> tuple[str, int] | None:
        """$MAPWATCH_ADMIN_LISTEN (HOST:PORT): where /healthz and /metrics are served instead
        of the public port; None when unset (they are on the public port)."""
        address: tuple[str, int] | None = self.value("MAPWATCH_ADMIN_LISTEN")
        return address

    def webhook_key_text(self) -> str:
        """$MAPWATCH_WEBHOOK_KEY as given (store.secret_box decodes it); a secret."""
        return self.raw("MAPWATCH_WEBHOOK_KEY")

    # -- the open scholarly sources (docs/enrichment.md) ------------------------------------

    def enrich_sources(self) -> tuple[str, ...]:
        """The sources enrichment asks: $MAPWATCH_ENRICH, comma-separated names of
        `ENRICH_SOURCES` (any case, any order: asked in that order), or `off` (none);
        unset: all three."""
        sources: tuple[str, ...] = self.value("MAPWATCH_ENRICH")
        return sources

    def source_apis(self) -> dict[str, str]:
        """Each source's base URL: $MAPWATCH_ARXIV_API, $MAPWATCH_OPENALEX_API, $MAPWATCH_S2_API
        (an http(s) address with a host; a trailing slash dropped), else the source's own."""
        return {"arxiv": self.value("MAPWATCH_ARXIV_API"), "openalex": self.value("MAPWATCH_OPENALEX_API"),
                "s2": self.value("MAPWATCH_S2_API")}

    def s2_api_key(self) -> str | None:
        """The Semantic Scholar API key: only from $MAPWATCH_S2_KEY; a secret like the bot's
        token, sent in the `x-api-key` header alone, never logged, echoed or stored."""
        key: str | None = self.value("MAPWATCH_S2_KEY")
        return key

    def source_citations(self) -> SourceCitationsMode:
        """$MAPWATCH_SOURCE_CITATIONS: `include` (default), `omit` or `off` (docs/enrichment.md,
        "Citations the map does not name")."""
        mode: SourceCitationsMode = self.value("MAPWATCH_SOURCE_CITATIONS")
        return mode

    def beyond_arxiv(self) -> BeyondArxivMode:
        """$MAPWATCH_BEYOND_ARXIV: `include` (default) or `off` (docs/enrichment.md, "Citers beyond arXiv")."""
        mode: BeyondArxivMode = self.value("MAPWATCH_BEYOND_ARXIV")
        return mode

    def source_settings(self) -> SourceSettings:
        """$MAPWATCH_ENRICH's sources and $MAPWATCH_SOURCE_CITATIONS together, as `/why` reports them."""
        return SourceSettings(self.enrich_sources(), self.source_citations())

    def contact_address(self) -> str | None:
        """$MAPWATCH_CONTACT: the e-mail address the sources' polite pools ask for (it goes
        into the User-Agent and OpenAlex's `mailto`); None when unset."""
        address: str | None = self.value("MAPWATCH_CONTACT")
        return address

    def log_format_name(self) -> str:
        """$MAPWATCH_LOG_FORMAT (text or json; unset: text); anything else is a usage error."""
        return str(self.value("MAPWATCH_LOG_FORMAT"))

    def log_level_name(self) -> str:
        """$MAPWATCH_LOG_LEVEL (any case), else INFO."""
        return str(self.value("MAPWATCH_LOG_LEVEL"))

    def secret_values(self) -> list[tuple[str, str]]:
        """(variable, value stripped) of each secret of the table that is set, in table order."""
        return [(name, self.raw(name).strip()) for name in SECRETS if self.raw(name).strip()]


def of_command(args: object) -> Environment:
    """The Environment `mapwatch` read at start and handed to the command in its parsed
    arguments (mapwatch.cli.main sets `args.environment`): the command layer's values are
    passed in, not looked up."""
    env = getattr(args, "environment", None)
    if not isinstance(env, Environment):
        raise TypeError("the command's arguments carry no environment (mapwatch.cli.main sets it)")
    return env


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
