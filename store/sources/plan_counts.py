"""What a tick's plan counts and samples through the indexes, and what it keeps between ticks
(store.sources.crawl_plan's indexed plan): whether every paper with a page was
checked over HTTP, the pages due or not due among some locations, the audits' pool, the
re-checks' total weight. Each grows with what changed since the last tick, not with the map
(docs/live-map.md, "Re-checks by value")."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from sqlite_utils import Database

from mapwatch.store.database.rows import named_row, scalar
from mapwatch.store.sources.crawl_schedule import DEFAULT_WEIGHT, audit_size
from mapwatch.store.sources.known_papers import same_row

# Whether every paper with a page was found checked over HTTP is kept in the database (table
# crawl_checked, per page-location pattern): the papers with a page then, and the newest papers
# row. A paper never loses its page and a check is never undone, so while the count is the same
# (a stub added changes nothing) the answer is, in the same file (the row read still holds the
# same id: a file whose papers were rebuilt is checked again). A crawl's own pages are checked as
# they are stored: `kept_checked` adds them after its tick, so a quiet tick after a busy one need
# not check again (`pages_unchecked`), nor the first tick of a new process.


def _pages_and_top(db: Database) -> tuple[int, int, str] | None:
    """(papers with a page, the highest papers rowid, its id), read in one statement."""
    for pages, rowid, pid in db.conn.execute(
            "SELECT (SELECT count(*) FROM papers) - (SELECT count(*) FROM papers WHERE has_page = 0),"
            " rowid, id FROM papers ORDER BY rowid DESC LIMIT 1"):
        return int(pages), int(rowid), str(pid)
    return None


def _holds(db: Database, head: str, tail: str, pages: int) -> bool:
    kept = named_row(db, "SELECT pages, top_rowid, top_id FROM crawl_checked WHERE head = ? AND tail = ?",
                     (head, tail))
    if kept is None or kept["pages"] != pages:
        return False
    return same_row(db, kept["top_rowid"], kept["top_id"])


def _keep(db: Database, head: str, tail: str, now: tuple[int, int, str]) -> None:
    with db.atomic():
        db.conn.execute("INSERT INTO crawl_checked (head, tail, pages, top_rowid, top_id) VALUES (?, ?, ?, ?, ?)"
                        " ON CONFLICT (head, tail) DO UPDATE SET pages = excluded.pages,"
                        " top_rowid = excluded.top_rowid, top_id = excluded.top_id", (head, tail, *now))


def pages_unchecked(db: Database, host: str, head: str, tail: str) -> int | None:
    """The papers with a page, when every one was checked over HTTP on this host; None for an
    empty database, a host never crawled (no robots.txt read), or papers with a page not yet
    checked there (those are due, and only the full plan finds them). Counted through the
    indexes; the check of every page against its `sources` row is made again only when papers
    were given a page since it last held other than by a crawl's own tick (table crawl_checked)."""
    now = _pages_and_top(db)
    if now is None:
        return None
    if not any(urlsplit(loc).netloc.lower() == host for (loc,) in db.conn.execute(
            "SELECT location FROM crawl_resources WHERE kind = 'robots'")):
        return None
    pages = now[0]
    if _holds(db, head, tail, pages):
        return pages
    (checked,) = db.conn.execute(
        "SELECT count(*) FROM sources s JOIN papers p ON p.id = s.paper_id WHERE p.has_page"
        " AND s.checked_at IS NOT NULL AND s.location = ? || s.paper_id || ?", (head, tail)).fetchone()
    if checked < pages:
        return None
    _keep(db, head, tail, now)
    return pages


def kept_checked(db: Database, head: str, tail: str, before: int, paged: int) -> bool:
    """After a crawl's tick whose plan found the `before` papers with a page all checked: when
    the papers with a page now are those and the `paged` this crawl gave one (each checked as it
    was stored), every one is still checked; kept so (True). Else (another program stored pages
    meanwhile) the next plan checks again."""
    now = _pages_and_top(db)
    if now is None or now[0] != before + paged:
        return False
    _keep(db, head, tail, now)
    return True


