"""The paper links of a "Builds on" or "Built on by" list: one `ListedPaper` per item.

This is the parser's hot path: a page lists up to hundreds of papers, a map a million pages.
`list_items` reads a list in one of two ways that give the same answer:

- `items_at_once`, for the shape every real list has (each non-blank line one item
  `- [Title](https://host/…/paper/<id>/) (year)`, the link plain ASCII): one regular
  expression a line, nothing else to check. Any other line makes it give up (None).
- `items_by_line`, the reference: each line read as docs/pages.md describes it, with a link
  made safe (store/urls.py) and the id found anywhere in the URL, and every problem a
  `ParseError` naming its line.

tests/unit/store/test_store_fastpaths.py checks that the two agree.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mapwatch.store.errors import ParseError
from mapwatch.store.ids import ID_PATTERN, ID_RE, normalize_id
from mapwatch.store.pages.model import ListedPaper
from mapwatch.store.urls import MAX_URL, safe_http_url, url_problem

# A title (the page's, or a listed paper's) longer than this is rejected: arXiv titles run to a
# few hundred characters; a longer one is not a title (docs/pages.md,
# "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]").
MAX_TITLE_CHARS = 1_000
UNESCAPE = re.compile(r"\\([\\\[\]()*_`])")  # markdown escapes in titles and names

LINK_ITEM = re.compile(r"^- \[(?P<title>.+)\]\((?P<url>[^)\s]+)\)(?:\s*\((?P<year>\d{4})\))?$")
_LINK_TAIL = re.compile(r"(?P<url>[^)\s]+)\)(?:\s*\((?P<year>\d{4})\))?$")
_ID_AT = re.compile(ID_RE.pattern.removeprefix("^"))  # ID_RE from a position (match() ignores ^ there)
_PLAIN_URL = re.compile(r"https?://[A-Za-z0-9.-]+(?::\d{1,4})?/[A-Za-z0-9._~/%-]*")  # safe as it stands
# What follows the title of a common item: a plain URL (within _PLAIN_URL) ending
# /paper/<id>[vN]/, ASCII only, and the year. It holds no "](", so the title ends at the line's
# last "](", as LINK_ITEM's greedy title does. The id is the one after the URL's last "/paper/"
# that names one, as items_by_line finds it: an id holds one "/" at most, digits after it, so
# two "/paper/"s cannot both name an id that runs to the URL's end.
_COMMON_TAIL = re.compile(
    r"(https?://[A-Za-z0-9.-]+(?::[0-9]{1,4})?/(?:[A-Za-z0-9._~/%-]*/)?paper/"
    rf"({ID_PATTERN})(?:v[0-9]+)?/)\)(?:[ \t]*\(([0-9]{{4}})\))?", re.ASCII).fullmatch


def checked_link(url: str, line: int, what: str) -> str:
    """A link from a page, if it is http(s) with a host (store/urls.py); else the page is
    rejected: nothing but http(s) links is stored (docs/pages.md,
    "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]": links from pages)."""
    if len(url) <= MAX_URL and _PLAIN_URL.fullmatch(url):
        return url  # what safe_http_url gives for it, without its checks
    safe = safe_http_url(url)
    if safe is None:
        raise ParseError(f"{what} is {url_problem(url)}", line)
    return safe


def _listed_fast(paper_id: str, title: str, year: int | None, position: int, url: str) -> ListedPaper:
    # The frozen dataclass's __init__ sets each field through object.__setattr__; filling
    # __dict__ at once builds the same (equal, hashable, immutable) object in half the time.
    item = _new(ListedPaper)
    item.__dict__.update(id=paper_id, title=title, year=year, position=position, url=url)
    return item


def _pick_listed() -> Callable[[str, str, int | None, int, str], ListedPaper]:
    """The fast constructor if it builds exactly what the dataclass does, else the dataclass."""
    args = ("2412.10400", "t", 2024, 1, "https://x/paper/2412.10400/")
    try:
        ok = _listed_fast(*args) == ListedPaper(*args) and vars(_listed_fast(*args)) == vars(ListedPaper(*args))
    except (AttributeError, TypeError):
        ok = False
    return _listed_fast if ok else ListedPaper


_new = object.__new__
_listed = _pick_listed()


def _link_item(s: str) -> tuple[str, str, str | None] | None:
    """`LINK_ITEM` on a list line, as (title, url, year). The greedy title ends at the last
    "](" whose tail matches, so trying the last one first gives the regex's answer."""
    if s.startswith("- ["):
        k = s.rfind("](")
        if k > 3:
            m = _LINK_TAIL.match(s, k + 2)
            if m:
                return s[3:k], m["url"], m["year"]
    m = LINK_ITEM.match(s)
    return (m["title"], m["url"], m["year"]) if m else None


def list_items(lines: list[str], start: int, end: int) -> list[ListedPaper]:
    """The items of a list whose body is lines[start:end] (0-based; line numbers start + 1 on)."""
    items = items_at_once(lines, start, end)
    return items if items is not None else items_by_line(lines, start, end)


def items_at_once(lines: list[str], start: int, end: int) -> list[ListedPaper] | None:
    """The items, if every non-blank line of the body is a common item (`_COMMON_TAIL`) whose
    title is within bounds; else None."""
    items: list[ListedPaper] = []
    append = items.append
    fast = _listed is _listed_fast
    for s in lines[start:end]:
        if not s:
            continue
        k = s.rfind("](")
        m = _COMMON_TAIL(s, k + 2) if k > 3 and s.startswith("- [") else None
        if m is None:
            return None
        url, paper_id, year = m.groups()
        if len(url) > MAX_URL:
            return None
        title = s[3:k]
        title = title.strip()
        if "\\" in title:
            title = UNESCAPE.sub(r"\1", title)
        if len(title) > MAX_TITLE_CHARS:
            return None
        if fast:  # _listed_fast, inline
            item = _new(ListedPaper)
            item.__dict__.update(id=paper_id, title=title, year=int(year) if year else None,
                                 position=len(items) + 1, url=url)
            append(item)
        else:
            append(_listed(paper_id, title, int(year) if year else None, len(items) + 1, url))
    return items


def items_by_line(lines: list[str], start: int, end: int) -> list[ListedPaper]:
    """The items, line by line: the reference reading, with a `ParseError` naming the line of
    an item that is not a paper link or whose title is too long. Other lines are skipped."""
    items: list[ListedPaper] = []
    append = items.append
    for n in range(start + 1, end + 1):
        s = lines[n - 1].strip()
        if not s.startswith("- ") and s != "-":
            continue
        found = _link_item(s)
        if found is None:
            raise ParseError(f"list item is not a paper link: {s[:80]!r}", n)
        title, url, year = found
        if "/paper/" not in url:
            raise ParseError(f"list item is not a paper link: {s[:80]!r}", n)
        url = checked_link(url, n, "list item's link")
        paper_id = None
        if url.endswith("/") and "?" not in url and "#" not in url:
            mid = _ID_AT.match(url, url.rfind("/paper/") + 7, len(url) - 1)
            if mid is not None:
                paper_id = mid[1]
        if paper_id is None:
            paper_id = normalize_id(url)
            if paper_id is None:
                raise ParseError(f"list item is not a paper link: {s[:80]!r}", n)
        title = title.strip()
        if "\\" in title:
            title = UNESCAPE.sub(r"\1", title)
        if len(title) > MAX_TITLE_CHARS:
            raise ParseError(f"list item's title over {MAX_TITLE_CHARS:,} characters ({len(title):,})", n)
        append(_listed(paper_id, title, int(year) if year else None, len(items) + 1, url))
    return items
