"""What one tick of the HTTP crawl sets out to fetch, read from the database (store.sources.refresh
hands it to store.sources.http_source).

- tracked papers (the `priority` the caller gives: `mapwatch run` and `mapwatch refresh` pass the
  tracked papers): every tick (at least daily when a trusted sitemap vouches for their pages:
  store.sources.sitemap_trust);
- pages due for a re-check (`sources.next_check_at` passed, or never scheduled), the most
  overdue first; papers with a page never checked over HTTP count as due;
- unseen papers (listed on a page, or found on a direction page, never fetched), the newest
  ids first: `unseen_share` of the budget is kept for them, whatever else is due;
- direction pages due (`crawl_resources`), the followed directions' every tick.

The crawl reads the sitemaps before it queues any of these: a page a trusted `lastmod` vouches
for is not requested (store.sources.sitemap_trust).

Everything else is not due: it is not requested this tick (store.sources.crawl_schedule).

Once every paper with a page has been checked over HTTP on the host, the plan is read through
the indexes (migration 0027): the pages due, most overdue first, as many as the budget (all of
them for a host with a sitemap, whose lastmods may vouch for them), the unseen papers and the
frontier, and the validators of the pages planned only; not every `sources` row and paper.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal
from urllib.parse import urlsplit

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.ids import arxiv_only, is_outside_key, normalize_id
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.model import MapPage
from mapwatch.store.sources.crawl_schedule import (
    DUE_TOLERANCE,
    REFERENCE,
    newest_first,
    recheck_scale,
)
from mapwatch.store.sources.known_papers import KnownIds, known_papers
from mapwatch.store.sources.plan_counts import audit_pool, count_due, count_not_due, pages_unchecked, total_weight
from mapwatch.store.sources.sitemap_trust import read_trust

UNSEEN_SHARE = 4  # 1/4 of the budget is kept for unseen papers
# Papers a host's sitemaps and direction pages may name before a page confirms them (the
# frontier): past it, new names are not kept (a sitemap of 500,000 made-up ids made as many rows).
MAX_FRONTIER = 100_000
# A page whose "Built on by" list still names every citer (fewer than the 30 a list shows)
# names a new citer too: where a tracked paper's new citers, unnamed on its own full list, can be
# found. Up to 1/SEARCH_SHARE of the budget of such pages is read when that search is needed.
ROOM = 30
SEARCH_SHARE = 4
DEFAULT_TEMPLATE = "{base}/paper/{id}/"


def page_url(template: str, base: str, paper_id: str) -> str:
    return template.format(base=base.rstrip("/"), id=paper_id)


def split_source(source: str) -> tuple[str, str]:
    """(base, template) for a source URL: a URL holding `{id}` is the template itself."""
    if "{id}" in source:
        parts = urlsplit(source.replace("{id}", "x"))
        return f"{parts.scheme}://{parts.netloc}", source
    return source.rstrip("/"), DEFAULT_TEMPLATE


ResourceKind = Literal["robots", "sitemap", "direction"]  # what a `crawl_resources` row holds


@dataclass(frozen=True)
class Validators:
    etag: str | None
    last_modified: str | None
    sha256: str | None


@dataclass(frozen=True)
class Resource:
    """robots.txt, a sitemap or a direction page, as last read (a `crawl_resources` row)."""

    location: str
    kind: ResourceKind
    etag: str | None = None
    last_modified: str | None = None
    sha256: str | None = None
    body: bytes | None = None  # robots.txt and sitemaps: what a 304 stands for
    changed_at: str | None = None
    next_check_at: str | None = None
    interval_s: int | None = None
    checked_at: str | None = None
    # A sitemap file whose pages' lastmods are recorded (store.sources.listed_pages): the pages
    # it lists, and those with a date-time lastmod; None before it was first read in full.
    listed: int | None = None
    dated: int | None = None


def conditional_headers(known: Resource | None, keep_body: bool) -> dict[str, str]:
    """The headers asking whether a resource changed since it was `known` (only when what a
    304 stands for is known: for robots.txt and sitemaps, `keep_body`, its kept body, or for a
    sitemap file, the pages it lists, recorded)."""
    headers: dict[str, str] = {}
    if known is not None and (known.body is not None or not keep_body or known.listed is not None):
        if known.etag:
            headers["If-None-Match"] = known.etag
        if known.last_modified:
            headers["If-Modified-Since"] = known.last_modified
    return headers


@dataclass
class CrawlPlan:
    now: datetime  # the tick's start: every scheduling decision is against it
    tracked: list[str] = field(default_factory=list)
    due: list[str] = field(default_factory=list)
    unseen: list[str] = field(default_factory=list)  # newest first
    unseen_share: int = 0
    not_due: int = 0  # pages known but not due this tick
    # Paper ids the database has a row for (read once per process: store.sources.known_papers).
    known: KnownIds = field(default_factory=KnownIds)
    # Papers only a sitemap or a direction page named (a `sources` row, no page read, no paper
    # row): at most MAX_FRONTIER, and forgotten when a covering sitemap stops listing them.
    frontier: dict[str, str] = field(default_factory=dict)  # paper id -> its location
    checked: dict[str, str] = field(default_factory=dict)  # location -> checked_at
    validators: dict[str, Validators] = field(default_factory=dict)
    alternates: dict[str, str] = field(default_factory=dict)
    resources: dict[str, Resource] = field(default_factory=dict)
    directions: list[str] = field(default_factory=list)  # direction pages to poll, followed first
    followed: set[str] = field(default_factory=set)  # polled every tick
    counts: dict[str, int | None] = field(default_factory=dict)  # tracked papers' stored cited-by
    lastmod_believed: bool = True  # the host's sitemap lastmods (store.sources.sitemap_trust)
    pages_checked: int = 0  # papers with a page that were checked over HTTP
    all_checked: bool = False  # every paper with a page was (the indexed plan: plan_counts.kept_checked)
    unplanned: int = 0  # pages due past those planned (`due` holds the budget's): left for the next tick
    # Filled by the crawl: pages requested although a lastmod said they had not changed since
    # their last check (the evidence for or against the lastmods).
    vouched_same: set[str] = field(default_factory=set)
    # Pages with room in their "Built on by" list, the most cited first (most likely to be
    # cited next): read when a tracked paper's new citers are named nowhere the tick looked.
    roomy: list[str] = field(default_factory=list)
    # Papers checked before on this host whose "Built on by" list is full (a stated cited-by of
    # ROOM or more): a change the sitemaps announce on their pages cannot name a new citer, so it
    # is read after the re-checks (a page never checked here is a first read, not a re-order).
    full: set[str] = field(default_factory=set)
    # The square-root rule's scale for the pages' re-check periods (crawl_schedule.recheck_scale).
    recheck_scale: float = REFERENCE
    # What the sitemaps listed for the pages planned (store.sources.listed_pages): paper id ->
    # (lastmod, the sitemap file listing it); the frontier's too.
    listed: dict[str, tuple[str | None, str]] = field(default_factory=dict)
    # The vouched pages the audits draw from (store.sources.lastmods.Lastmods.audit): the listed
    # pages checked longest ago and pages drawn at random; None: every page the sitemaps vouch for.
    audit_pool: list[str] | None = None

    def direction_due(self, url: str) -> bool:
        """Followed, never read, or due by DUE_TOLERANCE after the tick's start (a tick that starts a
        few seconds earlier in its hour than the last one still reads the hourly pages)."""
        r = self.resources.get(url)
        return url in self.followed or r is None or not r.next_check_at or r.next_check_at <= iso(
            self.now + timedelta(seconds=DUE_TOLERANCE))

    def unlisted_growth(self, page: MapPage) -> int:
        """How many citers a tracked paper gained that its page does not list (its cited-by
        count grew past what it lists), 0 if none; the paper's count is updated. Those new
        citers are not named on its page, so the crawl looks for them: its directions' pages,
        whether due or not, the newest unseen papers ahead of the re-checks, and, if no new page
        read by then names the paper, the pages with room in their lists (`roomy`)."""
        if page.id not in self.counts or page.cited_by is None:
            return 0
        before = self.counts[page.id]
        self.counts[page.id] = page.cited_by
        listed = len(page.built_on_by.items) if page.built_on_by else 0
        if before is None or page.cited_by <= before or listed >= page.cited_by:
            return 0
        return page.cited_by - before


def plan_crawl(db: Database, source: str, now: datetime, budget: int, priority: Sequence[str] = (),
               rng: random.Random | None = None) -> CrawlPlan:
    """The tick's plan for `source` at `now` (see the module's docstring). Once every paper with a
    page has been checked over HTTP on this host, the plan is read through the indexes
    (`_plan_indexed`): the pages due, most overdue first, up to the budget (every one due when
    the host has a sitemap: those its lastmods vouch for are not requested), the unseen papers,
    the validators of those only, so a tick's planning grows with what is due, not with the
    map; else from every row (`_plan_full`)."""
    base, template = split_source(source)
    host = urlsplit(base).netloc.lower()
    head, tail = _location_parts(template, base)
    pages = pages_unchecked(db, host, head, tail)
    if pages is None:
        return _plan_full(db, source, now, budget, priority)
    return _plan_indexed(db, host, head, tail, now, budget, priority, pages, rng)


def location_parts(source: str) -> tuple[str, str]:
    """(head, tail) of `source`'s page locations: a paper's is head + id + tail."""
    base, template = split_source(source)
    return _location_parts(template, base)


def _location_parts(template: str, base: str) -> tuple[str, str]:
    """(head, tail): a paper's page location is head + id + tail (`page_url`)."""
    marker = "\x00"
    url = page_url(template, base, marker)
    head, _sep, tail = url.partition(marker)
    return head, tail


