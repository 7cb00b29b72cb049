"""The HTTP refresh's batches (store.database.batch_saver): crawl outcomes in, one batch stored at a time.

Pages, rejections, validators, `checked_at` and the next check (store.sources.crawl_schedule) of every
location tried, papers found (kept to fetch later), and what robots.txt, the sitemaps and the
direction pages said. `take` runs where the crawl does (the event loop) and touches only the
current batch and the report's counts; `store` runs in the refresh's writer (the one thread that
uses the database) and touches only the batch it is given and the report's saved totals, so
the two may run at once. Keeps nothing once a batch is stored (the report holds counts and at
most MAX_LISTED failures and rejections). Schedules count from the tick's start (`plan.now`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlite_utils import Database

from mapwatch.store.clock import Clock, http_date, iso, parse_iso
from mapwatch.store.database.prepared import SourceInfo
from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.database.save import Rejection, record_rejections, save_pages
from mapwatch.store.pages.model import MapPage
from mapwatch.store.sources.change_rate import History, estimate
from mapwatch.store.sources.crawl_outcomes import (
    Discovered,
    Fetched,
    Forgotten,
    Missing,
    NotModified,
    Outcome,
    ResourceSeen,
    Unrecorded,
    Vouched,
)
from mapwatch.store.sources.crawl_plan import ROOM, CrawlPlan
from mapwatch.store.sources.crawl_schedule import (
    DIRECTION_BOUNDS,
    DIRECTION_FAILED_BOUNDS,
    MISSING_BOUNDS,
    PAGE_BOUNDS,
    after_check,
    after_check_by_value,
    page_value,
    recheck_weight,
    spread,
)

if TYPE_CHECKING:
    from mapwatch.store.sources.refresh_report import RefreshReport

MAX_LISTED = 100  # failures and rejections a report lists (all are counted; rejections are stored)


@dataclass(frozen=True)
class _Prior:
    """A location's row before a check: its schedule and its change history."""

    interval_s: int | None
    changed_at: str | None
    checked_at: str | None
    history: History
    weight: float | None = None


def _seconds(since: str | None, now: datetime) -> float | None:
    """Seconds from the time `since` (ISO) to `now`; None when unknown or unreadable."""
    if not since:
        return None
    try:
        return (now - parse_iso(since)).total_seconds()
    except ValueError:
        return None


def _since_change(last_modified: str | None, now: datetime) -> float | None:
    """Seconds from a page's Last-Modified (an HTTP date) to the check at `now`."""
    when = http_date(last_modified)
    return None if when is None else (now - when).total_seconds()


def _history_columns(h: History) -> tuple[int | None, int | None, float | None, int | None, float | None, float | None]:
    """The `sources` columns of a history (NULL before its first compared check) and its rate."""
    if not h.checks:
        return None, None, None, None, None, None
    rate = estimate(h)
    return h.checks, h.checks_unchanged, h.checked_s, h.dated_changes, h.unchanged_s, \
        None if rate is None else round(rate, 6)


@dataclass
class CrawlBatch:
    pages: list[tuple[MapPage, SourceInfo]] = field(default_factory=list)
    rejected: list[Rejection] = field(default_factory=list)
    same: list[SourceInfo] = field(default_factory=list)
    touched: list[tuple[str, str, str]] = field(default_factory=list)  # (location, paper id, what the check found)
    texts: list[tuple[str | None, str]] = field(default_factory=list)
    found: list[tuple[str, str]] = field(default_factory=list)
    resources: list[ResourceSeen] = field(default_factory=list)
    vouched: list[tuple[str, str]] = field(default_factory=list)  # (location, next check)
    forgotten: list[str] = field(default_factory=list)  # locations only a sitemap had named, listed no more


