"""Kill -9 in the middle of an HTML crawl of the map's website (tests/mapsite.py), repeated.

A generated map (tests/pagegen.py) is served as HTML pages with robots.txt and a sitemap, in
a thread of this process; `mapwatch refresh --source http://127.0.0.1:PORT` runs as a child
process and is killed (SIGKILL) once it has stored a random number of pages, up to
twice in a row (every other chain), then run to the end. After every kill the database passes its integrity,
foreign key and FTS5 checks, holds whole batches only (every stored page's citations are
there), and every page it stored is marked checked. Each chain's last run converges: the
database holds what an uninterrupted crawl stores (papers, citations, directions,
placements, abstracts, events), and it fetches the pages the killed runs had not checked
before re-reading the others.

CI: 3 kills in 2 chains over 1,100 pages (3 batches). Long form:
`LIVE_KILLS=12 LIVE_PAGES=1100 python -m pytest -m slow -s tests/system/test_crash_live_map.py`
(`LIVE_SEED` picks the random moments).
"""

from __future__ import annotations

import os
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mapwatch.store.pages.format import format_page
from tests import pagegen
from tests.killpoints import has_stored, kill_when, stored_count
from tests.mapsite import MapSite, serve_site
from tests.system.test_live_map import dump

ROOT = Path(__file__).resolve().parents[2]
KILLS = int(os.environ.get("LIVE_KILLS", "12"))  # the long form's
PAGES = int(os.environ.get("LIVE_PAGES", "1100"))
SEED = int(os.environ.get("LIVE_SEED", "11"))


def refresh_cmd(base: str, db: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "mapwatch", "refresh", "--source", base, "--db", str(db), "--out", str(out),
            "--base-url", "http://feeds.test", "--budget", "100000"]


def run_to_end(base: str, db: Path, out: Path) -> float:
    started = time.monotonic()
    proc = subprocess.run(refresh_cmd(base, db, out), cwd=ROOT, capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    return time.monotonic() - started


def check_after_kill(db: Path, pages: dict[str, set[tuple[str, str]]]) -> tuple[int, set[str]]:
    """Invariants of a database left by a killed crawl; (pages stored, locations checked)."""
    if not db.exists():
        return 0, set()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if "papers" not in tables:
            assert tables <= {"_sqlite_migrations"}, f"a half-made schema: {sorted(tables)}"
            return 0, set()
        conn.execute("INSERT INTO papers_fts(papers_fts) VALUES ('integrity-check')")
        stored = {r[0] for r in conn.execute("SELECT paper_id FROM snapshots")}
        edges = set(conn.execute("SELECT citing_id, cited_id FROM citations").fetchall())
        for pid in stored:  # a stored page has all its citations: no batch was cut
            assert pages[pid] <= edges, pid
        checked = {r[0] for r in conn.execute("SELECT location FROM sources WHERE checked_at IS NOT NULL")}
        stored_at = {r[0] for r in conn.execute("SELECT location FROM sources WHERE sha256 IS NOT NULL")}
        assert stored_at <= checked  # checked_at is written with each batch
        return len(stored), checked
    finally:
        conn.close()


def test_html_crawl_killed_mid_run_converges(tmp_path: Path) -> None:
    kill_chains(tmp_path, total_kills=3, n_pages=1100, seed=11)


@pytest.mark.slow
def test_html_crawl_killed_mid_run_converges_long(tmp_path: Path) -> None:
    kill_chains(tmp_path, total_kills=KILLS, n_pages=PAGES, seed=SEED)


def kill_chains(tmp_path: Path, *, total_kills: int, n_pages: int, seed: int) -> None:
    corpus = pagegen.generate(n_pages).v1
    texts = {p.id: format_page(p) for p in corpus}
    edges = {p.id: {(p.id, it.id) for it in p.builds_on.items} | {(it.id, p.id) for it in p.built_on_by.items}
             for p in corpus}
    rng = random.Random(seed)
    site = MapSite(pages=texts, template="b")
    kills = mid_run = chains = 0
    with serve_site(site):
        site.prerender()
        reference_db = tmp_path / "reference.db"
        duration = run_to_end(site.base, reference_db, tmp_path / "reference-out")
        reference = dump(reference_db)
        assert len(reference["abstracts"]) == n_pages
        while kills < total_kills:
            chains += 1
            db, out = tmp_path / f"chain{chains}.db", tmp_path / f"chain{chains}-out"
            checked: set[str] = set()
            for _ in range(min(2 if chains % 2 == 0 else 1, total_kills - kills)):
                proc = subprocess.Popen(refresh_cmd(site.base, db, out), cwd=ROOT,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                # Killed once the database holds a random number of pages more than before: a
                # moment chosen by what the crawl has stored, not by the clock, so that it lands
                # inside the write window however fast this machine is (the tick's publish after
                # the crawl takes a varying share of an uninterrupted run).
                before = stored_count(db)
                target = rng.randint(before + 1, max(before + 1, int(n_pages * 0.8)))
                if kill_when(proc, has_stored(db, target), 300, what=f"{target} pages stored", interval=0.02):
                    kills += 1  # (else it ended before it stored them)
                stored, checked = check_after_kill(db, edges)
                if 0 < stored < n_pages:
                    mid_run += 1
            first_request = len(site.requests)
            run_to_end(site.base, db, out)
            got = dump(db)
            for table in reference:
                assert got[table] == reference[table], (table, chains)
            # The resumed tick fetched the pages not yet checked before the ones already checked.
            resumed = [p for p, _h in site.requests[first_request:] if p.startswith("/paper/")]
            unchecked = [i for i, p in enumerate(resumed) if f"{site.base}{p}" not in checked]
            rechecked = [i for i, p in enumerate(resumed) if f"{site.base}{p}" in checked]
            if unchecked and rechecked:
                assert sum(i < len(unchecked) for i in unchecked) >= 0.9 * len(unchecked)
    print(f"\n{kills} kills in {chains} chains, {mid_run} inside the crawl's write window "
          f"(uninterrupted crawl {duration:.1f} s)")
    assert mid_run >= 1, f"none of {kills} kills landed inside the write window"
