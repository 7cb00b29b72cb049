"""The ingest's parse workers change nothing stored: a pool ingest and a one-process ingest
of the same folder give identical tables (same rows, same event ids and order), and a
broken page is reported the same way (file, line, reason) while every other page is stored."""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

from bench import generate as gen
from mapwatch.store.database import ingest_pool
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import POOL_BATCH_SIZE, FedPage, ingest_fed, ingest_paths
from tests.conftest import SEED_FILES, FakeClock
from tests.unit.store.test_store_fastpaths import all_rows
from tests.waiting import wait_until

BROKEN = "# A page cut short\n\narXiv: https://arxiv.org/abs/2401.00001 · HTML: https://m.example/paper/2401.00001/\n"


def _folder(tmp_path: Path) -> Path:
    folder = tmp_path / "map"
    m = gen.build_map(260, seed=9, list_items=40)
    gen.write_map(m, folder, 1)
    for f in SEED_FILES:
        shutil.copy(f, folder / f.name)
    (folder / "aa-broken.txt").write_text(BROKEN, encoding="utf-8")
    return folder


def _ingest_twice(tmp_path: Path, folder: Path, name: str, pool: bool) -> tuple[dict, list[list[str]]]:
    db = open_db(tmp_path / f"{name}.db")
    clock = FakeClock()
    first = ingest_paths(db, [folder], clock=clock, pool=pool, batch_size=50)
    clock.advance(days=14)  # to a day snapshot 2 (data through 12 Nov) can be read on
    m = gen.build_map(260, seed=9, list_items=40)
    gen.write_map(m, folder, 2)  # 2% of the pages gain citers
    second = ingest_paths(db, [folder], clock=clock, pool=pool, batch_size=50)
    rows = all_rows(db)
    # the files' mtimes differ between the two folders (written at different times)
    rows["sources"] = sorted(repr(r[:4] + r[5:]) for r in map(ast.literal_eval, rows["sources"]))
    db.close()
    return rows, [[str(r) for r in rep.rejected] + [str(rep.stored), str(rep.saved.new_citations)]
                  for rep in (first, second)]


def test_a_pool_ingest_stores_exactly_what_a_one_process_ingest_stores(tmp_path: Path) -> None:
    one = _folder(tmp_path / "a")
    many = tmp_path / "b" / "map"
    shutil.copytree(one, many)
    rows_one, reports_one = _ingest_twice(tmp_path, one, "one", pool=False)
    rows_pool, reports_pool = _ingest_twice(tmp_path, many, "pool", pool=True)
    # the locations differ by folder only
    rows_pool["sources"] = [r.replace(str(many), str(one)) for r in rows_pool["sources"]]
    rows_pool["snapshots"] = [r.replace(str(many), str(one)) for r in rows_pool["snapshots"]]
    assert len(rows_one["events"]) > 1000 and len(rows_one["snapshots"]) == 262 + 5
    assert rows_pool == rows_one
    reports_pool = [[r.replace(str(many), str(one)) for r in rep] for rep in reports_pool]
    assert reports_pool == reports_one
    assert reports_one[0][0] == f"{one / 'aa-broken.txt'}:4: truncated: the page ends before its lists"


def test_a_small_ingest_starts_no_pool_and_a_large_one_does(tmp_path: Path, monkeypatch) -> None:
    """Also: the pages' legacy hashes are computed only for a map with snapshots."""
    started: list[tuple[bool, bool]] = []
    real = ingest_pool.prepared_pages

    def spy(items, *, pool, today, legacy):  # records the decisions; the real function does the work
        started.append((pool, legacy))
        return real(items, pool=pool, today=today, legacy=legacy)

    monkeypatch.setattr("mapwatch.store.database.ingest.prepared_pages", spy)
    folder = tmp_path / "seeds"
    folder.mkdir()
    for f in SEED_FILES:
        shutil.copy(f, folder / f.name)
    db = open_db(tmp_path / "x.db")
    assert ingest_paths(db, [folder]).stored == len(SEED_FILES)
    monkeypatch.setattr("mapwatch.store.database.ingest.POOL_THRESHOLD", 1)
    assert ingest_paths(db, [folder], force=True).unchanged == len(SEED_FILES)
    assert started == [(False, False), (True, True)]
    db.close()


