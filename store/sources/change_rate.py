"""How often a page changes, estimated from its history of checks: Cho and Garcia-Molina's
estimators for a history that sees only whether a page changed between two checks, not how
often (J. Cho, H. Garcia-Molina, "Estimating frequency of change", ACM TOIT 3(3), 2003). Pure:
the history is passed in, the estimate returned (docs/live-map.md, "Re-checks by value").

Changes are taken to arrive as a Poisson process of rate r. A page checked n times, X̄ of them
finding it unchanged, at a mean interval I, has the bias-corrected estimate

    r̂ = -log((X̄ + 0.5) / (n + 0.5)) / I

(finite even when every check found a change; 0 when none did). When the site dates each change
(its Last-Modified, between the previous check and this one), the time a page is known to have
stayed unchanged, T (whole intervals that found no change, and from each dated change to its
check), gives the estimator with known last-modified dates, for X = n - X̄ changes:

    r̂ = ((X - 1) - X / (n log(1 - X / n))) / T

((n - 1) / T when every check found a change, 0 when none did). It is used when every change
found was dated, and after at least two checks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

DAY = 86_400.0


@dataclass(frozen=True)
class History:
    """A page's checks (the `sources` columns of the same names): `checks` that compared it
    with its stored version, `checks_unchanged` of them finding it unchanged, `checked_s` the
    seconds they covered; `dated_changes` changes found with their time known, `unchanged_s` the
    seconds it is known to have stayed unchanged."""

    checks: int = 0
    checks_unchanged: int = 0
    checked_s: float = 0.0
    dated_changes: int = 0
    unchanged_s: float = 0.0

    def after(self, interval_s: float, changed: bool, since_change_s: float | None = None) -> History:
        """The history after one more check, `interval_s` after the one before it, that found the
        page `changed` or not; `since_change_s`: the seconds from its dated change to this check
        (None: not dated, or not changed)."""
        interval_s = max(0.0, interval_s)
        dated = changed and since_change_s is not None and 0 <= since_change_s <= interval_s
        known = interval_s if not changed else float(since_change_s or 0.0) if dated else 0.0
        return History(self.checks + 1, self.checks_unchanged + (not changed), self.checked_s + interval_s,
                       self.dated_changes + dated, self.unchanged_s + known)

    @property
    def changes(self) -> int:
        return self.checks - self.checks_unchanged


def rate_from_changes(checks: int, unchanged: int, mean_interval_s: float) -> float:
    """Changes a day, from `checks` checks at a mean interval of `mean_interval_s`, `unchanged`
    of them finding no change: -log((X̄ + 0.5) / (n + 0.5)) / I."""
    if checks <= 0 or mean_interval_s <= 0:
        raise ValueError("a rate needs at least one check over a positive interval")
    return -math.log((unchanged + 0.5) / (checks + 0.5)) / (mean_interval_s / DAY)


def rate_from_dated_changes(checks: int, changes: int, unchanged_s: float) -> float:
    """Changes a day, from `checks` checks of which `changes` found a dated change, the page known
    unchanged for `unchanged_s` seconds: ((X - 1) - X / (n log(1 - X / n))) / T."""
    if checks <= 0 or unchanged_s <= 0 or not 0 <= changes <= checks:
        raise ValueError("a rate needs checks, a positive time unchanged and 0 <= changes <= checks")
    if changes == 0:
        return 0.0
    if changes == checks:
        return (changes - 1) / (unchanged_s / DAY)
    x, n = changes, checks
    return max(0.0, ((x - 1) - x / (n * math.log(1 - x / n))) / (unchanged_s / DAY))


def estimate(history: History) -> float | None:
    """The page's changes a day (None before a check that covered some time): from its dated
    changes when every change it showed was dated (and at least two checks), else from whether
    each check found a change."""
    n = history.checks
    if n <= 0 or history.checked_s <= 0:
        return None
    if n >= 2 and history.dated_changes == history.changes and history.unchanged_s > 0:
        return rate_from_dated_changes(n, history.changes, history.unchanged_s)
    return rate_from_changes(n, history.checks_unchanged, history.checked_s / n)
