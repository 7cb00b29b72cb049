"""Sitemaps (sitemaps.org protocol): the pages a site lists, and which changed since a check."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib
from datetime import UTC, datetime, timedelta

MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the sitemaps protocol's limit, uncompressed
MAX_SITEMAPS = 200  # sitemap files read per tick (an index may name more)
_SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
# A lastmod vouches for a page only when it is at least this much older than the check: the
# site's clock and ours may differ by that much.
CLOCK_SKEW = timedelta(minutes=10)


def sitemap_entries(data: bytes) -> tuple[str, list[tuple[str, str | None]]]:
    """("index" | "urlset", [(loc, lastmod or None)]) of a sitemap document (gzipped or not).
    Raises ValueError for a document that is not a sitemap."""
    if data[:2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        data = d.decompress(data, MAX_SITEMAP_BYTES + 1)
        if len(data) > MAX_SITEMAP_BYTES:
            raise ValueError("sitemap over 50 MB uncompressed")
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("end",))
    kind = ""
    out: list[tuple[str, str | None]] = []
    try:
        for start in range(0, len(data), 1 << 16):
            parser.feed(data[start:start + (1 << 16)])
            for event in parser.read_events():
                el = event[-1]
                if not isinstance(el, ET.Element):  # only "end" events are asked for: elements
                    continue
                tag = el.tag.removeprefix(_SITEMAP_NS)
                if tag in ("url", "sitemap"):
                    kind = kind or ("index" if tag == "sitemap" else "urlset")
                    loc = (el.findtext(f"{_SITEMAP_NS}loc") or el.findtext("loc") or "").strip()
                    mod = (el.findtext(f"{_SITEMAP_NS}lastmod") or el.findtext("lastmod") or "").strip()
                    if loc:
                        out.append((loc, mod or None))
                    el.clear()
                elif tag in ("urlset", "sitemapindex"):
                    kind = kind or ("index" if tag == "sitemapindex" else "urlset")
        parser.close()
    except ET.ParseError as e:
        raise ValueError(f"not a sitemap ({e})") from None
    if not kind:
        raise ValueError("not a sitemap (no <urlset> or <sitemapindex>)")
    return kind, out


def lastmod_says(lastmod: str | None, checked_at: str | None, now: datetime | None) -> str | None:
    """What a sitemap `lastmod` (W3C date or date-time) says of a page last checked at
    `checked_at` (ISO date-time, UTC), each string parsed once:
    - "changed": later than the check (a date: later than the check's day); a page never
      checked counts as changed;
    - "same": it vouches that the page did not change since: a full date-time (a date alone
      cannot say which of a day's hours), at least CLOCK_SKEW before the check, and not after
      `now` (a lastmod in the future is a lie or a wrong clock: it vouches for nothing; with
      `now` None nothing is vouched for). Pages it vouches for need no re-check while the
      host's lastmods are believed (store.sources.sitemap_trust);
    - None: neither (no lastmod, an unreadable one, or too close to the check to tell)."""
    if not checked_at:
        return "changed"
    if not lastmod:
        return None
    try:
        when = datetime.fromisoformat(lastmod.replace("Z", "+00:00"))
        seen = datetime.fromisoformat(checked_at.replace("Z", "+00:00"))
    except ValueError:
        return None
    if len(lastmod) <= 10:  # a date: changed if later than the day of the check
        return "changed" if when.date() > seen.date() else None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    if seen.tzinfo is None:
        seen = seen.replace(tzinfo=UTC)
    if when > seen:
        return "changed"
    return "same" if now is not None and when <= seen - CLOCK_SKEW and when <= now else None


def says_unchanged(lastmod: str | None, checked_at: str | None, now: datetime) -> bool:
    """Whether a sitemap `lastmod` vouches that a page did not change since its last check
    (`lastmod_says` is "same")."""
    return lastmod_says(lastmod, checked_at, now) == "same"


def newer(lastmod: str | None, checked_at: str | None) -> bool:
    """A sitemap `lastmod` later than a page's last check (`lastmod_says` is "changed"). A page
    never checked counts as changed; an unreadable lastmod does not."""
    return lastmod_says(lastmod, checked_at, None) == "changed"