def test_fed_pages_are_skipped_by_their_version_and_stored_as_files_are(tmp_path: Path) -> None:
    m = gen.build_map(120, seed=4)
    from mapwatch.store.pages.format import format_page

    def pages(snapshot: int, with_data: bool):
        for i in range(m.n):
            version = 2 if snapshot == 2 and i in m.new_citers else 1
            data = format_page(gen.page(m, i, snapshot)).encode() if with_data else None
            yield FedPage(f"gen:{m.ids[i]}", None, version, data)

    db = open_db(tmp_path / "fed.db")
    clock = FakeClock()
    cold = ingest_fed(db, pages(1, True), "generator", clock=clock)
    assert cold.stored == 120 and not cold.rejected
    again = ingest_fed(db, pages(1, False), "generator", clock=clock)  # no content needed
    assert again.skipped == 120 and again.stored == 0 and not again.rejected
    clock.advance(days=14)  # to a day snapshot 2 (data through 12 Nov) can be read on
    changed = ingest_fed(db, pages(2, True), "generator", clock=clock)
    assert changed.stored == len(m.new_citers) and changed.skipped == 120 - len(m.new_citers)
    assert changed.saved.new_citations > 0
    db.close()


def test_ctrl_c_during_a_pool_ingest_keeps_whole_batches_and_leaves_no_worker(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the whole process group, as a terminal sends it) while the parse
    workers run: one line, exit 130, no traceback, every stored batch whole, no process left."""
    import os
    import signal
    import sqlite3
    import subprocess
    import sys

    n = ingest_pool.POOL_THRESHOLD + 5600
    folder = tmp_path / "map"
    gen.write_map(gen.build_map(n, seed=5), folder, 1, check_every=0)
    db = tmp_path / "c.db"
    # Ctrl-C's default action, as in a terminal (a test run started in the background by a
    # non-interactive shell has SIGINT ignored, and children inherit that).
    proc = subprocess.Popen([sys.executable, "-m", "mapwatch", "ingest", str(folder), "--db", str(db), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    def batch_stored_or_ended() -> bool:
        if proc.poll() is not None:
            return True  # (said below)
        try:
            with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as c:
                return c.execute("SELECT count(*) FROM snapshots").fetchone()[0] > 0
        except sqlite3.OperationalError:
            return False  # not created yet

    wait_until(batch_stored_or_ended, 120, what="the ingest to store its first batch")
    assert proc.poll() is None, "the ingest ended before a batch was stored"
    os.killpg(proc.pid, signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.strip() == "mapwatch: interrupted", err
    with sqlite3.connect(db) as c:
        count = c.execute("SELECT count(*) FROM snapshots").fetchone()[0]
    assert 0 < count < n and count % POOL_BATCH_SIZE == 0  # whole batches, the rest absent

    def group() -> str:
        return subprocess.run(["ps", "-o", "pid=,args=", "-g", str(proc.pid)], capture_output=True,
                              text=True).stdout.strip()

    wait_until(lambda: not group(), 10, what="the pool's helper processes to exit right after the ingest",
               interval=0.1, detail=lambda: f"processes left in the group: {group()}")


def test_parse_workers_run_below_the_writer() -> None:
    """A worker lowers its CPU priority as it starts (docs/configuration.md,
    "Configuration": MAPWATCH_BACKGROUND_NICE): the writer and the bot's answers come first."""
    import os
    import sys
    from concurrent.futures import ProcessPoolExecutor

    if not hasattr(os, "nice"):
        import pytest

        pytest.skip("os.nice: not on this platform")
    writer = os.getpriority(os.PRIO_PROCESS, 0)
    with ProcessPoolExecutor(1, mp_context=ingest_pool._context(), initializer=ingest_pool._start_worker) as ex:
        worker = ex.submit(os.getpriority, os.PRIO_PROCESS, 0).result(timeout=60)
    assert worker == min(19, writer + ingest_pool.WORKER_NICE) > writer or writer == 19
    assert sys.platform != "linux" or os.getpriority(os.PRIO_PROCESS, 0) == writer  # the writer kept its own


