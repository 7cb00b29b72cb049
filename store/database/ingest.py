"""Ingest: files and folders -> parse -> save, in batches, with a report.

Unchanged files (same size and mtime as last time) are not even read; a page that
fails to parse is reported and skipped while every other page is stored.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.database.batch_saver import Progress, save_in_batches
from mapwatch.store.database.bulk_load import BULK_LOAD_THRESHOLD, bulk_load
from mapwatch.store.database.ingest_pool import POOL_THRESHOLD, FileItem, Item, Outcome, prepared_pages
from mapwatch.store.database.pragmas import temporary_pragmas
from mapwatch.store.database.prepared import Prepared
from mapwatch.store.database.rows import chunked, rows_in_chunks, scalar
from mapwatch.store.database.save import Rejection, SaveResult, record_rejections, save_prepared
from mapwatch.store.pages.files import page_files, stat_key

BATCH_SIZE = 500
POOL_BATCH_SIZE = 2_500  # pages per transaction when worker processes parse (a large ingest)
INGEST_WAL_AUTOCHECKPOINT = 16_384  # pages of 4 KiB: 64 MiB
INGEST_CACHE_KIB = 131_072  # 128 MiB of SQLite page cache while ingesting
LARGE_INGEST_PAGES = 50_000  # pages to read above which the ingest takes LARGE_INGEST_CACHE_KIB
LARGE_INGEST_CACHE_KIB = 524_288  # 512 MiB: the indexes of a map of hundreds of thousands of pages


@dataclass
class IngestReport:
    source: str
    pages_read: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    saved: SaveResult = field(default_factory=SaveResult)
    skipped: int = 0  # unchanged since the last run, not even parsed

    @property
    def unchanged(self) -> int:
        return self.skipped + self.saved.unchanged

    @property
    def stored(self) -> int:
        return len(self.saved.stored)

    @property
    def rejected_count(self) -> int:
        return len(self.rejected)


def ingest_paths(
    db: Database,
    paths: Sequence[str | Path],
    *,
    clock: Clock = utc_now,
    progress: Progress | None = None,
    force: bool = False,
    batch_size: int | None = None,
    pool: bool | None = None,
    bulk: bool | None = None,
) -> IngestReport:
    """Ingest page files and folders. Raises FetchError if a named path does not exist.

    Files are read and parsed in worker processes when more than `POOL_THRESHOLD` are to be
    read (`pool` forces either way); into an empty map, more than `BULK_LOAD_THRESHOLD` are
    bulk-loaded (store.database.bulk_load; `bulk` forces either way). The result is the same."""
    files = list(page_files(paths))
    report = IngestReport(source=", ".join(str(p) for p in paths))
    started = clock()
    folders: dict[Path, str] = {}
    to_read: list[FileItem] = []
    for chunk in chunked(files, LOOKUP_CHUNK):
        located = [(path, _location(path, folders)) for path in chunk]
        known = {} if force else _known(db, [loc for _p, loc in located])
        for path, location in located:
            report.pages_read += 1
            try:
                if known and known.get(location) == stat_key(path):
                    report.skipped += 1
                    continue
            except OSError:
                pass  # read below, which reports it in page order
            to_read.append((str(path), location))
    if progress and report.skipped:
        progress(report.skipped, len(files))
    return _ingest_items(db, report, to_read, started, clock, reads=len(to_read), pool=pool, bulk=bulk,
                         batch_size=batch_size, progress=progress, total=len(files))


def ingest_fed(
    db: Database,
    pages: Iterable[FedPage],
    source: str,
    *,
    clock: Clock = utc_now,
    force: bool = False,
    batch_size: int | None = None,
    expected: int = 0,
    bulk: bool | None = None,
) -> IngestReport:
    """Ingest pages given as bytes (not files), e.g. by a generator. Each page comes with a
    location and a version key (size, version): a page whose stored key is the same is
    skipped without its content, as an unchanged file is by its size and mtime; its content
    (`FedPage.data`, None when not given) is read only otherwise. `expected` pages above
    `POOL_THRESHOLD` start the parse workers; above `BULK_LOAD_THRESHOLD`, into an empty map,
    a bulk load (`bulk` forces either way)."""
    report = IngestReport(source=source)
    started = clock()

    def items() -> Iterator[Item]:
        for chunk in chunked(pages, LOOKUP_CHUNK):
            known = {} if force else _known(db, [p.location for p in chunk])
            for p in chunk:
                report.pages_read += 1
                if known and known.get(p.location) == (p.size, p.version):
                    report.skipped += 1
                    continue
                yield (None, p.location, p.data() if callable(p.data) else p.data, p.size, p.version)

    return _ingest_items(db, report, items(), started, clock, reads=expected, pool=None, bulk=bulk,
                         batch_size=batch_size, progress=None, total=0)


def _ingest_items(db: Database, report: IngestReport, items: Iterable[Item], started: datetime, clock: Clock, *,
                  reads: int, pool: bool | None, bulk: bool | None, batch_size: int | None,
                  progress: Progress | None, total: int) -> IngestReport:
    """The ingest's tail, whatever feeds it: parse `items` (about `reads` of them; in worker
    processes above POOL_THRESHOLD unless `pool` says), save them in batches (a bulk load above
    BULK_LOAD_THRESHOLD into an empty map unless `bulk` says), record the rejections, log the run."""
    use_pool = reads > POOL_THRESHOLD if pool is None else pool
    batch_size = batch_size or (POOL_BATCH_SIZE if use_pool else BATCH_SIZE)
    today = started.astimezone(UTC).date()  # the latest date a page may claim (store/pages/page_dates.py)
    # Only a map with snapshots can hold a hash of the format before (store/pages/page_hash.py):
    # into an empty one, no page's legacy hash is computed (a tenth of the parse's CPU).
    legacy = db.conn.execute("SELECT 1 FROM snapshots LIMIT 1").fetchone() is not None
    _store(db, report, prepared_pages(items, pool=use_pool, today=today, legacy=legacy), clock, batch_size,
           progress, total,
           cache_kib=LARGE_INGEST_CACHE_KIB if reads > LARGE_INGEST_PAGES else INGEST_CACHE_KIB,
           bulk=reads > BULK_LOAD_THRESHOLD if bulk is None else bulk)
    record_rejections(db, report.rejected, clock())
    log_ingest(db, report, started, clock())
    return report


@dataclass(frozen=True)
class FedPage:
    location: str
    size: int | None
    version: int | None
    data: bytes | Callable[[], bytes] | None  # the content, or how to get it, or None: not given


LOOKUP_CHUNK = 500


def _known(db: Database, locations: list[str]) -> dict[str, tuple[Any, ...]]:
    """The stored (size, mtime_ns) of these locations (those that have a row)."""
    return {r["location"]: (r["size"], r["mtime_ns"]) for r in rows_in_chunks(
        db, "SELECT location, size, mtime_ns FROM sources WHERE location IN ({})", locations)}


def _store(db: Database, report: IngestReport, outcomes: Iterator[Outcome], clock: Clock, batch_size: int,
           progress: Progress | None, total: int, *, cache_kib: int = INGEST_CACHE_KIB,
           bulk: bool = False) -> None:
    """Save the prepared pages in batches, collect the rejections, under the ingest's pragmas;
    a bulk load (store.database.bulk_load) if `bulk` and the map is empty."""
    # For the ingest only (restored afterwards): checkpoint the WAL every few batches instead
    # of after every one (a batch writes more than the default 1,000 WAL pages), and a page
    # cache that holds the indexes' hot pages (the default 2 MiB thrashes on inserts at
    # random keys into the citation and full-text indexes).
    previous = scalar(db.conn, "PRAGMA wal_autocheckpoint")
    previous_cache = scalar(db.conn, "PRAGMA cache_size")
    if 0 < previous < INGEST_WAL_AUTOCHECKPOINT:
        db.conn.execute(f"PRAGMA wal_autocheckpoint = {INGEST_WAL_AUTOCHECKPOINT}")
    if _cache_kib(previous_cache) < cache_kib:
        db.conn.execute(f"PRAGMA cache_size = -{cache_kib}")
    try:
        with bulk_load(db, bulk) as loading, _load_pragmas(db, loading):
            _save_batches(db, report, outcomes, clock, batch_size, progress, total)
    finally:
        outcomes.close()  # type: ignore[attr-defined]
        if 0 < previous < INGEST_WAL_AUTOCHECKPOINT:
            db.conn.execute(f"PRAGMA wal_autocheckpoint = {int(previous)}")
        if _cache_kib(previous_cache) < cache_kib:
            db.conn.execute(f"PRAGMA cache_size = {int(previous_cache)}")


@contextmanager
def _load_pragmas(db: Database, enabled: bool) -> Iterator[None]:
    """While a bulk load stores its pages (restored after, before its builds; docs/pages.md,
    "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]"):
    - `PRAGMA synchronous = OFF`: SQLite hands its writes to the operating system without waiting
      for the disk (no fsync at each WAL checkpoint). Per the SQLite docs (sqlite.org/pragma.html,
      "synchronous"), a crash of this process still loses nothing committed; an operating-system
      crash or a power loss during the load can corrupt the database file. A bulk load starts only
      on a map with no papers: what is at stake is the load itself and whatever else the file held.
    - `PRAGMA foreign_keys = OFF`: no parent-key lookups for each citation, event, snapshot and
      placement row (2-3 index probes a row, ~25% of the save's CPU). The save writes every
      referenced row first (papers and stubs, then snapshots, directions, then the rows that
      name them), so the rows are the same; tests/system/test_bulk_load.py compares them row for row
      with an ordinary ingest, which checks the keys."""
    if not enabled:
        yield
        return
    with temporary_pragmas(db.conn, synchronous=0, foreign_keys=0):  # 0: OFF
        try:
            yield
        finally:
            if db.conn.in_transaction:  # interrupted mid-batch: that batch is not kept (as bulk_load does)
                db.conn.rollback()  # before foreign_keys is restored: it cannot change in a transaction


class PreparedSaver:
    """The ingest's batches (store.database.batch_saver): prepared pages are stored with `save_prepared`;
    rejections are kept in the report (recorded once the ingest ends)."""

    def __init__(self, db: Database, report: IngestReport, clock: Clock) -> None:
        self.db, self.report, self.clock = db, report, clock
        self.batch: list[Prepared] = []

    @property
    def pending(self) -> int:
        return len(self.batch)

    def take(self, item: Outcome) -> bool:
        if isinstance(item, Rejection):
            self.report.rejected.append(item)
        else:
            self.batch.append(item)
        return True

    def cut(self) -> list[Prepared]:
        batch, self.batch = self.batch, []
        return batch

    def store(self, batch: list[Prepared]) -> None:
        if batch:
            saved = save_prepared(self.db, batch, self.clock())
            self.report.rejected += saved.rejected  # (recorded with the others once the ingest ends)
            saved.rejected = []
            self.report.saved.add(saved)


def _save_batches(db: Database, report: IngestReport, outcomes: Iterator[Outcome], clock: Clock, batch_size: int,
                  progress: Progress | None, total: int) -> None:
    try:
        save_in_batches(PreparedSaver(db, report, clock), outcomes, batch_size, progress, report.skipped,
                        lambda _done: total)
    finally:
        outcomes.close()  # type: ignore[attr-defined]  # the parse workers stop before any build


def _cache_kib(cache_size: int) -> int:
    """PRAGMA cache_size in KiB (negative: KiB; positive: pages, taken as 4 KiB)."""
    return -cache_size if cache_size < 0 else cache_size * 4


def _location(path: Path, folders: dict[Path, str]) -> str:
    """`str(path.resolve())`, resolving each folder once instead of every file's whole path."""
    folder = folders.get(path.parent)
    if folder is None:
        folder = folders[path.parent] = os.path.realpath(path.parent)
    full = os.path.join(folder, path.name)
    return os.path.realpath(full) if os.path.islink(full) or path.name in ("", ".", "..") else full


def log_ingest(db: Database, report: IngestReport, started: datetime, finished: datetime) -> None:
    db.table("ingests").insert({
        "source": report.source,
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": finished.isoformat(timespec="seconds"),
        "pages_read": report.pages_read,
        "unchanged": report.unchanged,
        "stale": report.saved.stale,
        "rejected": report.rejected_count,
        "stored": report.stored,
        "new_citations": report.saved.new_citations,
        "requests": getattr(report, "requests", None),  # HTTP: sent to the site (store.sources.refresh)
    })

