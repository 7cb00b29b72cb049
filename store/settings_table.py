"""The declared table of settings: every environment variable mapwatch takes, one `Setting` each.

Each entry names the variable, the parser that checks its raw value ("" when unset) and
returns what to use, the default as docs/configuration.md states it, what the variable
means, and whether its value is a secret. The table is the single source: store.environment
reads exactly these variables (one pass) and parses each through its entry when a command
asks for it, and docs/configuration.md's table is generated from it (docs/gen/settings_reference.py,
checked by cog and tests/unit/test_docs.py).

Why here, at the bottom of store/: the layer rule (mapwatch/layers.py) is store <
feeds < bot < the entry package, and no layer may import the entry package, while the
database's path, the busy timeout, a tick's deadline and background priority are read inside
store/. The one place every layer may import is store's top level, below its subpackages; this
module imports only store.settings and store.errors (pure checks). Parsing is lazy and per
setting: a bad value is a usage error (BadSetting: exit 2, one line naming the variable) of the
commands that ask for that setting, and of no other. A secret's value never appears in an
error line (the parsers say so instead) nor in a log line (mapwatch.log_format hides every
`secret` value).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, get_args

from mapwatch.store import settings
from mapwatch.store.errors import BadSetting

DEFAULT_DB = "mapwatch.db"
DEFAULT_PORT = 8080
DEFAULT_HOST = "127.0.0.1"  # where `serve` and `run` listen by default (`--host`)
DEFAULT_FEEDS_DIR = "public"
DEFAULT_BUSY_TIMEOUT_MS = 10_000
DEFAULT_DB_CACHE_MIB = 16  # SQLite's page cache a connection keeps (SQLite's own default: 2 MiB)
MAX_DB_CACHE_MIB = 4096
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
class Setting:
    """One environment variable: `parse(raw)` checks the raw value ("" when unset) and returns
    the value to use (None where the caller's own default applies), or raises BadSetting."""

    name: str  # the variable, e.g. MAPWATCH_DB
    parse: Callable[[str], Any]
    default: str  # as the docs state it (Markdown)
    doc: str  # what it means (Markdown)
    secret: bool = False  # never in an error line or a log line


# -- the parsers: raw text in, the value out (or BadSetting naming the variable) ----------------

def _text(raw: str) -> str:
    return raw


def _database(raw: str) -> str:
    return raw or DEFAULT_DB


def _seconds_within(raw: str, name: str, high: float, *, zero_ok: bool) -> float:
    """Seconds from 0 (or more than 0) to `high`; NaN and infinities refused."""
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not ((value >= 0) if zero_ok else (value > 0)) or not value <= high:  # NaN fails every comparison
        most = int(high) if high == int(high) else high  # 2592000, not 2.592e+06
        bounds = f"0 to {most}" if zero_ok else f"more than 0, at most {most}"
        raise BadSetting(f"{name} must be seconds ({bounds}), not {raw!r}")
    return value


def _busy_timeout_ms(raw: str) -> int:
    raw = raw.strip()
    if not raw:
        return DEFAULT_BUSY_TIMEOUT_MS
    return int(_seconds_within(raw, "$MAPWATCH_BUSY_TIMEOUT", 86_400, zero_ok=True) * 1000)


def _whole_number(raw: str, name: str, low: int, high: int, what: str = "a whole number") -> int:
    """A whole number from `low` to `high` (raw text, stripped), else BadSetting naming `name`."""
    try:
        value = int(raw)
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise BadSetting(f"{name} must be {what} from {low} to {high}, not {raw!r}")
    return value


def _db_cache_mib(raw: str) -> int:
    raw = raw.strip()
    return _whole_number(raw, "$MAPWATCH_DB_CACHE_MIB", 1, MAX_DB_CACHE_MIB, "a whole number of MiB") if raw \
        else DEFAULT_DB_CACHE_MIB


def _source(raw: str) -> str | None:
    return settings.http_source(raw, "$MAPWATCH_SOURCE") if raw else None


def _feeds_folder(raw: str) -> str:
    return settings.out_folder(raw or DEFAULT_FEEDS_DIR, "$MAPWATCH_FEEDS_DIR")


def _base_url(raw: str) -> str | None:
    url = raw.strip()
    return settings.base_url(url, "$MAPWATCH_BASE_URL") if url else None


def _port(raw: str) -> int:
    return settings.port(raw or DEFAULT_PORT, "$PORT")


def _refresh(raw: str) -> str | None:
    return raw or None  # parsed by mapwatch.service.schedule.parse_schedule (None: its default)


def _seconds(name: str, high: float, *, zero_ok: bool, default: float | None) -> Callable[[str], float | None]:
    """The parser of a setting in seconds (`_seconds_within`), `default` when it is empty."""
    def parse(raw: str) -> float | None:
        raw = raw.strip()
        return _seconds_within(raw, name, high, zero_ok=zero_ok) if raw else default
    return parse


DEFAULT_BEFORE_ALERTS = 30.0  # seconds: 300 new citers at arXiv's one request every 3 s
DEFAULT_RANKS_WHOLE_EVERY = 86_400.0  # seconds: a pushed direction's ranks computed whole again daily
_tick_deadline = _seconds("$MAPWATCH_TICK_DEADLINE", 86_400, zero_ok=False, default=DEFAULT_TICK_DEADLINE)
_ranks_whole_every = _seconds("$MAPWATCH_RANKS_WHOLE_EVERY", 30 * 86_400, zero_ok=True,
                              default=DEFAULT_RANKS_WHOLE_EVERY)
_before_alerts = _seconds("$MAPWATCH_BEFORE_ALERTS", 600, zero_ok=True, default=DEFAULT_BEFORE_ALERTS)
_header_timeout = _seconds("$MAPWATCH_HEADER_TIMEOUT", 3600, zero_ok=False, default=None)


def _max_connections(raw: str) -> int | None:
    raw = raw.strip()
    if raw and not (raw.isdigit() and int(raw) >= 1):
        raise BadSetting(f"$MAPWATCH_MAX_CONNECTIONS must be a whole number of at least 1, not {raw!r}")
    return int(raw) if raw else None


def _not_found_burst(raw: str) -> int | None:
    raw = raw.strip()
    if raw and not raw.isdigit():
        raise BadSetting(f"$MAPWATCH_NOT_FOUND_BURST must be a whole number (0: no bound), not {raw!r}")
    return int(raw) if raw else None


def _nice(raw: str) -> int | None:
    raw = raw.strip()
    return _whole_number(raw, "$MAPWATCH_BACKGROUND_NICE", 0, MAX_NICE) if raw else None


def _alert_interval(raw: str) -> float:
    raw = raw.strip()
    if not raw:
        return DEFAULT_ALERT_INTERVAL
    return min(60.0, max(0.2, settings.seconds(raw, "$MAPWATCH_ALERT_INTERVAL", 0.0, 86_400.0)))


def _log_level(raw: str) -> str:
    level = raw.strip().upper() or "INFO"
    if level not in logging.getLevelNamesMapping() or level == "NOTSET":
        raise BadSetting(f"$MAPWATCH_LOG_LEVEL must be DEBUG, INFO, WARNING, ERROR or CRITICAL, not {raw!r}")
    return level


def _token(raw: str) -> str | None:
    return raw.strip() or None  # never logged, echoed or stored


def _discord_api(raw: str) -> str | None:
    return settings.endpoint_url(raw, "$MAPWATCH_DISCORD_API") if raw else None


def _discord_gateway(raw: str) -> str | None:
    return settings.endpoint_url(raw, "$MAPWATCH_DISCORD_GATEWAY", websocket=True) if raw else None


def _shards(raw: str) -> int | None:
    raw = raw.strip()
    if not raw:
        return None
    if not raw.isdigit():
        raise BadSetting(f"$MAPWATCH_SHARDS must be a whole number of shards (1 to {MAX_SHARDS:,}), not {raw!r}")
    return settings.bounded_int(int(raw), "$MAPWATCH_SHARDS", 1, MAX_SHARDS)


def _log_format(raw: str) -> str:
    name = raw.strip().lower() or "text"
    if name not in LOG_FORMATS:
        raise BadSetting(f"$MAPWATCH_LOG_FORMAT must be text or json, not {raw!r}")
    return name


def _replica(raw: str) -> str | None:
    return settings.replica(raw, "$MAPWATCH_REPLICA") if raw.strip() else None


def _slack_webhooks(raw: str) -> str:
    return settings.webhook_base(raw, "$MAPWATCH_SLACK_WEBHOOKS") if raw else ""


def _admin_listen(raw: str) -> tuple[str, int] | None:
    return settings.listen_address(raw, "$MAPWATCH_ADMIN_LISTEN") if raw else None


def _enrich(raw: str) -> tuple[str, ...]:
    text = raw.strip().lower() or DEFAULT_ENRICH
    if text in ("off", "none"):
        return ()
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in ENRICH_SOURCES]
    if unknown or not names:
        raise BadSetting(f"$MAPWATCH_ENRICH must be off or sources from {','.join(ENRICH_SOURCES)} separated "
                         f"by commas, not {settings.shown(raw)}")
    return tuple(n for n in ENRICH_SOURCES if n in names)


