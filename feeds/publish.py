"""Publishing: build every feed from the database and write it into an output folder.

Each file is written atomically (a temporary file in the same folder, then os.replace),
and only when its bytes changed, so unchanged feeds keep their mtime, size and ETag. The
folder can be served by `mapwatch serve`, nginx or object storage alike.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mapwatch.feeds import build, chart, pages, paper_files
from mapwatch.feeds.folder_table import GENERATION
from mapwatch.store import feed_index, feed_queries
from mapwatch.store.atomic import write_atomic
from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.graph import CountPoint
from sqlite_utils import Database

log = logging.getLogger(__name__)
DEFAULT_LIMIT = 100
CHART_SECONDS = 5.0  # charts drawn per publish at most (bounded ticks and shutdowns); the next goes on


@dataclass
class PublishReport:
    out_dir: str
    written: list[str] = field(default_factory=list)  # relative paths rewritten
    unchanged: int = 0
    skipped: list[str] = field(default_factory=list)  # unsafe names, not written
    incremental: bool = False  # paper feeds rebuilt only for papers changed since the last publish
    pages: int = 0  # web pages built (index, directions, papers), written or not
    charts: int = 0  # cited-by charts drawn
    charts_pending: int = 0  # charts left for a later publish (time limit)
    page_seconds: float = 0.0  # spent building and writing the pages and charts (bench/ reports it)
    chart_seconds: float = 0.0  # of which drawing the charts

    @property
    def total(self) -> int:
        return len(self.written) + self.unchanged

    def summary(self) -> str:
        s = f"Feeds and pages in {self.out_dir}: {len(self.written):,} written, {self.unchanged:,} unchanged"
        if self.skipped:
            s += f", {len(self.skipped):,} skipped (unsafe names)"
        return s + "."


def default_out_dir() -> str:
    return os.environ.get("MAPWATCH_FEEDS_DIR") or "public"


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


ALL, TRACKED = "all", "tracked"


def publish(db: Database, out_dir: str | Path, base_url: str, *, limit: int = DEFAULT_LIMIT,
            clock: Clock = utc_now, full: bool = False, chart_seconds: float = CHART_SECONDS,
            papers: str = TRACKED) -> PublishReport:
    """Build and write the direction feeds and pages, feeds.opml, the index, the stylesheet
    and script, and the feeds and pages of the papers some channel tracks (`papers="all"`:
    of every paper with a feed, the whole static folder; README: Feeds). The other papers'
    files are built on demand by the feed server (feeds/ondemand.py).

    A paper's feed and page (and its chart) are rebuilt together, as are a direction's.
    Only what changed since the last publish of the same kind into the same folder with the
    same base URL and limit is rebuilt (cursors on events and snapshots): the papers changed
    and the directions they are placed in. The first publish, `full=True`, or a missing
    file rebuilds everything. Ends by marking a new generation of the folder for the server."""
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    key = str(root.resolve()) + ("#papers=all" if papers == ALL else "")
    report = PublishReport(out_dir=str(root))
    cursor, snap = feed_queries.last_event_id(db), feed_queries.last_snapshot_id(db)  # read before building
    feed_index.update(db)  # who newly cites each direction, up to now (store/feed_index.py)
    today = clock().date()  # a chart leaves out dates no page can claim (store/page_dates.py)

    @contextmanager
    def pages_timer() -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            report.page_seconds += time.perf_counter() - started

    drawing = [0.0]  # seconds spent drawing charts in this publish

    def ensure_chart(pid: str, history: Sequence[CountPoint]) -> bool:
        """True when the paper's chart file shows `history`: already (the file says what it was
        drawn from, whatever the base URL), or drawn now. Drawing is the slow part of the pages,
        so it stops after `chart_seconds` of drawing; a chart left out is drawn by a later publish (an
        outdated file is removed meanwhile, so that publish finds it missing)."""
        rel, title = pages.paper_chart_path(pid), paper_files.chart_title(pid)
        if len(history) < 2 or not build.safe_path(rel):
            return False
        path = root / rel
        try:
            with path.open("rb") as fh:
                current = chart.drawn_key(fh.read(4096)) == chart.chart_key(history, title)
        except OSError:
            current = False
        if current:
            report.unchanged += 1
            return True
        if drawing[0] >= chart_seconds:
            path.unlink(missing_ok=True)
            report.charts_pending += 1
            return False
        started = time.perf_counter()
        png = chart.count_chart_png(history, title=title)
        drawing[0] += time.perf_counter() - started
        report.chart_seconds = drawing[0]
        if png is None:
            return False
        put(rel, png)
        report.charts += 1
        return True

    def paper_output(pid: str, feed: bool) -> None:
        data = paper_files.paper_data(db, pid, limit)
        if data is None:
            return
        if feed:
            put(build.paper_feed_path(pid), paper_files.paper_feed(data, base_url))
        with pages_timer():
            history = paper_files.chart_history(db, pid, today)
            points = len(history) if ensure_chart(pid, history) else 0
            put(pages.paper_page_path(pid), paper_files.paper_page(data, base_url, points, has_page))
            report.pages += 1

    def put(rel: str, data: bytes) -> None:
        if not build.safe_path(rel):
            log.warning("not publishing %r: unsafe file name", rel)
            report.skipped.append(rel)
            return
        if write_if_changed(root, rel, data):
            report.written.append(rel)
        else:
            report.unchanged += 1

    dirs = []
    for d in feed_queries.directions(db):
        if build.safe_path(build.direction_feed_path(d.slug)):
            dirs.append(d)
        else:
            log.warning("not publishing direction %r: unsafe slug", d.slug)
            report.skipped.append(build.direction_feed_path(d.slug))
    state = db.conn.execute(
        "SELECT base_url, entry_limit, last_event_id, last_snapshot_id FROM feed_publishes WHERE out_dir = ?",
        (key,)).fetchone()
    same_settings = not full and state is not None and state[0] == base_url and state[1] == limit
    changed: set[str] = set()
    if same_settings and state is not None and (state[2], state[3]) != (cursor, snap):
        changed = feed_queries.papers_changed_since(db, state[2], state[3])
    if papers == ALL:
        paper_ids = feed_queries.followed_papers(db)
        has_page: Callable[[str], bool] = frozenset(paper_ids).__contains__
    else:
        paper_ids, has_page = feed_queries.tracked_papers(db), paper_files.FeedLookup(db)
    # A direction's feed and page are built from the events, pages and placements of the papers
    # placed in it (and the titles of their citers): only the directions of changed papers differ.
    touched = feed_queries.directions_of(db, changed) if same_settings else {d.slug for d in dirs}
    for d in dirs:
        rel, page = build.direction_feed_path(d.slug), pages.direction_page_path(d.slug)
        if d.slug not in touched and (root / rel).exists() and (root / page).exists():
            report.unchanged += 2
            continue
        citers = feed_queries.direction_citers(db, d.slug, limit)
        put(rel, build.direction_feed(d, citers, base_url))
        with pages_timer():
            most_cited, by_rank = feed_queries.direction_leaders(db, d.slug, placed=d.papers)
            if isinstance(has_page, paper_files.FeedLookup):  # the papers the page links, in one query
                has_page.prime({c.citer.id for c in citers} | {x.id for c in citers for x in c.cites}
                               | {lp.paper.id for lp in (*most_cited, *by_rank)})
            put(page, pages.direction_page(d, citers, most_cited, by_rank, base_url, has_page))
            report.pages += 1

    base = f"{root}{os.sep}"  # every paper's files are looked for: os.path on strings, a third of pathlib's cost
    if same_settings:
        todo = [pid for pid in paper_ids if pid in changed or not os.path.exists(base + build.paper_feed_path(pid))
                or not os.path.exists(base + pages.paper_page_path(pid))]
        report.incremental = True
        report.unchanged += 2 * (len(paper_ids) - len(todo))
    else:
        todo = paper_ids
    for pid in todo:
        paper_output(pid, feed=True)
    # Charts a time-limited publish left out: drawn now (within the time left), with their page.
    done, listed = set(todo), set(paper_ids)
    charted = (feed_queries.papers_with_history(db) if papers == ALL else
               [pid for pid in paper_ids if len(paper_files.chart_history(db, pid, today)) >= 2])
    for pid in charted:
        if drawing[0] >= chart_seconds:
            break
        if pid in listed and pid not in done and not os.path.exists(base + pages.paper_chart_path(pid)):
            paper_output(pid, feed=False)
    put("feeds.opml", build.opml(dirs, base_url))
    with pages_timer():
        example = next(iter(feed_queries.papers_with_pages(db, 1)), None)
        activity = feed_queries.direction_activity(db, *pages.activity_window(clock()))
        put("index.html", pages.index_page(dirs, activity, base_url, example))
        put(pages.STYLESHEET, pages.static_file(pages.STYLESHEET))
        put(pages.SCRIPT, pages.static_file(pages.SCRIPT))
        report.pages += 1
    on_disk = feed_queries.tracked_papers(db) if papers == ALL else paper_ids
    mark_generation(root, report, [f for pid in on_disk for f in (build.paper_feed_path(pid),
                                                                  pages.paper_page_path(pid),
                                                                  pages.paper_chart_path(pid))])

    with db.atomic():
        db.conn.execute(
            "INSERT INTO feed_publishes (out_dir, base_url, entry_limit, last_event_id, last_snapshot_id, published_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(out_dir) DO UPDATE SET base_url = excluded.base_url,"
            " entry_limit = excluded.entry_limit, last_event_id = excluded.last_event_id,"
            " last_snapshot_id = excluded.last_snapshot_id, published_at = excluded.published_at",
            (key, base_url, limit, cursor, snap, clock().isoformat(timespec="seconds")))
    return report


def mark_generation(root: Path, report: PublishReport, paper_files_on_disk: list[str]) -> None:
    """Tell a running feed server to reload its table (feeds/folder_table.py) when anything
    was written, with the paper files kept on disk for it to hold in memory too."""
    marker = root / GENERATION
    if report.written or not marker.exists():
        body = {"generation": time.time_ns(), "papers": [f for f in paper_files_on_disk if (root / f).is_file()]}
        write_if_changed(root, GENERATION, json.dumps(body).encode())