class CrawlSaver:
    def __init__(self, db: Database, report: RefreshReport, clock: Clock, plan: CrawlPlan) -> None:
        self.db, self.report, self.clock, self.now = db, report, clock, plan.now
        self.plan = plan
        self.batch = CrawlBatch()
        # Pages requested although a lastmod said they had not changed, and how many of those had
        # (the tick's evidence about the lastmods: store.sources.sitemap_trust).
        self.lastmod_compared = self.lastmod_missed = 0
        # Pages a sitemap lists that had no row when it was compared: recorded as their rows are stored.
        self.unrecorded: dict[str, tuple[str | None, str]] = {}

    @property
    def pending(self) -> int:
        return len(self.batch.touched)

    def cut(self) -> CrawlBatch:
        batch, self.batch = self.batch, CrawlBatch()
        return batch

    def take(self, out: Outcome | Discovered | ResourceSeen | Vouched | Forgotten | Unrecorded) -> bool:
        """Take an outcome; True for a page's (progress counts those)."""
        report, b = self.report, self.batch
        if isinstance(out, Discovered):
            b.found.append((out.url, out.paper_id))
            return False
        if isinstance(out, ResourceSeen):
            b.resources.append(out)
            return False
        if isinstance(out, Vouched):
            b.vouched.extend(out.pages)
            return False
        if isinstance(out, Forgotten):
            b.forgotten.extend(out.locations)
            return False
        if isinstance(out, Unrecorded):
            self.unrecorded.update(out.pages)
            return False
        found = "same"
        if isinstance(out, Fetched):
            report.pages_read += 1
            info = SourceInfo(out.url, out.sha256, size=out.size, etag=out.etag,
                              last_modified=out.last_modified)
            b.texts.append((out.alternate, out.url))
            if out.error is not None:
                b.rejected.append(Rejection(out.url, out.error.line, out.error.reason, out.sha256 or None))
                found = "rejected"  # read, but says nothing about whether the page changed
            elif out.page is not None:
                b.pages.append((out.page, info))
                found = "page"  # changed if the save stores it
            else:  # identical bytes: keep the new validators
                report.skipped += 1
                b.same.append(info)
        elif isinstance(out, NotModified):
            report.pages_read += 1
            report.skipped += 1
        elif isinstance(out, Missing):
            report.missing += 1
            found = "missing"
        else:
            report.failed_total += 1
            if len(report.failed) < MAX_LISTED:
                report.failed.append(out)
            if not out.requested:  # not checked: it stays first in line
                return True
            found = "failed"
        b.touched.append((out.url, out.paper_id, found))
        return True

    def store(self, b: CrawlBatch) -> None:
        db, report = self.db, self.report
        stored: set[str] = set()
        prior = self._prior([url for url, _pid, _f in b.touched])  # (before saving records this check)
        if b.pages:
            saved = save_pages(db, b.pages, self.clock())
            stored = set(saved.stored)
            b.rejected += saved.rejected
            saved.rejected = []
            report.saved.add(saved)
        if b.rejected:
            record_rejections(db, b.rejected, self.clock())
            report.rejected_total += len(b.rejected)
            report.rejected.extend(b.rejected[:max(0, MAX_LISTED - len(report.rejected))])
        now, started = iso(self.clock()), iso(self.now)
        with db.atomic():
            db.conn.executemany("INSERT INTO sources (location, paper_id) VALUES (?, ?) ON CONFLICT DO NOTHING",
                                b.found)
            db.conn.executemany("UPDATE sources SET etag = ?, last_modified = ? WHERE location = ?",
                                [(i.etag, i.last_modified, i.location) for i in b.same])
            # A page's check counts from the tick's start, not from when its batch is stored: a
            # sitemap lastmod later than that is then a change the check may not have seen.
            db.conn.executemany(
                "INSERT INTO sources (location, paper_id, checked_at) VALUES (?, ?, ?)"
                " ON CONFLICT(location) DO UPDATE SET checked_at = excluded.checked_at",
                [(url, pid, started) for url, pid, _found in b.touched])
            db.conn.executemany("UPDATE sources SET text_url = ? WHERE location = ?", b.texts)
            self._schedule(b.touched, stored, prior, {info.location: info.last_modified for _p, info in b.pages})
            db.conn.executemany("UPDATE sources SET next_check_at = ? WHERE location = ?",
                                [(until, url) for url, until in b.vouched])
            db.conn.executemany("DELETE FROM sources WHERE location = ? AND checked_at IS NULL",
                                [(url,) for url in b.forgotten])
            self._remember_resources(b.resources, now)
            if self.unrecorded:  # what a sitemap lists for the rows stored now (store.sources.listed_pages)
                rows = [(*self.unrecorded.pop(url), url) for url in
                        dict.fromkeys([url for url, _pid in b.found] + [url for url, _pid, _f in b.touched])
                        if url in self.unrecorded]
                db.conn.executemany("UPDATE sources SET listed_lastmod = ?, listed_in = ? WHERE location = ?"
                                    " AND listed_in IS NULL", rows)
        self._weigh_lastmods(b.touched, stored)

    def _weigh_lastmods(self, touched: list[tuple[str, str, str]], stored: set[str]) -> None:
        vouched = self.plan.vouched_same
        for _url, pid, found in touched:
            if pid in vouched and found in ("page", "same"):
                self.lastmod_compared += 1
                self.lastmod_missed += found == "page" and pid in stored

    def _prior(self, locations: list[str]) -> dict[str, _Prior]:
        """What the locations' rows said before this batch: schedule and change history."""
        known: dict[str, _Prior] = {}
        for loc, interval, changed_at, checked_at, n, same, checked_s, dated, unchanged_s, weight in rows_in_chunks(
                self.db, "SELECT location, interval_s, changed_at, checked_at, checks, checks_unchanged, checked_s,"
                " dated_changes, unchanged_s, recheck_weight FROM sources WHERE location IN ({})", locations):
            known[loc] = _Prior(interval, changed_at, checked_at,
                                History(n or 0, same or 0, checked_s or 0.0, dated or 0, unchanged_s or 0.0), weight)
        return known

    def _standing(self, paper_ids: list[str]) -> dict[str, tuple[bool, bool]]:
        """Per paper: whether its "Built on by" list has room (a stated cited-by under ROOM, or
        none), and whether it is placed in a followed direction (store.sources.crawl_schedule's
        `page_value`)."""
        out: dict[str, tuple[bool, bool]] = {}
        for pid, room, followed in rows_in_chunks(
                self.db, "SELECT p.id, coalesce(p.cited_by, 0) < ?, EXISTS (SELECT 1 FROM placements pl JOIN follows f"
                " ON f.direction_slug = pl.direction_slug WHERE pl.paper_id = p.id AND f.disabled_reason IS NULL)"
                " FROM papers p WHERE p.id IN ({})", dict.fromkeys(paper_ids), [ROOM]):
            out[pid] = (bool(room), bool(followed))
        return out

    def _schedule(self, touched: list[tuple[str, str, str]], stored: set[str], prior: dict[str, _Prior],
                  last_modified: dict[str, str | None]) -> None:
        """Each location checked: its next check, sooner when it changed (a new page stored),
        later when not (a rejected page too); a failure is tried again after the shortest interval. A check that
        compared a page with its stored version (changed or not) adds to its change history
        (store.sources.change_rate): the interval since its previous check, and, for a change
        the site dated (Last-Modified, after that check), the time since the change."""
        if not touched:
            return
        standing = self._standing([pid for _url, pid, found in touched if found in ("page", "same")])
        tracked = set(self.plan.tracked)
        rows = []
        for url, pid, found in touched:
            p = prior.get(url) or _Prior(None, None, None, History())
            interval, changed_at = p.interval_s, p.changed_at
            if found == "failed":
                rows.append((interval, iso(self.now + timedelta(seconds=PAGE_BOUNDS.low)), changed_at,
                             *_history_columns(p.history), p.weight, url))
                continue
            changed = found == "page" and pid in stored
            history = p.history
            since = _seconds(p.checked_at, self.now)
            if found in ("page", "same") and since is not None and since > 0:
                history = history.after(since, changed, _since_change(last_modified.get(url), self.now)
                                        if changed else None)
            weight = None
            if found == "missing":
                s = after_check(self.now, interval, changed, changed_at, MISSING_BOUNDS, early=spread(url))
            else:
                room, followed = standing.get(pid, (True, False))
                if history.checks:
                    weight = recheck_weight(estimate(history), page_value(room, pid in tracked, followed))
                s = after_check_by_value(self.now, interval, changed, changed_at, weight, self.plan.recheck_scale,
                                         early=spread(url))
            rows.append((s.interval_s, s.next_check_at, s.changed_at, *_history_columns(history),
                         None if weight is None else round(weight, 6), url))
        self.db.conn.executemany(
            "UPDATE sources SET interval_s = ?, next_check_at = ?, changed_at = ?, checks = ?, checks_unchanged = ?,"
            " checked_s = ?, dated_changes = ?, unchanged_s = ?, change_rate = ?, recheck_weight = ?"
            " WHERE location = ?", rows)

    def _remember_resources(self, resources: list[ResourceSeen], now: str) -> None:
        remember_resources(self.db, self.now, resources, now)


