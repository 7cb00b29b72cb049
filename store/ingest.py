"""Ingest: files and folders -> parse -> save, in batches, with a report.

Unchanged files (same size and mtime as last time) are not even read; a page that
fails to parse is reported and skipped while every other page is stored.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.errors import FetchError, ParseError
from mapwatch.store.files import HTML_SUFFIXES, TEXT_SUFFIXES, FilePage, page_files, read_page_file, stat_key
from mapwatch.store.model import MapPage
from mapwatch.store.parse import MAX_PAGE_BYTES, parse_document, parse_page
from mapwatch.store.save import Rejection, SaveResult, SourceInfo, record_rejections, save_pages
from sqlite_utils import Database

Progress = Callable[[int, int], None]
BATCH_SIZE = 500
INGEST_WAL_AUTOCHECKPOINT = 16_384  # pages of 4 KiB: 64 MiB
INGEST_CACHE_KIB = 131_072  # 128 MiB of SQLite page cache while ingesting


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
    batch_size: int = BATCH_SIZE,
) -> IngestReport:
    """Ingest page files and folders. Raises FetchError if a named path does not exist."""
    files = list(page_files(paths))
    report = IngestReport(source=", ".join(str(p) for p in paths))
    started = clock()
    # For the ingest only (restored afterwards): checkpoint the WAL every few batches instead
    # of after every one (a batch writes more than the default 1,000 WAL pages), and a page
    # cache that holds the indexes' hot pages (the default 2 MiB thrashes on inserts at
    # random keys into the citation and full-text indexes).
    previous = db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
    previous_cache = db.conn.execute("PRAGMA cache_size").fetchone()[0]
    if 0 < previous < INGEST_WAL_AUTOCHECKPOINT:
        db.conn.execute(f"PRAGMA wal_autocheckpoint = {INGEST_WAL_AUTOCHECKPOINT}")
    if _cache_kib(previous_cache) < INGEST_CACHE_KIB:
        db.conn.execute(f"PRAGMA cache_size = -{INGEST_CACHE_KIB}")
    try:
        known = {
            loc: (size, mtime)
            for loc, size, mtime in db.conn.execute("SELECT location, size, mtime_ns FROM sources")
        }
        batch: list[tuple[MapPage, SourceInfo]] = []
        folders: dict[Path, str] = {}
        for done, path in enumerate(files, 1):
            report.pages_read += 1
            location = _location(path, folders)
            try:
                if not force and known.get(location) == stat_key(path):
                    report.skipped += 1
                else:
                    item = _parse_file(path, location)
                    if isinstance(item, Rejection):
                        report.rejected.append(item)
                    else:
                        batch.append(item)
            except FetchError as e:
                report.rejected.append(Rejection(location, 0, str(e)))
            if len(batch) >= batch_size:
                report.saved.add(save_pages(db, batch, clock()))
                batch = []
            if progress:
                progress(done, len(files))
        if batch:
            report.saved.add(save_pages(db, batch, clock()))
    finally:
        if 0 < previous < INGEST_WAL_AUTOCHECKPOINT:
            db.conn.execute(f"PRAGMA wal_autocheckpoint = {int(previous)}")
        if _cache_kib(previous_cache) < INGEST_CACHE_KIB:
            db.conn.execute(f"PRAGMA cache_size = {int(previous_cache)}")
    record_rejections(db, report.rejected, clock())
    log_ingest(db, report, started, clock())
    return report


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


def _read(path: Path, location: str) -> FilePage:
    """`read_page_file`, for a path whose location is already known."""
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read(MAX_PAGE_BYTES + 1)
    except OSError as e:
        raise FetchError(f"{path}: {e.strerror or e}") from None
    return FilePage(location=location, data=data, sha256=hashlib.sha256(data).hexdigest(),
                    size=st.st_size, mtime_ns=st.st_mtime_ns)


def _parse_file(path: Path, location: str | None = None) -> tuple[MapPage, SourceInfo] | Rejection:
    f = read_page_file(path) if location is None else _read(path, location)
    try:
        # .txt and .md files are text; any other page file (.html, .htm, or a file named
        # explicitly) is read as HTML when it is an HTML document (README, "Page formats").
        suffix = path.suffix.lower()
        if suffix in TEXT_SUFFIXES:
            page = parse_page(f.data)
        else:
            page = parse_document(f.data, url=Path(f.location).as_uri(),
                                  content_type="text/html" if suffix in HTML_SUFFIXES else None)
    except ParseError as e:
        return Rejection(f.location, e.line, e.reason, f.sha256)
    return page, SourceInfo(f.location, f.sha256, size=f.size, mtime_ns=f.mtime_ns)


def log_ingest(db: Database, report: IngestReport, started: datetime, finished: datetime) -> None:
    db["ingests"].insert({
        "source": report.source,
        "started_at": started.isoformat(timespec="seconds"),
        "finished_at": finished.isoformat(timespec="seconds"),
        "pages_read": report.pages_read,
        "unchanged": report.unchanged,
        "stale": report.saved.stale,
        "rejected": report.rejected_count,
        "stored": report.stored,
        "new_citations": report.saved.new_citations,
    })

