"""Reading and parsing pages for the ingest: in this process, or in a pool of worker processes.

The ingest hands over what to read in page order (a file to read, or the bytes of a page fed
to it) and gets back, in the same order, each page as the rows to store
(`store.database.prepared.Prepared`) or its rejection. A large ingest reads and parses in worker
processes (both cores: the workers parse while the one writer stores the batches before);
a small one (`POOL_THRESHOLD` pages or fewer to read) does it in-process and starts no pool.
Order is kept, so the stored result is exactly that of the one-process ingest (docs/pages.md,
"mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]"). Every page is parsed against the same `today`, the
ingest's clock's date
(the latest date a page may claim: store/pages/page_dates.py), handed to the workers with each chunk.
"""

from __future__ import annotations

import hashlib
import multiprocessing
import os
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from datetime import date
from pathlib import Path

from mapwatch.store.database.prepared import Prepared, SourceInfo, prepare
from mapwatch.store.database.save import Rejection
from mapwatch.store.errors import FetchError, ParseError
from mapwatch.store.pages.files import HTML_SUFFIXES, TEXT_SUFFIXES, FilePage
from mapwatch.store.pages.parse import MAX_PAGE_BYTES, parse_document, parse_page

POOL_THRESHOLD = 2_000  # pages to read; a pool's start (~0.5 s) pays for itself above this
CHUNK = 64  # pages per task sent to a worker
# Pages parsed ahead of the writer: more than a batch (ingest.POOL_BATCH_SIZE), so the workers
# parse the next batch while the writer stores one; bounds memory when the writer lags.
IN_FLIGHT_PAGES = 3_200
# CPU priority steps a parse worker takes below the process that started it (as `nice`): the
# writer, the ingest's critical path, and the bot's answers come before parsing ahead.
WORKER_NICE = 5

# What to read: a file (path, location) or a page's bytes (None, location, data, size, version).
FileItem = tuple[str, str]
FedItem = tuple[None, str, bytes | None, int | None, int | None]
Item = FileItem | FedItem
Outcome = Prepared | Rejection


def read_file(path: Path, location: str) -> FilePage:
    """A page file's bytes, validators and hash, for a path whose location is known."""
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read(MAX_PAGE_BYTES + 1)
    except OSError as e:
        raise FetchError(f"{path}: {e.strerror or e}") from None
    return FilePage(location=location, data=data, sha256=hashlib.sha256(data).hexdigest(),
                    size=st.st_size, mtime_ns=st.st_mtime_ns)


def _parse_file(path: Path, location: str, today: date, legacy: bool) -> Outcome:
    f = read_file(path, location)
    try:
        # .txt and .md files are text; any other page file (.html, .htm, or a file named
        # explicitly) is read as HTML when it is an HTML document (docs/pages.md, "Page formats").
        suffix = path.suffix.lower()
        if suffix in TEXT_SUFFIXES:
            page = parse_page(f.data, today=today)
        else:
            page = parse_document(f.data, url=Path(f.location).as_uri(),
                                  content_type="text/html" if suffix in HTML_SUFFIXES else None, today=today)
    except ParseError as e:
        return Rejection(f.location, e.line, e.reason, f.sha256)
    return prepare(page, SourceInfo(f.location, f.sha256, size=f.size, mtime_ns=f.mtime_ns), legacy=legacy)


def _parse_fed(location: str, data: bytes | None, size: int | None, version: int | None, today: date,
               legacy: bool) -> Outcome:
    if data is None:
        return Rejection(location, 0, "page changed but its content was not given")
    sha = hashlib.sha256(data).hexdigest()
    try:
        page = parse_page(data, today=today)
    except ParseError as e:
        return Rejection(location, e.line, e.reason, sha)
    return prepare(page, SourceInfo(location, sha, size=size, mtime_ns=version), legacy=legacy)


def prepare_item(item: Item, today: date, legacy: bool = True) -> Outcome:
    """Read (a file) and parse one page read on `today`: its rows, or why it is rejected.
    `legacy`: the map may hold hashes of the format before (store/pages/page_hash.py)."""
    if item[0] is None:
        return _parse_fed(*item[1:], today, legacy)
    path, location = item
    try:
        return _parse_file(Path(path), location, today, legacy)
    except FetchError as e:
        return Rejection(location, 0, str(e))


def prepare_chunk(items: list[Item], today: date, legacy: bool) -> list[Outcome]:
    return [prepare_item(it, today, legacy) for it in items]


PARENT_POLL_SECONDS = 1.0  # where the kernel cannot signal a worker, how often it looks for its parent
_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _exit_with_parent(parent: int) -> None:
    """End this worker when the ingest that started it dies, even by `kill -9` (no cleanup runs
    there, and a worker blocked on its task queue would otherwise wait for good: fork gave it
    the queue's write end too, so it never sees end-of-file). On Linux the kernel sends it
    SIGKILL when its parent exits (PR_SET_PDEATHSIG); elsewhere a thread checks once a second
    that its parent is still `parent`. Either way, a parent already gone ends it at once.
    (The kernel's signal follows the thread that forked the worker: the pool lives inside one
    call of `prepared_pages`, in the thread that calls it.)"""
    armed = False
    if sys.platform.startswith("linux"):
        import ctypes

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            armed = libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            armed = False
    if os.getppid() != parent:  # the parent died before the signal was armed
        os._exit(1)
    if not armed:
        def watch() -> None:
            while True:
                time.sleep(PARENT_POLL_SECONDS)
                if os.getppid() != parent:
                    os._exit(1)

        threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _start_worker(parent: int | None = None) -> None:
    if parent is not None:
        _exit_with_parent(parent)
    # Ctrl-C reaches the whole process group: the ingest's own process stops the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if hasattr(os, "nice"):  # not on Windows: there the workers parse at the writer's priority
        os.nice(WORKER_NICE)


def _context() -> multiprocessing.context.BaseContext:
    """Fork where there is fork: the workers start at once, and a program that calls the ingest
    from a script without a `__main__` guard is not run again in each worker (as spawn would).
    They only read files and parse (no database, no threads of the parent's are used)."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def worker_count() -> int:
    return max(1, min(os.cpu_count() or 1, 4))


def prepared_pages(items: Iterable[Item], *, pool: bool, today: date, legacy: bool = True) -> Iterator[Outcome]:
    """Each item's outcome, in order: in worker processes if `pool`, else here. `today`: the
    caller's clock's date, the latest a page may claim (store/pages/page_dates.py). `legacy`:
    whether the map may hold a hash of the format before, to compute each page's (False for a
    map with no snapshot: `Prepared.legacy` is then None)."""
    if not pool or worker_count() < 2:
        for it in items:
            yield prepare_item(it, today, legacy)
        return
    workers = worker_count()
    ex = ProcessPoolExecutor(workers, mp_context=_context(), initializer=_start_worker, initargs=(os.getpid(),))
    pending: deque[Future[list[Outcome]]] = deque()
    try:
        chunk: list[Item] = []
        for it in items:
            chunk.append(it)
            if len(chunk) >= CHUNK:
                pending.append(ex.submit(prepare_chunk, chunk, today, legacy))
                chunk = []
                while len(pending) * CHUNK >= IN_FLIGHT_PAGES:
                    yield from pending.popleft().result()
        if chunk:
            pending.append(ex.submit(prepare_chunk, chunk, today, legacy))
        while pending:
            yield from pending.popleft().result()
    finally:
        ex.shutdown(wait=True, cancel_futures=True)
