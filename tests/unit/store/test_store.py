"""The store on real SQLite files: the seeds' exact values, history and its rules."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.migrations import migrations
from mapwatch.store.database.save import SourceInfo, save_pages
from tests.conftest import DATA, SEED_FILES, FakeClock, older_snapshot, seed_page, write_page
from tests.seedfacts import assert_seed_facts

DATA_TABLES = ("papers", "citations", "directions", "placements", "snapshots", "events")


def dump(db) -> dict[str, list[tuple]]:
    return {t: db.conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in DATA_TABLES}


def test_seeds_exact_values(db, seeds_dir: Path, clock: FakeClock) -> None:
    report = ingest_paths(db, [seeds_dir], clock=clock)
    assert (report.pages_read, report.stored, report.unchanged, report.rejected) == (2, 2, 0, [])
    assert report.saved.new_citations == 111
    assert_seed_facts(db)


def test_full_text_search_over_titles_and_abstracts(db, seeds_dir: Path, clock: FakeClock) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    hits = [r[0] for r in db.conn.execute(
        "SELECT p.id FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
        " WHERE papers_fts MATCH 'roadmap' ORDER BY p.id")]
    assert hits == ["2507.04136"]  # only in its abstract
    hits = [r[0] for r in db.conn.execute(
        "SELECT p.id FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
        " WHERE papers_fts MATCH 'attention'")]
    assert hits == ["1706.03762"]


def test_newer_snapshot_creates_exactly_the_new_events(db, make_older_seeds, seeds_dir, clock) -> None:
    ingest_paths(db, [make_older_seeds(4)], clock=clock)
    before = dump(db)
    older_edges = set(db.conn.execute("SELECT citing_id, cited_id FROM citations").fetchall())
    last_event = db.conn.execute("SELECT max(id) FROM events").fetchone()[0]
    assert db["papers"].get("2412.10400")["cited_by"] == 67

    clock.advance(days=1)
    report = ingest_paths(db, [seeds_dir], clock=clock)
    assert report.stored == 2
    new_edges = set(db.conn.execute("SELECT citing_id, cited_id FROM citations").fetchall()) - older_edges
    expected = {(it.id, pid) for pid in ("2412.10400", "2507.04136")
                for it in seed_page(pid).built_on_by.items[-4:]}  # type: ignore[union-attr]
    # 2605.02913 is among 2507.04136's last four and already listed by 2412.10400's older page.
    assert new_edges == expected
    events = db.conn.execute(
        "SELECT citing_id, paper_id FROM events WHERE id > ? AND kind = 'citation'", (last_event,)).fetchall()
    assert set(events) == expected and len(events) == len(expected)
    assert report.saved.new_citations == len(expected)
    firsts = {db.conn.execute("SELECT first_seen FROM citations WHERE citing_id = ? AND cited_id = ?",
                              edge).fetchone()[0] for edge in expected}
    assert firsts == {clock.now.isoformat(timespec="seconds")}
    # The stated counts grew by 4: count events say so, and none of the 4 is unlisted.
    counts = db.conn.execute(
        "SELECT paper_id, old_count, new_count, unlisted FROM events WHERE id > ? AND kind = 'count'"
        " ORDER BY paper_id", (last_event,)).fetchall()
    assert counts == [("2412.10400", 67, 71, 0), ("2507.04136", 17, 21, 0)]
    assert db["papers"].get("2412.10400")["cited_by"] == 71
    assert db["snapshots"].count == 4
    assert before["papers"] != dump(db)["papers"]


def test_same_pages_again_write_nothing(db, seeds_dir: Path, clock: FakeClock) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    before = dump(db)
    clock.advance(hours=1)
    report = ingest_paths(db, [seeds_dir], clock=clock)
    assert (report.stored, report.unchanged, report.skipped) == (0, 2, 2)
    # Even when the files are touched (new mtime) and so re-read, the content is known.
    for f in seeds_dir.glob("*.txt"):
        f.write_bytes(f.read_bytes())
    report = ingest_paths(db, [seeds_dir], clock=clock)
    assert (report.stored, report.unchanged, report.skipped) == (0, 2, 0)
    report = ingest_paths(db, [seeds_dir], clock=clock, force=True)
    assert (report.stored, report.unchanged) == (0, 2)
    assert dump(db) == before


def test_older_snapshot_changes_nothing(db, make_older_seeds, seeds_dir, clock) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    before = dump(db)
    clock.advance(days=1)
    report = ingest_paths(db, [make_older_seeds(4)], clock=clock)
    assert (report.stored, report.saved.stale) == (0, 2)
    assert dump(db) == before


def test_unlisted_growth_is_recorded(db, tmp_path: Path, clock: FakeClock) -> None:
    page = seed_page("2412.10400")
    write_page(tmp_path / "a", page)
    ingest_paths(db, [tmp_path / "a"], clock=clock)
    import dataclasses
    from datetime import timedelta
    grown = dataclasses.replace(page, cited_by=75, data_through=page.data_through + timedelta(days=7),
                                built_on_by=dataclasses.replace(page.built_on_by, total=75))
    write_page(tmp_path / "b", grown)
    clock.advance(days=7)
    report = ingest_paths(db, [tmp_path / "b"], clock=clock)
    assert report.saved.new_citations == 0
    assert db.conn.execute("SELECT old_count, new_count, unlisted FROM events WHERE kind = 'count'"
                           ).fetchall() == [(71, 75, 4)]


def test_broken_page_is_reported_and_skipped(db, seeds_dir: Path, clock: FakeClock) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    before = dump(db)
    # A newer, broken version of a stored page, plus broken files beside it.
    (seeds_dir / "2412.10400.txt").write_bytes((DATA / "rejected" / "truncated_mid_list.txt").read_bytes())
    (seeds_dir / "oops.txt").write_bytes((DATA / "rejected" / "html_document.txt").read_bytes())
    newer = older_snapshot(seed_page("2507.04136"), 0, days=-7)  # a week newer, same lists
    write_page(seeds_dir, newer, "2507.04136.txt")
    clock.advance(days=7)
    report = ingest_paths(db, [seeds_dir], clock=clock)
    assert sorted((Path(r.location).name, r.line) for r in report.rejected) == [
        ("2412.10400.txt", 57), ("oops.txt", 1)]
    assert report.stored == 1
    after = dump(db)
    assert after["citations"] == before["citations"]
    assert db["papers"].get("2412.10400")["cited_by"] == 71  # the stored page is intact
    assert db["papers"].get("2507.04136")["data_through"] == "2026-10-21"
    errors = {Path(r["location"]).name: r["reason"] for r in db["ingest_errors"].rows}
    assert set(errors) == {"2412.10400.txt", "oops.txt"}
    # The page is fixed: the error clears.
    write_page(seeds_dir, seed_page("2412.10400"), "2412.10400.txt")
    (seeds_dir / "oops.txt").unlink()
    report = ingest_paths(db, [seeds_dir], clock=clock)
    assert report.rejected == [] and report.unchanged == 2
    assert [Path(r["location"]).name for r in db["ingest_errors"].rows] == ["oops.txt"]


def test_a_failing_batch_rolls_back_whole(db, seeds_dir: Path, clock: FakeClock) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    before = dump(db)
    newer = older_snapshot(seed_page("2412.10400"), 0, days=-7)
    broken = SourceInfo("x", "hash", size=None)
    # A second page in the batch breaks a constraint (NULL title) after the first was written.
    bad = older_snapshot(seed_page("2507.04136"), 0, days=-7)
    import dataclasses
    bad = dataclasses.replace(bad, title=None)  # type: ignore[arg-type]
    with pytest.raises(sqlite3.IntegrityError):
        save_pages(db, [(newer, SourceInfo("a", "h1")), (bad, broken)], clock())
    assert dump(db) == before


def test_database_survives_reopen_with_schema_applied_once(db_path: Path, seeds_dir, clock) -> None:
    db = open_db(db_path)
    ingest_paths(db, [seeds_dir], clock=clock)
    db.close()
    db2 = open_db(db_path)
    assert db2["papers"].count == 99
    assert db2.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db2.conn.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db2.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    names = [r["name"] for r in db2["_sqlite_migrations"].rows]
    assert names[:3] == ["0001_initial", "0002_feeds", "0003_tracking"] and len(names) == len(set(names))  # once each
    assert migrations.pending(db2) == []


def test_seed_files_are_named_by_arxiv_id() -> None:
    assert [f.stem for f in SEED_FILES] == ["2412.10400", "2507.04136"]
