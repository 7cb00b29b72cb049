"""What one tick's sitemap `lastmod`s say, page by page (store.sources.http_source asks before it
queues anything): which pages changed since their last check, which did not, and so which
need not be requested while the host's lastmods are believed (store.sources.sitemap_trust).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable
from datetime import timedelta

from mapwatch.store.clock import iso
from mapwatch.store.sources.crawl_plan import CrawlPlan
from mapwatch.store.sources.crawl_schedule import AUDIT_SHARE, VOUCHED_DIRECTIONS, audit_size, vouched_until
from mapwatch.store.sources.sitemaps import lastmod_says

# A believed sitemap whose lastmods speak for at least this share of the pages checked over
# HTTP (papers with a page) names (nearly) every page, new ones included: direction pages
# (which then name nothing new) are read every VOUCHED_DIRECTIONS instead of every tick.
COVERING = 0.9


class Lastmods:
    def __init__(self, plan: CrawlPlan, sitemap: dict[str, str | None], location: Callable[[str], str],
                 skew: timedelta = timedelta(0), dated: int | None = None) -> None:
        """`sitemap`: paper id -> lastmod (or None), as the sitemaps list them, for the pages the
        tick weighs (store.sources.http_source: those planned, and what the files read in full
        changed); `location`: a paper's page location (what `plan.checked` is keyed on); `skew`:
        how far the site's clock is ahead of ours (its lastmods are read on our clock);
        `dated`: the pages the sitemap files list with a date-time lastmod, all of them (the
        files' recorded counts: store.sources.listed_pages), which say whether they cover the
        map; None: counted from `sitemap` itself, which then holds every page listed."""
        self.plan, self.location = plan, location
        self.now = iso(plan.now)
        self.changed: list[tuple[str, str]] = []  # (lastmod, paper id): newer than the last check, newest first
        self.same: set[str] = set()  # lastmod says: not changed since the last check
        checked = plan.checked
        close = 0  # date-time lastmods too close to the page's last check to say either
        for pid, mod in sitemap.items():
            said = lastmod_says(mod, checked.get(location(pid)), plan.now, skew)
            if said == "changed":
                self.changed.append((mod or "", pid))
            elif said == "same":
                self.same.add(pid)
            elif mod and len(mod) > 10:
                close += 1
        self.changed.sort(reverse=True)
        # (a page changed minutes before its last check is named all the same: with value-based
        # re-checks it may not be read again for days, and must not stop the sitemap covering)
        listed = len(self.same) + len(self.changed) + close if dated is None else dated
        self.covering = plan.lastmod_believed and listed >= COVERING * plan.pages_checked
        self.rescheduled: list[tuple[str, str]] = []  # (location, next check) of pages vouched for, due
        self.vouched = 0  # pages not requested because of their lastmod

    def audit(self, budget: int, rng: random.Random | None = None) -> list[str]:
        """Pick this tick's audited pages (see AUDIT_SHARE) among those a believed lastmod says
        did not change: `audit_size(budget)` of them (all when fewer), half at random, the rest
        the longest unchecked; they are requested, and their check is evidence for or against the
        lastmods (`plan.vouched_same`). None while the lastmods are not believed (every page is
        then requested on its own schedule). Drawn from `plan.audit_pool` when the plan has one
        (the listed pages checked longest ago and some drawn at random, read through the indexes:
        store.sources.crawl_plan), else from every page vouched for."""
        pool = self.same if self.plan.audit_pool is None else self.same.intersection(self.plan.audit_pool)
        if not self.plan.lastmod_believed or not pool:
            return []
        rng = rng or random.SystemRandom()
        size = min(audit_size(budget), len(pool))
        ordered = sorted(pool)  # (a seeded generator then draws the same pages)
        checked = {pid: self.plan.checked.get(self.location(pid), "") for pid in ordered}
        oldest = size - size // 2
        edge = checked[heapq.nsmallest(oldest, ordered, key=checked.__getitem__)[-1]]
        older = [pid for pid in ordered if checked[pid] < edge]
        ties = [pid for pid in ordered if checked[pid] == edge]
        picked = older + rng.sample(ties, oldest - len(older))
        chosen = set(picked)
        picked += rng.sample([pid for pid in ordered if pid not in chosen], size - oldest)
        self.same.difference_update(picked)
        self.plan.vouched_same.update(picked)
        return picked

    def vouch(self, pid: str, span: float, due: bool) -> bool:
        """Whether page `pid` need not be requested: its lastmod says it did not change, the
        host's lastmods are believed, and it was checked less than `span` ago (spread by
        location; crawl_schedule.vouched_until); a page `due` for a re-check is then due again
        at that time (`rescheduled`). A page requested although its lastmod said "unchanged" is
        evidence for or against the lastmods (`plan.vouched_same`)."""
        if pid not in self.same:
            return False
        url = self.location(pid)
        until = vouched_until(self.plan.checked[url], url, span)
        if not self.plan.lastmod_believed or until is None or until <= self.now:
            self.plan.vouched_same.add(pid)
            return False
        self.vouched += 1
        if due:  # due again when the lastmod's word runs out
            self.rescheduled.append((url, until))
        return True

    def direction_due(self, url: str) -> bool:
        """Whether a direction page is read: always, unless the sitemap covers the map
        (`covering`); then when it was last read VOUCHED_DIRECTIONS ago, or never."""
        return not self.covering or direction_stale(self.plan, url)


def direction_stale(plan: CrawlPlan, url: str) -> bool:
    """A direction page last read VOUCHED_DIRECTIONS ago (spread by location), or never."""
    r = plan.resources.get(url)
    if r is None or not r.checked_at:
        return True
    until = vouched_until(r.checked_at, url, VOUCHED_DIRECTIONS)
    return until is None or until <= iso(plan.now)


__all__ = ["AUDIT_SHARE", "COVERING", "Lastmods", "audit_size", "direction_stale"]
