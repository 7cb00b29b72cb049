"""The package's clock: the time now, in UTC, and timestamps as the database stores them.

Code that needs the time takes a `Clock` (default `utc_now`), so tests pass a fake one.
Stored timestamps are ISO 8601 in UTC, to the second: 2026-11-30T20:21:35+00:00.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

Clock = Callable[[], datetime]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(ts: datetime) -> str:
    """`ts` as stored: ISO 8601 in UTC, to the second."""
    return ts.astimezone(UTC).isoformat(timespec="seconds")


def parse_iso(text: str) -> datetime:
    """A stored timestamp back as an aware datetime (one without an offset is taken as UTC)."""
    ts = datetime.fromisoformat(text)
    return ts if ts.tzinfo else ts.replace(tzinfo=UTC)


def unix_seconds(text: str) -> int:
    """A stored timestamp as Unix seconds, as `citation_edges.first_seen_unix` keeps it (the view
    `citations` gives it back as `iso` wrote it)."""
    return int(parse_iso(text).timestamp())


def http_date(value: str | None) -> datetime | None:
    """An HTTP date (RFC 9110: `Date`, `Retry-After`) as an aware datetime (one without a zone
    is taken as UTC); None when absent or unreadable."""
    import email.utils

    if not value:
        return None
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError, IndexError):
        return None
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def retry_after_seconds(value: str | None, now: datetime | None = None) -> float | None:
    """A `Retry-After` header as seconds: delta-seconds or an HTTP date (RFC 9110); None when
    absent or unreadable. Read by the map's crawler and the scholarly sources' client alike."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    when = http_date(value)
    if when is None:
        return None
    return max(0.0, (when - (now or datetime.now(UTC))).total_seconds())
