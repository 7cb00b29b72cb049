"""When to check each location of the map again: adaptive re-check intervals, and the age of
an arXiv id (newest papers first). Pure: the time is passed in (docs/live-map.md,
"Following the live map over HTTP": spending the budget where change is).

A location's interval halves when a check finds it changed (and is never longer than half
the time since its previous change), and doubles when a check finds it the same, always
between a floor and a ceiling, so a page that changes often is checked soon and an old
stable one rarely, but never forgotten. A page is due up to a quarter of its interval early,
by a fraction fixed for its location (`spread`), so pages read in the same tick do not all
come due in the same later tick (bursts that would spend the whole budget on re-checks).
"""

from __future__ import annotations

import hashlib
import math
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from urllib.parse import urlsplit

from mapwatch.store.clock import iso, parse_iso

HOUR = 3600
DAY = 24 * HOUR

_NEW_STYLE = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})$")
_OLD_STYLE = re.compile(r"^[a-z][a-z\-]*(?:\.[A-Z]{2})?/(\d{2})(\d{2})(\d{3})$")


@dataclass(frozen=True)
class Bounds:
    """A kind of location's intervals, in seconds: the floor, the first, the ceiling."""

    low: float
    first: float
    high: float


PAGE_BOUNDS = Bounds(HOUR, 6 * HOUR, 7 * DAY)  # a paper's page
MISSING_BOUNDS = Bounds(HOUR, DAY, 30 * DAY)  # a paper without a page (404): pages of new papers come first
# A direction page: where new papers appear, and without a sitemap the only place a new citer
# of a tracked paper is named (it may be placed in any direction), so every direction page is
# asked every tick, conditionally (a 304 is all an unchanged one costs). With a ceiling of 6 h
# a tracked paper's alert came up to 6 ticks late (bench/RESULTS.md, "the new crawler").
DIRECTION_BOUNDS = Bounds(HOUR, HOUR, HOUR)
DIRECTION_FAILED_BOUNDS = Bounds(HOUR, HOUR, 6 * HOUR)  # one that cannot be read: 1, 2, 4, then 6 h
EARLY = 0.25  # a page is due up to this fraction of its interval early (see `spread`)
# While a host's sitemap `lastmod`s are trusted (store.sources.sitemap_trust), a page whose
# lastmod says it did not change since its last check is not requested: the lastmod will say
# when it changes. Such a page is still re-checked this long after its last check (up to EARLY
# of it early), which is what verifies the lastmods; a tracked paper's page at least daily; and
# when the sitemap names nearly every page, direction pages (which then name nothing new) every
# 6 hours instead of every tick.
VOUCHED_CEILING = 35 * DAY
VOUCHED_TRACKED = DAY
VOUCHED_DIRECTIONS = 6 * HOUR
# A direction page polled every tick comes due exactly an interval after the tick that read it;
# the next tick may start a little earlier in its hour (scheduler latency, a faster start-up),
# so a direction page due within this much after the tick's start is read in it.
DUE_TOLERANCE = 5 * 60.0


# Re-checks by value (docs/live-map.md, "Re-checks by value"). Once a page has a change history
# (store.sources.change_rate), its period follows the square-root rule: scale / sqrt(rate x
# value), so a page that changes more often, or whose change is worth more, is checked more
# often, each less than in proportion. The value is what a re-check can show: a "Built on by"
# list with room names a new citer (VALUE_ROOM); a full one (cited by ROOM or more) only moves
# its count (VALUE_FULL); times VALUE_TRACKED for a tracked or team paper (`priority`, the
# tracks') and VALUE_FOLLOWED for a paper placed in a followed direction. A page never seen
# changing counts as changing MIN_RATE times a day. `scale` is REFERENCE (in sqrt-days) while the
# budget allows it: a page with room never seen changing every 7 days, a full one every 28; on a
# map too large for that, the periods stretch so the re-checks ask RECHECK_SHARE of each (hourly)
# tick's budget (`recheck_scale`). Always within VALUE_BOUNDS, and at most twice the previous
# interval (a short history says little).
VALUE_ROOM = 1.0
VALUE_FULL = 1 / 16
VALUE_TRACKED = 4.0
VALUE_FOLLOWED = 2.0
REFERENCE = 1.0  # sqrt-days: a page of value 1 changing once a day is checked daily (when the budget allows)
MIN_RATE = 1 / 49  # changes a day
# Audits: each tick, a fixed number of the pages a believed lastmod vouches for are requested
# all the same: `audit_size(budget)`, AUDIT_SHARE of the budget (rounded, at least 1; all of
# them when fewer are vouched). Half of them (rounded down) are drawn at random among the vouched
# pages (by `HttpOptions.audit_rng`, else the operating system's generator: a site cannot know
# which of its pages will be compared); the others are the vouched pages checked longest ago (ties
# drawn at random), so every page vouched for at a tick is audited within
# ceil(N / (size - size // 2)) ticks of N vouched pages (or re-checked at VOUCHED_CEILING, if
# sooner). Lastmods that hide changes on some pages are so found out within days, not at the
# monthly re-check (docs/live-map.md, "Believed lastmods, verified").
AUDIT_SHARE = 0.01


def audit_size(budget: int) -> int:
    """Vouched pages audited a tick at a page budget of `budget`: AUDIT_SHARE of it, rounded,
    at least 1 (36 at the default hourly 3,600; 5 at 500)."""
    return max(1, round(budget * AUDIT_SHARE))


RECHECK_SHARE = 0.08  # of the budget of an hourly tick, when the periods must stretch to fit it
VALUE_BOUNDS = Bounds(HOUR, 6 * HOUR, 56 * DAY)
DEFAULT_WEIGHT = math.sqrt(MIN_RATE * VALUE_ROOM)  # a page with no history yet


