"""Migrations are declared in the order they apply, one module each
(store/database/migrations/mNNNN_<job>.py), under the names databases already record, and
every way to today's schema gives the same schema: a fresh database (open_db makes it from
store/database/schema.sql; tests/unit/store/test_schema_file.py), one upgraded from the
first schema (tests/data/db/schema_0001.db), one stopped after any migration and upgraded
later, one made by the last single-file schema (tests/data/db/schema_0025.db), and one that
applied them in their earlier order."""

from __future__ import annotations

import ast
import re
import shutil
import sqlite3
from pathlib import Path

import pytest
from sqlite_utils import Database

from mapwatch.store.database import migrations as package
from mapwatch.store.database.db import open_db
from mapwatch.store.database.migrations import migrations
from tests.conftest import DATA

FIXTURE_0001 = DATA / "db" / "schema_0001.db"
# Made by open_db on main at c68ba34 (the schema in store/database/schema*.py, every migration up
# to 0025 applied), stored with page_size 512 to stay small.
FIXTURE_0025 = DATA / "db" / "schema_0025.db"
PACKAGE_DIR = Path(package.__file__).parent
# The names sqlite-utils recorded in _sqlite_migrations before the package existed: a database
# holds these, so none may change (a renamed one would run again).
RECORDED_NAMES = [
    "0001_initial", "0002_feeds", "0003_tracking", "0004_graph", "0005_follows", "0006_delivery_failures",
    "0007_crawl", "0008_title_index", "0009_feed_index", "0010_pending_builds", "0011_feed_direction_days",
    "0012_drop_events_citing", "0013_quarantine_impossible_dates", "0014_crawl_schedule",
    "0015_team_channels", "0016_sitemap_trust", "0017_ranks_state", "0018_enrichment",
    "0019_self_citations", "0020_teams", "0021_webhook_seal", "0022_webhook_no_answer",
    "0023_enrichment_changes", "0024_first_read", "0025_author_indexes", "0026_citation_provenance",
    "0027_change_rate", "0028_listed_lastmods", "0029_source_counts",
    "0030_recent_citers", "0031_author_surnames", "0032_alert_messages",
    "0033_source_additions", "0034_intents", "0035_team_feed_tokens",
    "0036_published_files",
    "0037_paper_aliases",
    "0038_compact_edges",
    "0039_crawl_checked",
    "0040_event_batches",
    "0041_rank_scores",
    "0042_recheck_weight",
    "0043_rank_order",
    "0044_people",
    "0045_fts_changed_text",
    "0046_citers_without_month",
    "0047_lean_events",
    "0048_citation_seconds",
    "0049_paper_keys",
    "0050_rows_once",
]


def normalised_schema(path: Path) -> dict[tuple[str, str], tuple]:
    """Every table, index, trigger and view: its SQL with whitespace collapsed, and for a
    table its columns by name (type, not null, default, primary key)."""
    conn = sqlite3.connect(path)
    try:
        out: dict[tuple[str, str], tuple] = {}
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master"):
            text = re.sub(r"\s+", " ", sql or "").strip()
            columns: tuple = ()
            if kind == "table":
                columns = tuple(sorted(tuple(row[1:]) for row in conn.execute(f"PRAGMA table_info([{name}])")))
            out[kind, name] = (text, columns)
        return out
    finally:
        conn.close()


def names() -> list[str]:
    return [m.name for m in migrations._migrations]


def module_paths() -> list[Path]:
    """The package's migration modules, by file name (mNNNN_<job>.py), in number order."""
    return sorted(PACKAGE_DIR.glob("m[0-9][0-9][0-9][0-9]_*.py"))


def test_migrations_are_declared_in_the_order_they_apply() -> None:
    assert names() == sorted(names())
    assert [n[:4] for n in names()] == [f"{i:04d}" for i in range(1, len(names()) + 1)]


def test_the_recorded_names_are_kept() -> None:
    assert names()[:len(RECORDED_NAMES)] == RECORDED_NAMES


def test_module_numbers_run_from_0001_without_a_gap() -> None:
    numbers = [int(p.name[1:5]) for p in module_paths()]
    assert numbers == list(range(1, len(numbers) + 1))
    # Nothing else in the folder but the package itself and `_`-named helpers.
    others = {p.name for p in PACKAGE_DIR.glob("*.py")} - {p.name for p in module_paths()}
    assert all(name.startswith("_") for name in others), others


def test_registration_order_is_the_number_order() -> None:
    stems = [p.stem for p in module_paths()]
    assert [m.__name__.rsplit(".", 1)[1] for m in package.STEPS] == stems
    assert names() == [stem[1:] for stem in stems]  # m0004_graph registers 0004_graph
    assert [m.fn for m in migrations._migrations] == [m.migrate for m in package.STEPS]


