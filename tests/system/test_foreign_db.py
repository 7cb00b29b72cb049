"""A --db that is not a mapwatch database, through the real CLI (issue 21, item 7).

Another program's SQLite file, an empty file and a database of a newer schema (a migration
this code does not know) are refused by every command that takes --db: exit 2, one line,
and the file is not changed (same bytes, same mtime, no file made beside it). The commands
that create databases (ingest, refresh, run) start one in an empty file (docs/getting-started.md, "Usage")."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from mapwatch.store.pages.files import SEEDS_DIR
from tests.system.test_cli_exits import READ_ONLY, mapwatch


def _another_programs(path: Path, ingested_file: Path) -> None:
    with sqlite3.connect(path) as c:  # rollback journal, as most programs leave it
        c.executescript("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT);"
                        "INSERT INTO notes (body) VALUES ('mine');")
    c.close()


def _empty(path: Path, ingested_file: Path) -> None:
    path.touch()


def _newer(path: Path, ingested_file: Path) -> None:
    path.write_bytes(ingested_file.read_bytes())
    with sqlite3.connect(path) as c:
        c.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) "
                  "VALUES ('mapwatch', '0099_from_the_future', '2027-01-01 00:00:00+00:00')")
    c.close()


FILES = {"another program's": _another_programs, "empty": _empty, "newer": _newer}
MAKING = {
    "ingest": ["ingest", str(SEEDS_DIR), "--quiet"],
    "refresh": ["refresh", "--source", str(SEEDS_DIR), "--out", "public"],
    "run": ["run", "--source", str(SEEDS_DIR), "--out", "public", "--port", "0"],
}
COMMANDS = {**READ_ONLY, **MAKING}
REASONS = {"another program's": "not a mapwatch database", "empty": "an empty file",
           "newer": "0099_from_the_future"}


def _state(folder: Path) -> dict[str, tuple[int, bytes]]:
    return {p.name: (p.stat().st_mtime_ns, p.read_bytes()) for p in folder.iterdir() if p.is_file()}


# Not refused, so not here: an empty file for ingest, refresh and run (they start a database
# in it: the next test), and a newer database for backup (a backup only reads: it is copied,
# test_backup_copies_a_newer_database).
REFUSED = [(name, kind) for name in sorted(COMMANDS) for kind in sorted(FILES)
           if not (kind == "empty" and name in MAKING) and not (kind == "newer" and name == "backup")]


@pytest.mark.parametrize(("name", "kind"), REFUSED)
def test_a_file_that_is_not_a_mapwatch_database_is_refused_and_untouched(ingested_file: Path, tmp_path: Path,
                                                                         name: str, kind: str) -> None:
    work = tmp_path / "work"
    work.mkdir()
    db = work / "their.db"
    FILES[kind](db, ingested_file)
    os.utime(db, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    before = _state(work)
    env = {"DISCORD_TOKEN": "not-a-real-token" if name == "sync" else "", "MAPWATCH_FEEDS_DIR": "public"}
    r = mapwatch(*COMMANDS[name], "--db", db, cwd=work, env=env, timeout=60)
    assert r.returncode == 2, (name, kind, r.returncode, r.stderr[-2000:])
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and str(db) in lines[0] and REASONS[kind] in lines[0], r.stderr[-2000:]
    assert _state(work) == before, f"{name} changed {kind} file (or made one beside it)"


@pytest.mark.parametrize("name", ["ingest", "refresh"])
def test_the_commands_that_create_databases_start_one_in_an_empty_file(tmp_path: Path, name: str) -> None:
    db = tmp_path / "new.db"
    db.touch()
    r = mapwatch(*MAKING[name], "--db", db, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert mapwatch("stats", "--db", db).stdout.startswith("papers:        99 ")


def test_backup_copies_a_newer_database(ingested_file: Path, tmp_path: Path) -> None:
    db = tmp_path / "newer.db"
    _newer(db, ingested_file)
    r = mapwatch("backup", tmp_path / "copy.db", "--db", db)
    assert r.returncode == 0, r.stderr
    names = [n for (n,) in sqlite3.connect(tmp_path / "copy.db").execute("SELECT name FROM _sqlite_migrations")]
    assert names[-1] == "0099_from_the_future"


def test_a_mapwatch_database_of_an_older_schema_is_still_upgraded(tmp_path: Path) -> None:
    """Only unknown migrations are refused: the first schema's fixture opens and is migrated."""
    from tests.system.test_data_safety import FIXTURE_0001

    db = tmp_path / "old.db"
    db.write_bytes(FIXTURE_0001.read_bytes())
    r = mapwatch("stats", "--db", db)
    assert r.returncode == 0 and r.stdout.startswith("papers:"), r.stderr


def test_a_first_migration_killed_before_its_record_is_started_again(tmp_path: Path) -> None:
    """`kill -9` of the first ingest between the first migration's script (it commits on its own)
    and its record leaves mapwatch's empty tables and no record: the next ingest starts again;
    another program's file holding a table of the same name stays refused and untouched."""
    from sqlite_utils import Database

    from mapwatch.store.database.migrations import migrations

    db = tmp_path / "m.db"
    conn = sqlite3.connect(db)
    partial = Database(conn, execute_plugins=False)
    migrations.ensure_migrations_table(partial)
    migrations._migrations[0].fn(partial)  # the script ran, its record was never written
    conn.close()
    r = mapwatch("ingest", "--db", db, "--quiet")
    assert r.returncode == 0, r.stderr
    assert mapwatch("stats", "--db", db).returncode == 0

    theirs = tmp_path / "theirs.db"
    with sqlite3.connect(theirs) as c:
        c.executescript("CREATE TABLE papers (x); INSERT INTO papers VALUES (1);")
    c.close()
    before = theirs.read_bytes()
    r = mapwatch("ingest", "--db", theirs, "--quiet")
    assert r.returncode == 2 and "not a mapwatch database" in r.stderr
    assert theirs.read_bytes() == before
