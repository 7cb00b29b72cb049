"""Crash safety: `mapwatch ingest` killed with SIGKILL at random moments.

Two scenarios, over generated pages (tests/pagegen.py): a first import into an empty
database, and an update (every page thirty days newer, with new citations and larger
counts) over a database holding the first version. After every kill:

- `PRAGMA integrity_check` is ok, the full-text index passes its integrity check, and no
  foreign key is dangling;
- each batch is whole or absent: the pages stored at the new version are exactly the first
  k*500 files (or all), each with every citation its page lists, its stated counts and one
  snapshot; every other page is exactly at its previous version;
- events: one `citation` event per stored citation edge, none duplicated, none without its
  edge; one `count` event per updated page whose stated count grew.

When a chain of kills is over, a last uninterrupted run ends in exactly the state of an
uninterrupted ingest (a canonical dump of every table, ids included, minus timestamps).

Kill points are found by what the run is seen to have stored, never by the clock
(tests/killpoints.py): a run is killed once the database holds a batch boundary drawn at
random (500 pages, 1,000, ...), read beside it. A first import's first run is killed once it
has created the database (during its migration); then the first run of each chain with two
batches or more ahead is killed at a boundary before its last batch, so it lands between
two batches' commits however loaded the machine is; other runs at any of their batch
boundaries, the last one included (the run's tail, or none). At least one kill must have
landed between two batches' commits (some but not all of the run's batches stored).

CI: 20 kills over 1,200 pages. Long form: `CRASH_KILLS=200 CRASH_PAGES=4000 python -m pytest
-m slow tests/system/test_crash_safety.py` (`CRASH_SEED` picks the kill points).
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from mapwatch.store.database.ingest import BATCH_SIZE as BATCH
from mapwatch.store.database.ingest import POOL_BATCH_SIZE
from mapwatch.store.database.ingest_pool import POOL_THRESHOLD
from mapwatch.store.pages.model import MapPage
from tests import pagegen
from tests.killpoints import has_stored, kill_when, stored_count

ROOT = Path(__file__).resolve().parents[2]
TIMESTAMPS = {"first_seen", "updated", "ingested_at", "seen_at", "checked_at", "last_seen", "applied_at",
              # A page's re-check schedule: when and how often it was checked, not what it holds.
              "changed_at", "next_check_at", "interval_s"}
DUMPED = ["papers", "citations", "directions", "placements", "snapshots", "events", "sources",
          "ingest_errors", "sqlite_sequence"]


def run_ingest(folder: Path, db: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mapwatch", "ingest", "-q", str(folder), "--db", str(db)],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def ingest_to_end(folder: Path, db: Path) -> None:
    proc = run_ingest(folder, db)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()


def canonical_dump(db: Path, exclude: frozenset[str] = frozenset()) -> dict[str, list[tuple]]:
    """Every row of every table that holds data, minus timestamps (and the `exclude` columns: a
    name, or `table.name`), in a stable order."""
    conn = sqlite3.connect(db)
    try:
        out = {}
        for table in DUMPED:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({table})")
                    if r[1] not in TIMESTAMPS and r[1] not in exclude and f"{table}.{r[1]}" not in exclude]
            # The ingests log is left out: a killed run logs nothing, the re-run logs itself.
            where = " WHERE name != 'ingests'" if table == "sqlite_sequence" else ""
            out[table] = conn.execute(
                f"SELECT {', '.join(cols)} FROM {table}{where} ORDER BY {', '.join(cols)}").fetchall()
        return out
    finally:
        conn.close()


# Over HTTP the pages arrive in the order the network answers (4 requests at a time; a loaded
# machine swaps some) and are stored in that order: the snapshot and event ids follow it, and so
# do the columns naming a snapshot (compared as the snapshot's paper and content instead).
ARRIVAL_ORDER = frozenset({"snapshots.id", "events.id", "events.snapshot_id", "citations.snapshot_id",
                           "citations.event_id"})
SNAPSHOT_NAMED = {
    "events' snapshots": "SELECT e.kind, e.paper_id, e.citing_id, s.paper_id, s.content_hash FROM events e"
                         " LEFT JOIN snapshots s ON s.id = e.snapshot_id ORDER BY 1, 2, 3, 4, 5",
    "citations' snapshots": "SELECT c.citing_id, c.cited_id, s.paper_id, s.content_hash FROM citations c"
                            " LEFT JOIN snapshots s ON s.id = c.snapshot_id ORDER BY 1, 2, 3, 4",
    "citations' events": "SELECT c.citing_id, c.cited_id, e.citing_id, e.paper_id, e.seen_at = c.first_seen"
                         " FROM citations c LEFT JOIN events e ON e.id = c.event_id ORDER BY 1, 2",
}


def arrival_free_dump(db: Path, exclude: frozenset[str] = frozenset()) -> dict[str, list[tuple]]:
    """`canonical_dump` of a database filled over HTTP, without the ids the pages' arrival order
    decides: each event's and citation's snapshot named by its paper and content, and each
    citation's event by its edge."""
    dump = canonical_dump(db, ARRIVAL_ORDER | exclude)
    conn = sqlite3.connect(db)
    try:
        dump |= {name: conn.execute(query).fetchall() for name, query in SNAPSHOT_NAMED.items()}
    finally:
        conn.close()
    return dump


