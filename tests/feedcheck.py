"""Checking feeds the way readers and RFC 4287 see them (shared by the feed tests)."""

from __future__ import annotations

from pathlib import Path

import feedparser
from lxml import etree

ATOM = "{http://www.w3.org/2005/Atom}"


def assert_valid_atom(data: bytes, self_url: str | None = None) -> feedparser.FeedParserDict:
    """feedparser reads it without complaint, and each RFC 4287 requirement holds."""
    parsed = feedparser.parse(data)
    assert parsed.bozo == 0, parsed.get("bozo_exception")
    assert parsed.version == "atom10"

    root = etree.fromstring(data)
    assert root.tag == f"{ATOM}feed"

    def one(el, name: str) -> str:
        found = el.findall(f"{ATOM}{name}")
        assert len(found) == 1, f"{name}: {len(found)} elements"
        assert (found[0].text or "").strip(), f"{name} is empty"
        return found[0].text

    feed_id = one(root, "id")
    assert feed_id.startswith("tag:mapwatch,2026:")
    one(root, "title")
    one(root, "updated")
    authors = root.findall(f"{ATOM}author")
    assert authors and all((a.findtext(f"{ATOM}name") or "").strip() for a in authors)
    selfs = [link for link in root.findall(f"{ATOM}link") if link.get("rel") == "self"]
    assert len(selfs) == 1 and selfs[0].get("type") == "application/atom+xml"
    if self_url:
        assert selfs[0].get("href") == self_url
    ids = []
    for entry in root.findall(f"{ATOM}entry"):
        ids.append(one(entry, "id"))
        one(entry, "title")
        one(entry, "updated")
        alternates = [link for link in entry.findall(f"{ATOM}link") if link.get("rel", "alternate") == "alternate"]
        assert len(alternates) == 1
    assert len(ids) == len(set(ids)), "entry ids repeat"
    # The feed's updated is its newest entry's (or a stored timestamp when empty).
    if parsed.entries:
        assert parsed.feed.updated_parsed == max(e.updated_parsed for e in parsed.entries)
    return parsed


def feed_files(out: Path) -> list[Path]:
    return sorted(out.rglob("*.atom"))


def snapshot(out: Path) -> dict[str, tuple[bytes, int]]:
    """Every published file's bytes and mtime (not the generation mark the server watches)."""
    return {str(p.relative_to(out)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(out.rglob("*")) if p.is_file() and p.name != ".generation"}
