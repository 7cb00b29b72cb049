"""The sources' answers as bounded records (pure: bytes in, records out, nothing fetched or
stored). Each parser takes the papers that were asked for and keeps only what it says of
them; anything that is not the documented format raises `Malformed` with one line.

- arXiv: its API's Atom 1.0 feed with the `arxiv:` extension elements (the API user manual,
  "Details of Atom Results Returned"); an answer that declares a DTD, wherever and in whatever
  encoding, is refused before any parser expands an entity;
- OpenAlex: `/works` JSON (`meta`, `results[]` of Work objects: `doi`, `ids`, `authorships`,
  `primary_location`, `locations`);
- Semantic Scholar: `/paper/{id}/citations` JSON (`offset`, `next`, `data[]` of
  `{contexts, intents, isInfluential, citingPaper: {externalIds}}`).

Bounds (store/records.py) are applied while reading, so a feed of 10,000 authors
costs no more than one of 100.
"""

from __future__ import annotations

import codecs
import json
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, NoReturn, TypeVar
from xml.parsers import expat

from mapwatch.store import records as r

# defined in the one exception tree (store/errors.py), and importable from here as before
from mapwatch.store.errors import Malformed as Malformed
from mapwatch.store.ids import ARXIV_DOI_PREFIX, ID_RE, arxiv_link_id
from mapwatch.store.person_ids import openalex_author, orcid
from mapwatch.store.records import (
    ArxivRecord,
    AuthorRecord,
    CitationContext,
    FoundCiter,
    Institution,
    OpenAlexWork,
)

T = TypeVar("T")

ATOM = "{http://www.w3.org/2005/Atom}"
ARXIV = "{http://arxiv.org/schemas/atom}"
FIRST_YEAR = 1991  # arXiv's first year: an earlier date is not a version date
MAX_JSON_DEPTH = 64
S2_INTENTS = frozenset({"background", "methodology", "result"})
_DTD_BYTES = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.I)
_DTD_TEXT = re.compile(r"<!(?:DOCTYPE|ENTITY)", re.I)
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"), (codecs.BOM_UTF16_LE, "utf-16-le"),
         (codecs.BOM_UTF16_BE, "utf-16-be"))
EXPAT_CHUNK = 64 * 1024  # bytes expat reads at a time when looking for a DTD


def _lower_map(asked: Iterable[str]) -> dict[str, str]:
    """Asked ids by their lower-case form: DOIs and OpenAlex lower-case what arXiv writes
    `math.GT/0309136`."""
    return {pid.lower(): pid for pid in asked}


def _when(text: str | None) -> str | None:
    """A version date-time as stored (ISO 8601, UTC, seconds), or None when it is not one
    or lies before arXiv."""
    if not text:
        return None
    try:
        ts = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    ts = ts if ts.tzinfo else ts.replace(tzinfo=UTC)
    if not FIRST_YEAR <= ts.year <= 9998:
        return None
    return ts.astimezone(UTC).isoformat(timespec="seconds")


# -- XML without a DTD -------------------------------------------------------------------


class _Declared(Exception):
    """expat met a DTD."""


def _declared(*_: object) -> NoReturn:
    raise _Declared


def _wide(body: bytes) -> str | None:
    """The codec of an answer in UTF-32 or UTF-16: by its BOM, else by the NUL bytes before its
    first character (as expat tells UTF-16; it does not read UTF-32). None for any other: in
    every other encoding expat reads, `<!DOCTYPE` is written in ASCII bytes (it takes a declared
    encoding only if that maps the ASCII bytes of XML's syntax to themselves)."""
    for bom, codec in _BOMS:
        if body.startswith(bom):
            return codec
    if body[1:4] == b"\0\0\0" or body[:3] == b"\0\0\0":
        return "utf-32-le" if body[0] else "utf-32-be"
    if body[:1] == b"\0" or body[1:2] == b"\0":
        return "utf-16-be" if not body[0] else "utf-16-le"
    return None