@pytest.mark.parametrize("path", module_paths(), ids=lambda p: p.stem)
def test_each_module_holds_one_migration_and_imports_no_other(path: Path) -> None:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    assert ast.get_docstring(tree), "a module docstring"
    functions = [node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]
    assert [f.name for f in functions] == ["migrate"]
    assert ast.get_docstring(functions[0]), "migrate says what it adds and why"
    names_assigned = [t.id for node in tree.body if isinstance(node, ast.Assign)
                      for t in node.targets if isinstance(t, ast.Name)]
    assert names_assigned in (["NAME"], ["NAME", "TRANSACTIONAL"])  # TRANSACTIONAL: commits its own steps
    imported = [("." * node.level) + (node.module or "") for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    pkg = package.__name__
    siblings = [m for m in imported if m.startswith(".") or m == pkg
                or (m.startswith(f"{pkg}.") and not m.removeprefix(f"{pkg}.").startswith("_"))]
    assert siblings == [], f"{path.name} imports {siblings}"


def test_fresh_and_upgraded_databases_have_the_same_schema(tmp_path: Path) -> None:
    fresh = tmp_path / "fresh.db"
    open_db(fresh).close()
    upgraded = tmp_path / "upgraded.db"
    shutil.copy(FIXTURE_0001, upgraded)
    before = normalised_schema(upgraded)
    open_db(upgraded).close()
    after = normalised_schema(upgraded)
    assert before != after  # the fixture really was an older schema
    assert {n for _, n in after} - {n for _, n in before} >= {"direction_ranks", "follows"}
    assert after == normalised_schema(fresh)
    applied = [r[0] for r in sqlite3.connect(upgraded).execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    assert applied == names()


@pytest.mark.parametrize("k", range(1, len(RECORDED_NAMES)))
def test_stopped_after_any_migration_then_upgraded_is_fresh(tmp_path: Path, k: int) -> None:
    """A database of an earlier version (the first k migrations) opened by this one."""
    path = tmp_path / "older.db"
    db = Database(path)
    migrations.apply(db, stop_before=names()[k])
    assert [m.name for m in migrations.applied(db)] == names()[:k]
    db.close()
    open_db(path).close()
    fresh = tmp_path / "fresh.db"
    open_db(fresh).close()
    assert normalised_schema(path) == normalised_schema(fresh)


def test_a_database_made_before_the_package_applies_nothing(tmp_path: Path) -> None:
    """The last version with the schema in store/database/schema*.py made FIXTURE_0025: this
    code recognises every migration it recorded, runs none again, and has its schema."""
    path = tmp_path / "main.db"
    shutil.copy(FIXTURE_0025, path)
    conn = sqlite3.connect(path)
    recorded = [r[0] for r in conn.execute("SELECT name FROM _sqlite_migrations ORDER BY rowid")]
    conn.close()
    assert recorded == RECORDED_NAMES[:25]  # every migration up to 0025
    before = normalised_schema(path)
    db = open_db(path)
    assert [m.name for m in migrations.applied(db)] == names()
    db.close()
    fresh = tmp_path / "fresh.db"
    open_db(fresh).close()
    assert normalised_schema(path) == normalised_schema(fresh)
    if names() == RECORDED_NAMES[:25]:  # no migration added since: nothing at all was run
        assert normalised_schema(path) == before


def test_the_earlier_declaration_order_gives_the_same_schema(tmp_path: Path) -> None:
    """Databases made before the reordering applied 0005 and 0006 before 0004."""
    old_order = [n for n in names() if not n.startswith("0004")]
    old_order.insert(old_order.index("0006_delivery_failures") + 1, "0004_graph")
    assert old_order != names()
    path = tmp_path / "old-order.db"
    db = Database(path)
    by_name = {m.name: m for m in migrations._migrations}
    for name in old_order:  # as sqlite-utils applies them: the step, then its record
        by_name[name].fn(db)
        db["_sqlite_migrations"].insert({"migration_set": migrations.name, "name": name,
                                         "applied_at": "2026-01-01 00:00:00+00:00"})
    db.close()
    reopened = open_db(path)  # nothing left to apply
    assert migrations.pending(reopened) == []
    reopened.close()
    fresh = tmp_path / "fresh.db"
    open_db(fresh).close()
    old, new = normalised_schema(path), normalised_schema(fresh)
    old.pop(("table", "_sqlite_migrations")), new.pop(("table", "_sqlite_migrations"))
    assert old == new