def _api(name: str, default: str) -> Callable[[str], str]:
    def parse(raw: str) -> str:
        return settings.api_base(raw.strip(), name) if raw.strip() else default
    return parse


def _s2_key(raw: str) -> str | None:
    key = raw.strip()
    if key and not key.isprintable():
        raise BadSetting("$MAPWATCH_S2_KEY must be printable characters (the key itself is not shown)")
    return key or None


SourceCitationsMode = Literal["include", "omit", "off"]  # $MAPWATCH_SOURCE_CITATIONS
SOURCE_CITATIONS: tuple[SourceCitationsMode, ...] = get_args(SourceCitationsMode)


def _source_citations(raw: str) -> SourceCitationsMode:
    text = raw.strip().lower() or "include"
    if text not in SOURCE_CITATIONS:
        raise BadSetting(f"$MAPWATCH_SOURCE_CITATIONS must be include, omit or off, not {settings.shown(raw)}")
    return text


BeyondArxivMode = Literal["include", "off"]  # $MAPWATCH_BEYOND_ARXIV
BEYOND_ARXIV: tuple[BeyondArxivMode, ...] = get_args(BeyondArxivMode)


def _beyond_arxiv(raw: str) -> BeyondArxivMode:
    text = raw.strip().lower() or "include"
    if text not in BEYOND_ARXIV:
        raise BadSetting(f"$MAPWATCH_BEYOND_ARXIV must be include or off, not {settings.shown(raw)}")
    return text


