"""`GET /healthz` of the feed server: is mapwatch well, for a platform's health check and
for people (docs/configuration.md, "Deployment").

What only this process knows is kept here, in `Health`: the outcome of the last refresh
ticks (the scheduler reports each one, errors included: a failed tick stores nothing in
the database), when the next tick is due, and the bot's state (`bot/supervisor.py` reports it).
The rest is read from the database, in a worker thread, read-only, with a short busy
timeout, and within `DB_TIMEOUT` seconds: the event loop never waits on SQLite.

Answers 200 with JSON, or 503 when the database cannot be read or the last
`FAILED_REFRESHES` refreshes all failed; "degraded" (200) while a configured Litestream
replica ($MAPWATCH_REPLICA) is not current (store/database/replica.py), or while enrichment
is (`EnrichmentWatch`: a source failing `ENRICH_FAILED_ROUNDS` rounds in a row, or failing
with no good round for `ENRICH_STALE`; the last round raising). Enrichment is never a 503:
the map, the feeds and the alerts go on without it, and a restart would not bring a source
back (docs/operations.md, "Enrichment's health").
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from mapwatch.store.clock import iso, utc_now
from mapwatch.store.database.replica import replica_status
from mapwatch.store.database.rows import scalar

if TYPE_CHECKING:
    from mapwatch.store.scholarly.enrich import RoundReport

FAILED_REFRESHES = 3  # this many failed refreshes in a row: 503
ENRICH_FAILED_ROUNDS = 3  # a source failing this many enrichment rounds in a row: enrichment degraded
ENRICH_STALE = timedelta(hours=24)  # or failing, with no good round (or none since its failures began) for longer
DB_TIMEOUT = 2.0  # seconds for the whole database check
BUSY_TIMEOUT = 0.5  # seconds SQLite waits on a lock before the check gives up
BOT_STATES = ("off", "connecting", "connected", "restarting")
PATH = "/healthz"


@dataclass(frozen=True)
class RefreshOutcome:
    at: str
    stored: int | None
    rejected: int | None
    failed: int | None  # pages that could not be fetched
    error: str | None  # the tick itself failed: why


@dataclass
class SourceWatch:
    """One scholarly source's rounds, as this process saw them. A round in which it was asked
    nothing (nothing due, its failed papers still waiting) neither counts nor resets anything."""

    due: int = 0  # papers due at the start of its last round
    last_success: datetime | None = None  # the end of its last round that read every answer
    failed_rounds: int = 0  # rounds in a row in which it was down or answered badly
    failing_since: datetime | None = None  # the end of the first of them
    last_failure: str | None = None  # why the last failed round failed
    last_failure_at: datetime | None = None

    def trouble(self, now: datetime) -> str | None:
        """Why the source makes enrichment degraded (None: it does not)."""
        if not self.failed_rounds:
            return None
        if self.failed_rounds >= ENRICH_FAILED_ROUNDS:
            return f"failed {self.failed_rounds} rounds in a row, the last: {self.last_failure}"
        since = self.last_success or self.failing_since
        if since is None or now - since <= ENRICH_STALE:
            return None
        hours = (now - since) // timedelta(hours=1)
        if self.last_success is not None:
            return f"failing, and no good round for {hours} hours; the last: {self.last_failure}"
        return f"failing for {hours} hours, with no good round in this process; the last: {self.last_failure}"


class EnrichmentWatch:
    """The enrichment rounds of `mapwatch run` (mapwatch/service/run.py, EnrichmentStage), per
    source: what /healthz shows as "enrichment"."""

    def __init__(self, sources: Iterable[str]) -> None:
        self.sources = {s: SourceWatch() for s in sources}
        self.rounds = 0
        self.last_round: dict[str, Any] | None = None  # at, seconds, error (the round itself raised)

    def round_done(self, report: RoundReport, seconds: float, now: datetime) -> None:
        self.rounds += 1
        self.last_round = {"at": iso(now), "seconds": round(seconds, 3), "error": None}
        for name, r in report.sources.items():
            w = self.sources.setdefault(name, SourceWatch())
            w.due = r.due
            if r.outcome == "ok":
                w.last_success, w.failed_rounds, w.failing_since = now, 0, None
            elif r.outcome == "failed":
                w.failed_rounds += 1
                w.failing_since = w.failing_since or now
                w.last_failure, w.last_failure_at = r.failure(), now

    def round_failed(self, error: BaseException, seconds: float, now: datetime) -> None:
        self.rounds += 1
        self.last_round = {"at": iso(now), "seconds": round(seconds, 3),
                           "error": f"{type(error).__name__}: {error}"[:300]}

    def shown(self, now: datetime) -> dict[str, Any]:
        troubles = {name: why for name, w in self.sources.items() if (why := w.trouble(now))}
        reasons = [f"{name}: {why}" for name, why in troubles.items()]
        if self.last_round and self.last_round["error"]:
            reasons.append(f"the last round failed: {self.last_round['error']}")
        sources = {name: {"status": "degraded" if name in troubles else "ok", "why": troubles.get(name),
                          "due": w.due, "last_success": iso(w.last_success) if w.last_success else None,
                          "failed_rounds": w.failed_rounds,
                          "failing_since": iso(w.failing_since) if w.failing_since else None,
                          "last_failure": w.last_failure,
                          "last_failure_at": iso(w.last_failure_at) if w.last_failure_at else None}
                   for name, w in self.sources.items()}
        return {"status": "degraded" if reasons else "ok", "why": reasons, "rounds": self.rounds,
                "last_round": self.last_round, "sources": sources}


class Health:
    """The process's own part of /healthz, written by the scheduler, the bot supervisor and the
    enrichment stage."""

    def __init__(self, db_path: str | Path, *, clock: Callable[[], datetime] = utc_now,
                 replica: str | None = None) -> None:
        self.db_path = db_path
        self.replica = replica  # $MAPWATCH_REPLICA: the Litestream replica's URL; None: none configured
        self.clock = clock
        self.refreshes: deque[RefreshOutcome] = deque(maxlen=FAILED_REFRESHES)
        self.next_refresh: Callable[[], datetime | None] = lambda: None
        self.bot_state = "off"
        self.bot_error: str | None = None
        self.bot_ready: Callable[[], bool] = lambda: False
        # each gateway shard: {"id", "state" (connected, disconnected), "latency_seconds"}; bot/run.py sets it
        self.shards: Callable[[], list[dict[str, Any]]] = lambda: []
        self.enrichment: EnrichmentWatch | None = None  # None: no enrichment in this process

    def watch_enrichment(self, sources: Iterable[str]) -> EnrichmentWatch:
        """Enrichment runs in this process, from `sources`: /healthz shows it from now on."""
        if self.enrichment is None:
            self.enrichment = EnrichmentWatch(sources)
        return self.enrichment

    def enriched(self, report: RoundReport, seconds: float) -> None:
        """An enrichment round ended (store/scholarly/enrich.py's report)."""
        self.watch_enrichment(report.sources).round_done(report, seconds, self.clock())

    def enrich_failed(self, error: BaseException, seconds: float) -> None:
        """An enrichment round raised (a bug, the database): no source's figures are known."""
        self.watch_enrichment(()).round_failed(error, seconds, self.clock())

    def refreshed(self, result: Any) -> None:
        """A tick finished (a feeds.tick_report.TickResult)."""
        r = result.refresh
        self.refreshes.append(RefreshOutcome(iso(self.clock()), r.stored, len(r.rejected),
                                             len(getattr(r, "failed", ())), None))

    def refresh_failed(self, error: BaseException) -> None:
        self.refreshes.append(RefreshOutcome(iso(self.clock()), None, None, None,
                                             f"{type(error).__name__}: {error}"[:300]))

    def set_bot(self, state: str, error: str | None = None) -> None:
        assert state in BOT_STATES, state
        self.bot_state = state
        if error is not None:
            self.bot_error = error[:300]

    def bot(self) -> dict[str, Any]:
        state = self.bot_state
        if state == "connecting" and self.bot_ready():
            state = "connected"
        return {"state": state, "last_error": self.bot_error, "shards": self.shards()}


def read_database(db_path: str | Path) -> dict[str, Any]:
    """The database's part, read-only (runs in a worker thread). Raises when it cannot be read."""
    path = Path(db_path)
    if not path.is_file():
        raise FileNotFoundError(f"no database at {path}")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT * 1000)}")
        version = scalar(conn, "SELECT count(*) FROM _sqlite_migrations WHERE migration_set = 'mapwatch'")
        last = conn.execute("SELECT finished_at, stored, rejected FROM ingests WHERE finished_at IS NOT NULL"
                            " ORDER BY id DESC LIMIT 1").fetchone()
        pending = scalar(conn, "SELECT count(*) FROM bot_state WHERE key LIKE 'alert-sending:%'"
                               " OR key LIKE 'follow-sending:%'")
        try:
            failed = scalar(
                conn, "SELECT (SELECT count(*) FROM tracks WHERE last_failure IS NOT NULL)"
                " + (SELECT count(*) FROM follows WHERE last_failure IS NOT NULL)"
                " + (SELECT count(*) FROM digests WHERE failure IS NOT NULL)")
        except sqlite3.OperationalError:  # a database from before those columns
            failed = 0
    finally:
        conn.close()
    size = sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists())
    return {"size_bytes": size, "schema_version": version, "pending": pending, "failed": failed,
            "last_ingest": last}


