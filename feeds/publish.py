"""Publishing: build every feed from the database and write it into an output folder.

Each file is written atomically (a temporary file in the same folder, then os.replace),
and only when its bytes changed, so unchanged feeds keep their mtime, size and ETag. A file
written again with bytes it had before in that folder (the folder lost: a new disk, emptied)
gets back the mtime it had, so its Last-Modified stays too (store/database/published_files.py).
The folder can be served by `mapwatch serve`, nginx or object storage alike.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from datetime import date
from pathlib import Path

from sqlite_utils import Database

from mapwatch.feeds import build, pages, paper_files
from mapwatch.feeds.folder_layout import GENERATION
from mapwatch.feeds.publish_changes import ALL, TRACKED, Changes, what_changed
from mapwatch.feeds.publish_report import PublishReport
from mapwatch.feeds.publish_writer import FolderWriter, write_if_changed
from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.database import published_files
from mapwatch.store.questions import feed_queries
from mapwatch.store.questions.types import Direction

__all__ = ["ALL", "CHART_SECONDS", "DEFAULT_LIMIT", "TRACKED", "PublishReport", "mark_generation",
           "publish", "write_if_changed"]
DEFAULT_LIMIT = 100
CHART_SECONDS = 5.0  # charts drawn per publish at most (bounded ticks and shutdowns); the next goes on


def publish(db: Database, out_dir: str | Path, base_url: str, *, limit: int = DEFAULT_LIMIT,
            clock: Clock = utc_now, full: bool = False, chart_seconds: float = CHART_SECONDS,
            papers: str = TRACKED) -> PublishReport:
    """Build and write the direction feeds and pages, feeds.opml, the index, the stylesheet
    and script, and the feeds and pages of the papers some channel tracks (`papers="all"`:
    of every paper with a feed, the whole static folder; docs/feeds.md, "Paper feeds on demand"). The other papers'
    files are built on demand by the feed server (feeds/serving/ondemand.py).

    In stages: what changed since the last publish of the same kind into the same folder with
    the same base URL and limit (feeds/publish_changes.py, queries only; the first publish,
    `full=True`, or a missing file rebuilds everything); then, for each direction and paper to
    rebuild, its data read and its files built by the pure builders (feeds/build.py,
    feeds/pages.py, feeds/paper_files.py), each file handed to the one writer of the folder
    (feeds/publish_writer.py). A paper's feed and page (and its chart) are rebuilt together, as
    are a direction's. Ends by marking a new generation of the folder for the server and
    recording the cursors."""
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    report = PublishReport(out_dir=str(root))
    today = clock().date()  # a chart leaves out dates no page can claim (store/pages/page_dates.py)
    changes = what_changed(db, root, base_url, limit, full=full, papers=papers, today=today)
    report.skipped.extend(changes.unsafe)
    out = FolderWriter(root, report, chart_seconds, timed_papers=papers != ALL)
    for d in changes.dirs:
        if changes.direction_current(root, d):
            report.unchanged += 2
        else:
            _direction(db, out, d, limit, base_url, changes.has_page)
    report.incremental = changes.incremental
    if changes.incremental:
        report.unchanged += 2 * (len(changes.paper_ids) - len(changes.todo))
    for pid in changes.todo:
        _paper(db, out, pid, limit, base_url, changes.has_page, today, feed=True)
    # Charts a time-limited publish left out: drawn now (within the time left), with their page.
    done, listed, base = set(changes.todo), set(changes.paper_ids), f"{root}{os.sep}"
    for pid in changes.charted:
        if out.out_of_chart_time:
            break
        if pid in listed and pid not in done and not os.path.exists(base + pages.paper_chart_path(pid)):
            _paper(db, out, pid, limit, base_url, changes.has_page, today, feed=False)
    out.put("feeds.opml", build.opml(changes.dirs, base_url))
    with out.pages_timer():
        example = next(iter(feed_queries.papers_with_pages(db, 1)), None)
        activity = feed_queries.direction_activity(db, *pages.activity_window(clock()))
        out.put("index.html", pages.index_page(changes.dirs, activity, base_url, example))
        out.put(pages.STYLESHEET, pages.static_file(pages.STYLESHEET))
        out.put(pages.SCRIPT, pages.static_file(pages.SCRIPT))
        report.pages += 1
    _keep_times(db, root, out.times)
    on_disk = feed_queries.tracked_papers(db) if papers == ALL else changes.paper_ids
    mark_generation(root, report, [f for pid in on_disk for f in (build.paper_feed_path(pid),
                                                                  pages.paper_page_path(pid),
                                                                  pages.paper_chart_path(pid))])
    _record(db, changes, base_url, limit, clock)
    return report


def _direction(db: Database, out: FolderWriter, d: Direction, limit: int, base_url: str,
               has_page: Callable[[str], bool]) -> None:
    """A direction's feed and page: its data, then its files."""
    citers = feed_queries.direction_citers(db, d.slug, limit)
    out.put(build.direction_feed_path(d.slug), build.direction_feed(d, citers, base_url))
    with out.pages_timer():
        most_cited, by_rank = feed_queries.direction_leaders(db, d.slug, placed=d.papers)
        if isinstance(has_page, paper_files.FeedLookup):  # the papers the page links, in one query
            has_page.prime({c.citer.id for c in citers} | {x.id for c in citers for x in c.cites}
                           | {lp.paper.id for lp in (*most_cited, *by_rank)})
        out.put(pages.direction_page_path(d.slug),
                pages.direction_page(d, citers, most_cited, by_rank, base_url, has_page))
        out.report.pages += 1


def _paper(db: Database, out: FolderWriter, pid: str, limit: int, base_url: str, has_page: Callable[[str], bool],
           today: date, *, feed: bool) -> None:
    """A paper's feed (with `feed`), chart and page: its data, then its files."""
    data = paper_files.paper_data(db, pid, limit)
    if data is None:
        return
    if feed:
        out.put(build.paper_feed_path(pid), paper_files.paper_feed(data, base_url))
    with out.pages_timer():
        history = paper_files.chart_history(db, pid, today)
        if isinstance(has_page, paper_files.FeedLookup):  # the papers the page links, in one query
            has_page.prime({c.citer.id for c in data.citers})
        points = len(history) if out.chart(pid, history) else 0
        out.put(pages.paper_page_path(pid), paper_files.paper_page(data, base_url, points, has_page))
        out.report.pages += 1


def _keep_times(db: Database, root: Path, times: dict[str, tuple[str, int]]) -> None:
    """Files written again with bytes written there before get that time back (before the
    server is told of the new generation, so it never serves the other)."""
    for rel, mtime in published_files.keep_times(db, str(root.resolve()), times).items():
        os.utime(root / rel, (mtime, mtime))


def _record(db: Database, changes: Changes, base_url: str, limit: int, clock: Clock) -> None:
    """The cursors the next publish into the same folder starts from."""
    cursors = published_files.PublishCursors(base_url, limit, changes.cursor, changes.snap, changes.enriched)
    published_files.record_publish(db, changes.key, cursors, clock().isoformat(timespec="seconds"))


def mark_generation(root: Path, report: PublishReport, paper_files_on_disk: list[str]) -> None:
    """Tell a running feed server to reload its table (feeds/serving/folder_table.py) when anything
    was written, with the paper files kept on disk for it to hold in memory too."""
    marker = root / GENERATION
    if report.written or not marker.exists():
        body = {"generation": time.time_ns(), "papers": [f for f in paper_files_on_disk if (root / f).is_file()]}
        write_if_changed(root, GENERATION, json.dumps(body).encode())
