"""Crash safety of `mapwatch refresh` (store + publish): SIGKILL at random points of its work.

Generated pages (tests/pagegen.py) in two versions; the database holds v1 and its feeds are
published; the refresh reads v2 from a folder or over HTTP (tests/sourceserver.py, in a
thread of this process) and is killed at a random point of its writes. Runs come in chains
(3 to 7, each resuming where the last stopped), and each chain ends with one uninterrupted
run. After every kill: the database passes `integrity_check`, `foreign_key_check` and the
FTS5 check, and the published folder holds only whole, valid Atom files. After each chain:
the database's canonical dump equals an uninterrupted refresh's (over HTTP without the
snapshot and event ids: the order the pages arrive in decides them, and a loaded machine
changes it), and every published feed lists exactly the entries of the feeds an
uninterrupted refresh published (no entry duplicated or lost).

Kill points are found by what the run is seen to have written, never by the clock
(tests/killpoints.py): a run is killed once it has written something (a commit or a feed)
and k feeds, k drawn from the feeds it has still to write (those whose entries are not yet
the uninterrupted run's). The first run of each chain draws k up to half that number: its
kill lands in its write window however loaded the machine is, after its first change to the
database (the pages stored) and with half its feeds or more still to write (feeds follow one
another within milliseconds: a kill aimed just before the last one may come after it), so
the state is neither the one it started from nor the uninterrupted run's. Later runs draw k
up to that number (past their last feed: a kill in the tail, or none). What each kill left
is classified by comparing states, and at least one kill must have landed in the window.

CI: 20 kills over the folder source and 8 over HTTP. Long form:
`REFRESH_KILLS=100 REFRESH_PAGES=2000 python -m pytest -m slow -s tests/system/test_crash_refresh.py`
(`REFRESH_SEED` picks the kill points).
"""

from __future__ import annotations

import contextlib
import functools
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from lxml import etree

from tests import pagegen
from tests.feedcheck import assert_valid_atom
from tests.killpoints import Commits, kill_when
from tests.sourceserver import SourceServer, serve_map
from tests.system.test_crash_safety import arrival_free_dump, canonical_dump

ROOT = Path(__file__).resolve().parents[2]
ATOM = "{http://www.w3.org/2005/Atom}"
BASE_URL = "http://feeds.test"
FIRST_SEEN = re.compile(r"<p>(First seen on \d{4}-\d\d-\d\d\.|Known at the first read, on \d{4}-\d\d-\d\d"
                        r" \(already citing it then(; first posted on arXiv \d{4}-\d\d-\d\d)?\)\.)</p>")


def refresh_cmd(source: str, db: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "mapwatch", "refresh", "--source", source, "--db", str(db), "--out", str(out),
            "--base-url", BASE_URL, "--budget", "100000", "--limit", "100000"]


def refresh_to_end(source: str, db: Path, out: Path) -> None:
    proc = subprocess.run(refresh_cmd(source, db, out), cwd=ROOT, capture_output=True, timeout=180)
    assert proc.returncode == 0, proc.stderr.decode()


class Writes:
    """What a running refresh has written since this was made (before it started), as seen
    beside it: whether it has committed to the database, and how many visible feeds it has
    written (publish replaces a changed feed by a new file: a new inode)."""

    def __init__(self, db: Path, out: Path) -> None:
        self.out, self.commits = out, Commits(db)
        self.start = self._feeds()

    def _feeds(self) -> dict[Path, tuple[int, int, int]]:
        feeds = {}
        for path in self.out.rglob("*.atom"):
            if not path.name.startswith("."):
                with contextlib.suppress(FileNotFoundError):  # replaced meanwhile: seen at the next look
                    st = path.stat()
                    feeds[path] = (st.st_ino, st.st_size, st.st_mtime_ns)
        return feeds

    def reached(self, feeds: int) -> bool:
        """The run has written something (a commit or a feed), and at least `feeds` feeds."""
        written = sum(1 for path, key in self._feeds().items() if self.start.get(path) != key)
        return (self.commits.any() or written > 0) and written >= feeds

    def close(self) -> None:
        self.commits.close()


