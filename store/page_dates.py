"""Which dates a page may claim: none before arXiv existed, none after today (plus a margin).

A page's "data through" and "First posted on arXiv" dates are claims (DESIGN, "The map is
untrusted"). A date outside [ARXIV_START, today + FUTURE_MARGIN] cannot be true: the parser
rejects the page (store/parse.py), the stale rule ignores such a date stored by an older
version (store/save.py), migration 0013 quarantines those already stored (store/schema_scale.py),
and the count chart skips them (store/graph.py `count_history`). "Today" is always passed in
(the caller's clock); nothing here reads the time.
"""

from __future__ import annotations

from datetime import date, timedelta

# arXiv's first paper was posted in August 1991: no paper was first posted, and no map data
# is through, a day before the first of that month.
ARXIV_START = date(1991, 8, 1)
# A page may be dated up to two days after the reader's today: the map's day may start before
# ours (time zones), and a clock may be a little behind. Anything later is a page from the future.
FUTURE_MARGIN = timedelta(days=2)


def latest_possible(today: date) -> date:
    """The latest date a page read on `today` may claim."""
    return today + FUTURE_MARGIN


def date_problem(d: date, today: date) -> str | None:
    """Why `d` cannot be a true date for a page read on `today`, or None if it can be."""
    if d < ARXIV_START:
        return f"{d.isoformat()} is before arXiv existed ({ARXIV_START:%B %Y})"
    latest = latest_possible(today)
    if d > latest:
        return f"{d.isoformat()} is in the future (after {latest.isoformat()})"
    return None


def possible_iso(text: str | None, today: date) -> bool:
    """Whether a stored ISO date (as the database holds it) is a possible date on `today`:
    False for NULL, text that is not a date, and dates `date_problem` refuses."""
    if not text:
        return False
    try:
        d = date.fromisoformat(text)
    except ValueError:
        return False
    return date_problem(d, today) is None
