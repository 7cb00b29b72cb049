"""Checking the web pages the way a validator and a careful reader would (shared by the page tests)."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from urllib.parse import urlsplit
from xml.etree.ElementTree import Element

import html5lib

_HEADING = re.compile(r"^h([1-6])$")


def parse_strict(data: bytes) -> Element:
    """The page as an element tree; html5lib's strict mode raises on any parse error."""
    return html5lib.HTMLParser(strict=True, namespaceHTMLElements=False).parse(data)


def text_of(el: Element) -> str:
    return " ".join("".join(el.itertext()).split())


def headings(root: Element) -> list[tuple[int, str]]:
    return [(int(m.group(1)), text_of(el)) for el in root.iter() if (m := _HEADING.match(str(el.tag)))]


def assert_good_page(data: bytes, where: str = "") -> Element:
    """Valid HTML, `lang`, a viewport, one h1 first and no skipped heading level, links and
    images a reader can name, and nothing loaded from another site."""
    root = parse_strict(data)
    assert root.get("lang") == "en", where
    metas = {m.get("name"): m.get("content") for m in root.iter("meta")}
    assert metas.get("viewport", "").startswith("width=device-width"), where
    assert (root.findtext("head/title") or "").strip(), where
    levels = [lvl for lvl, _ in headings(root)]
    assert levels and levels[0] == 1 and levels.count(1) == 1, (where, levels)
    for before, after in itertools.pairwise(levels):
        assert after <= before + 1, f"{where}: h{before} then h{after}"
    for a in root.iter("a"):
        assert text_of(a) or a.get("aria-label"), f"{where}: a link without text: {a.attrib}"
        assert a.get("href"), where
    for img in root.iter("img"):
        assert (img.get("alt") or "").strip(), where
    for el in root.iter():
        for attr in ("src",):
            if el.get(attr):
                assert not urlsplit(el.get(attr)).scheme, f"{where}: {el.tag} loads {el.get(attr)}"
    for link in root.iter("link"):
        if link.get("rel") == "stylesheet":
            assert not urlsplit(link.get("href")).scheme, where
    return root


def assert_nothing_injected(root: Element, where: str = "") -> None:
    """Only our own script, no event handler attributes, every link http(s) or relative."""
    for el in root.iter():
        if el.tag == "script":
            assert (el.get("src") or "").endswith("site.js") and not (el.text or "").strip(), where
        assert el.tag not in ("iframe", "object", "embed", "base", "form") or el.get("class") == "filter", where
        for name, value in el.attrib.items():
            assert not name.lower().startswith("on"), f"{where}: {el.tag} has {name}"
            if name in ("href", "src", "action", "formaction", "value") and ":" in value.split("/")[0]:
                assert urlsplit(value).scheme in ("http", "https"), f"{where}: {el.tag} {name}={value!r}"


def html_files(out: Path) -> list[Path]:
    return sorted(out.rglob("*.html"))
