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

from store.errors import ParseError
from store.ids import normalize_id
from store.model import ListedPaper, MapPage, PaperList, Placement

MAX_PAGE_BYTES = 2 * 1024 * 1024

_MONTHS = {m: i for i, m in enumerate(
    ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"], 1)}
_NUM = r"\d[\d,]*"
_CITED_BY = re.compile(
    rf"^Cited by (?P<n>{_NUM}) papers? in the map(?: \(data through (?P<d>[^)]+)\))?\.?$")
_PLACED = re.compile(rf"^Placed in (?P<dir>.+), one of (?P<k>{_NUM}) directions? in (?P<area>.+?)\.?$")
_BUILDS = re.compile(
    rf"^Builds on (?P<r>{_NUM}) of its (?P<t>{_NUM}) references?(?: that (?:are|is) in the map)?\.?$")
_POSTED = re.compile(r"^First posted on arXiv (?P<d>.+?)\.?$")
_HEADER_LINK = re.compile(r"(?P<label>arXiv|HTML):\s*(?P<url>\S+)")
_LINK_ITEM = re.compile(r"^- \[(?P<title>.+)\]\((?P<url>[^)\s]+)\)(?:\s*\((?P<year>\d{4})\))?$")
_PLACEMENT = re.compile(r"^- (?:(?P<crumb>.*) / )?\[(?P<name>.+)\]\((?P<url>[^)\s]+)\)$")
_COUNTS = re.compile(rf"(?P<n>{_NUM}) of (?P<m>{_NUM})")
_UNESCAPE = re.compile(r"\\([\\\[\]()*_`])")


def parse_page(data: bytes | str) -> MapPage:
    """Parse one page. Raises `ParseError` (with a 1-based line, 0 = whole file)."""
    lines = _lines(_decode(data))
    return _Parser(lines).page()


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
            line = raw.count(b"\n", 0, e.start) + 1
            raise ParseError(f"not UTF-8 text (binary data?) at byte {e.start}", line) from None
    return text.removeprefix("\ufeff")


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]


def _int(text: str, line: int) -> int:
    digits = text.replace(",", "")
    if len(digits) > 18:  # beyond what SQLite's INTEGER holds (and int()'s 4300-digit limit)
        raise ParseError(f"number too large: {digits[:20]}...", line)
    return int(digits)


def _date(text: str, line: int) -> date:
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
            except (ValueError, OverflowError):  # e.g. a day of 10**25
                pass
    raise ParseError(f"not a date: {text!r}", line)


class _Section:
    def __init__(self, heading: str, line: int) -> None:
        self.heading = heading
        self.line = line  # 1-based line of the heading
        self.body: list[tuple[int, str]] = []


class _Parser:
    def __init__(self, lines: list[str]) -> None:
        self.lines = lines

    def page(self) -> MapPage:
        numbered = [(i + 1, s) for i, s in enumerate(self.lines)]
        content = [(n, s) for n, s in numbered if s.strip()]
        if not content:
            raise ParseError("empty file (only whitespace)")
        first_no, first = content[0]
        if first.lstrip().startswith("<"):
            raise ParseError("an HTML/XML document, not a map page", first_no)
        if not first.startswith("# "):
            raise ParseError("no title: a map page starts with '# <title>'", first_no)
        title = first[2:].strip()
        if not title:
            raise ParseError("empty title", first_no)

        header: list[tuple[int, str]] = []
        sections: list[_Section] = []
        for n, s in numbered[first_no:]:
            if s.startswith("## "):
                sections.append(_Section(s[3:].strip(), n))
            elif sections:
                sections[-1].body.append((n, s))
            else:
                header.append((n, s))

        arxiv_url, map_url = self._header(header)
        paper_id = normalize_id(arxiv_url or "") or normalize_id(map_url or "")
        if paper_id is None:
            raise ParseError(
                "no arXiv id: expected 'arXiv: https://arxiv.org/abs/<id>' under the title",
                header[0][0] if header else first_no)

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
            title=_UNESCAPE.sub(r"\1", title),
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
    def _header(header: list[tuple[int, str]]) -> tuple[str | None, str | None]:
        arxiv = html = None
        for _n, s in header:
            for m in _HEADER_LINK.finditer(s):
                if m.group("label") == "arXiv":
                    arxiv = arxiv or m.group("url")
                else:
                    html = html or m.group("url")
        return arxiv, html

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
                    facts["data_through"] = _date(m["d"], n)
            elif m := _PLACED.match(fact):
                facts["direction"] = m["dir"].strip()
                facts["direction_count"] = _int(m["k"], n)
                facts["area"] = m["area"].strip()
            elif m := _BUILDS.match(fact):
                facts["refs_in_map"] = _int(m["r"], n)
                facts["refs_total"] = _int(m["t"], n)
            elif m := _POSTED.match(fact):
                facts["first_posted"] = _date(m["d"], n)
            # Unknown facts are ignored: the map may add some.
        return facts

    def _placements(self, sec: _Section, first_area: str | None) -> tuple[Placement, ...]:
        out: list[Placement] = []
        for n, s in self._bullets(sec):
            m = _PLACEMENT.match(s)
            if not m:
                raise ParseError("placement is not '<area> / ... / [<direction>](<url>)'", n)
            crumb = (m["crumb"] or "").strip()
            name = _UNESCAPE.sub(r"\1", m["name"].strip())
            url = m["url"]
            try:
                slug = urlparse(url).path.strip("/")
            except ValueError:  # e.g. "https://[host/...": an unbalanced IPv6 bracket
                raise ParseError(f"direction link is not a URL: {url!r}", n) from None
            if not slug:
                raise ParseError(f"direction link has no path: {url!r}", n)
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
        items: list[ListedPaper] = []
        for n, s in self._bullets(sec):
            m = _LINK_ITEM.match(s)
            paper_id = normalize_id(m["url"]) if m and "/paper/" in m["url"] else None
            if m is None or paper_id is None:
                raise ParseError(f"list item is not a paper link: {s[:80]!r}", n)
            year = int(m["year"]) if m["year"] else None
            items.append(ListedPaper(
                id=paper_id, title=_UNESCAPE.sub(r"\1", m["title"].strip()), year=year,
                position=len(items) + 1, url=m["url"]))
        counts = _COUNTS.search(sec.heading)
        shown, total = ((_int(counts["n"], sec.line), _int(counts["m"], sec.line)) if counts
                        else (len(items), len(items)))
        if len(items) < shown and is_last:
            last = sec.body[-1][0] if sec.body else sec.line
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