def remember_resources(db: Database, tick: datetime, resources: list[ResourceSeen], now: str) -> None:
    """robots.txt, sitemaps, direction pages: validators (and body) after a 200, the time of
    the check (`now`), and a direction page's next poll (from the tick's start, `tick`)."""
    for r in resources:
        prev = r.previous
        interval, next_at, changed_at = None, None, prev.changed_at if prev else None
        if r.kind == "direction":
            s = after_check(tick, prev.interval_s if prev else None, r.changed, changed_at,
                            DIRECTION_FAILED_BOUNDS if r.failed else DIRECTION_BOUNDS)
            interval, next_at, changed_at = s.interval_s, s.next_check_at, s.changed_at
        elif r.changed:
            changed_at = now
        if r.not_modified:  # a 304 (or a direction page that could not be read): the schedule only
            db.conn.execute(
                "INSERT INTO crawl_resources (location, kind, checked_at, changed_at, next_check_at, interval_s)"
                " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(location) DO UPDATE SET checked_at = excluded.checked_at,"
                " changed_at = excluded.changed_at, next_check_at = excluded.next_check_at,"
                " interval_s = excluded.interval_s", (r.location, r.kind, now, changed_at, next_at, interval))
            continue
        db.conn.execute(
            "INSERT INTO crawl_resources (location, kind, etag, last_modified, sha256, body, checked_at,"
            " changed_at, next_check_at, interval_s) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT(location) DO UPDATE SET kind = excluded.kind, etag = excluded.etag,"
            " last_modified = excluded.last_modified, sha256 = excluded.sha256, body = excluded.body,"
            " checked_at = excluded.checked_at, changed_at = excluded.changed_at,"
            " next_check_at = excluded.next_check_at, interval_s = excluded.interval_s",
            (r.location, r.kind, r.etag, r.last_modified, r.sha256, r.body, now, changed_at, next_at, interval))
