"""Sitemaps (sitemaps.org protocol): the pages a site lists, and which changed since a check."""

from __future__ import annotations

import xml.etree.ElementTree as ET
import zlib
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from mapwatch.store.clock import http_date

MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # the sitemaps protocol's limit, uncompressed
MAX_SITEMAPS = 200  # sitemap files read per tick (an index may name more)
MAX_SITEMAP_ENTRIES = 50_000  # the protocol's limit of <url> (or <sitemap>) entries per file
# Elements a sitemap may hold: each entry's loc, lastmod, changefreq and priority with room for
# extensions (images, alternates); a sitemap past it is rejected before it costs more.
MAX_SITEMAP_ELEMENTS = 20 * MAX_SITEMAP_ENTRIES
MAX_SITEMAP_DEPTH = 16  # a urlset, its url, an extension's element and theirs nest 4 or 5 deep
MAX_ENTRY_ELEMENTS = 1_000  # elements inside one entry (kept until the entry ends)
MAX_LOC_CHARS = 2_048  # the protocol's limit of a <loc>; longer ones are left out
_SITEMAP_NS = "{http://www.sitemaps.org/schemas/sitemap/0.9}"
# A lastmod vouches for a page only when it is at least this much older than the check: the
# site's clock and ours may differ by that much.
CLOCK_SKEW = timedelta(minutes=10)
# A Date header further from our clock than this is not a clock that drifted (a cache's copy,
# a mistake or a lie): no skew is measured from it, and lastmods are read as they stand.
MAX_MEASURED_SKEW = timedelta(days=1)


def sitemap_entries(data: bytes) -> tuple[str, list[tuple[str, str | None]]]:
    """("index" | "urlset", [(loc, lastmod or None)]) of a sitemap document (gzipped or not).
    Raises ValueError for a document that is not a sitemap, or one past the protocol's bounds:
    more than MAX_SITEMAP_ENTRIES `<url>`/`<sitemap>` entries, more than MAX_SITEMAP_ELEMENTS
    elements, or nested deeper than MAX_SITEMAP_DEPTH. Every element is freed once its end tag
    is read, so memory stays at the entries kept, whatever else the document holds."""
    parser: ET.XMLPullParser[ET.Element] = ET.XMLPullParser(events=("start", "end"))
    kind = ""
    out: list[tuple[str, str | None]] = []
    stack: list[ET.Element] = []  # the open elements
    elements = in_entry = 0  # elements read; those of the root's open child
    try:
        for chunk in _chunks(data):
            parser.feed(chunk)
            for item in parser.read_events():
                event, el = item[0], item[-1]
                if not isinstance(el, ET.Element):  # only "start" and "end" are asked for
                    continue
                if event == "start":
                    elements += 1
                    stack.append(el)
                    if len(stack) > 2:
                        in_entry += 1
                        if in_entry > MAX_ENTRY_ELEMENTS:
                            raise ValueError(f"a sitemap entry holds more than {MAX_ENTRY_ELEMENTS} elements")
                        if len(stack) > MAX_SITEMAP_DEPTH:
                            raise ValueError(f"sitemap nested deeper than {MAX_SITEMAP_DEPTH} elements")
                    continue
                stack.pop()
                tag = el.tag.removeprefix(_SITEMAP_NS)
                if tag in ("url", "sitemap") and len(stack) == 1:
                    kind = kind or ("index" if tag == "sitemap" else "urlset")
                    loc = (el.findtext(f"{_SITEMAP_NS}loc") or el.findtext("loc") or "").strip()
                    mod = (el.findtext(f"{_SITEMAP_NS}lastmod") or el.findtext("lastmod") or "").strip()
                    if loc and len(loc) <= MAX_LOC_CHARS:
                        out.append((loc, mod or None))
                        if len(out) > MAX_SITEMAP_ENTRIES:
                            raise ValueError(f"sitemap lists more than {MAX_SITEMAP_ENTRIES:,} entries")
                elif tag in ("urlset", "sitemapindex") and not stack:
                    kind = kind or ("index" if tag == "sitemapindex" else "urlset")
                if len(stack) == 1:
                    stack[0].clear()  # a finished child of the root: nothing of it is kept
                    in_entry = 0
                elif not stack:
                    el.clear()
            if elements > MAX_SITEMAP_ELEMENTS:
                raise ValueError(f"sitemap has more than {MAX_SITEMAP_ELEMENTS:,} elements")
        parser.close()
    except ET.ParseError as e:
        raise ValueError(f"not a sitemap ({e})") from None
    if not kind:
        raise ValueError("not a sitemap (no <urlset> or <sitemapindex>)")
    return kind, out