def _dtd_in(body: bytes) -> bool:
    """Whether `body` holds `<!DOCTYPE` or `<!ENTITY` anywhere: in its text if it is in UTF-16
    or UTF-32, else in its bytes."""
    codec = _wide(body)
    if codec is not None:
        return _DTD_TEXT.search(body.decode(codec, "replace")) is not None
    return _DTD_BYTES.search(body) is not None


def _expat_finds_dtd(body: bytes) -> bool:
    """Whether expat, reading `body` as the parser will (its encoding from the BOM or the XML
    declaration), meets a DTD. It says so at `<!DOCTYPE`, before the first entity declaration;
    what it reads of the piece after that is at most EXPAT_CHUNK bytes, with no handler left."""
    reader = expat.ParserCreate(namespace_separator="}")  # as ElementTree's parser
    reader.StartDoctypeDeclHandler = _declared
    reader.EntityDeclHandler = _declared
    try:
        for at in range(0, len(body), EXPAT_CHUNK):
            reader.Parse(body[at:at + EXPAT_CHUNK], False)
        reader.Parse(b"", True)
    except _Declared:
        return True
    return False


def _read(fn: Callable[[bytes], T], body: bytes, source: str) -> T:
    """`fn(body)`, with whatever a parser raises on it (not XML; an encoding it cannot read:
    multi-byte, unknown, broken; recursion, memory) as Malformed."""
    try:
        return fn(body)
    except (expat.ExpatError, ET.ParseError) as e:
        raise Malformed(f"the {source} answer is not XML ({e})") from None
    except MemoryError:
        raise Malformed(f"the {source} answer is too large to read (out of memory)") from None
    except (ValueError, LookupError, RecursionError) as e:
        why = " ".join(str(e).split())[:200]
        raise Malformed(f"the {source} answer is not XML ({type(e).__name__}: {why})") from None


def _xml_root(body: bytes, source: str) -> ET.Element:
    """The root element of an XML answer that declares no DTD, else Malformed (one line). A
    DTD is refused wherever it is and in whatever encoding, before any parser expands an
    entity: expat expands them up to 100-fold (a 1 MB answer took 1 GB of memory)."""
    if _dtd_in(body) or _read(_expat_finds_dtd, body, source):
        raise Malformed(f"the {source} answer declares a DTD")
    return _read(ET.fromstring, body, source)


# -- arXiv -------------------------------------------------------------------------------


def parse_arxiv(body: bytes, asked: Sequence[str]) -> list[ArxivRecord]:
    """arXiv's records of the `asked` papers in an API answer (an Atom feed). Entries for
    other ids, and arXiv's error entries (an id it does not know), are left out."""
    root = _xml_root(body, "arXiv")  # Atom has no DTD: entity tricks are refused unread
    if root.tag != f"{ATOM}feed":
        raise Malformed(f"the arXiv answer is not an Atom feed (root {root.tag[:60]!r})")
    wanted = _lower_map(asked)
    out: dict[str, ArxivRecord] = {}
    for entry in root.iter(f"{ATOM}entry"):
        link = (entry.findtext(f"{ATOM}id") or "").strip()
        found = arxiv_link_id(link)
        pid = wanted.get(found.lower()) if found else None
        if pid is None or pid in out:
            continue
        out[pid] = _arxiv_entry(entry, pid)
    return list(out.values())