def _sitemap_host(db: Database, host: str) -> bool:
    """Whether the host's robots.txt named a sitemap read before (its lastmods need every page's last check)."""
    return any(urlsplit(loc).netloc.lower() == host for (loc,) in db.conn.execute(
        "SELECT location FROM crawl_resources WHERE kind = 'sitemap'"))


def _plan_indexed(db: Database, host: str, head: str, tail: str, now: datetime, budget: int,
                  priority: Sequence[str], pages: int, rng: random.Random | None = None) -> CrawlPlan:
    """The plan read through the indexes (see `plan_crawl`); the same plan as `_plan_full`'s on
    a database where every paper with a page was checked over HTTP, but for the due list's
    length (the budget's, without a sitemap) and the validators (only the pages planned)."""
    now_s = iso(now)
    plan = CrawlPlan(now=now)
    plan.tracked = list(dict.fromkeys(priority))
    tracked = set(plan.tracked)
    with_sitemap = _sitemap_host(db, host)
    plan.known = KnownIds(known_papers(db))
    plan.pages_checked, plan.all_checked = pages, True  # (every one, or the full plan is made)
    limit = None if with_sitemap else budget + len(tracked)
    due: list[tuple[bool, str, str]] = []  # (no page, most overdue first): pages before 404s
    for page in (1, 0):
        for pid, key in db.conn.execute(
                "SELECT s.paper_id, s.next_check_at FROM sources s JOIN papers p ON p.id = s.paper_id"
                " WHERE s.next_check_at IS NOT NULL AND s.next_check_at <= ? AND s.location = ? || s.paper_id || ?"
                " AND p.has_page = ? ORDER BY s.next_check_at LIMIT ?",
                (now_s, head, tail, page, -1 if limit is None else limit)):
            if pid not in tracked:
                due.append((not page, key, pid))
        for pid, key in db.conn.execute(
                "SELECT s.paper_id, s.checked_at FROM sources s JOIN papers p ON p.id = s.paper_id"
                " WHERE s.next_check_at IS NULL AND s.checked_at IS NOT NULL AND s.location = ? || s.paper_id || ?"
                " AND p.has_page = ? ORDER BY s.checked_at LIMIT ?",
                (head, tail, page, -1 if limit is None else limit)):
            if pid not in tracked:
                due.append((not page, key, pid))
        if limit is not None and len(due) >= limit:
            break
    due.sort()
    plan.due = [pid for _missing, _key, pid in due][:limit]
    # The counts of what is left and what is not due: read from the schedule's indexes alone (every
    # location scheduled, this host's pages in all but a database that follows several hosts).
    if limit is not None and len(due) >= limit:  # more are due than planned: they are left for the next tick
        (total,) = db.conn.execute(
            "SELECT (SELECT count(*) FROM sources WHERE next_check_at IS NOT NULL AND next_check_at <= ?)"
            " + (SELECT count(*) FROM sources WHERE next_check_at IS NULL AND checked_at IS NOT NULL)",
            (now_s,)).fetchone()
        plan.unplanned = max(0, total - count_due(db, [head + pid + tail for pid in plan.tracked], now_s)
                             - len(plan.due))
    (later,) = db.conn.execute("SELECT count(*) FROM sources WHERE next_check_at IS NOT NULL AND next_check_at > ?",
                               (now_s,)).fetchone()
    plan.not_due = later - count_not_due(db, [head + pid + tail for pid in plan.tracked], now_s)
    unseen = [pid for (pid,) in db.conn.execute(
        f"SELECT p.id FROM papers p WHERE p.has_page = 0 AND {arxiv_only('p.id')} AND NOT EXISTS"
        " (SELECT 1 FROM sources s WHERE s.location = ? || p.id || ? AND s.checked_at IS NOT NULL)",
        (head, tail)) if pid not in tracked]  # (a citer beyond arXiv has no map page)
    for pid, loc, lastmod, listed_in in db.conn.execute(
            "SELECT paper_id, location, listed_lastmod, listed_in FROM sources WHERE checked_at IS NULL"
            " AND paper_id IS NOT NULL"):
        if pid not in plan.known and pid not in tracked and loc == head + pid + tail:
            unseen.append(pid)
            plan.frontier[pid] = loc
            if listed_in:
                plan.listed[pid] = (lastmod, listed_in)
    plan.known.update(plan.frontier)
    plan.unseen = newest_first(list(dict.fromkeys(unseen)))
    plan.unseen_share = budget // UNSEEN_SHARE
    _plan_searches(db, plan, budget)
    # With a sitemap: the lastmods recorded for the pages planned are compared with their last
    # check (store.sources.lastmods), and the audits draw from a pool (store.sources.plan_counts `audit_pool`).
    plan.audit_pool = audit_pool(db, head, tail, budget, rng) if with_sitemap else None
    locations = [head + pid + tail for pid in dict.fromkeys([*plan.tracked, *plan.due, *plan.roomy,
                                                             *(plan.audit_pool or ())])]
    for loc, pid, etag, lm, sha, checked_at, lastmod, listed_in, cited_by in rows_in_chunks(
            db, "SELECT s.location, s.paper_id, s.etag, s.last_modified, s.sha256, s.checked_at, s.listed_lastmod,"
            " s.listed_in, p.cited_by FROM sources s LEFT JOIN papers p ON p.id = s.paper_id"
            " WHERE s.location IN ({})", locations):
        plan.validators[loc] = Validators(etag, lm, sha)
        if checked_at:
            plan.checked[loc] = checked_at
        if with_sitemap and pid:
            if listed_in:
                plan.listed[pid] = (lastmod, listed_in)
            if checked_at and cited_by is not None and cited_by >= ROOM:
                plan.full.add(pid)
    plan.alternates = dict(db.conn.execute(  # (through the index of the pages with one: migration 0028)
        "SELECT location, text_url FROM sources WHERE text_url IS NOT NULL AND location LIKE 'http%'"))
    _plan_rest(db, plan, host, budget)
    return plan


