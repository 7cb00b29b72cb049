"""Pure parsing: the text of one map page -> `MapPage`, or `ParseError` naming the line.

The format is defined by the pages in seeds/ (see README there). Lenient where the map
may vary (CRLF, BOM, trailing spaces, singular forms, missing sections, unknown key
facts), strict where a page is not a map page at all.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import date
from urllib.parse import urlparse

from mapwatch.store.clock import utc_now
from mapwatch.store.errors import ParseError, undecodable
from mapwatch.store.ids import ID_RE, arxiv_url, page_identity
from mapwatch.store.pages.list_items import MAX_TITLE_CHARS, UNESCAPE, checked_link, list_items
from mapwatch.store.pages.model import MapPage, PaperList, Placement
from mapwatch.store.pages.page_dates import claimed_date
from mapwatch.store.pages.slugs import slug_problem

MAX_PAGE_BYTES = 2 * 1024 * 1024
# Directions a page may place its paper in: a real page has one to three. Past this the page is
# rejected (each placement becomes a direction with its own feed and files).
MAX_PLACEMENTS = 20

_NUM = r"\d[\d,]*"
_CITED_BY = re.compile(
    rf"^Cited by (?P<n>{_NUM}) papers? in the map(?: \(data through (?P<d>[^)]+)\))?\.?$")
_PLACED = re.compile(rf"^Placed in (?P<dir>.+), one of (?P<k>{_NUM}) directions? in (?P<area>.+?)\.?$")
_BUILDS = re.compile(
    rf"^Builds on (?P<r>{_NUM}) of its (?P<t>{_NUM}) references?(?: that (?:are|is) in the map)?\.?$")
_POSTED = re.compile(r"^First posted on arXiv (?P<d>.+?)\.?$")
_HEADER_LINK = re.compile(r"(?P<label>arXiv|HTML):\s*(?P<url>\S+)")
_PLACEMENT = re.compile(r"^- (?:(?P<crumb>.*) / )?\[(?P<name>.+)\]\((?P<url>[^)\s]+)\)$")
_COUNTS = re.compile(rf"(?P<n>{_NUM}) of (?P<m>{_NUM})")


def parse_page(data: bytes | str, *, today: date | None = None) -> MapPage:
    """Parse one page. Raises `ParseError` (with a 1-based line, 0 = whole file).

    `today` (the caller's clock's date; default: today in UTC) bounds the dates a page may
    claim (store/pages/page_dates.py)."""
    lines = _lines(_decode(data))
    return _Parser(lines, today or utc_now().date()).page()


def parse_document(data: bytes, *, url: str | None = None, content_type: str | None = None,
                   today: date | None = None) -> MapPage:
    """Parse one page in any format the map serves: an HTML document (by `content_type` or
    its first bytes) is read from its main content (`store.pages.html`), then parsed as text; any
    other document is text. `url` is where the page came from: relative links are resolved
    against it, and it is the page's `map_url` when the page has no `HTML:` self link.
    `today` as for `parse_page`.
    Raises `ParseError`; for HTML, reasons name the HTML page and carry no line number."""
    from mapwatch.store.pages import html  # HTML support loads its parser only when a page needs it

    if not html.is_html(data, content_type):
        return parse_page(data, today=today)
    if len(data) > MAX_PAGE_BYTES:
        raise ParseError(f"file over 2 MB ({len(data):,} bytes), not a map page")
    text = html.html_to_page_text(data, url)
    try:
        return parse_page(text, today=today)
    except ParseError as e:
        raise ParseError(f"HTML page: {e.reason}") from None


def _decode(data: bytes | str) -> str:
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > MAX_PAGE_BYTES:
        raise ParseError(f"file over 2 MB ({len(raw):,} bytes), not a map page")
    if not raw.strip():
        raise ParseError("empty file")
    if b"\x00" in raw[:8192]:
        raise ParseError("binary data (NUL bytes), not a text page")
    if isinstance(data, str):
        text = data
    else:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise undecodable(raw, e) from None
    return text.removeprefix("\ufeff")


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def _int(text: str, line: int) -> int:
    digits = text.replace(",", "")
    if len(digits) > 18:  # beyond what SQLite's INTEGER holds (and int()'s 4300-digit limit)
        raise ParseError(f"number too large: {digits[:20]}...", line)
    return int(digits)


class _Section:
    """A "## " heading and its body: lines[start:end] (0-based), numbered from start + 1."""

    def __init__(self, heading: str, line: int, lines: list[str]) -> None:
        self.heading = heading
        self.line = line  # 1-based line of the heading
        self.lines = lines
        self.start = line  # the body starts on the line after the heading
        self.end = len(lines)

    @property
    def body(self) -> list[tuple[int, str]]:
        return list(enumerate(self.lines[self.start:self.end], self.start + 1))


class _Parser:
    def __init__(self, lines: list[str], today: date) -> None:
        self.lines = lines
        self.today = today

    def page(self) -> MapPage:
        lines = self.lines
        first_no = next((i for i, s in enumerate(lines, 1) if s.strip()), 0)
        if not first_no:
            raise ParseError("empty file (only whitespace)")
        first = lines[first_no - 1]
        if first.lstrip().startswith("<"):
            raise ParseError("an HTML/XML document, not a map page", first_no)
        if not first.startswith("# "):
            raise ParseError("no title: a map page starts with '# <title>'", first_no)
        title = first[2:].strip()
        if not title:
            raise ParseError("empty title", first_no)
        title = UNESCAPE.sub(r"\1", title)
        if len(title) > MAX_TITLE_CHARS:
            raise ParseError(f"title over {MAX_TITLE_CHARS:,} characters ({len(title):,})", first_no)

        # Header: the lines after the title up to the first "## " heading.
        sections: list[_Section] = []
        header_end = len(lines)
        for i in range(first_no, len(lines)):
            if lines[i].startswith("## "):
                if sections:
                    sections[-1].end = i
                else:
                    header_end = i
                sections.append(_Section(lines[i][3:].strip(), i + 1, lines))
        header = list(enumerate(lines[first_no:header_end], first_no + 1))

        arxiv_url, map_url, links_at, more = self._header(header)
        paper_id, arxiv_url = page_identity(arxiv_url, map_url, links_at, more)
        if paper_id is None:
            raise ParseError(
                "no arXiv id: expected 'arXiv: https://arxiv.org/abs/<id>' under the title",
                links_at or (header[0][0] if header else first_no))

        facts: dict[str, object] = {}
        placements: tuple[Placement, ...] = ()
        builds_on = built_on_by = None
        abstract = None
        placed_section: _Section | None = None
        for sec in sections:
            name = sec.heading
            if name == "Key facts":
                facts = self._facts(sec)
            elif name == "Placed in":
                placed_section = sec
            elif name.startswith("Builds on"):
                builds_on = self._list(sec, sec is sections[-1])
            elif name.startswith("Built on by"):
                built_on_by = self._list(sec, sec is sections[-1])
            elif name.startswith("Abstract"):
                abstract = self._abstract(sec)
        if placed_section is not None:
            placements = self._placements(placed_section, facts.get("area"))  # type: ignore[arg-type]
        if builds_on is None and built_on_by is None and abstract is None:
            raise ParseError("truncated: the page ends before its lists", len(self.lines))

        return MapPage(
            id=paper_id,
            title=title,
            arxiv_url=arxiv_url,
            map_url=map_url,
            cited_by=facts.get("cited_by"),  # type: ignore[arg-type]
            data_through=facts.get("data_through"),  # type: ignore[arg-type]
            direction=facts.get("direction"),  # type: ignore[arg-type]
            direction_count=facts.get("direction_count"),  # type: ignore[arg-type]
            area=facts.get("area"),  # type: ignore[arg-type]
            refs_in_map=facts.get("refs_in_map"),  # type: ignore[arg-type]
            refs_total=facts.get("refs_total"),  # type: ignore[arg-type]
            first_posted=facts.get("first_posted"),  # type: ignore[arg-type]
            placements=placements,
            builds_on=builds_on,
            built_on_by=built_on_by,
            abstract=abstract,
        )

    @staticmethod
    def _header(header: list[tuple[int, str]]) -> tuple[str | None, str | None, int, list[tuple[str, str, int]]]:
        """(arXiv link, HTML link, the line of the last of them, later ones: (label, url, line))."""
        arxiv = html = None
        at = 0
        more: list[tuple[str, str, int]] = []
        for n, s in header:
            for m in _HEADER_LINK.finditer(s):
                label = m.group("label")
                if (arxiv if label == "arXiv" else html) is not None:
                    more.append((label, m.group("url"), n))
                    continue
                url = m.group("url")
                bare = ID_RE.match(url) if label == "arXiv" else None  # "arXiv: 2412.10400"
                url = arxiv_url(bare["id"]) if bare else checked_link(url, n, f"{label} link")
                if label == "arXiv":
                    arxiv = url
                else:
                    html = url
                at = n
        return arxiv, html, at, more

    @staticmethod
    def _bullets(sec: _Section) -> Iterator[tuple[int, str]]:
        for n, s in sec.body:
            s = s.strip()
            if s.startswith("- ") or s == "-":
                yield n, s

    def _facts(self, sec: _Section) -> dict[str, object]:
        facts: dict[str, object] = {}
        for n, s in self._bullets(sec):
            fact = s[2:].strip()
            if m := _CITED_BY.match(fact):
                facts["cited_by"] = _int(m["n"], n)
                if m["d"]:
                    facts["data_through"] = claimed_date(m["d"], n, "'data through'", self.today)
            elif m := _PLACED.match(fact):
                facts["direction"] = m["dir"].strip()
                facts["direction_count"] = _int(m["k"], n)
                facts["area"] = m["area"].strip()
            elif m := _BUILDS.match(fact):
                facts["refs_in_map"] = _int(m["r"], n)
                facts["refs_total"] = _int(m["t"], n)
            elif m := _POSTED.match(fact):
                facts["first_posted"] = claimed_date(m["d"], n, "'First posted on arXiv'", self.today)
            # Unknown facts are ignored: the map may add some.
        return facts

    def _placements(self, sec: _Section, first_area: str | None) -> tuple[Placement, ...]:
        out: list[Placement] = []
        for n, s in self._bullets(sec):
            if len(out) == MAX_PLACEMENTS:
                raise ParseError(f"placed in more than {MAX_PLACEMENTS} directions", n)
            m = _PLACEMENT.match(s)
            if not m:
                raise ParseError("placement is not '<area> / ... / [<direction>](<url>)'", n)
            crumb = (m["crumb"] or "").strip()
            name = UNESCAPE.sub(r"\1", m["name"].strip())
            url = checked_link(m["url"], n, "direction link")
            try:
                slug = urlparse(url).path.strip("/")
            except ValueError:  # e.g. "https://[host/...": an unbalanced IPv6 bracket
                raise ParseError(f"direction link is not a URL: {url!r}", n) from None
            if not slug:
                raise ParseError(f"direction link has no path: {url!r}", n)
            if problem := slug_problem(slug):  # a slug becomes a file name when feeds are published
                raise ParseError(f"direction link's path {slug[:80]!r} {problem}", n)
            if first_area and (crumb == first_area or crumb.startswith(first_area + " / ")):
                area = first_area
            elif crumb:
                area = crumb.split(" / ")[0]
            else:
                area = first_area if not out and first_area else ""
            breadcrumb = f"{crumb} / {name}" if crumb else name
            out.append(Placement(breadcrumb=breadcrumb, area=area, direction=name, slug=slug, url=url))
        return tuple(out)

    def _list(self, sec: _Section, is_last: bool) -> PaperList:
        items = list_items(sec.lines, sec.start, sec.end)
        counts = _COUNTS.search(sec.heading)
        shown, total = ((_int(counts["n"], sec.line), _int(counts["m"], sec.line)) if counts
                        else (len(items), len(items)))
        if len(items) < shown and is_last:
            last = sec.end if sec.end > sec.start else sec.line
            raise ParseError(
                f"truncated: '{sec.heading}' states {shown} papers, the page ends after {len(items)}",
                last)
        return PaperList(shown=shown, total=max(total, len(items)), items=tuple(items))

    @staticmethod
    def _abstract(sec: _Section) -> str:
        paragraphs: list[str] = []
        current: list[str] = []
        for _n, s in sec.body:
            if s.strip():
                current.append(s.strip())
            elif current:
                paragraphs.append(" ".join(current))
                current = []
        if current:
            paragraphs.append(" ".join(current))
        return "\n\n".join(paragraphs)