@dataclass
class Scenario:
    name: str
    base: Path | None  # database to start from (None: empty)
    folder: Path  # the pages ingested under the kills
    pages: list[MapPage]  # what those pages say
    before: dict[str, MapPage]  # what the base holds per paper (empty for a first import)
    reference: dict[str, list[tuple]]  # canonical dump after an uninterrupted ingest
    base_snapshots: int  # snapshots the base holds (its pages)

    def commits_ahead(self, stored: int) -> list[int]:
        """The pages of the folder stored at each commit of a run that finds `stored` of them
        stored: a batch's worth more each, up to all (store.database.ingest: batches of
        POOL_BATCH_SIZE when it reads more than POOL_THRESHOLD files, else BATCH)."""
        size = POOL_BATCH_SIZE if len(self.pages) - stored > POOL_THRESHOLD else BATCH
        return [*range(stored + size, len(self.pages), size), len(self.pages)]


@dataclass
class Figures:
    kills: int = 0
    kills_mid_run: int = 0  # some but not all batches of the run stored
    completed_runs: int = 0
    chains: int = 0


@pytest.fixture(scope="module")
def scenarios(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Scenario]]:
    n = int(os.environ.get("CRASH_PAGES", "1200"))
    tmp = tmp_path_factory.mktemp("crash")
    corpus = pagegen.generate(n)
    pagegen.write(tmp / "v1", corpus.v1)
    pagegen.write(tmp / "v2", corpus.v2)
    base = tmp / "base.db"
    ingest_to_end(tmp / "v1", base)
    ref_update = tmp / "ref-update.db"
    shutil.copy(base, ref_update)
    ingest_to_end(tmp / "v2", ref_update)
    yield [
        Scenario("first import", None, tmp / "v1", corpus.v1, {}, canonical_dump(base), 0),
        Scenario("update", base, tmp / "v2", corpus.v2, {p.id: p for p in corpus.v1}, canonical_dump(ref_update),
                 stored_count(base)),
    ]


def _edges(page: MapPage) -> set[tuple[str, str]]:
    refs = page.builds_on.items if page.builds_on else ()
    citers = page.built_on_by.items if page.built_on_by else ()
    return {(page.id, it.id) for it in refs} | {(it.id, page.id) for it in citers}


