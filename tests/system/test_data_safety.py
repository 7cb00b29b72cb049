"""Data safety: `mapwatch backup` while another process writes, and upgrading a database
made by the earliest schema version (tests/data/db/schema_0001.db: only `0001_initial`
applied, filled by the store of that time with the seeds, an older version of them, and a
rejected page)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mapwatch.store.atomic import replacing, write_atomic
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.migrations import migrations
from tests.conftest import DATA, SEED_FILES, FakeClock
from tests.system.test_cli_store import MAPWATCH, run

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_0001 = DATA / "db" / "schema_0001.db"
TABLES_0001 = ["papers", "directions", "snapshots", "placements", "citations", "events", "sources",
               "ingest_errors", "ingests", "papers_fts"]


def rows(conn: sqlite3.Connection, table: str, cols: list[str]) -> list[tuple]:
    return sorted(conn.execute(f"SELECT {', '.join(cols)} FROM {table}").fetchall(), key=repr)


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def shape(conn: sqlite3.Connection) -> dict[str, set]:
    """Tables, their columns (name, type, not null, default, pk) and index names."""
    out: dict[str, set] = {}
    for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        if name != "sqlite_sequence":
            out[name] = {tuple(r[1:]) for r in conn.execute(f"PRAGMA table_info({name})")}
    out["indexes"] = {r[0] for r in conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_autoindex%'")}
    out["triggers"] = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    return out


def later_migrations() -> list[str]:
    names = [m.name for m in migrations.pending(open_db(":memory:", migrate=False))]
    assert names[0] == "0001_initial"
    return names[1:]


def test_fixture_is_what_0001_initial_makes(tmp_path: Path) -> None:
    """The fixture was made by `0001_initial` and nothing else; 0001 is never edited."""
    db = open_db(tmp_path / "first.db", migrate=False)
    migrations.apply(db, stop_before=later_migrations())
    assert [m.name for m in migrations.applied(db)] == ["0001_initial"]
    fixture = sqlite3.connect(FIXTURE_0001)
    assert shape(fixture) == shape(db.conn)
    assert fixture.execute("SELECT name FROM _sqlite_migrations").fetchall() == [("0001_initial",)]


def test_upgrade_from_schema_0001_keeps_every_row(tmp_path: Path, clock: FakeClock) -> None:
    path = tmp_path / "old.db"
    shutil.copy(FIXTURE_0001, path)
    old = sqlite3.connect(path)
    before = {t: (columns(old, t), rows(old, t, columns(old, t))) for t in TABLES_0001}
    old.close()
    assert all(before[t][1] for t in TABLES_0001), "the fixture has rows in every table"

    db = open_db(path)  # applies every later migration
    assert [m.name for m in migrations.applied(db)] == ["0001_initial", *later_migrations()]
    for table, (cols, old_rows) in before.items():
        assert rows(db.conn, table, cols) == old_rows, f"{table}: rows changed by the upgrade"
    assert db.conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert db.conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert shape(db.conn) == shape(open_db(tmp_path / "fresh.db").conn), "upgraded schema != fresh schema"

    # The upgraded database keeps working: full-text search, and the seeds are already stored.
    hits = db.conn.execute("SELECT count(*) FROM papers_fts WHERE papers_fts MATCH 'reinforcement'").fetchone()
    assert hits[0] > 0
    events = db["events"].count
    report = ingest_paths(db, SEED_FILES, clock=clock)
    assert (report.unchanged, report.stored, db["events"].count) == (2, 0, events)


WRITER = r"""
import dataclasses, sys
from datetime import UTC, datetime, timedelta
from mapwatch.store.database.db import open_db
from mapwatch.store.database.save import SourceInfo, save_pages
from tests import pagegen

db = open_db(sys.argv[1])
pages = pagegen.generate(300).v1
start = datetime(2026, 11, 1, tzinfo=UTC)
r = 0
while True:
    batch = []
    for p in pages:
        q = dataclasses.replace(p, cited_by=p.cited_by + r, data_through=p.data_through + timedelta(days=r))
        batch.append((q, SourceInfo(location=p.id, sha256=str(r))))
        if len(batch) == 50:
            save_pages(db, batch, start + timedelta(minutes=r))
            batch = []
    if r == 0:
        print("ready", flush=True)
    r += 1