@dataclass(frozen=True)
class SourceSettings:
    """What a process was told of the open sources (docs/enrichment.md): the sources it asks
    ($MAPWATCH_ENRICH: none when `off`) and what becomes of the citations only they name
    ($MAPWATCH_SOURCE_CITATIONS). `/why` says so when a citation is missing."""

    sources: tuple[str, ...] = ENRICH_SOURCES
    citations: SourceCitationsMode = "include"


def _contact(raw: str) -> str | None:
    raw = raw.strip()
    return settings.email(raw, "$MAPWATCH_CONTACT") if raw else None


# -- the table, in docs/configuration.md's order ----------------------------------------------

SETTINGS: tuple[Setting, ...] = (
    Setting("MAPWATCH_DB", _database, "`./mapwatch.db`", "the SQLite database file"),
    Setting("DISCORD_TOKEN", _token, "unset",
            "the bot's token; without it `mapwatch run` runs everything but the bot", secret=True),
    Setting("MAPWATCH_ALERT_INTERVAL", _alert_interval, "`30`",
            "seconds between checks of the event log for alerts (at most 60)"),
    Setting("MAPWATCH_DISCORD_API", _discord_api, "Discord's",
            "REST base of a Discord-compatible API (self-hosted, tests), e.g. `http://127.0.0.1:8080/api/v10`"),
    Setting("MAPWATCH_DISCORD_GATEWAY", _discord_gateway, "Discord's",
            "gateway URL of that server, e.g. `ws://127.0.0.1:8080/ws`"),
    Setting("MAPWATCH_SLACK_WEBHOOKS", _slack_webhooks, "unset",
            "a Slack-compatible incoming-webhook base accepted besides `https://hooks.slack.com/services` "
            "(tests, self-hosted), e.g. `http://127.0.0.1:9000/services`"),
    Setting("MAPWATCH_WEBHOOK_KEY", _text, "the file `<database>.webhook-key`",
            "the key that seals webhook URLs (44 characters of base64; `mapwatch webhook key` prints the "
            "database's): set it where the service's secrets live, so a database restored from its replica "
            "keeps its webhooks ([Operations](operations.md#webhooks-and-their-key))", secret=True),
    Setting("MAPWATCH_SOURCE", _source, "the bundled seeds",
            "where `refresh` and `run` read pages: a folder or the map's URL"),
    Setting("MAPWATCH_REFRESH", _refresh, "`1h`",
            "how often `run` refreshes: an interval (`1h`, `30m`, `90s`, `1h30m`, `2d`) or a 5-field cron "
            "expression in UTC (`0 */6 * * *`)"),
    Setting("MAPWATCH_FEEDS_DIR", _feeds_folder, "`./public`", "the folder feeds are published to (`--out`)"),
    Setting("MAPWATCH_BASE_URL", _base_url,
            "`http://<host>:<port>` for `serve` and `run`; `http://127.0.0.1:8080` for `refresh` and `publish`, "
            "and for `ask` (with `$PORT`'s port when set)",
            "the public address of the feeds, used in their links and the bot's (`--base-url`)"),
    Setting("PORT", _port, "`8080`", "the port `serve` and `run` listen on (`--port`)"),
    Setting("MAPWATCH_BUSY_TIMEOUT", _busy_timeout_ms, "`10`",
            "seconds a command waits for another process's write lock before it fails with \"database is "
            "locked\" (exit 1)"),
    Setting("MAPWATCH_DB_CACHE_MIB", _db_cache_mib, f"`{DEFAULT_DB_CACHE_MIB}`",
            "MiB of database pages each connection keeps in memory (SQLite's page cache; SQLite's own "
            "default is 2). Every lookup reads the upper levels of the big indexes again; at 1,000,000 papers "
            "16 MiB keeps more of them, and a command reads a third fewer pages. The bot keeps a connection "
            "for each of its worker threads, so its memory can grow by about this much times their number"),
    Setting("MAPWATCH_BACKGROUND_NICE", _nice, "`10` for `run`; unset (normal priority) for `ingest` and `refresh`",
            "how many steps (0-19, as `nice`) lower the CPU priority of background work is, so the bot's "
            "answers come first on a busy machine: `run`'s refresh and publish thread, and `ingest` and "
            "`refresh` run from the shell when it is set (their parse workers inherit it, and always run 5 "
            "steps lower than the process that started them); 0 leaves it alone"),
    Setting("MAPWATCH_TICK_DEADLINE", _tick_deadline, "`1800` (30 minutes)",
            "seconds a refresh tick's HTTP crawl may take (`refresh` and each tick of `run`); pages not done "
            "by then, queued or waiting on a `Retry-After` or `Crawl-delay`, are left for the next tick "
            "(stored batches kept)"),
    Setting("MAPWATCH_RANKS_WHOLE_EVERY", _ranks_whole_every, "`86400` (a day)",
            "seconds after which a direction whose PageRank a tick updates by a push from what changed is "
            "computed whole again instead (`refresh` and each tick of `run`; at most 30 days); `0` computes "
            "every changed direction whole, as before pushes ([Graph questions](graph.md#direction-ranks-updated-"
            "by-a-push))"),
    Setting("MAPWATCH_HEADER_TIMEOUT", _header_timeout, "`20`",
            "seconds `serve` and `run` give a connection to send a whole request line and headers (and an "
            "idle keep-alive connection before its next request) before closing it"),
    Setting("MAPWATCH_MAX_CONNECTIONS", _max_connections, "`4096`",
            "connections `serve` and `run` keep open at most (lowered to leave 256 file descriptors, at most "
            "half, below `RLIMIT_NOFILE`); at the cap a new connection closes the oldest one not being "
            "answered, or gets `503` when all are"),
    Setting("MAPWATCH_NOT_FOUND_BURST", _not_found_burst, "`100`",
            "how many `404`s one client (a peer address; an IPv6 one by its /64) may have from `serve` and `run` "
            "at once, then one more a second; past that, every address that needs a lookup (a feed or page "
            "built on demand, a team's, a person's, a paper's) is answered `429` with `Retry-After` until it may "
            "again, while the published files answer as always (addresses cannot be guessed at speed: "
            "[Feeds](feeds.md#addresses-not-found-bounded)); "
            "`0` sets no bound, for a server behind a reverse proxy that bounds its clients itself"),
    Setting("MAPWATCH_REPLICA", _replica, "unset: no replica",
            "the Litestream replica URL (`file:///path`, `s3://…`, `sftp://…`; read by the shipped "
            "`litestream.yml` too): `mapwatch replica` and `/healthz` report its lag, and checkpoints are "
            "left to Litestream ([Operations](operations.md#replication-litestream))"),
    Setting("MAPWATCH_ADMIN_LISTEN", _admin_listen, "unset: on the public port",
            "`HOST:PORT` (e.g. `127.0.0.1:9100`) where `run` serves `/healthz` and `/metrics` (and `serve` "
            "`/metrics`) instead of the public port, which then answers 404 for them: for monitoring that "
            "should not be public"),
    Setting("MAPWATCH_LOG_LEVEL", _log_level, "`INFO`",
            "log level of `serve` and `run` (`DEBUG`, `INFO`, `WARNING`, ...); the token is never logged"),
    Setting("MAPWATCH_LOG_FORMAT", _log_format, "`text`",
            "log lines of `serve` and `run`: `text`, or `json` (one object a line for log shippers; "
            "[Operations](operations.md))"),
    Setting("MAPWATCH_SHARDS", _shards, "Discord's recommendation",
            "gateway shards of the bot (1 to 4096; [Operations](operations.md#shards))"),
    Setting("MAPWATCH_ENRICH", _enrich, "`arxiv,openalex,s2`",
            "the open scholarly sources `run` (after each refresh) and `enrich` ask: `arxiv`, `openalex`, "
            "`s2`, comma-separated, or `off` ([Enrichment](enrichment.md)); `/why` (in the bot and `ask`) "
            "reports them"),
    Setting("MAPWATCH_BEFORE_ALERTS", _before_alerts, "`30`",
            "seconds a tick of `run` gives the sources to describe its new citers before their alerts go out "
            "(at most 600; `0`: alerts at once, edited when the authors come; "
            "[Enrichment](enrichment.md#before-the-alerts))"),
    Setting("MAPWATCH_CONTACT", _contact, "unset (the common pools)",
            "the e-mail address the sources' polite pools ask for: in the User-Agent, and OpenAlex's `mailto`"),
    Setting("MAPWATCH_ARXIV_API", _api("$MAPWATCH_ARXIV_API", DEFAULT_ARXIV_API), f"`{DEFAULT_ARXIV_API}`",
            "the base URL of arXiv's API (a mirror, tests)"),
    Setting("MAPWATCH_OPENALEX_API", _api("$MAPWATCH_OPENALEX_API", DEFAULT_OPENALEX_API),
            f"`{DEFAULT_OPENALEX_API}`", "the base URL of OpenAlex's API"),
    Setting("MAPWATCH_S2_API", _api("$MAPWATCH_S2_API", DEFAULT_S2_API), f"`{DEFAULT_S2_API}`",
            "the base URL of Semantic Scholar's Graph API"),
    Setting("MAPWATCH_S2_KEY", _s2_key, "unset (the shared public rate)",
            "a Semantic Scholar API key (a secret like the token: sent in the `x-api-key` header only, never "
            "logged, shown or stored)", secret=True),
    Setting("MAPWATCH_SOURCE_CITATIONS", _source_citations, "`include`",
            "citations only an open source names (no map page does): `include` them in feeds and alerts, marked "
            "with their source; `omit` them until a map page names them (still stored); `off`: do not ask the "
            "sources for citers ([Enrichment](enrichment.md#citations-the-map-does-not-name))"),
    Setting("MAPWATCH_BEYOND_ARXIV", _beyond_arxiv, "`include`",
            "citers without an arXiv id (journal and conference papers OpenAlex lists as citing a tracked, team or "
            "followed paper), keyed by DOI: `include` them as citers, `off` to leave them out "
            "([Enrichment](enrichment.md#citers-beyond-arxiv))"),
)

BY_NAME: dict[str, Setting] = {s.name: s for s in SETTINGS}
NAMES: tuple[str, ...] = tuple(BY_NAME)  # every variable mapwatch reads
SECRETS: tuple[str, ...] = tuple(s.name for s in SETTINGS if s.secret)