def dump_of(db: Path, *, over_http: bool) -> dict[str, list[tuple]]:
    """`canonical_dump`; over HTTP without the ids the pages' arrival order decides (a row names
    its snapshot by paper and content instead)."""
    return arrival_free_dump(db) if over_http else canonical_dump(db)


def published(out: Path) -> dict[str, list[tuple]]:
    """Per Atom file: its entries (id, title, link, content without the date), sorted.

    Feeds list every entry (no limit): which entries are the newest N, and their order,
    depends on when each batch was stored, which a kill legitimately changes."""
    feeds = {}
    for path in sorted(out.rglob("*.atom")):
        if path.name.startswith("."):
            continue
        root = etree.fromstring(path.read_bytes())
        entries = [
            (e.findtext(f"{ATOM}id"), e.findtext(f"{ATOM}title"), e.find(f"{ATOM}link").get("href"),
             FIRST_SEEN.sub("", e.findtext(f"{ATOM}content") or ""))
            for e in root.findall(f"{ATOM}entry")]
        assert len({e[0] for e in entries}) == len(entries), f"{path}: an entry is duplicated"
        feeds[str(path.relative_to(out))] = sorted(entries)
    return feeds


def check_db(db: Path) -> None:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO papers_fts(papers_fts) VALUES ('integrity-check')")
        events = conn.execute("SELECT paper_id, citing_id FROM events WHERE kind = 'citation'").fetchall()
        assert len(events) == len(set(events)), "a citation event is duplicated"
        assert set(events) == {(b, a) for a, b in conn.execute("SELECT citing_id, cited_id FROM citations")}
    finally:
        conn.close()


def check_folder(out: Path, *, full: bool = False) -> int:
    """Every visible published file is whole (well-formed XML; `full`: valid Atom as readers
    see it); returns how many temporary files a kill left."""
    for path in out.rglob("*.atom"):
        if not path.name.startswith("."):
            data = path.read_bytes()
            if full:
                assert_valid_atom(data)
            else:
                assert etree.fromstring(data).tag == f"{ATOM}feed"
    return sum(1 for p in out.rglob(".tmp-*"))


@dataclass
class Scenario:
    name: str
    source: str
    base_db: Path
    base_out: Path
    reference: dict[str, list[tuple]]
    feeds: dict[str, list[tuple]]

    def dump(self, db: Path) -> dict[str, list[tuple]]:
        return dump_of(db, over_http=self.source.startswith("http"))

    def feeds_to_write(self, now: dict[str, list[tuple]]) -> int:
        """Of the feeds `now` (`published`), those a refresh has still to write: whose entries
        are not yet the uninterrupted run's."""
        return sum(1 for rel, entries in self.feeds.items() if now.get(rel) != entries)


@dataclass
class Figures:
    kills: int = 0
    chains: int = 0
    completed_runs: int = 0
    changed_by_kill: int = 0  # kills after which the database held some of the new state
    kills_in_write_window: int = 0  # after the run's first write (database or feeds), before its last
    tmp_left: int = 0  # temporary feed files left by kills (not served: dot-files)
    notes: list[str] = field(default_factory=list)


def make_scenario(name: str, source: str, tmp: Path, v1: Path) -> Scenario:
    base_db, base_out = tmp / f"{name}-base.db", tmp / f"{name}-base-out"
    refresh_to_end(str(v1), base_db, base_out)
    ref_db, ref_out = tmp / f"{name}-ref.db", tmp / f"{name}-ref-out"
    shutil.copy(base_db, ref_db)
    shutil.copytree(base_out, ref_out)
    refresh_to_end(source, ref_db, ref_out)
    check_db(ref_db)
    sc = Scenario(name, source, base_db, base_out, reference={}, feeds=published(ref_out))
    sc.reference = sc.dump(ref_db)
    written = sc.feeds_to_write(published(base_out))
    assert written >= 2, f"{name}: a refresh writes {written} feed(s): no window to kill in"
    return sc