def page_value(room: bool, tracked: bool = False, followed: bool = False) -> float:
    """What re-checking a page is worth (see VALUE_ROOM): its list's room, times its paper's
    standing (tracked or team, else in a followed direction, else 1)."""
    return (VALUE_ROOM if room else VALUE_FULL) * (VALUE_TRACKED if tracked else VALUE_FOLLOWED if followed else 1.0)


def recheck_weight(rate: float | None, value: float) -> float:
    """sqrt(rate x value), the rate (changes a day) at least MIN_RATE: a period is scale / weight."""
    return math.sqrt(max(rate or 0.0, MIN_RATE) * max(value, 1e-9))


def recheck_scale(total_weight: float, budget: int) -> float:
    """The square-root rule's scale, sqrt-days: REFERENCE, or more when the pages' weights (their
    sum, `total_weight`) would ask more than RECHECK_SHARE of `budget` an hour at REFERENCE (the
    rule's periods then ask exactly that many: sum of weight / scale a day)."""
    per_day = max(1.0, RECHECK_SHARE * budget) * 24
    return max(REFERENCE, total_weight / per_day)


def value_period(weight: float, scale: float = REFERENCE, bounds: Bounds = VALUE_BOUNDS) -> float:
    """Seconds between checks of a page of `weight` (`recheck_weight`): scale / weight days,
    within `bounds`."""
    return max(bounds.low, min(bounds.high, scale / max(weight, 1e-9) * DAY))


def after_check_by_value(now: datetime, previous_s: float | None, changed: bool, changed_at: str | None,
                         weight: float | None, scale: float = REFERENCE, *, early: float = 0.0) -> Schedule:
    """The schedule of a page checked at `now` whose change history gives it `weight`
    (`recheck_weight`): `value_period`, at most twice `previous_s`. Without a history yet
    (`weight` None, or no previous interval) as `after_check` with PAGE_BOUNDS: the first
    interval, halved on a change, doubled on none."""
    if weight is None or previous_s is None:
        return after_check(now, previous_s, changed, changed_at, PAGE_BOUNDS, early=early)
    interval = max(VALUE_BOUNDS.low, min(value_period(weight, scale), 2 * previous_s))
    return Schedule(round(interval), iso(now + timedelta(seconds=interval * (1 - EARLY * early))),
                    iso(now) if changed else changed_at)


def next_interval(previous: float | None, changed: bool, bounds: Bounds, *,
                  since_change: float | None = None) -> float:
    """The interval after a check: `previous` halved when the location changed (at most
    half of `since_change`, the seconds since its previous change), doubled when not; the
    first interval is `bounds.first`; always within [low, high]."""
    if previous is None:
        value = bounds.first
    elif changed:
        value = previous / 2
        if since_change is not None and since_change > 0:
            value = min(value, since_change / 2)
    else:
        value = previous * 2
    return max(bounds.low, min(bounds.high, value))


@dataclass(frozen=True)
class Schedule:
    """What a check leaves behind: the new interval, when the location is due next, and
    when it last changed."""

    interval_s: int
    next_check_at: str
    changed_at: str | None


def spread(location: str) -> float:
    """A fraction in [0, 1) fixed for a location's path (the same on any host or port the map
    is served from): how early within EARLY it comes due."""
    parts = urlsplit(location)
    key = f"{parts.path}?{parts.query}" if parts.netloc else location
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:4], "big") / 2**32


def after_check(now: datetime, previous_s: float | None, changed: bool, changed_at: str | None,
                bounds: Bounds, *, early: float = 0.0) -> Schedule:
    """The schedule of a location checked at `now` (the tick's start); it comes due `early`
    (a fraction of EARLY) of its interval before the interval is over."""
    since = None
    if changed and changed_at:
        try:
            since = (now - parse_iso(changed_at)).total_seconds()
        except ValueError:
            since = None
    interval = next_interval(previous_s, changed, bounds, since_change=since)
    return Schedule(round(interval), iso(now + timedelta(seconds=interval * (1 - EARLY * early))),
                    iso(now) if changed else changed_at)


def vouched_until(checked_at: str, location: str, span: float = VOUCHED_CEILING) -> str | None:
    """When a page checked at `checked_at`, vouched for by a trusted sitemap since, is due for a
    re-check all the same: `span` later, up to EARLY of it early (by `spread`); None for an
    unreadable `checked_at` (then it is due now)."""
    try:
        checked = parse_iso(checked_at)
    except ValueError:
        return None
    return iso(checked + timedelta(seconds=span * (1 - EARLY * spread(location))))


def is_due(next_check_at: str | None, now: datetime) -> bool:
    """Due: never scheduled, or its time has come."""
    if not next_check_at:
        return True
    try:
        return parse_iso(next_check_at) <= now
    except ValueError:
        return True


def id_age(paper_id: str) -> tuple[int, int]:
    """(year * 100 + month, number) of an arXiv id, for sorting by age: new-style ids
    (YYMM.NNNNN, 2007 on) by their month, old-style ids (hep-th/9901001) by theirs (91-99:
    the 1990s), so they sort older. Ids of another shape sort oldest of all."""
    m = _NEW_STYLE.match(paper_id)
    if m:
        return (2000 + int(m[1])) * 100 + int(m[2]), int(m[3])
    m = _OLD_STYLE.match(paper_id)
    if m:
        yy = int(m[1])
        return (1900 + yy if yy >= 91 else 2000 + yy) * 100 + int(m[2]), int(m[3])
    return 0, 0


def newest_first(ids: list[str]) -> list[str]:
    """Paper ids, the newest first (by `id_age`; ties by id, descending)."""
    return sorted(ids, key=lambda pid: (id_age(pid), pid), reverse=True)
