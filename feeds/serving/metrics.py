"""`GET /metrics` of the feed server: Prometheus metrics in the text exposition format
(prometheus_client; docs/operations.md, "Metrics").

Each process (and each test server) has its own `Metrics` with its own `CollectorRegistry`,
not the library's global one, so several servers run in one process without their series
mixing. Counters are moved where things happen (the scheduler's ticks, the feed server's
requests, on-demand builds, the bot's deliveries and Discord's rate limits, the enrichment
rounds); what is a state (the bot and its shards, the database's size, the last good refresh,
the replica's lag) is read when scraped. No label carries an id: kinds, outcomes, status codes
and the names of the scholarly sources only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.registry import Collector

if TYPE_CHECKING:
    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.tick_report import TickResult
    from mapwatch.store.scholarly.enrich import RoundReport

log = logging.getLogger(__name__)

PATH = "/metrics"
CONTENT_TYPE = CONTENT_TYPE_LATEST
DELIVERY_KINDS = ("track", "follow", "digest")
DELIVERY_OUTCOMES = ("sent", "failed", "retried")
REQUEST_KINDS = ("feed", "page", "other")
TICK_BUCKETS = (0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1200, 1800, float("inf"))
_FEED_SUFFIXES = (".xml", ".atom", ".opml")
_PAGE_SUFFIXES = (".html", "/")


def request_kind(path: str) -> str:
    """feed (Atom, OPML), page (HTML) or other (charts, stylesheets, /healthz...)."""
    if path.endswith(_FEED_SUFFIXES):
        return "feed"
    if path.endswith(_PAGE_SUFFIXES):
        return "page"
    return "other"


def configured_replica_lag(db_path: str | Path, url: str | None) -> Callable[[], float | None] | None:
    """The lag of the database's Litestream replica at `url` ($MAPWATCH_REPLICA;
    store.database.replica), or None when no replica is configured (docs/operations.md)."""
    import time

    from mapwatch.store.database.replica import replica_status

    if url is None:
        return None

    def lag() -> float | None:
        status = replica_status(db_path, url, time.time())
        return status.lag_seconds if status is not None else None

    return lag


class Metrics:
    """The process's metrics; `render()` is the /metrics body. `db_path`: the database whose
    size is shown (None: none); `replica_lag`: its replica's lag in seconds (None: no such
    series; `configured_replica_lag` makes it from $MAPWATCH_REPLICA's value)."""

    def __init__(self, db_path: str | Path | None = None, health: Health | None = None, *,
                 replica_lag: Callable[[], float | None] | None = None) -> None:
        self.registry = r = CollectorRegistry(auto_describe=True)
        self.ticks = Counter("mapwatch_refresh_ticks", "Refresh ticks run, by outcome (ok, failed)",
                             ["outcome"], registry=r)
        self.tick_seconds = Histogram("mapwatch_refresh_duration_seconds",
                                      "How long a refresh tick took (refresh, publish, after-refresh steps)",
                                      buckets=TICK_BUCKETS, registry=r)
        self.pages_fetched = Counter("mapwatch_pages_fetched", "Map pages read (files, HTTP 200s and 304s)",
                                     registry=r)
        self.pages_stored = Counter("mapwatch_pages_stored", "Map pages stored (new or changed)", registry=r)
        self.pages_rejected = Counter("mapwatch_pages_rejected", "Map pages rejected (ingest_errors)", registry=r)
        self.pages_unchanged = Counter("mapwatch_pages_unchanged", "Map pages unchanged (304, same bytes)",
                                       registry=r)
        self.pages_failed = Counter("mapwatch_pages_failed", "Map pages that could not be fetched", registry=r)
        self.source_responses = Counter("mapwatch_source_responses",
                                        "HTTP responses of the map's site, by status code "
                                        "(uncommon codes by class, e.g. 4xx)", ["code"], registry=r)
        self.source_requests = Counter("mapwatch_source_requests", "HTTP requests sent to the map's site",
                                       registry=r)
        self.sitemap_urls = Counter("mapwatch_sitemap_urls_seen", "Paper URLs the sitemaps listed, summed over ticks",
                                    registry=r)
        self.sitemap_changed = Counter("mapwatch_sitemap_urls_changed",
                                       "Sitemap URLs newer than their last check, summed over ticks", registry=r)
        self.sitemap_vouched = Counter("mapwatch_sitemap_urls_vouched",
                                       "Pages due that a believed sitemap lastmod said had not changed: not "
                                       "requested, summed over ticks", registry=r)
        self.requests = Counter("mapwatch_http_requests", "Requests to the feed server, by kind (feed, page, other)",
                                ["kind"], registry=r)
        self.not_modified = Counter("mapwatch_http_not_modified",
                                    "Requests to the feed server answered 304 Not Modified, by kind", ["kind"],
                                    registry=r)
        self.builds = Counter("mapwatch_ondemand_builds", "Paper files built on demand (feed, page, chart)",
                              ["kind"], registry=r)
        self.deliveries = Counter("mapwatch_deliveries", "Discord deliveries by kind (track, follow, digest) "
                                  "and outcome (sent, failed, retried)", ["kind", "outcome"], registry=r)
        self.rate_limits = Counter("mapwatch_discord_rate_limit_waits", "Times Discord answered 429 and the bot "
                                   "waited", registry=r)
        self.rate_limit_seconds = Counter("mapwatch_discord_rate_limit_wait_seconds",
                                          "Seconds Discord asked the bot to wait (429s)", registry=r)
        self.last_success = Gauge("mapwatch_last_refresh_success_timestamp_seconds",
                                  "When the last refresh tick that did not fail ended (Unix time)", registry=r)
        self.enrich_rounds = Counter("mapwatch_enrichment_rounds", "Enrichment rounds run, by outcome (ok; failed: "
                                     "the round itself raised)", ["outcome"], registry=r)
        self.enrich_failures = Counter("mapwatch_enrichment_failures",
                                       "Enrichment rounds in which a source was down, answered badly or reached a "
                                       "bound of what it may add, by source and kind (down, bad_answer, bound)",
                                       ["source", "kind"], registry=r)
        self.enrich_last_success = Gauge("mapwatch_enrichment_last_success_timestamp_seconds",
                                         "When each source's last round that read every answer ended (Unix time; "
                                         "0: none yet in this process)", ["source"], registry=r)
        self.enrich_due = Gauge("mapwatch_enrichment_papers_due", "Papers due for each source when the last "
                                "enrichment round began (at most its limit a round)", ["source"], registry=r)
        self.enrich_seconds: Gauge | None = None  # registered once enrichment runs (watch_enrichment)
        # every series from the start (rate() needs the zero); the children kept: a label lookup
        # per request cost 10 us, the kept child's inc() well under that
        self._requests = {kind: self.requests.labels(kind) for kind in REQUEST_KINDS}
        self._not_modified = {kind: self.not_modified.labels(kind) for kind in REQUEST_KINDS}
        for kind in DELIVERY_KINDS:
            for outcome in DELIVERY_OUTCOMES:
                self.deliveries.labels(kind, outcome)
        for outcome in ("ok", "failed"):
            self.ticks.labels(outcome)
        self.state = _StateCollector(db_path, health, replica_lag)
        r.register(self.state)

    @property
    def health(self) -> Health | None:
        return self.state.health

    # --- moved where things happen -----------------------------------------------------

    def tick_done(self, result: TickResult, seconds: float) -> None:
        """A refresh tick ended; its report's figures are added."""
        self.ticks.labels("ok").inc()
        self.tick_seconds.observe(seconds)
        self.last_success.set(time.time())
        r = result.refresh
        self.pages_fetched.inc(r.pages_read)
        self.pages_stored.inc(r.stored)
        self.pages_rejected.inc(r.rejected_count)
        self.pages_unchanged.inc(r.unchanged)
        self.pages_failed.inc(max(r.failed_total, len(r.failed)))
        self.source_requests.inc(r.requests or 0)
        if (crawl := r.crawl) is not None:
            self.sitemap_urls.inc(crawl.sitemap_pages)
            self.sitemap_changed.inc(crawl.sitemap_changed)
            self.sitemap_vouched.inc(crawl.vouched)
            for code, n in crawl.statuses.items():
                self.source_responses.labels(code).inc(n)

    def tick_failed(self, seconds: float) -> None:
        self.ticks.labels("failed").inc()
        self.tick_seconds.observe(seconds)

    def watch_enrichment(self, sources: Iterable[str]) -> Gauge:
        """Enrichment runs in this process, from `sources`: their series, at zero, from now on.
        Returns the gauge of the last round's duration."""
        from mapwatch.store.scholarly.enrich import FAILURE_KINDS

        if self.enrich_seconds is None:
            self.enrich_seconds = Gauge("mapwatch_enrichment_round_duration_seconds",
                                        "How long the last enrichment round took", registry=self.registry)
        for outcome in ("ok", "failed"):
            self.enrich_rounds.labels(outcome)
        for source in sources:
            self.enrich_last_success.labels(source)
            self.enrich_due.labels(source)
            for kind in FAILURE_KINDS:
                self.enrich_failures.labels(source, kind)
        return self.enrich_seconds

    def enriched(self, report: RoundReport, seconds: float, at: float) -> None:
        """An enrichment round ended at `at` (Unix time): its sources' figures."""
        self.watch_enrichment(report.sources).set(seconds)
        self.enrich_rounds.labels("ok").inc()
        for source, r in report.sources.items():
            self.enrich_due.labels(source).set(r.due)
            for kind in r.failures():
                self.enrich_failures.labels(source, kind).inc()
            if r.outcome == "ok":
                self.enrich_last_success.labels(source).set(at)

    def enrich_failed(self, seconds: float) -> None:
        """An enrichment round raised (a bug, the database)."""
        self.watch_enrichment(()).set(seconds)
        self.enrich_rounds.labels("failed").inc()

    def request(self, path: str, status: int) -> None:
        kind = request_kind(path)
        self._requests[kind].inc()
        if status == 304:
            self._not_modified[kind].inc()

    def built(self, kind: str) -> None:
        self.builds.labels(kind).inc()

    def delivery(self, kind: str, outcome: str) -> None:
        """`outcome`: a bot.sending.outcomes.Sent status (ok, retry, refused, gone, forbidden) or sent,
        failed, retried."""
        named = {"ok": "sent", "retry": "retried"}.get(outcome, outcome)
        self.deliveries.labels(kind, named if named in DELIVERY_OUTCOMES else "failed").inc()

    def rate_limited(self, seconds: float) -> None:
        self.rate_limits.inc()
        self.rate_limit_seconds.inc(max(0.0, seconds))

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _StateCollector(Collector):
    """What is read when scraped: the bot's state and its shards', the database's size on
    disk, the replica's lag."""

    def __init__(self, db_path: str | Path | None, health: Health | None,
                 replica_lag: Callable[[], float | None] | None) -> None:
        self.db_path = db_path
        self.health = health
        self.replica_lag = replica_lag

    def describe(self) -> Iterable[Metric]:
        return []  # collected at scrape time only

    def collect(self) -> Iterator[Metric]:
        yield from self._bot()
        size = database_size(self.db_path)
        if size is not None:
            g = GaugeMetricFamily("mapwatch_database_size_bytes", "The database file and its WAL on disk")
            g.add_metric([], size)
            yield g
        lag = self._lag()
        if lag is not None:
            g = GaugeMetricFamily("mapwatch_replica_lag_seconds", "How far the replica is behind the database")
            g.add_metric([], lag)
            yield g

    def _lag(self) -> float | None:
        if self.replica_lag is None:
            return None
        try:
            return self.replica_lag()
        except Exception as e:  # a scrape never fails on it: the series is left out
            log.warning("replica lag unknown: %s: %s", type(e).__name__, e)
            return None

    def _bot(self) -> Iterator[Metric]:
        from mapwatch.feeds.serving.health import BOT_STATES

        if self.health is None:
            return
        state = self.health.bot()["state"]
        g = GaugeMetricFamily("mapwatch_bot_state", "The Discord bot's state (1: the one it is in)",
                              labels=["state"])
        for s in BOT_STATES:
            g.add_metric([s], 1.0 if s == state else 0.0)
        yield g
        shards = self.health.shards()
        if not shards:
            return
        up = GaugeMetricFamily("mapwatch_shard_up", "Whether each gateway shard is connected", labels=["shard"])
        latency = GaugeMetricFamily("mapwatch_shard_latency_seconds",
                                    "Each shard's last heartbeat round trip", labels=["shard"])
        for shard in shards:
            up.add_metric([str(shard["id"])], 1.0 if shard["state"] == "connected" else 0.0)
            if shard["latency_seconds"] is not None:
                latency.add_metric([str(shard["id"])], float(shard["latency_seconds"]))
        yield up
        yield latency