"""


def check_copy(path: Path) -> int:
    """Invariants of the writer's data in a copy: every batch whole; returns rounds seen."""
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA journal_mode").fetchone() == ("delete",)
        edges = set(conn.execute("SELECT citing_id, cited_id FROM citations"))
        cites = conn.execute("SELECT citing_id, paper_id FROM events WHERE kind = 'citation'").fetchall()
        assert len(cites) == len(set(cites)) and set(cites) == edges
        per_paper = conn.execute(
            "SELECT p.id, (SELECT count(*) FROM snapshots s WHERE s.paper_id = p.id),"
            " (SELECT count(*) FROM events e WHERE e.paper_id = p.id AND e.kind = 'count')"
            " FROM papers p WHERE p.has_page = 1 ORDER BY p.id").fetchall()
        snaps = [s for _id, s, _c in per_paper]
        assert all(c == s - 1 for _id, s, c in per_paper), "a count event per update"
        # Batches of 50 in page order: earlier pages are at most one round ahead of later ones.
        assert snaps == sorted(snaps, reverse=True) and snaps[0] - snaps[-1] <= 1
        return snaps[0]
    finally:
        conn.close()


def test_backup_while_another_process_writes(tmp_path: Path) -> None:
    db_path = tmp_path / "live.db"
    open_db(db_path).close()
    writer = subprocess.Popen([sys.executable, "-c", WRITER, str(db_path)], cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        rounds = []
        for i in range(5):
            target = tmp_path / f"backup-{i}.db"
            r = run("backup", target, "--db", db_path)
            assert r.returncode == 0, r.stderr
            assert f"to {target}" in r.stdout
            assert writer.poll() is None, "the writer kept writing during the backup"
            rounds.append(check_copy(target))
            time.sleep(0.2)  # on purpose: the writer writes on between two backups
        assert rounds == sorted(rounds) and rounds[-1] > rounds[0], "copies are snapshots of a moving database"
        assert not list(tmp_path.glob(".tmp-*")), "no temporary file left behind"
    finally:
        writer.kill()
        _out, err = writer.communicate()
    assert "Traceback" not in err, err  # the backups never made the writer fail (locked, busy)


def test_backup_errors_are_one_line(tmp_path: Path) -> None:
    r = run("backup", tmp_path / "copy.db", "--db", tmp_path / "missing.db")
    assert r.returncode == 2 and "no such database" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "missing.db").exists(), "a backup creates no database"
    db_path = tmp_path / "live.db"
    open_db(db_path).close()
    r = run("backup", db_path, "--db", db_path)
    assert r.returncode == 2 and "must not overwrite" in r.stderr
    notdb = tmp_path / "not.db"
    notdb.write_text("not sqlite " * 200)
    r = run("backup", tmp_path / "copy.db", "--db", notdb)
    assert r.returncode == 2 and "Traceback" not in r.stderr and not (tmp_path / "copy.db").exists()


def test_backup_of_seeded_database_reopens_with_the_same_rows(tmp_path: Path) -> None:
    db_path = tmp_path / "m.db"
    assert run("ingest", "--db", db_path).returncode == 0
    r = subprocess.run([*MAPWATCH, "backup", str(tmp_path / "b.db")], capture_output=True, text=True,
                       env={"MAPWATCH_DB": str(db_path), "PATH": "/usr/bin:/bin"}, timeout=60)
    assert r.returncode == 0, r.stderr
    a, b = sqlite3.connect(db_path), sqlite3.connect(tmp_path / "b.db")
    for table in TABLES_0001:
        assert rows(a, table, columns(a, table)) == rows(b, table, columns(b, table))


def test_an_atomic_write_that_fails_keeps_the_old_file(tmp_path: Path) -> None:
    target = tmp_path / "feed.atom"
    write_atomic(target, b"old", mode=0o644)
    with pytest.raises(RuntimeError, match="disk gone"), replacing(target, mode=0o644) as tmp:
        tmp.write_bytes(b"half of the new")
        assert tmp.name.startswith(".tmp-") and tmp.exists()
        raise RuntimeError("disk gone")
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["feed.atom"], "no temporary file left behind"
    write_atomic(target, b"new")
    assert target.read_bytes() == b"new" and target.stat().st_mode & 0o044 == 0o044