def check_after_kill(db: Path, sc: Scenario) -> int:
    """All the invariants of a database left by a killed ingest; returns how many pages of
    the scenario's folder are stored."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "papers" not in tables:  # killed before the schema's (one-transaction) migration committed
            assert tables <= {"_sqlite_migrations"}, f"a half-made schema: {sorted(tables)}"
            return 0
        conn.execute("INSERT INTO papers_fts(papers_fts) VALUES ('integrity-check')")

        locations = {r[0] for r in conn.execute("SELECT location FROM sources")}
        stored_flags = [str((sc.folder / f"{p.id}.txt").resolve()) in locations for p in sc.pages]
        k = sum(stored_flags)
        assert stored_flags == [True] * k + [False] * (len(sc.pages) - k), "stored pages are not a prefix"
        assert k % BATCH == 0 or k == len(sc.pages), f"{k} pages stored: a batch was cut"

        edges = set(conn.execute("SELECT citing_id, cited_id FROM citations").fetchall())
        papers = {r[0]: r[1:] for r in conn.execute(
            "SELECT id, has_page, cited_by, data_through, refs_in_map FROM papers")}
        snaps: dict[str, list[tuple]] = {}
        for pid, through, cited_by in conn.execute(
                "SELECT paper_id, data_through, cited_by FROM snapshots ORDER BY id"):
            snaps.setdefault(pid, []).append((through, cited_by))
        for i, page in enumerate(sc.pages):
            now = page if i < k else sc.before.get(page.id)
            if now is None:
                assert papers.get(page.id, (0,))[0] == 0 and page.id not in snaps
                continue
            assert papers[page.id] == (1, now.cited_by, now.data_through.isoformat(), now.refs_in_map)
            assert _edges(now) <= edges, f"{page.id}: citations of a stored page missing"
            expected_snaps = [(p.data_through.isoformat(), p.cited_by)
                              for p in (sc.before.get(page.id), page if i < k else None) if p is not None]
            assert snaps[page.id] == expected_snaps

        events = conn.execute("SELECT kind, paper_id, citing_id, old_count, new_count FROM events").fetchall()
        citation_events = [(citing, cited) for kind, cited, citing, _o, _n in events if kind == "citation"]
        assert len(citation_events) == len(set(citation_events)), "a citation event is duplicated"
        assert set(citation_events) == edges, "a citation has no event, or an event no citation"
        count_events = sorted((pid, old, new) for kind, pid, _c, old, new in events if kind == "count")
        expected = sorted((p.id, sc.before[p.id].cited_by, p.cited_by) for p in sc.pages[:k]
                          if p.id in sc.before and p.cited_by > sc.before[p.id].cited_by)
        assert count_events == expected
        return k
    finally:
        conn.close()


def kill_loop(scenarios: list[Scenario], tmp: Path, kills: int, seed: int) -> Figures:
    rng = random.Random(seed)
    fig = Figures()
    db = tmp / "crash.db"
    chain_kills = chain_mid_run = 0
    sc = scenarios[0]
    fresh = True
    while fig.kills < kills or not fresh:
        if fresh:
            sc = scenarios[fig.chains % len(scenarios)]
            fig.chains += 1
            for suffix in ("", "-wal", "-shm"):
                Path(f"{db}{suffix}").unlink(missing_ok=True)
            if sc.base:
                shutil.copy(sc.base, db)
            chain_kills, chain_mid_run, fresh, stored = 0, 0, False, 0
        # Where this run is killed: once it has created the database (a first import's first
        # run), else once the folder's pages stored reach one of its commits: before its last
        # one while this chain has no kill between two commits, any of them afterwards.
        commits = sc.commits_ahead(stored)
        if not db.exists():
            point, reached = "the database created", db.exists
        else:
            target = rng.choice(commits[:-1] if len(commits) > 1 and not chain_mid_run else commits)
            point = f"{target} pages stored"
            reached = has_stored(db, sc.base_snapshots + target)
        proc = run_ingest(sc.folder, db)
        try:
            killed = kill_when(proc, reached, 120, what=point, interval=0.01)  # batches: 0.1 s apart at least
        finally:
            err = proc.stderr.read().decode() if proc.stderr else ""
            if proc.stderr:
                proc.stderr.close()
        if killed:
            fig.kills += 1
            chain_kills += 1
            before = stored
            stored = check_after_kill(db, sc)
            if before < stored < len(sc.pages):
                fig.kills_mid_run += 1
                chain_mid_run += 1
        else:
            assert proc.returncode == 0, err
            fig.completed_runs += 1
            stored = len(sc.pages)
        if stored == len(sc.pages) or chain_kills >= 6 or fig.kills >= kills:
            # End of the chain: one more run, uninterrupted, must reach the reference state.
            check_after_kill(db, sc)
            ingest_to_end(sc.folder, db)
            assert canonical_dump(db) == sc.reference, f"{sc.name}: re-run differs from an uninterrupted run"
            fresh = True
    return fig


def test_ingest_killed_at_random_moments(scenarios: list[Scenario], tmp_path: Path) -> None:
    started = time.monotonic()
    fig = kill_loop(scenarios, tmp_path, kills=20, seed=int(os.environ.get("CRASH_SEED", "1")))
    assert fig.kills >= 20 and fig.chains >= 2
    assert fig.kills_mid_run >= 1, f"no kill landed between two batches' commits: {fig}"
    print(f"\ncrash safety: {fig} in {time.monotonic() - started:.1f}s")


@pytest.mark.slow
def test_ingest_killed_at_random_moments_long(scenarios: list[Scenario], tmp_path: Path) -> None:
    kills = int(os.environ.get("CRASH_KILLS", "200"))
    started = time.monotonic()
    fig = kill_loop(scenarios, tmp_path, kills=kills, seed=int(os.environ.get("CRASH_SEED", str(time.time_ns()))))
    assert fig.kills >= kills
    assert fig.kills_mid_run >= 1, f"no kill landed between two batches' commits: {fig}"
    print(f"\ncrash safety (long): {fig} in {time.monotonic() - started:.1f}s")
