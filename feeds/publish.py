"""Publishing: build every feed from the database and write it into an output folder.

Each file is written atomically (a temporary file in the same folder, then os.replace),
and only when its bytes changed, so unchanged feeds keep their mtime, size and ETag. The
folder can be served by `mapwatch serve`, nginx or object storage alike.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from mapwatch.feeds import build, chart, pages
from mapwatch.store import feed_queries
from mapwatch.store.atomic import write_atomic
from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.graph import CountPoint, count_history
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


def publish(db: Database, out_dir: str | Path, base_url: str, *, limit: int = DEFAULT_LIMIT,
            clock: Clock = utc_now, full: bool = False, chart_seconds: float = CHART_SECONDS) -> PublishReport:
    """Build and write the direction feeds, the paper feeds, feeds.opml, and the web pages
    (index.html, a page per direction and per paper with a feed, the stylesheet and script).

    A paper's feed and page (and its chart) are rebuilt together, as are a direction's.
    Paper feeds are rebuilt only for papers changed since the last publish into the same
    folder with the same base URL and limit (cursors on events and snapshots), direction
    feeds only when anything changed since then; the first publish, `full=True`, or a
    missing file rebuilds everything."""
    root = Path(out_dir)
    root.mkdir(parents=True, exist_ok=True)
    key = str(root.resolve())
    report = PublishReport(out_dir=str(root))
    cursor, snap = feed_queries.last_event_id(db), feed_queries.last_snapshot_id(db)  # read before building

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
        rel, title = pages.paper_chart_path(pid), f"{pid}: cited by, as the map stated it"
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
        if png is None:
            return False
        put(rel, png)
        report.charts += 1
        return True

    def paper_files(pid: str, feed: bool) -> None:
        facts = feed_queries.paper_facts(db, pid)
        if facts is None:
            return
        citers, growths = feed_queries.paper_citers(db, pid, limit), feed_queries.paper_count_growth(db, pid, limit)
        if feed:
            put(build.paper_feed_path(pid), build.paper_feed(
                facts.paper, feed_queries.paper_first_seen(db, pid), citers, growths, base_url))
        with pages_timer():
            history = count_history(db, pid)
            points = len(history) if ensure_chart(pid, history) else 0
            put(pages.paper_page_path(pid), pages.paper_page(facts, citers, growths, points, base_url, has_page))
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
    # A direction feed is built from events, pages and placements: with no new event and no
    # page stored since the last publish, its bytes cannot differ (an idle tick is cheap).
    idle = same_settings and state is not None and (state[2], state[3]) == (cursor, snap)
    papers = feed_queries.followed_papers(db)
    paper_set = frozenset(papers)
    has_page = paper_set.__contains__  # every paper with a feed gets a page (feeds/pages.py)
    for d in dirs:
        rel, page = build.direction_feed_path(d.slug), pages.direction_page_path(d.slug)
        if idle and (root / rel).exists() and (root / page).exists():
            report.unchanged += 2
            continue
        citers = feed_queries.direction_citers(db, d.slug, limit)
        put(rel, build.direction_feed(d, citers, base_url))
        with pages_timer():
            most_cited, by_rank = feed_queries.direction_leaders(db, d.slug)
            put(page, pages.direction_page(d, citers, most_cited, by_rank, base_url, has_page))
            report.pages += 1

    if same_settings and state is not None:
        changed = feed_queries.papers_changed_since(db, state[2], state[3])
        todo = [pid for pid in papers if pid in changed or not (root / build.paper_feed_path(pid)).exists()
                or not (root / pages.paper_page_path(pid)).exists()]
        report.incremental = True
        report.unchanged += 2 * (len(papers) - len(todo))
    else:
        todo = papers
    for pid in todo:
        paper_files(pid, feed=True)
    # Charts a time-limited publish left out: drawn now (within the time left), with their page.
    done = set(todo)
    for pid in feed_queries.papers_with_history(db):
        if drawing[0] >= chart_seconds:
            break
        if pid in paper_set and pid not in done and not (root / pages.paper_chart_path(pid)).exists():
            paper_files(pid, feed=False)
    put("feeds.opml", build.opml(dirs, base_url))
    with pages_timer():
        example = next(iter(feed_queries.papers_with_pages(db, 1)), None)
        activity = feed_queries.direction_activity(db, *pages.activity_window(clock()))
        put("index.html", pages.index_page(dirs, activity, base_url, example))
        put(pages.STYLESHEET, pages.static_file(pages.STYLESHEET))
        put(pages.SCRIPT, pages.static_file(pages.SCRIPT))
        report.pages += 1

    with db.atomic():
        db.conn.execute(
            "INSERT INTO feed_publishes (out_dir, base_url, entry_limit, last_event_id, last_snapshot_id, published_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(out_dir) DO UPDATE SET base_url = excluded.base_url,"
            " entry_limit = excluded.entry_limit, last_event_id = excluded.last_event_id,"
            " last_snapshot_id = excluded.last_snapshot_id, published_at = excluded.published_at",
            (key, base_url, limit, cursor, snap, clock().isoformat(timespec="seconds")))
    return report
