"""A cold ingest into an empty map bulk-loads (store/database/bulk_load.py): it drops the secondary indexes
and the full-text triggers, loads, and builds them at the end. What it stores is exactly what an
ordinary ingest stores; killed in the load window, the next open or ingest finishes the builds."""

from __future__ import annotations

import ast
import shutil
import sqlite3
import subprocess
import sys
import textwrap
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bench import generate as gen
from mapwatch.store.database import bulk_load
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from tests.conftest import SEED_FILES, FakeClock
from tests.system.test_ingest_pool import BROKEN
from tests.unit.store.test_store_fastpaths import all_rows

NOW = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)
WORDS = ["learning", "reasoning", "model", "graph", "language", "attention", "policy", "network", "data"]


def _folder(root: Path, pages: int = 260) -> Path:
    """A map whose lists name papers before their pages come (stubs later given pages), the
    seeds, a broken page and a page stored twice under another name."""
    folder = root / "map"
    gen.write_map(gen.build_map(pages, seed=9, list_items=40), folder, 1, check_every=0)
    for f in SEED_FILES:
        shutil.copy(f, folder / f.name)
    (folder / "aa-broken.txt").write_text(BROKEN, encoding="utf-8")
    first = sorted(folder.glob("*/*.txt"))[5]
    shutil.copy(first, folder / f"zz-again-{first.name}")  # the same page, another file
    return folder


def _schema(db) -> list[tuple]:
    return sorted(db.conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master"
                                  " WHERE type IN ('index', 'trigger', 'table', 'view')").fetchall())


def _searches(db) -> dict[str, list]:
    out = {}
    for w in WORDS:
        out[w] = [db.conn.execute(f"SELECT rowid FROM {t} WHERE {t} MATCH ? ORDER BY rank, rowid", (w,)).fetchall()
                  for t in bulk_load.FTS_TABLES]
    return out


def _state(db) -> tuple:
    rows = all_rows(db)
    rows["sources"] = sorted(repr(r[:4] + r[5:]) for r in map(ast.literal_eval, rows["sources"]))  # not mtimes
    return rows, _schema(db), _searches(db)


