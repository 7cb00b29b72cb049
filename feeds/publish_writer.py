"""A publish's last stage: the one writer of the output folder.

Each file is written atomically (a temporary file in the same folder, then os.replace), and
only when its bytes changed, so unchanged feeds keep their mtime, size and ETag; a file whose
name is not safe is skipped with a warning. Each file handed over is noted with the hash of its
bytes and its mtime (`times`), for publish to keep its time when the same bytes were written
there before (store/database/published_files.py). Charts are drawn here, within a time budget
per publish: the file says what it was drawn from, so a current chart is not drawn again.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from mapwatch.feeds import build, chart, pages, paper_files
from mapwatch.feeds.folder_layout import PAPER_TREES, etag_of
from mapwatch.store.atomic import write_atomic
from mapwatch.store.questions.graph import CountPoint

if TYPE_CHECKING:
    from mapwatch.feeds.publish_report import PublishReport

log = logging.getLogger("mapwatch.feeds.publish")
_PAPER_PREFIXES = tuple(f"{tree}/" for tree in PAPER_TREES)


def write_if_changed(root: Path, rel: str, data: bytes) -> bool:
    """Write `data` to root/rel atomically unless the file already holds exactly it."""
    path = root / rel
    try:
        if path.stat().st_size == len(data) and path.read_bytes() == data:
            return False
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, data, mode=0o644)
    return True


class FolderWriter:
    """The one writer of a publish's folder. `timed_papers`: whether the paper files' times are
    noted too (not for `publish --papers all`, whose millions of paper files the feed server
    does not hold: they keep the time they were written)."""

    def __init__(self, root: Path, report: PublishReport, chart_seconds: float, *, timed_papers: bool = True) -> None:
        self.root, self.report, self.chart_seconds = root, report, chart_seconds
        self.drawing = 0.0  # seconds spent drawing charts in this publish
        self.timed_papers = timed_papers
        self.times: dict[str, tuple[str, int]] = {}  # path -> (hash of its bytes, mtime)

    def put(self, rel: str, data: bytes) -> None:
        if not build.safe_path(rel):
            log.warning("not publishing %r: unsafe file name", rel)
            self.report.skipped.append(rel)
            return
        if write_if_changed(self.root, rel, data):
            self.report.written.append(rel)
        else:
            self.report.unchanged += 1
        if self.timed_papers or not rel.startswith(_PAPER_PREFIXES):
            self.times[rel] = (etag_of(data).strip('"'), int((self.root / rel).stat().st_mtime))

    @property
    def out_of_chart_time(self) -> bool:
        return self.drawing >= self.chart_seconds

    def chart(self, pid: str, history: Sequence[CountPoint]) -> bool:
        """True when the paper's chart file shows `history`: already (the file says what it was
        drawn from, whatever the base URL), or drawn now. Drawing is the slow part of the pages,
        so it stops after `chart_seconds` of drawing; a chart left out is drawn by a later publish (an
        outdated file is removed meanwhile, so that publish finds it missing)."""
        rel, title = pages.paper_chart_path(pid), paper_files.chart_title(pid)
        if len(history) < 2 or not build.safe_path(rel):
            return False
        path = self.root / rel
        try:
            with path.open("rb") as fh:
                current = chart.drawn_key(fh.read(4096)) == chart.chart_key(history, title)
        except OSError:
            current = False
        if current:
            self.report.unchanged += 1
            return True
        if self.out_of_chart_time:
            path.unlink(missing_ok=True)
            self.report.charts_pending += 1
            return False
        started = time.perf_counter()
        png = chart.count_chart_png(history, title=title)
        self.drawing += time.perf_counter() - started
        self.report.chart_seconds = self.drawing
        if png is None:
            return False
        self.put(rel, png)
        self.report.charts += 1
        return True

    @contextmanager
    def pages_timer(self) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.report.page_seconds += time.perf_counter() - started