def _plan_searches(db: Database, plan: CrawlPlan, budget: int) -> None:
    """The tracked papers' stored counts, and the pages with room a search for their unnamed
    new citers reads."""
    if plan.tracked:
        tracked = set(plan.tracked)
        plan.counts = {r["id"]: r["cited_by"] for r in rows_in_chunks(
            db, "SELECT id, cited_by FROM papers WHERE id IN ({})", plan.tracked)}  # every tracked paper: no bound
        plan.roomy = [pid for (pid,) in db.conn.execute(
            "SELECT id FROM papers WHERE has_page AND cited_by < ? ORDER BY cited_by DESC, id LIMIT ?",
            (ROOM, budget // SEARCH_SHARE + len(plan.tracked))) if pid not in tracked][:budget // SEARCH_SHARE]


def _plan_rest(db: Database, plan: CrawlPlan, host: str, budget: int) -> None:
    """What every plan reads alike: the lastmods' standing, the re-checks' scale, the direction pages."""
    plan.lastmod_believed = read_trust(db, host, plan.now).believed
    plan.recheck_scale = recheck_scale(total_weight(db, plan.now), budget)
    _plan_directions(db, plan, host)


def _plan_full(db: Database, source: str, now: datetime, budget: int, priority: Sequence[str] = ()) -> CrawlPlan:
    """The plan made from every `sources` row and paper (an empty database, a host never crawled,
    pages never checked over HTTP): see `plan_crawl`."""
    base, template = split_source(source)
    host = urlsplit(base).netloc.lower()
    now_s = iso(now)
    plan = CrawlPlan(now=now)
    plan.tracked = list(dict.fromkeys(priority))
    tracked = set(plan.tracked)
    rows: dict[str, tuple[str | None, str | None, str | None]] = {}
    frontier: list[str] = []
    for loc, pid, etag, lm, sha, text_url, checked_at, next_at, lastmod, listed_in in db.conn.execute(
            "SELECT location, paper_id, etag, last_modified, sha256, text_url, checked_at, next_check_at,"
            " listed_lastmod, listed_in FROM sources WHERE location LIKE 'http%'"):
        plan.validators[loc] = Validators(etag, lm, sha)
        if pid and listed_in:
            plan.listed[pid] = (lastmod, listed_in)
        if text_url:
            plan.alternates[loc] = text_url
        if checked_at:
            plan.checked[loc] = checked_at
        rows[loc] = (pid, checked_at, next_at)
        if pid and not checked_at:
            frontier.append(pid)
    has_page: dict[str, int] = {}
    full: set[str] = set()
    for pid, page, is_full in db.conn.execute("SELECT id, has_page, cited_by >= ? FROM papers", (ROOM,)):
        has_page[pid] = page
        if is_full:
            full.add(pid)
    if not has_page:  # an empty database: start from the bundled seeds' papers
        has_page = {pid: 1 for f in sorted(SEEDS_DIR.glob("*.txt")) if (pid := normalize_id(f.stem))}
    else:
        plan.known = KnownIds(known_papers(db))
    due: list[tuple[bool, str, str]] = []  # (no page, most overdue first): pages before 404s
    unseen: list[str] = []
    for pid, page in has_page.items():
        pid_row = rows.get(page_url(template, base, pid))
        if pid_row is not None and pid_row[1]:
            plan.pages_checked += bool(page)
            if pid in full:
                plan.full.add(pid)
        if pid in tracked:
            continue
        if pid_row is not None and pid_row[1]:
            _pid, checked_at, next_at = pid_row
            if not next_at or next_at <= now_s:
                due.append((not page, next_at or checked_at or "", pid))
        elif page:
            due.append((False, "", pid))
        elif not is_outside_key(pid):  # (a citer beyond arXiv has no map page)
            unseen.append(pid)
    # Not due: every location scheduled later (a paper's page, or a 404 of one never stored).
    plan.not_due = sum(1 for pid, _checked, next_at in rows.values() if next_at and next_at > now_s
                       and pid not in tracked)
    for pid in frontier:
        if pid not in has_page and pid not in tracked and (loc := page_url(template, base, pid)) in rows:
            unseen.append(pid)
            plan.known.add(pid)
            plan.frontier[pid] = loc
    due.sort()
    plan.due = [pid for _missing, _key, pid in due]
    plan.unseen = newest_first(list(dict.fromkeys(unseen)))
    plan.unseen_share = budget // UNSEEN_SHARE
    _plan_searches(db, plan, budget)
    _plan_rest(db, plan, host, budget)
    return plan


def _plan_directions(db: Database, plan: CrawlPlan, host: str) -> None:
    for loc, kind, etag, lm, sha, body, changed_at, next_at, interval, checked_at, listed, dated in db.conn.execute(
            "SELECT location, kind, etag, last_modified, sha256, body, changed_at, next_check_at, interval_s,"
            " checked_at, listed, dated FROM crawl_resources"):
        if urlsplit(loc).netloc.lower() == host:
            plan.resources[loc] = Resource(loc, kind, etag, lm, sha, body, changed_at, next_at, interval, checked_at,
                                           listed, dated)
    urls = [u for (u,) in db.conn.execute("SELECT url FROM directions WHERE url IS NOT NULL")
            if urlsplit(u).netloc.lower() == host]
    plan.followed = {u for (u,) in db.conn.execute(
        "SELECT DISTINCT d.url FROM follows f JOIN directions d ON d.slug = f.direction_slug"
        " WHERE f.disabled_reason IS NULL AND d.url IS NOT NULL") if urlsplit(u).netloc.lower() == host}
    due = sorted((r.next_check_at or "" if (r := plan.resources.get(u)) else "", u)
                 for u in urls if u not in plan.followed and plan.direction_due(u))
    plan.directions = sorted(plan.followed) + [u for _key, u in due]