def test_a_bulk_load_stores_exactly_what_an_ordinary_ingest_stores(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    seen_in_load: list[tuple] = []

    def look(done: int, _total: int) -> None:  # during the load: the indexes are gone, recorded
        if done == 120:
            seen_in_load.append((names(bulk_db), bulk_load.pending(bulk_db)))

    def names(db) -> set[str]:
        return {n for (n,) in db.conn.execute("SELECT name FROM sqlite_master")}

    plain_db = open_db(tmp_path / "plain.db")
    bulk_db = open_db(tmp_path / "bulk.db")
    reports = []
    for db, bulk in ((plain_db, False), (bulk_db, True)):
        clock = FakeClock()
        first = ingest_paths(db, [folder], clock=clock, pool=False, batch_size=50, bulk=bulk,
                             progress=look if bulk else None)
        clock.advance(hours=1)
        gen.write_map(gen.build_map(260, seed=9, list_items=40), folder, 2, check_every=0)  # citers grow
        second = ingest_paths(db, [folder], clock=clock, pool=False, batch_size=50, bulk=bulk)
        reports.append([str(first.rejected[0]), str(second.rejected[0]), first.stored, second.stored,
                        second.saved.new_citations])
        gen.write_map(gen.build_map(260, seed=9, list_items=40), folder, 1, check_every=0)  # back
    (in_load, pending), = seen_in_load
    dropped = {"citations_cited_seen", "events_paper", "papers_title_nocase", "papers_ai", "papers_title_au"}
    assert dropped.isdisjoint(in_load)
    assert "snapshots_paper" in in_load and pending == 17  # 9 indexes, 6 triggers, 2 full-text rebuilds
    plain, bulk = _state(plain_db), _state(bulk_db)
    assert len(plain[0]["events"]) > 1000 and plain[2]["learning"][0]  # a real map, found by search
    assert bulk == plain  # every row, event ids and order, the schema, the search answers
    assert reports[0] == reports[1]
    assert reports[0][0].endswith("aa-broken.txt:4: truncated: the page ends before its lists")
    assert bulk_load.pending(bulk_db) == 0
    assert bulk_db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_only_a_large_ingest_into_an_empty_map_bulk_loads(tmp_path: Path, monkeypatch) -> None:
    seen: list[int] = []
    db = open_db(tmp_path / "s.db")

    def look(_done: int, _total: int) -> None:
        seen.append(bulk_load.pending(db))

    folder = tmp_path / "seeds"
    folder.mkdir()
    for f in SEED_FILES:
        shutil.copy(f, folder / f.name)
    ingest_paths(db, [folder], progress=look)  # the seeds: below the threshold
    assert seen and set(seen) == {0}
    monkeypatch.setattr("mapwatch.store.database.ingest.BULK_LOAD_THRESHOLD", 1)
    seen.clear()
    ingest_paths(db, [folder], progress=look, force=True)  # above it, but papers are stored
    assert seen and set(seen) == {0}
    other = open_db(tmp_path / "t.db")
    seen.clear()
    db = other
    ingest_paths(other, [folder], progress=look)  # above it, into an empty map
    assert seen and min(seen) > 0 and bulk_load.pending(other) == 0


def test_ctrl_c_in_the_load_window_builds_everything_before_it_returns(tmp_path: Path) -> None:
    folder = _folder(tmp_path, 120)
    db = open_db(tmp_path / "c.db")
    fresh = _schema(open_db(tmp_path / "fresh.db"))

    def interrupt(done: int, _total: int) -> None:
        if done == 70:
            assert bulk_load.pending(db) > 0
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ingest_paths(db, [folder], pool=False, batch_size=25, bulk=True, progress=interrupt)
    assert bulk_load.pending(db) == 0 and _schema(db) == fresh
    assert db.conn.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 50  # whole batches
    titled = db.conn.execute("SELECT count(*) FROM papers_title_fts WHERE papers_title_fts MATCH 'learning'")
    assert titled.fetchone()[0] == db.conn.execute(
        "SELECT count(*) FROM papers WHERE title LIKE '%learning%'").fetchone()[0] > 0


KILLER = textwrap.dedent("""
    import os, signal, sys
    from datetime import UTC, datetime
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths

    def kill(done, _total):
        if done == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)

    ingest_paths(open_db(sys.argv[1]), [sys.argv[2]], clock=lambda: datetime(2026, 11, 1, 12, 0, tzinfo=UTC),
                 pool=False, batch_size=50, bulk=True, progress=kill)
""")


@pytest.mark.parametrize("finisher", ["open", "ingest"])
def test_a_load_killed_in_its_window_is_finished_by_the_next_open_or_ingest(
        tmp_path: Path, finisher: str, caplog: pytest.LogCaptureFixture) -> None:
    folder = _folder(tmp_path)
    path = tmp_path / "killed.db"
    proc = subprocess.run([sys.executable, "-c", KILLER, str(path), str(folder), "170"], capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == -9, proc.stderr
    with sqlite3.connect(path) as raw:  # landed after the drop and before the build
        assert raw.execute("SELECT count(*) FROM pending_builds").fetchone()[0] > 0
        assert raw.execute("SELECT count(*) FROM snapshots").fetchone()[0] == 150
        assert raw.execute("SELECT 1 FROM sqlite_master WHERE name = 'citations_cited_seen'").fetchone() is None
    with caplog.at_level("WARNING", logger="mapwatch.store.database.bulk_load"):
        if finisher == "open":
            db = open_db(path)
            assert bulk_load.pending(db) == 0
        else:
            db = open_db(path, migrate=False)
        ingest_paths(db, [folder], clock=lambda: NOW, pool=False, batch_size=50)
    assert [r.getMessage() for r in caplog.records] == [
        "mapwatch: finished the 17 index and full-text builds an interrupted bulk load left"]
    whole = open_db(tmp_path / "whole.db")
    ingest_paths(whole, [folder], clock=lambda: NOW, pool=False, batch_size=50, bulk=True)
    killed_rows, killed_schema, killed_search = _state(db)
    whole_rows, whole_schema, whole_search = _state(whole)
    assert killed_rows == whole_rows and killed_schema == whole_schema and killed_search == whole_search
    assert db.conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert bulk_load.pending(db) == 0


def test_the_builds_run_on_a_small_cache_with_sorter_threads_and_restore_the_pragmas(tmp_path: Path) -> None:
    """The builds bound SQLite's sorter by a small page cache and sort on a second thread
    (bulk_load.BUILD_CACHE_KIB, BUILD_THREADS); the connection's own settings come back after."""
    db = open_db(tmp_path / "m.db")
    db.conn.execute("PRAGMA cache_size = -3000")
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    ingest_paths(db, [_folder(tmp_path, pages=60)], clock=lambda: NOW, pool=False, batch_size=50, bulk=True)
    db.conn.set_trace_callback(None)
    builds = [i for i, s in enumerate(statements) if s.startswith("CREATE INDEX")]
    assert len(builds) == 9  # 12 before migrations 0038 and 0040; 0046 added one
    set_cache = statements.index(f"PRAGMA cache_size = -{bulk_load.BUILD_CACHE_KIB}")
    set_threads = statements.index(f"PRAGMA threads = {bulk_load.BUILD_THREADS}")
    assert max(set_cache, set_threads) < builds[0]
    for t in bulk_load.FTS_TABLES:  # each full-text index rebuilt, then merged into one segment
        assert statements.index(f"INSERT INTO {t} ({t}) VALUES ('rebuild')") < statements.index(
            f"INSERT INTO {t} ({t}) VALUES ('optimize')")
    assert db.conn.execute("PRAGMA cache_size").fetchone()[0] == -3000
    assert db.conn.execute("PRAGMA threads").fetchone()[0] == 0
    assert bulk_load.pending(db) == 0