def database_size(db_path: str | Path | None) -> int | None:
    """The database file and its WAL, in bytes (None: no database given, or no such file)."""
    if db_path is None:
        return None
    size = _file_size(Path(db_path))
    # The WAL comes and goes (the last connection to close removes it): read once, never checked first.
    return None if size is None else size + (_file_size(Path(f"{db_path}-wal")) or 0)


def _file_size(path: Path) -> int | None:
    try:
        return path.stat().st_size
    except OSError:
        return None


class RateLimitLog(logging.Filter):
    """Counts discord.py's 429 waits from its own log line ("We are being rate limited. ...
    Retrying in N seconds.", logger discord.http): discord.py waits and retries inside its
    HTTP client, and says so only there. A filter on that logger: when the log level is above
    WARNING the logger is opened to WARNING for this count, and what the level would have
    hidden is still dropped."""

    def __init__(self, metrics: Metrics) -> None:
        super().__init__()
        self.metrics = metrics
        self.logger = logging.getLogger("discord.http")
        self.shown_from = logging.NOTSET
        self.level_before: int | None = None

    def filter(self, record: logging.LogRecord) -> bool:
        msg = str(record.msg)
        if msg.startswith("We are being rate limited") and "Retrying in" in msg:
            args: Any = record.args
            last = args[-1] if isinstance(args, tuple) and args else None
            self.metrics.rate_limited(float(last) if isinstance(last, int | float) else 0.0)
        return record.levelno >= self.shown_from

    def install(self) -> RateLimitLog:
        self.shown_from = self.logger.getEffectiveLevel()
        if self.shown_from > logging.WARNING:
            self.level_before = self.logger.level
            self.logger.setLevel(logging.WARNING)
        self.logger.addFilter(self)
        return self

    def uninstall(self) -> None:
        self.logger.removeFilter(self)
        if self.level_before is not None:
            self.logger.setLevel(self.level_before)
            self.level_before = None
