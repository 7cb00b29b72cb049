"""`GET /healthz` of the feed server: is mapwatch well, for a platform's health check and
for people (docs/configuration.md, "Deployment").

What only this process knows is kept here, in `Health`: the outcome of the last refresh
ticks (the scheduler reports each one, errors included: a failed tick stores nothing in
the database), when the next tick is due, and the bot's state (`bot/supervisor.py` reports it).
The rest is read from the database, in a worker thread, read-only, with a short busy
timeout, and within `DB_TIMEOUT` seconds: the event loop never waits on SQLite.

Answers 200 with JSON, or 503 when the database cannot be read or the last
`FAILED_REFRESHES` refreshes all failed; "degraded" (200) while a configured Litestream
replica ($MAPWATCH_REPLICA) is not current (store/database/replica.py).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from aiohttp import web

from mapwatch.store.clock import iso, utc_now
from mapwatch.store.database.replica import replica_status

FAILED_REFRESHES = 3  # this many failed refreshes in a row: 503
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


class Health:
    """The process's own part of /healthz, written by the scheduler and the bot supervisor."""

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
        version = conn.execute("SELECT count(*) FROM _sqlite_migrations WHERE migration_set = 'mapwatch'").fetchone()[0]
        last = conn.execute("SELECT finished_at, stored, rejected FROM ingests WHERE finished_at IS NOT NULL"
                            " ORDER BY id DESC LIMIT 1").fetchone()
        pending = conn.execute("SELECT count(*) FROM bot_state WHERE key LIKE 'alert-sending:%'"
                               " OR key LIKE 'follow-sending:%'").fetchone()[0]
        try:
            failed = conn.execute(
                "SELECT (SELECT count(*) FROM tracks WHERE last_failure IS NOT NULL)"
                " + (SELECT count(*) FROM follows WHERE last_failure IS NOT NULL)"
                " + (SELECT count(*) FROM digests WHERE failure IS NOT NULL)").fetchone()[0]
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
    healthy = db is not None and not failing
    calm = (bot["state"] in ("off", "connected") and not (last and last.get("error"))
            and (replica is None or replica["current"]))
    body = {
        "status": ("ok" if calm else "degraded") if healthy else "failing",
        "database": {"reachable": db is not None, "size_bytes": db["size_bytes"] if db else None,
                     "schema_version": db["schema_version"] if db else None, "error": db_error},
        "refresh": {"last": last, "next": iso(nxt) if (nxt := health.next_refresh()) else None},
        "bot": bot,
        "deliveries": {"pending": db["pending"] if db else None, "failed": db["failed"] if db else None},
        "replica": replica,  # None: no replica configured ($MAPWATCH_REPLICA)
    }
    return (200 if healthy else 503), body


def add_route(app: web.Application, health: Health) -> None:
    """Register GET (and HEAD) /healthz; call before the catch-all route."""

    async def healthz(request: web.Request) -> web.Response:
        status, body = await report(health)
        return web.json_response(body, status=status, headers={"Cache-Control": "no-store"})

    app.router.add_get(PATH, healthz)