def _children(pid: int) -> dict[int, str]:
    """The live (not zombie) child processes of `pid`: their pid and start time (/proc)."""
    out = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        state, ppid, started = fields[0], int(fields[1]), fields[19]
        if ppid == pid and state != "Z":
            out[int(entry.name)] = started
    return out


def _alive(pid: int, started: str) -> bool:
    """The process `pid` that started at `started` still runs (a zombie does not; a reused pid is another)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z" and fields[19] == started


def _outliving(workers: dict[int, str]) -> list[int]:
    """The workers (pid: start time) still alive."""
    return sorted(pid for pid, started in workers.items() if _alive(pid, started))


def test_kill_9_of_an_ingest_ends_its_parse_workers(tmp_path: Path) -> None:
    """`kill -9` of a real `mapwatch ingest` while its parse workers run: no worker outlives it
    by more than a few seconds (before, they were left to PID 1 for good, ~33 MB each)."""
    import os
    import signal
    import subprocess
    import sys

    import pytest

    if not Path("/proc/self/stat").exists():
        pytest.skip("needs /proc to find the workers")
    n = ingest_pool.POOL_THRESHOLD + 5600
    folder = tmp_path / "map"
    gen.write_map(gen.build_map(n, seed=5), folder, 1, check_every=0)
    proc = subprocess.Popen([sys.executable, "-m", "mapwatch", "ingest", str(folder), "--db", str(tmp_path / "k.db"),
                             "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    workers: dict[int, str] = {}
    try:
        def workers_seen_or_ended() -> bool:
            nonlocal workers
            workers = _children(proc.pid)
            return len(workers) >= ingest_pool.worker_count() or proc.poll() is not None

        wait_until(workers_seen_or_ended, 120, what="the ingest's parse workers to start", interval=0.02)
        assert proc.poll() is None, "the ingest ended before its workers were seen"
        assert len(workers) == ingest_pool.worker_count() >= 2, f"the workers did not start: {workers}"
        assert all(_alive(pid, started) for pid, started in workers.items())
        proc.kill()  # SIGKILL: no cleanup of any kind runs in the ingest
        proc.wait(timeout=30)
        assert proc.returncode == -signal.SIGKILL
        wait_until(lambda: not _outliving(workers), 5, what="the parse workers to end in \"a few seconds\"",
                   detail=lambda: f"{len(_outliving(workers))} of {len(workers)} parse workers outlived the killed "
                                  f"ingest: {_outliving(workers)}")
    finally:
        for pid, started in workers.items():  # never leave one behind, whatever happened
            if _alive(pid, started):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()


WATCHED_POOL = """
import os, time, types
from concurrent.futures import ProcessPoolExecutor
from mapwatch.store.database import ingest_pool
# As where prctl is missing (the module's view of the platform only): the forked workers watch
# their parent instead.
ingest_pool.sys = types.SimpleNamespace(platform="darwin")
ex = ProcessPoolExecutor(2, mp_context=ingest_pool._context(), initializer=ingest_pool._start_worker,
                         initargs=(os.getpid(),))
assert ex.submit(ingest_pool.worker_count).result() >= 1
print("ready", flush=True)
time.sleep(600)  # until killed
"""


def test_where_prctl_is_missing_a_worker_watches_its_parent(tmp_path: Path) -> None:
    """The fallback of `_exit_with_parent`: a thread that looks for the parent once a second."""
    import os
    import signal
    import subprocess
    import sys

    import pytest

    if not Path("/proc/self/stat").exists() or "fork" not in ingest_pool.multiprocessing.get_all_start_methods():
        pytest.skip("needs /proc and fork")
    proc = subprocess.Popen([sys.executable, "-c", WATCHED_POOL], stdout=subprocess.PIPE, text=True)
    workers: dict[int, str] = {}
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        workers = _children(proc.pid)
        assert len(workers) == 2, workers
        proc.kill()
        proc.wait(timeout=30)
        wait_until(lambda: not _outliving(workers), 5, what="the workers to end with their parent",
                   detail=lambda: f"{len(_outliving(workers))} workers outlived their parent")
    finally:
        for pid, started in workers.items():
            if _alive(pid, started):
                os.kill(pid, signal.SIGKILL)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