def read_replica(db_path: str | Path, url: str | None, now: float) -> dict[str, Any] | None:
    """The part of the Litestream replica at `url` (store/database/replica.py), None when none is configured."""
    status = replica_status(Path(db_path), url, now)
    return status.shown() if status else None


async def report(health: Health) -> tuple[int, dict[str, Any]]:
    """The /healthz answer: (HTTP status, JSON body)."""
    try:
        db: dict[str, Any] | None = await asyncio.wait_for(asyncio.to_thread(read_database, health.db_path),
                                                           DB_TIMEOUT)
        db_error = None
    except (TimeoutError, OSError, sqlite3.Error) as e:
        db, db_error = None, f"{type(e).__name__}: {e}"[:300] if str(e) else type(e).__name__
    outcomes = list(health.refreshes)
    if outcomes:
        last: dict[str, Any] | None = asdict(outcomes[-1])
    elif db and db["last_ingest"]:  # nothing ran in this process yet: the last one stored
        at, stored, rejected = db["last_ingest"]
        last = {"at": at, "stored": stored, "rejected": rejected, "failed": None, "error": None}
    else:
        last = None
    failing = len(outcomes) >= FAILED_REFRESHES and all(o.error for o in outcomes[-FAILED_REFRESHES:])
    bot = health.bot()
    replica = await asyncio.to_thread(read_replica, health.db_path, health.replica, health.clock().timestamp())
    enrichment = health.enrichment.shown(health.clock()) if health.enrichment is not None else None
    healthy = db is not None and not failing
    calm = (bot["state"] in ("off", "connected") and not (last and last.get("error"))
            and (replica is None or replica["current"]) and (enrichment is None or enrichment["status"] == "ok"))
    body = {
        "status": ("ok" if calm else "degraded") if healthy else "failing",
        "database": {"reachable": db is not None, "size_bytes": db["size_bytes"] if db else None,
                     "schema_version": db["schema_version"] if db else None, "error": db_error},
        "refresh": {"last": last, "next": iso(nxt) if (nxt := health.next_refresh()) else None},
        "bot": bot,
        "deliveries": {"pending": db["pending"] if db else None, "failed": db["failed"] if db else None},
        "replica": replica,  # None: no replica configured ($MAPWATCH_REPLICA)
        "enrichment": enrichment,  # None: no enrichment in this process ($MAPWATCH_ENRICH=off, or `serve`)
    }
    return (200 if healthy else 503), body


def add_route(app: web.Application, health: Health) -> None:
    """Register GET (and HEAD) /healthz; call before the catch-all route."""

    async def healthz(request: web.Request) -> web.Response:
        status, body = await report(health)
        return web.json_response(body, status=status, headers={"Cache-Control": "no-store"})

    app.router.add_get(PATH, healthz)