def count_due(db: Database, locations: list[str], now_s: str) -> int:
    """How many of `locations` are due at `now_s` (or checked and never scheduled)."""
    if not locations:
        return 0
    marks = ",".join("?" * len(locations))
    return int(scalar(
        db.conn, "SELECT count(*) FROM sources WHERE ((next_check_at IS NOT NULL AND next_check_at <= ?) OR"
        f" (next_check_at IS NULL AND checked_at IS NOT NULL)) AND location IN ({marks})",
        (now_s, *locations)))


def count_not_due(db: Database, locations: list[str], now_s: str) -> int:
    """How many of `locations` are scheduled after `now_s`."""
    if not locations:
        return 0
    marks = ",".join("?" * len(locations))
    return int(scalar(db.conn, f"SELECT count(*) FROM sources WHERE next_check_at > ? AND location IN ({marks})",
                               (now_s, *locations)))


POOL = 4  # the audit pool holds this many times the tick's audits, of each half
WHOLE_POOL = 2_000  # up to this many pages listed, every one is in the pool


def audit_pool(db: Database, head: str, tail: str, budget: int, rng: random.Random | None) -> list[str]:
    """The pages the tick's audits are drawn from, read through the indexes: every page a
    sitemap lists while they are at most WHOLE_POOL; else the listed pages checked longest ago and
    as many drawn at random (by rowid), POOL times the audits of each half. Which of them a
    lastmod vouches for is decided by the crawl (store.sources.lastmods)."""
    size = audit_size(budget)
    listed = "SELECT location, paper_id FROM sources WHERE listed_in IS NOT NULL AND checked_at IS NOT NULL"
    (few,) = db.conn.execute(f"SELECT count(*) <= ? FROM ({listed} LIMIT ?)", (WHOLE_POOL, WHOLE_POOL + 1)).fetchone()
    rows = db.conn.execute(f"{listed} ORDER BY checked_at, location" + ("" if few else " LIMIT ?"),
                           () if few else (POOL * size,))
    pool = [pid for loc, pid in rows if pid and loc == head + pid + tail]
    if few:
        return pool
    lo, hi = db.conn.execute("SELECT min(rowid), max(rowid) FROM sources").fetchone()
    if lo is None:
        return pool
    rng = rng or random.SystemRandom()  # (a site cannot know which of its pages will be compared)
    for _ in range(POOL * size):
        for loc, pid in db.conn.execute("SELECT location, paper_id FROM sources WHERE rowid >= ? AND listed_in"
                                        " IS NOT NULL AND checked_at IS NOT NULL LIMIT 1", (rng.randint(lo, hi),)):
            if pid and loc == head + pid + tail:
                pool.append(pid)
    return list(dict.fromkeys(pool))


# The re-checks' total weight is summed over every page checked, and kept for WEIGHT_KEPT of the
# tick clock (it moves slowly: a page's weight changes at its own re-check), in the database
# (table recheck_weight): a tick reads one row, and a new process's first tick need not sum it
# again (0.28 s of CPU at 1,000,000 pages).
WEIGHT_KEPT = timedelta(hours=6)


def total_weight(db: Database, now: datetime) -> float:
    """Σ recheck_weight over the pages checked over HTTP (crawl_schedule.recheck_scale's sum),
    summed again when WEIGHT_KEPT has passed on the tick clock since it was (or never was)."""
    row = named_row(db, "SELECT total, summed_at FROM recheck_weight WHERE id = 1")
    if row is not None and timedelta(0) <= now - datetime.fromisoformat(row["summed_at"]) < WEIGHT_KEPT:
        return float(row["total"])
    (total,) = db.conn.execute(
        "SELECT total(coalesce(recheck_weight, ?)) FROM sources WHERE checked_at IS NOT NULL"
        " AND location LIKE 'http%'", (DEFAULT_WEIGHT,)).fetchone()
    with db.atomic():
        db.conn.execute("INSERT INTO recheck_weight (id, total, summed_at) VALUES (1, ?, ?) ON CONFLICT (id)"
                        " DO UPDATE SET total = excluded.total, summed_at = excluded.summed_at",
                        (float(total), now.isoformat()))
    return float(total)