def _chunks(data: bytes, size: int = 1 << 16) -> Iterator[bytes]:
    """The document in pieces of `size` bytes, decompressed as it goes when gzipped (never
    whole: a small gzip may hold 50 MB); ValueError past MAX_SITEMAP_BYTES uncompressed."""
    if data[:2] != b"\x1f\x8b":
        for start in range(0, len(data), size):
            yield data[start:start + size]
        return
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    total = 0
    for start in range(0, len(data), size):
        piece = d.decompress(data[start:start + size], size)
        while piece:
            total += len(piece)
            if total > MAX_SITEMAP_BYTES:
                raise ValueError("sitemap over 50 MB uncompressed")
            yield piece
            piece = d.decompress(d.unconsumed_tail, size) if d.unconsumed_tail else b""
    if not d.eof:  # a truncated gzip: what it held is parsed, and the end tag will be missing
        piece = d.flush()
        if piece:
            yield piece


def lastmod_says(lastmod: str | None, checked_at: str | None, now: datetime | None,
                 skew: timedelta = timedelta(0)) -> str | None:
    """What a sitemap `lastmod` (W3C date or date-time) says of a page last checked at
    `checked_at` (ISO date-time, UTC), each string parsed once:
    - "changed": later than the check (a date: later than the check's day); a page never
      checked counts as changed;
    - "same": it vouches that the page did not change since: a full date-time (a date alone
      cannot say which of a day's hours), at least CLOCK_SKEW before the check, and not after
      `now` (a lastmod in the future is a lie or a wrong clock: it vouches for nothing; with
      `now` None nothing is vouched for). Pages it vouches for need no re-check while the
      host's lastmods are believed (store.sources.sitemap_trust);
    - None: neither (no lastmod, an unreadable one, or too close to the check to tell).
    `skew`: how far the site's clock is ahead of ours (`site_clock_skew`); a date-time lastmod
    is moved onto our clock before it is compared, so a site whose clock is behind cannot make
    a change after our check look older than it."""
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
    when -= skew
    if seen.tzinfo is None:
        seen = seen.replace(tzinfo=UTC)
    if when > seen:
        return "changed"
    return "same" if now is not None and when <= seen - CLOCK_SKEW and when <= now else None


def site_clock_skew(date_header: str | None, now: datetime) -> timedelta | None:
    """How far a site's clock is ahead of ours (negative: behind), from the Date header of an
    answer received at about `now`; None without a readable Date or when it is more than
    MAX_MEASURED_SKEW off (then it is not taken for the site's clock)."""
    said = http_date(date_header)
    if said is None:
        return None
    skew = said - now
    return skew if abs(skew) <= MAX_MEASURED_SKEW else None


def says_unchanged(lastmod: str | None, checked_at: str | None, now: datetime) -> bool:
    """Whether a sitemap `lastmod` vouches that a page did not change since its last check
    (`lastmod_says` is "same")."""
    return lastmod_says(lastmod, checked_at, now) == "same"


def newer(lastmod: str | None, checked_at: str | None) -> bool:
    """A sitemap `lastmod` later than a page's last check (`lastmod_says` is "changed"). A page
    never checked counts as changed; an unreadable lastmod does not."""
    return lastmod_says(lastmod, checked_at, None) == "changed"
