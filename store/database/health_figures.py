"""The database's part of the feed server's `GET /healthz` (feeds/serving/health.py): read on
a connection of its own, read-only, with a short busy timeout, so a check never writes and
never waits long on another process's lock.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

from mapwatch.store.database.rows import scalar


@dataclass(frozen=True)
class HealthFigures:
    size_bytes: int  # the file and its WAL
    schema_version: int  # mapwatch's migrations applied
    pending: int  # deliveries marked as being sent
    failed: int  # tracks, follows and digests whose last delivery failed
    last_ingest: tuple[str, int, int] | None  # the last finished ingest: (finished_at, stored, rejected)


def read_health_figures(path: Path, busy_timeout: float) -> HealthFigures:
    """The figures of the database at `path`, waiting at most `busy_timeout` seconds on a lock.
    Raises FileNotFoundError for a missing file and sqlite3.Error when it cannot be read."""
    if not path.is_file():
        raise FileNotFoundError(f"no database at {path}")
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=busy_timeout)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout * 1000)}")
        version = scalar(conn, "SELECT count(*) FROM _sqlite_migrations WHERE migration_set = 'mapwatch'")
        last = conn.execute("SELECT finished_at, stored, rejected FROM ingests WHERE finished_at IS NOT NULL"
                            " ORDER BY id DESC LIMIT 1").fetchone()
        pending = scalar(conn, "SELECT count(*) FROM bot_state WHERE key LIKE 'alert-sending:%'"
                               " OR key LIKE 'follow-sending:%'")
        failed = _failed_deliveries(conn)
    finally:
        conn.close()
    size = sum(Path(f"{path}{s}").stat().st_size for s in ("", "-wal") if Path(f"{path}{s}").exists())
    return HealthFigures(size, version, pending, failed, last)


def _failed_deliveries(conn: sqlite3.Connection) -> int:
    """Tracks, follows and digests whose last delivery failed; 0 for a database from before
    those columns (an older one is still checked, not refused)."""
    try:
        failed: int = scalar(
            conn, "SELECT (SELECT count(*) FROM tracks WHERE last_failure IS NOT NULL)"
            " + (SELECT count(*) FROM follows WHERE last_failure IS NOT NULL)"
            " + (SELECT count(*) FROM digests WHERE failure IS NOT NULL)")
    except sqlite3.OperationalError:
        return 0
    return failed