def _arxiv_entry(entry: ET.Element, pid: str) -> ArxivRecord:
    authors: list[AuthorRecord] = []
    for a in entry.iter(f"{ATOM}author"):
        if len(authors) >= r.MAX_AUTHORS:
            break
        name = r.clean(a.findtext(f"{ATOM}name"))
        if not name:
            continue
        affiliations = [r.clean(e.text) for e in a.findall(f"{ARXIV}affiliation")[:r.MAX_INSTITUTIONS * 2]]
        institutions = tuple(Institution(n) for n in dict.fromkeys(x for x in affiliations if x))
        authors.append(AuthorRecord(name, institutions=institutions[:r.MAX_INSTITUTIONS]))
    primary_el = entry.find(f"{ARXIV}primary_category")
    primary = r.category(primary_el.get("term")) if primary_el is not None else None
    terms = [r.category(c.get("term")) for c in entry.findall(f"{ATOM}category")[:r.MAX_CATEGORIES * 5]]
    categories = tuple(dict.fromkeys(c for c in [primary, *terms] if c))[:r.MAX_CATEGORIES]

    def text(tag: str) -> str | None:
        return r.clean(entry.findtext(tag), r.MAX_TEXT_CHARS) or None

    return ArxivRecord(
        paper_id=pid, title=r.clean(entry.findtext(f"{ATOM}title"), r.MAX_TEXT_CHARS), authors=r.authors(authors),
        primary_category=primary or (categories[0] if categories else None), categories=categories,
        published=_when(entry.findtext(f"{ATOM}published")), updated=_when(entry.findtext(f"{ATOM}updated")),
        doi=r.doi(entry.findtext(f"{ARXIV}doi")), journal_ref=text(f"{ARXIV}journal_ref"),
        comments=text(f"{ARXIV}comment"))


# -- JSON, bounded -----------------------------------------------------------------------


def _json(body: bytes, source: str) -> Any:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        raise Malformed(f"the {source} answer is not JSON") from None
    return data


def _dict(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: object, limit: int) -> list[Any]:
    return value[:limit] if isinstance(value, list) else []


# -- OpenAlex ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OpenAlexPage:
    """One page of `/works`: the works of asked papers, and how many matched in all."""

    works: tuple[OpenAlexWork, ...]
    count: int


json_body, as_dict, as_list = _json, _dict, _list  # for the other readers of the sources' JSON


def openalex_doi(paper_id: str) -> str:
    """The DOI arXiv registered for a paper (DataCite, `10.48550/arXiv.<id>`), in OpenAlex's lower case."""
    return ARXIV_DOI_PREFIX + paper_id.lower()


def _openalex_paper(work: Mapping[str, Any], wanted: Mapping[str, str]) -> str | None:
    """The asked paper a work is: by its arXiv DOI, else by an arXiv location's URL."""
    ids = _dict(work.get("ids"))
    for value in (work.get("doi"), ids.get("doi")):
        d = r.doi(value)
        if d and d.startswith(ARXIV_DOI_PREFIX) and d[len(ARXIV_DOI_PREFIX):] in wanted:
            return wanted[d[len(ARXIV_DOI_PREFIX):]]
    for loc in _list(work.get("locations"), 50):
        for key in ("landing_page_url", "pdf_url"):
            url = _dict(loc).get(key)
            found = arxiv_link_id(url) if isinstance(url, str) else None
            if found and found.lower() in wanted:
                return wanted[found.lower()]
    return None


def venue_of(work: Mapping[str, Any]) -> str | None:
    """Where it was published: the first location (primary first) whose source is not a
    repository (arXiv itself is one)."""
    for loc in [work.get("primary_location"), *_list(work.get("locations"), 50)]:
        source = _dict(_dict(loc).get("source"))
        name = r.clean(source.get("display_name"), r.MAX_TEXT_CHARS)
        if name and source.get("type") != "repository":
            return name
    return None


def openalex_authors(work: Mapping[str, Any]) -> tuple[AuthorRecord, ...]:
    out: list[AuthorRecord] = []
    for ship in _list(work.get("authorships"), r.MAX_AUTHORS * 2):
        if len(out) >= r.MAX_AUTHORS:
            break
        ship = _dict(ship)
        author = _dict(ship.get("author"))
        name = r.clean(author.get("display_name")) or r.clean(ship.get("raw_author_name"))
        if not name:
            continue
        institutions = []
        for inst in _list(ship.get("institutions"), r.MAX_INSTITUTIONS * 2):
            inst = _dict(inst)
            inst_name = r.clean(inst.get("display_name"))
            if inst_name:
                institutions.append(Institution(inst_name, r.openalex_institution(inst.get("id")),
                                                r.ror(inst.get("ror")), r.country(inst.get("country_code"))))
        out.append(AuthorRecord(name, openalex_author(author.get("id")), orcid(author.get("orcid")),
                                tuple(dict.fromkeys(institutions))[:r.MAX_INSTITUTIONS]))
    return tuple(out)


