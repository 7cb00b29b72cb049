"""store/database/schema.sql holds the whole schema, and a new database is made from it in one
step (store/database/schema.py): it must be the schema every migration applied from empty gives,
to the text SQLite keeps of each statement, with the same migrations recorded, so that opening
it applies nothing more. Only a new file is made from it; any other keeps migrating step by step
(tests/unit/store/test_migrations.py), and another program's file stays refused and untouched."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from sqlite_utils import Database

from mapwatch.store.database import schema
from mapwatch.store.database.db import open_db
from mapwatch.store.database.migrations import migrations
from mapwatch.store.errors import NotMapwatchDatabase
from tests.unit.store.test_migrations import normalised_schema

# Rows that are SQLite's or FTS5's bookkeeping, not the schema: 0020's rebuild of tracks leaves
# its sqlite_sequence row at 0 (the same as no row: the next id is 1 either way), and 0008's
# 'rebuild' of the empty title index writes a zero averages record where a new index has an
# empty one (FTS5 reads both as no rows). _sqlite_migrations is compared by name, its times differ.
NOT_COMPARED = ("sqlite_sequence", "_sqlite_migrations", "papers_fts_", "papers_title_fts_")


def names() -> list[str]:
    return [m.name for m in migrations._migrations]


def from_schema_file(path: Path) -> Path:
    db = Database(sqlite3.connect(path), execute_plugins=False)
    assert schema.create(db)
    db.close()
    return path


def migrated_from_empty(path: Path) -> Path:
    db = Database(sqlite3.connect(path), execute_plugins=False)
    migrations.apply(db)
    db.close()
    return path


def stored_sql(path: Path) -> dict[tuple[str, str], str | None]:
    """Each object's statement exactly as SQLite keeps it (a migration editing it reads this)."""
    with closing(sqlite3.connect(path)) as conn:
        rows = conn.execute("SELECT type, name, sql FROM sqlite_master").fetchall()
    return {(kind, name): sql for kind, name, sql in rows}


def recorded(path: Path) -> list[tuple[str, str, str]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute("SELECT migration_set, name, applied_at FROM _sqlite_migrations ORDER BY rowid").fetchall()


def table_rows(path: Path) -> dict[str, list[tuple]]:
    with closing(sqlite3.connect(path)) as conn:
        tables = [t for (t,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                  if not t.startswith(NOT_COMPARED)]
        return {t: sorted(conn.execute(f"SELECT * FROM [{t}]").fetchall()) for t in tables}


def test_the_schema_file_is_the_schema_of_every_migration(tmp_path: Path) -> None:
    made = from_schema_file(tmp_path / "made.db")
    migrated = migrated_from_empty(tmp_path / "migrated.db")
    assert normalised_schema(made) == normalised_schema(migrated)
    assert stored_sql(made) == stored_sql(migrated)  # byte for byte, not only once whitespace is collapsed
    assert [r[:2] for r in recorded(made)] == [r[:2] for r in recorded(migrated)]
    assert [name for _, name, _ in recorded(made)] == names()
    assert table_rows(made) == table_rows(migrated)


def test_the_schema_file_names_the_newest_migration() -> None:
    """A new migration changes schema.sql too, and its `last migration` line names it."""
    assert schema.covered_migrations() == names()


@pytest.mark.parametrize("text", ["CREATE TABLE t (x);", "-- last migration: 9999_unknown\nCREATE TABLE t (x);"])
def test_a_schema_file_naming_no_known_migration_is_refused(text: str) -> None:
    with pytest.raises(RuntimeError, match="last migration"):
        schema.covered_migrations(text)


def test_a_database_made_from_the_file_applies_nothing_when_opened(tmp_path: Path) -> None:
    path = from_schema_file(tmp_path / "made.db")
    before, rows = normalised_schema(path), recorded(path)
    db = open_db(path)
    assert migrations.pending(db) == []
    db.close()
    assert normalised_schema(path) == before
    assert recorded(path) == rows  # not one migration ran again, nor was recorded again


def test_open_db_makes_a_new_file_in_one_step(tmp_path: Path) -> None:
    path = tmp_path / "new.db"
    open_db(path).close()
    rows = recorded(path)
    assert [name for _, name, _ in rows] == names()
    assert len({applied_at for _, _, applied_at in rows}) == 1  # one transaction: one time for all
    assert {migration_set for migration_set, _, _ in rows} == {migrations.name}
    assert normalised_schema(path) == normalised_schema(migrated_from_empty(tmp_path / "migrated.db"))


def test_an_empty_migrations_table_left_by_an_earlier_start_is_still_new(tmp_path: Path) -> None:
    path = tmp_path / "started.db"
    db = Database(sqlite3.connect(path), execute_plugins=False)
    migrations.ensure_migrations_table(db)
    assert schema.is_new(db.conn)
    assert schema.create(db)
    db.close()
    assert normalised_schema(path) == normalised_schema(migrated_from_empty(tmp_path / "migrated.db"))


def _their_file(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT); INSERT INTO notes (body) VALUES ('x');")
    return conn


def test_only_a_new_file_is_made_from_the_schema(tmp_path: Path) -> None:
    theirs = _their_file(tmp_path / "theirs.db")
    assert not schema.is_new(theirs)
    assert not schema.create(Database(theirs, execute_plugins=False))
    assert [n for (n,) in theirs.execute("SELECT name FROM sqlite_master")] == ["notes"]
    theirs.close()

    with closing(sqlite3.connect(tmp_path / "recorded.db")) as other:
        migrations.ensure_migrations_table(Database(other, execute_plugins=False))
        other.execute("INSERT INTO _sqlite_migrations (migration_set, name, applied_at) VALUES ('theirs', 'x', 'now')")
        other.commit()
        assert not schema.is_new(other)


def test_a_file_another_program_wrote_to_after_the_check_is_left_as_it_is(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Another connection commits a table of its own between the check and the schema: the
    schema is rolled back, and the check, run again, refuses the file."""
    path = tmp_path / "raced.db"
    checked = schema.is_new

    def check_then_their_write(conn: sqlite3.Connection) -> bool:
        new = checked(conn)
        _their_file(path).close()
        return new

    monkeypatch.setattr(schema, "is_new", check_then_their_write)
    with pytest.raises(NotMapwatchDatabase, match="not a mapwatch database"):
        open_db(path)
    with closing(sqlite3.connect(path)) as conn:
        assert [n for (n,) in conn.execute("SELECT name FROM sqlite_master")] == ["notes"]


def test_a_file_another_open_made_first_is_opened_as_it_made_it(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Two commands start on the same new file: the second finds the first one's tables when its
    script runs, rolls back, and opens the database the first made."""
    path = tmp_path / "both.db"
    checked = schema.is_new

    def check_then_the_other_open(conn: sqlite3.Connection) -> bool:
        new = checked(conn)
        monkeypatch.setattr(schema, "is_new", checked)
        open_db(path).close()
        return new

    monkeypatch.setattr(schema, "is_new", check_then_the_other_open)
    db = open_db(path)
    assert migrations.pending(db) == []
    db.close()
    rows = recorded(path)
    assert [name for _, name, _ in rows] == names()
    assert len({applied_at for _, _, applied_at in rows}) == 1  # the first open's record, alone