def _fresh(sc: Scenario, db: Path, out: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    shutil.copy(sc.base_db, db)
    shutil.copytree(sc.base_out, out)


def kill_loop(sc: Scenario, tmp: Path, kills: int, seed: int) -> Figures:
    rng = random.Random(seed)
    fig = Figures()
    db, out = tmp / f"{sc.name}-crash.db", tmp / f"{sc.name}-crash-out"
    base_dump = sc.dump(sc.base_db)
    while fig.kills < kills:
        _fresh(sc, db, out)
        fig.chains += 1
        for run in range(rng.randint(3, 7)):
            before = (sc.dump(db), published(out))
            # The point of the run's writes it is killed at, in feeds written: the first run of a
            # chain (from the base state) in its write window, after its first commit and with
            # half its feeds or more still to write; later runs anywhere from their first write
            # to their last feed.
            left = sc.feeds_to_write(before[1])
            feeds = rng.randint(0, left // 2 if run == 0 else left)
            writes = Writes(db, out)  # before the run starts: it sees every write of the run
            try:
                proc = subprocess.Popen(refresh_cmd(sc.source, db, out), cwd=ROOT, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)
                killed = kill_when(proc, functools.partial(writes.reached, feeds), 180,
                                   what=f"the refresh's first write and {feeds} feed(s) written")
            finally:
                writes.close()
            if not killed:
                assert proc.returncode in (0, 1)
                fig.completed_runs += 1
                continue
            fig.kills += 1
            check_db(db)
            fig.tmp_left += check_folder(out)
            after = (sc.dump(db), published(out))
            fig.changed_by_kill += after[0] != base_dump
            if after not in (before, (sc.reference, sc.feeds)):
                fig.kills_in_write_window += 1
        refresh_to_end(sc.source, db, out)  # the end of the chain: one uninterrupted run
        check_db(db)
        check_folder(out, full=True)
        assert sc.dump(db) == sc.reference, f"{sc.name}: re-run differs from an uninterrupted run"
        assert published(out) == sc.feeds, f"{sc.name}: published feeds differ from an uninterrupted run's"
    return fig


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, pagegen.Corpus]]:
    n = int(os.environ.get("REFRESH_PAGES", "100"))
    tmp = tmp_path_factory.mktemp("refresh-crash")
    c = pagegen.generate(n, seed=11)
    pagegen.write(tmp / "v1", c.v1)
    pagegen.write(tmp / "v2", c.v2)
    yield tmp, c


def _run(corpus: tuple[Path, pagegen.Corpus], tmp_path: Path, kind: str, kills: int, seed: int) -> Figures:
    tmp, c = corpus
    if kind == "folder":
        sc = make_scenario("folder", str(tmp / "v2"), tmp_path, tmp / "v1")
        return kill_loop(sc, tmp_path, kills, seed)
    with serve_map(SourceServer()) as server:
        for page in c.v2:
            server.put(page)
        sc = make_scenario("http", server.base, tmp_path, tmp / "v1")
        fig = kill_loop(sc, tmp_path, kills, seed)
        fig.notes.append(f"{len(server.requests)} HTTP requests")
        return fig


# http: 8 kills. Its write window is short (the direction ranks are updated, not recomputed):
# kills at random delays missed it on a loaded machine; the kill points are now found by the
# writes seen (kill_loop).
@pytest.mark.parametrize(("kind", "kills"), [("folder", 20), ("http", 8)])
def test_refresh_killed_at_random_moments(corpus, tmp_path: Path, kind: str, kills: int) -> None:
    started = time.monotonic()
    fig = _run(corpus, tmp_path, kind, kills, int(os.environ.get("REFRESH_SEED", "3")))
    assert fig.kills >= kills
    assert fig.kills_in_write_window >= 1, f"no kill landed between the run's first and last write: {fig}"
    print(f"\nrefresh crash ({kind}): {fig} in {time.monotonic() - started:.1f}s")


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["folder", "http"])
def test_refresh_killed_at_random_moments_long(corpus, tmp_path: Path, kind: str) -> None:
    kills = int(os.environ.get("REFRESH_KILLS", "100"))
    started = time.monotonic()
    fig = _run(corpus, tmp_path, kind, kills, int(os.environ.get("REFRESH_SEED", str(time.time_ns()))))
    assert fig.kills >= kills
    assert fig.kills_in_write_window >= 1, f"no kill landed between the run's first and last write: {fig}"
    print(f"\nrefresh crash ({kind}, long): {fig} in {time.monotonic() - started:.1f}s")
