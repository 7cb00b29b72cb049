"""Whether a host's sitemap `lastmod`s are believed, and each tick's evidence for or against them.

A `lastmod` vouches for a page (store.sources.sitemaps.says_unchanged): while the host's lastmods
are believed, a page whose lastmod says it did not change since its last check is not requested
(store.sources.http_source), only re-checked after VOUCHED_CEILING (store.sources.crawl_schedule).
The map is untrusted, so that belief is verified, not assumed: every page requested although its
lastmod said "unchanged" (those re-checks, tracked papers, a search) is evidence, and finding
at least MISSES of them changed, and at least MISS_SHARE of those compared
(evidence adds up across ticks), stops the belief for DISTRUST: every page then follows its own
re-check schedule again, as without lastmods.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import named_row
from mapwatch.store.sources.crawl_schedule import vouched_until

MISSES = 3
MISS_SHARE = 0.05
WINDOW = 1_000  # evidence past this many pages is halved
DISTRUST = timedelta(days=7)


@dataclass(frozen=True)
class Trust:
    host: str
    believed: bool
    compared: int = 0  # pages compared with what their lastmod said, since the last verdict
    missed: int = 0  # of those, changed although their lastmod said not
    distrusted_until: str | None = None
    reason: str | None = None


def read_trust(db: Database, host: str, now: datetime) -> Trust:
    """The host's standing at `now` (a host never judged is believed)."""
    row = db.conn.execute("SELECT compared, missed, distrusted_until, reason FROM sitemap_trust WHERE host = ?",
                          (host,)).fetchone()
    if row is None:
        return Trust(host, True)
    compared, missed, until, reason = row
    return Trust(host, not until or until <= iso(now), compared, missed, until, reason)


def record_evidence(db: Database, host: str, compared: int, missed: int, now: datetime) -> str | None:
    """Add a tick's evidence: `compared` pages requested although their lastmod said they had
    not changed, `missed` of them changed all the same. The evidence adds up across ticks
    (halved past WINDOW pages, so old evidence fades) until a verdict: at least MISSES missed
    and MISS_SHARE of those compared. Returns a note for the tick's report when that verdict
    stops the belief in the host's lastmods (the evidence then starts again), else None."""
    if not compared:
        return None
    old = named_row(db, "SELECT compared, missed FROM sitemap_trust WHERE host = ?", (host,))
    total, lost = (old["compared"] + compared, old["missed"] + missed) if old else (compared, missed)
    note = until = reason = None
    if lost >= MISSES and lost >= MISS_SHARE * total:
        until = iso(now + DISTRUST)
        reason = f"{lost} of {total} pages re-checked had changed without a newer sitemap lastmod"
        note = (f"sitemap lastmod of {host} not believed until {until}: {reason}; "
                f"pages are re-checked on their own schedule")
        total = lost = 0
        restore_own_schedules(db, host, now)
    elif total > WINDOW:
        total, lost = total // 2, lost // 2
    with db.atomic():
        db.conn.execute(
            "INSERT INTO sitemap_trust (host, compared, missed, distrusted_until, reason, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(host) DO UPDATE SET compared = excluded.compared,"
            " missed = excluded.missed, distrusted_until = coalesce(excluded.distrusted_until, distrusted_until),"
            " reason = coalesce(excluded.reason, reason), updated_at = excluded.updated_at",
            (host, total, lost, until, reason, iso(now)))
    return note


def restore_own_schedules(db: Database, host: str, now: datetime) -> int:
    """Put the host's pages that believed lastmods had put off (due later than their own
    interval after their last check) back on their own schedule: due at that time, or now if
    it has passed. Returns how many."""
    rows = []
    for loc, checked_at, interval, next_at in db.conn.execute(
            "SELECT location, checked_at, interval_s, next_check_at FROM sources"
            " WHERE (location LIKE ? OR location LIKE ?) AND checked_at IS NOT NULL AND interval_s IS NOT NULL"
            " AND next_check_at IS NOT NULL", (f"http://{host}/%", f"https://{host}/%")):
        own = max(vouched_until(checked_at, loc, interval) or "", iso(now))  # its own interval, spread as ever
        if own < next_at:
            rows.append((own, loc))
    with db.atomic():
        db.conn.executemany("UPDATE sources SET next_check_at = ? WHERE location = ?", rows)
    return len(rows)
