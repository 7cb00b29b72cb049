"""What the sitemaps list, kept between ticks (migration 0028), so a tick reads only the sitemap
files that changed (docs/live-map.md, "Sitemaps read as they change").

Each page's `lastmod` as a sitemap lists it and the file that lists it are recorded in its
`sources` row (`listed_lastmod`, `listed_in`), and each file's counts in its `crawl_resources`
row (`listed`, `dated`). A file is then asked for conditionally: a 304 means its pages' recorded
lastmods still hold, and it is not parsed. A file read in full is compared with what it listed
before (`record_listed`, in the refresh's writer): only its entries whose lastmod moved are
looked at, and a page such an entry says changed since its last check is made due at once
(`next_check_at`), so a tick that cannot read it (the budget, a kill) leaves it first in line
for the next, whose plan reads its recorded lastmod with the other pages due. The file's
validators are stored in the same transaction as what it lists: a crash between the two never
leaves a 304 standing for a listing that was not recorded.

So a quiet tick, every file answering 304, reads no sitemap at all, and a busy one reads the
files that changed, their entries compared through the `listed_in` index: the work grows with
what changed, not with the map.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.sources.crawl_outcomes import ResourceSeen
from mapwatch.store.sources.crawl_plan import ROOM, CrawlPlan
from mapwatch.store.sources.crawl_saver import remember_resources
from mapwatch.store.sources.sitemaps import lastmod_says


def dated(lastmod: str | None) -> bool:
    """Whether a lastmod is a date-time (what can vouch for a page: a date alone cannot)."""
    return lastmod is not None and len(lastmod) > 10


@dataclass
class Listing:
    """One sitemap file read in full this tick: the pages of the host it lists."""

    location: str
    entries: dict[str, str | None]  # paper id -> lastmod (None: none given)
    resource: ResourceSeen  # its validators, stored with the listing

    @property
    def dated(self) -> int:
        return sum(1 for mod in self.entries.values() if dated(mod))


@dataclass
class Compared:
    """What a file read in full said, compared with what was recorded."""

    changed: dict[str, str | None] = field(default_factory=dict)  # page known, lastmod newer than its check
    unknown: dict[str, tuple[str | None, str]] = field(default_factory=dict)  # no row yet: (lastmod, file)
    moved: dict[str, str | None] = field(default_factory=dict)  # every entry whose lastmod moved (or new here)
    checked: dict[str, str] = field(default_factory=dict)  # location -> last check, of the entries that moved
    full: set[str] = field(default_factory=set)  # of `changed`, pages whose "Built on by" list is full
    dropped: set[str] = field(default_factory=set)  # paper ids the file listed before and lists no more

    def add(self, other: Compared) -> None:
        self.changed.update(other.changed)
        self.unknown.update(other.unknown)
        self.moved.update(other.moved)
        self.checked.update(other.checked)
        self.full |= other.full
        self.dropped |= other.dropped


@dataclass
class SitemapsRead:
    """What a tick's sitemaps said: every file of pages named (read in full or answering 304),
    with its counts, and what the files read in full changed."""

    files: dict[str, tuple[int, int]] = field(default_factory=dict)  # file -> (pages listed, dated)
    parsed: set[str] = field(default_factory=set)  # the files read in full this tick
    compared: Compared = field(default_factory=Compared)

    @property
    def dated(self) -> int:
        return sum(d for _n, d in self.files.values())


def lastmods_said(plan: CrawlPlan, sitemaps: SitemapsRead) -> dict[str, str | None]:
    """Paper id -> the lastmod the sitemaps list now, for the pages a tick weighs: those
    planned (recorded, in a file named this tick and still listed there) and every entry a
    file read in full moved or added."""
    c = sitemaps.compared
    said = {pid: mod for pid, (mod, file) in plan.listed.items() if file in sitemaps.files and pid not in c.dropped}
    said.update(c.moved)
    said.update((pid, mod) for pid, (mod, _file) in c.unknown.items())
    return said


def still_listed(plan: CrawlPlan, pid: str, sitemaps: SitemapsRead) -> bool:
    """Whether a sitemap named this tick lists the paper (a frontier paper's standing)."""
    c = sitemaps.compared
    if pid in c.moved or pid in c.unknown:
        return True
    recorded = plan.listed.get(pid)
    return recorded is not None and recorded[1] in sitemaps.files and pid not in c.dropped


def clear_listing(db: Database, seen: ResourceSeen, now: datetime) -> None:
    """A sitemap file read but not readable as one: its validators recorded, and what it listed
    no longer stands for it (the file is read in full again next time)."""
    with db.atomic():
        remember_resources(db, now, [seen], iso(now))
        db.conn.execute("UPDATE crawl_resources SET listed = NULL, dated = NULL WHERE location = ?",
                        (seen.location,))


def record_listed(db: Database, listing: Listing, head: str, tail: str, now: datetime,
                  skew: timedelta = timedelta(0)) -> Compared:
    """Compare a sitemap file read in full with what it listed before, record what moved and its
    validators, in one transaction (see the module's docstring). `head` + id + `tail` is a
    page's location; `now` the tick's start; `skew` how far the site's clock is ahead of ours."""
    out = Compared()
    file = listing.location
    before: dict[str, tuple[str, str | None, str | None, str | None]] = {}  # location -> (id, lastmod, in, check)
    for loc, pid, mod, checked_at in db.conn.execute(
            "SELECT location, paper_id, listed_lastmod, checked_at FROM sources WHERE listed_in = ?", (file,)):
        before[loc] = (pid, mod, file, checked_at)
    wanted = [head + pid + tail for pid in listing.entries if head + pid + tail not in before]
    for r in rows_in_chunks(db, "SELECT location, paper_id, listed_lastmod, listed_in, checked_at FROM sources"
                                " WHERE location IN ({})", wanted):
        before[r["location"]] = (r["paper_id"], r["listed_lastmod"], r["listed_in"], r["checked_at"])
    now_s = iso(now)
    updates: list[tuple[str | None, str, str]] = []
    due: list[tuple[str, str, str]] = []
    for pid, mod in listing.entries.items():
        loc = head + pid + tail
        row = before.get(loc)
        if row is None:
            out.unknown[pid] = (mod, file)
            continue
        _pid, was, listed_in, checked_at = row
        if was == mod and listed_in == file:
            continue  # as recorded: what it says was acted on when it was recorded
        updates.append((mod, file, loc))
        out.moved[pid] = mod
        if checked_at:
            out.checked[loc] = checked_at
        if lastmod_says(mod, checked_at, now, skew) == "changed":
            out.changed[pid] = mod
            due.append((now_s, now_s, loc))
    listed = {head + pid + tail for pid in listing.entries}
    gone = [loc for loc, (_pid, _mod, listed_in, _c) in before.items() if listed_in == file and loc not in listed]
    out.dropped = {before[loc][0] for loc in gone}
    if out.changed:  # a full list: its change waits behind the re-checks (storms)
        out.full.update(row["id"] for row in rows_in_chunks(
            db, "SELECT id FROM papers WHERE cited_by >= ? AND id IN ({})", list(out.changed), [ROOM]))
    with db.atomic():
        db.conn.executemany("UPDATE sources SET listed_lastmod = NULL, listed_in = NULL WHERE location = ?",
                            [(loc,) for loc in gone])
        db.conn.executemany("UPDATE sources SET listed_lastmod = ?, listed_in = ? WHERE location = ?", updates)
        # Due at once (unless due already): left unread this tick, it is read first at the next.
        db.conn.executemany("UPDATE sources SET next_check_at = min(coalesce(next_check_at, ?), ?) WHERE location = ?",
                            due)
        remember_resources(db, now, [listing.resource], now_s)
        db.conn.execute("UPDATE crawl_resources SET listed = ?, dated = ? WHERE location = ?",
                        (len(listing.entries), listing.dated, file))
    return out