def parse_openalex(body: bytes, asked: Sequence[str]) -> OpenAlexPage:
    """OpenAlex's works of the `asked` papers in a `/works` answer (one per paper: the first
    that names it; works of other papers are left out)."""
    data = _json(body, "OpenAlex")
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise Malformed("the OpenAlex answer has no results list")
    count = _dict(data.get("meta")).get("count")
    wanted = _lower_map(asked)
    works: dict[str, OpenAlexWork] = {}
    for item in _list(data["results"], 1000):
        item = _dict(item)
        pid = _openalex_paper(item, wanted)
        work_id = r.openalex_work(item.get("id"))
        if pid is None or work_id is None or pid in works:
            continue
        works[pid] = OpenAlexWork(pid, work_id, openalex_authors(item), venue_of(item), r.doi(item.get("doi")))
    return OpenAlexPage(tuple(works.values()), count if isinstance(count, int) and count >= 0 else len(works))


# -- Semantic Scholar --------------------------------------------------------------------


@dataclass(frozen=True)
class CitationsPage:
    """One page of a paper's citations: those by papers with an arXiv id, and where the next starts."""

    contexts: tuple[CitationContext, ...]
    next_offset: int | None
    citers: tuple[FoundCiter, ...] = ()  # the same citers, with the title and year it gives


def _year(value: object) -> int | None:
    """A publication year a source gives, if it is a plausible one (1900 to 2200)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and 1900 <= value <= 2200 else None


def found_citer(citing_id: str, paper: Mapping[str, Any]) -> FoundCiter:
    """A citer with the title and year a source gives of it (cleaned, bounded)."""
    title = r.clean(paper.get("title"), r.MAX_TITLE_CHARS) or None
    return FoundCiter(citing_id, title, _year(paper.get("year", paper.get("publication_year"))))


def parse_s2_count(body: bytes) -> int | None:
    """The `citationCount` of a Semantic Scholar `/paper/arXiv:<id>?fields=citationCount` answer;
    None when it holds none (a count that is not a whole number of at least 0 is none)."""
    try:
        data = _json(body, "Semantic Scholar")
    except Malformed:
        return None
    count = data.get("citationCount") if isinstance(data, dict) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count >= 0 else None


def parse_s2_citations(body: bytes, cited_id: str) -> CitationsPage:
    """Semantic Scholar's citations of `cited_id` in a `/paper/arXiv:<id>/citations` answer:
    the citing sentences, intents and influence of each citer it knows an arXiv id for."""
    data = _json(body, "Semantic Scholar")
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise Malformed("the Semantic Scholar answer has no data list")
    out: dict[str, CitationContext] = {}
    citers: list[FoundCiter] = []
    for item in _list(data["data"], 1000):
        item = _dict(item)
        citing = _dict(item.get("citingPaper"))
        ext = _dict(citing.get("externalIds"))
        raw = ext.get("ArXiv")
        m = ID_RE.match(raw.strip()) if isinstance(raw, str) else None
        if m is None or m["id"] == cited_id or m["id"] in out:
            continue
        contexts = tuple(c for c in (r.clean(x, r.MAX_CONTEXT_CHARS)
                                     for x in _list(item.get("contexts"), r.MAX_CONTEXTS * 4)) if c)
        intents = tuple(dict.fromkeys(x for x in _list(item.get("intents"), 10)
                                      if isinstance(x, str) and x in S2_INTENTS))
        out[m["id"]] = CitationContext(m["id"], cited_id, contexts[:r.MAX_CONTEXTS], intents,
                                       item.get("isInfluential") is True)
        citers.append(found_citer(m["id"], citing))
    nxt = data.get("next")
    return CitationsPage(tuple(out.values()), nxt if isinstance(nxt, int) and not isinstance(nxt, bool) else None,
                         tuple(citers))
