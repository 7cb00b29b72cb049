"""Which dates a page may claim: none before arXiv existed, none after today (plus a margin).

Reading a page's date (`parse_date`, `claimed_date`) is pure, as all parsing is.
A page's "data through" and "First posted on arXiv" dates are claims (DESIGN, "The map is
untrusted"). A date outside [ARXIV_START, today + FUTURE_MARGIN] cannot be true: the parser
rejects the page (store/pages/parse.py), the stale rule ignores such a date stored by an older
version (store/database/save.py), migration 0013 quarantines those already stored
(store/database/migrations/m0013_quarantine_impossible_dates.py), and the count chart skips them
(store/questions/graph.py `count_history`). "Today" is always passed in (the caller's clock);
nothing here reads the time.
"""

from __future__ import annotations

from datetime import date, timedelta

from mapwatch.store.errors import ParseError

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}

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


def parse_date(text: str, line: int) -> date:
    """A page's date: ISO ("2026-10-14") or as the map writes it ("14 Oct 2026"); else
    `ParseError` at `line`."""
    text = text.strip()
    try:
        return date.fromisoformat(text)
    except ValueError:
        pass
    parts = text.split()
    if len(parts) == 3 and parts[0].isdigit() and parts[2].isdigit():
        month = _MONTHS.get(parts[1][:3].lower())
        if month:
            try:
                return date(int(parts[2]), month, int(parts[0]))
            except (ValueError, OverflowError):  # "9999999999999999999 Oct 2026"
                pass
    raise ParseError(f"not a date: {text!r}", line)


def claimed_date(text: str, line: int, what: str, today: date) -> date:
    """`parse_date`, if it is a date a page read on `today` can truly claim; else `ParseError`
    at `line`, `what` naming the date."""
    d = parse_date(text, line)
    problem = date_problem(d, today)
    if problem:
        raise ParseError(f"{what} date {problem}", line)
    return d
