"""Papers by integer keys (migration 0049, issue 44): the views `citations` and `events` give every
row exactly as the tables held it, under text ids.

A database at migration 0048 is filled with a real map (tests/compact_answers.py's generated map,
read twice by this version): its papers, citations, events and their batches, then given what a
long-lived database can hold: citers beyond arXiv and of old-style ids, an id arXiv would not
write, a citer and a paper no `papers` row names (no foreign key stopped one), events deleted
and an id sequence past the last event. After the migration every row of both views is the same,
each id has one key, and the ids no number can stand for are keyed from OUTSIDE_FIRST on. A
migration killed midway is rolled back and made again at the next open.
(tests/system/test_compact_schema.py and test_people_schema.py migrate databases of earlier
versions through 0049 and compare every answer and feed byte.)
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.migrations._paper_keys import OUTSIDE_FIRST, arxiv_key
from mapwatch.store.database.rows import next_ids
from mapwatch.store.questions.queries import citers
from tests.killpoints import kill_inside_migration
from tests.older_schema import beside_generated_map
from tests.seedfacts import own_date

CITATIONS = ("SELECT citing_id, cited_id, first_seen, snapshot_id, at_first_read, provenance, event_id FROM citations"
             " ORDER BY citing_id, cited_id")
EVENTS = "SELECT id, kind, paper_id, citing_id, old_count, new_count, unlisted, snapshot_id, seen_at FROM events"
ODD_CITERS = ("10.1145/3292500.3330701", "hep-th/9901001", "1501.0001")  # papers rows: beyond arXiv, old, odd
UNLISTED_CITER = "0704.00001"  # named by a citation alone: no papers row (and not as arXiv writes it)
UNLISTED_PAPER = "W2741809807"  # named by a count event alone


def _older(tmp_path: Path) -> tuple[Path, list[tuple], list[tuple], int]:
    """A database at 0048 holding a real map and the odd ids above; its citations, events and
    events' id sequence."""
    db = beside_generated_map(tmp_path, "0049_paper_keys")
    path, conn = tmp_path / "older.db", db.conn
    with conn:
        conn.execute("INSERT INTO papers SELECT * FROM src.papers")
        conn.execute("INSERT INTO citation_edges (citing_id, cited_id, first_seen_unix, snapshot_id, at_first_read,"
                     " provenance, event_id) SELECT citing_id, cited_id, unixepoch(first_seen), snapshot_id,"
                     " at_first_read, provenance, event_id FROM src.citations")
        conn.execute("INSERT INTO event_log (id, paper_id, citing_id, old_count, new_count, unlisted, snapshot_id)"
                     " SELECT id, paper_id, citing_id, old_count, new_count, unlisted, snapshot_id FROM src.events"
                     " ORDER BY id")
        conn.execute("INSERT INTO event_batches SELECT * FROM src.event_batches")
        top = conn.execute("SELECT max(id) FROM event_log").fetchone()[0]
        cited = conn.execute("SELECT cited_id FROM citation_edges GROUP BY cited_id ORDER BY count(*) DESC"
                             " LIMIT 1").fetchone()[0]
        when = conn.execute("SELECT max(first_seen_unix) FROM citation_edges").fetchone()[0]
        other = conn.execute("SELECT cited_id FROM citation_edges WHERE cited_id != ? LIMIT 1", (cited,)).fetchone()[0]
        for n, citer in enumerate((*ODD_CITERS, UNLISTED_CITER)):
            if citer != UNLISTED_CITER:
                conn.execute("INSERT INTO papers (id, title, year, has_page, first_seen, updated)"
                             " VALUES (?, ?, 2001, 0, '2026-11-20T12:00:00+00:00', '2026-11-20T12:00:00+00:00')",
                             (citer, f"Odd citer {n}"))
            to = other if citer == UNLISTED_CITER else cited  # a citer without a row is not listed
            conn.execute("INSERT INTO event_log (id, paper_id, citing_id) VALUES (?, ?, ?)", (top + 1 + n, to, citer))
            conn.execute("INSERT INTO citation_edges (citing_id, cited_id, first_seen_unix, event_id)"
                         " VALUES (?, ?, ?, ?)", (citer, to, when, top + 1 + n))
        conn.execute("INSERT INTO event_log (id, paper_id, old_count, new_count, unlisted) VALUES (?, ?, 3, 5, 2)",
                     (top + 5, UNLISTED_PAPER))
        conn.execute("INSERT INTO event_batches (first_id, last_id, seen_at) VALUES (?, ?, ?)",
                     (top + 1, top + 5, "2026-11-30T08:00:00+00:00"))
        conn.execute("DELETE FROM event_log WHERE id IN (5, 6, ?)", (top // 2,))  # gaps
        conn.execute("UPDATE sqlite_sequence SET seq = ? WHERE name = 'event_log'", (top + 9,))
    conn.execute("DETACH src")
    citations = conn.execute(CITATIONS).fetchall()
    events = conn.execute(f"{EVENTS} ORDER BY id").fetchall()
    db.close()
    return path, citations, events, top + 9


@pytest.fixture(scope="module")
def older(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[tuple], list[tuple], int]:
    return _older(tmp_path_factory.mktemp("keys"))


def _copy(older: tuple[Path, list[tuple], list[tuple], int], tmp_path: Path) -> Path:
    path = tmp_path / "older.db"
    path.write_bytes(older[0].read_bytes())
    return path


def test_the_fixture_holds_what_the_test_is_about(older: tuple[Path, list[tuple], list[tuple], int]) -> None:
    _path, citations, events, _seq = older
    assert len(citations) > 2_000 and len(events) > 2_000
    citing = {r[0] for r in citations}
    assert {*ODD_CITERS, UNLISTED_CITER} <= citing and any(arxiv_key(c) for c in citing)
    assert {"citation", "count"} == {r[1] for r in events} and UNLISTED_PAPER in {r[2] for r in events}
    assert 5 not in {r[0] for r in events}


def test_every_citation_and_event_is_the_same_after_the_migration(
        older: tuple[Path, list[tuple], list[tuple], int], tmp_path: Path) -> None:
    path = _copy(older, tmp_path)
    _, citations, events, seq = older
    db = open_db(path)
    conn = db.conn
    # The rewritten tables are in the file, not left in the WAL for every read to look through.
    assert Path(f"{path}-wal").stat().st_size == 0
    assert conn.execute(CITATIONS).fetchall() == citations
    assert conn.execute(f"{EVENTS} ORDER BY id").fetchall() == events
    assert next_ids(db, "event_log") == seq + 1  # an id once used is not used again
    assert conn.execute("SELECT name FROM sqlite_master WHERE name LIKE '%by_id'").fetchall() == []
    assert conn.execute("SELECT name FROM sqlite_sequence WHERE name LIKE '%by_id'").fetchall() == []
    # Each id once; a new-style id is its own number, every other keyed from OUTSIDE_FIRST on.
    keys = dict(conn.execute("SELECT id, key FROM paper_keys").fetchall())
    named = {i for r in citations for i in r[:2]} | {i for r in events for i in r[2:4] if i}
    assert named <= keys.keys() and len(set(keys.values())) == len(keys)
    for pid, key in keys.items():
        assert key == (arxiv_key(pid) if arxiv_key(pid) is not None else key) and (key >= OUTSIDE_FIRST) == (
            arxiv_key(pid) is None), pid
    # The partial index holds the citations of the citers that are not their own number, and only those.
    (old,) = conn.execute("SELECT count(*) FROM citation_edges INDEXED BY citations_cited_seen_old"
                          f" WHERE citing_key >= {OUTSIDE_FIRST}").fetchone()
    assert old == sum(1 for r in citations if arxiv_key(r[0]) is None) >= 4
    assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    db.close()


def test_the_newest_citers_come_in_the_same_order(older: tuple[Path, list[tuple], list[tuple], int],
                                                    tmp_path: Path) -> None:
    """The odd citers share the newest second with the map's own: the ids of one second sort by
    month and arXiv's numbering (their keys, on the index), the others by their own dates (the
    partial index); page by page, every one once (tests/seedfacts.py's `own_date`, as
    tests/unit/store/test_newest_citers.py)."""
    db = open_db(_copy(older, tmp_path))
    cited = next(r[1] for r in older[1] if r[0] == ODD_CITERS[0])
    posted = {pid: own_date(pid, fp, year) for pid, fp, year in db.conn.execute(
        "SELECT id, first_posted, year FROM papers")}
    rows = [(r[0], r[2]) for r in older[1] if r[1] == cited]
    want = [c for c, _seen in sorted(rows, key=lambda r: (r[1], posted[r[0]], r[0]), reverse=True)]
    got = [c.id for n in range(0, len(want), 7)
           for c in citers(db, cited, sort="newest", offset=n, limit=7, authors=False).items]
    assert got == want and set(ODD_CITERS) <= set(want[:10]) and len(want) > 20
    db.close()


def test_a_migration_killed_midway_is_made_again_at_the_next_open(
        older: tuple[Path, list[tuple], list[tuple], int], tmp_path: Path) -> None:
    path, marker = _copy(older, tmp_path), tmp_path / "reached"
    kill_inside_migration(path, marker)
    with closing(sqlite3.connect(path)) as raw:  # rolled back: the tables as they were, no keys
        assert raw.execute("SELECT count(*) FROM sqlite_master WHERE name = 'paper_keys'").fetchone() == (0,)
        assert raw.execute("SELECT count(*) FROM citation_edges").fetchone() == (len(older[1]),)
        assert "citing_id" in {r[1] for r in raw.execute("PRAGMA table_info(citation_edges)")}
    db = open_db(path)
    assert db.conn.execute(CITATIONS).fetchall() == older[1]
    assert db.conn.execute(f"{EVENTS} ORDER BY id").fetchall() == older[2]
