"""Ingest: files and folders -> parse -> save, in batches, with a report.

Unchanged files (same size and mtime as last time) are not even read; a page that
fails to parse is reported and skipped while every other page is stored.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from sqlite_utils import Database

from store.errors import FetchError, ParseError
from store.fetch import page_files, read_page_file, stat_key
from store.model import MapPage
from store.parse import parse_page
from store.save import Rejection, SaveResult, SourceInfo, record_rejections, save_pages

Clock = Callable[[], datetime]
Progress = Callable[[int, int], None]
BATCH_SIZE = 500


def utc_now() -> datetime:
    return datetime.now(UTC)


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
    known = {
        loc: (size, mtime)
        for loc, size, mtime in db.conn.execute("SELECT location, size, mtime_ns FROM sources")
    }
    batch: list[tuple[MapPage, SourceInfo]] = []
    for done, path in enumerate(files, 1):
        report.pages_read += 1
        location = str(path.resolve())
        try:
            if not force and known.get(location) == stat_key(path):
                report.skipped += 1
            else:
                item = _parse_file(path)
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
    record_rejections(db, report.rejected, clock())
    log_ingest(db, report, started, clock())
    return report


def _parse_file(path: Path) -> tuple[MapPage, SourceInfo] | Rejection:
    f = read_page_file(path)
    try:
        page = parse_page(f.data)
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
        "rejected": len(report.rejected),
        "stored": report.stored,
        "new_citations": report.saved.new_citations,
    })

