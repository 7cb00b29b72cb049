"""The open scholarly sources on loopback, built from their published formats, with faults on cue.

- arXiv's API (`GET /api/query?id_list=...&max_results=N`): an Atom 1.0 feed with the
  `arxiv:` extension elements, as its user manual documents ("Details of Atom Results
  Returned"): entry id `http://arxiv.org/abs/<id>v<n>`, title, published, updated, authors
  with `arxiv:affiliation`, `arxiv:primary_category`, categories, `arxiv:doi`,
  `arxiv:journal_ref`, `arxiv:comment`; an id it does not know has no entry (or, with
  `arxiv_error_entries`, arXiv's error entry).
- OpenAlex (`GET /works?filter=doi:a|b&per-page=N&page=P`): `{"meta": {...}, "results": [Work]}`;
  `filter=from_publication_date:D,...` (a day's new works) and `filter=cites:W1|W2,...` (the
  new works citing them, newest first), paged by `cursor`.
- Semantic Scholar (`GET /graph/v1/paper/arXiv:<id>/citations?offset=&limit=&fields=`):
  `{"offset", "next", "data": [{contexts, intents, isInfluential, citingPaper}]}`; 404 for a
  paper it does not know; `GET /graph/v1/paper/arXiv:<id>?fields=citationCount`:
  `{"paperId", "citationCount"}` (how many citers it lists).

`fault[source]`: None, "down" (503), "slow" (answers after `slow_seconds`), "429" (429 with
Retry-After: `retry_after`, then normal), "429-long" (Retry-After: 3600), "429-date" (an
HTTP-date 2 s ahead, then normal), "malformed" (a body that is not the format), "huge"
(an endless body), "refuse" (the connection closed), "moved" (a 301 elsewhere), "echo" (a 301 to
`echo(the request's x-api-key)`: an answer repeating the key). Every request is recorded (`requests`).
arXiv's hostile answers (each the feed of the asked papers it would give): "dtd" (with a DTD
after a 5 KB comment, whose entity the rest of its `bomb_bytes` references: `arxiv_bomb`),
"dtd-utf16" (the same in UTF-16 with a BOM), "shift_jis" (declared in a multi-byte encoding,
which XML parsers do not read).
"""

from __future__ import annotations

import asyncio
import codecs
import email.utils
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from aiohttp import web

from tests.sourceserver import serve_in_thread

SOURCES = ("arxiv", "openalex", "s2")


@dataclass(frozen=True)
class Seen:
    source: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    at: float  # `ScholarlyFakes.clock()` on arrival


@dataclass
class ArxivEntry:
    title: str
    authors: list[tuple[str, list[str]]]  # (name, affiliations)
    primary: str = "cs.LG"
    categories: list[str] = field(default_factory=lambda: ["cs.LG", "cs.AI"])
    published: str = "2024-12-05T18:00:00Z"
    updated: str = "2025-01-10T10:00:00Z"
    version: int = 2
    doi: str | None = None
    journal_ref: str | None = None
    comment: str | None = None


@dataclass
class ScholarlyFakes:
    arxiv: dict[str, ArxivEntry] = field(default_factory=dict)
    openalex: dict[str, dict[str, Any]] = field(default_factory=dict)  # paper id -> Work JSON
    s2: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # cited paper id -> citation items
    new_works: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # publication day -> arXiv Works
    fault: dict[str, str | None] = field(default_factory=lambda: dict.fromkeys(SOURCES))
    slow_seconds: float = 3.0
    retry_after: str = "1"
    arxiv_error_entries: bool = False
    bomb_bytes: int = 256 * 1024  # the size of arXiv's "dtd" and "dtd-utf16" answers
    requests: list[Seen] = field(default_factory=list)
    base: str = ""
    clock: Callable[[], float] = time.monotonic  # what `Seen.at` reads (a test's virtual clock)
    echo: Callable[[str], str] = lambda key: key  # the "echo" fault's Location, from the key sent

    # -- where the client is pointed -------------------------------------------------------

    def env(self) -> dict[str, str]:
        return {"MAPWATCH_ARXIV_API": f"{self.base}/api/query", "MAPWATCH_OPENALEX_API": self.base,
                "MAPWATCH_S2_API": f"{self.base}/graph/v1"}

    def apis(self) -> dict[str, str]:
        return {"arxiv": f"{self.base}/api/query", "openalex": self.base, "s2": f"{self.base}/graph/v1"}

    def seen(self, source: str) -> list[Seen]:
        return [r for r in self.requests if r.source == source]

    def down(self, *sources: str, how: str = "down") -> None:
        for s in sources or SOURCES:
            self.fault[s] = how

    # -- faults ------------------------------------------------------------------------------

    async def _fault(self, source: str, request: web.Request) -> web.StreamResponse | None:
        self.requests.append(Seen(source, request.path, dict(request.query), dict(request.headers), self.clock()))
        how = self.fault.get(source)
        if how == "down":
            return web.Response(status=503, text="Service Unavailable")
        if how == "slow":
            await asyncio.sleep(self.slow_seconds)  # on purpose: the "slow" fault
            return None
        if how == "429":
            self.fault[source] = None
            return web.Response(status=429, headers={"Retry-After": self.retry_after})
        if how == "429-date":
            self.fault[source] = None
            when = email.utils.formatdate(time.time() + 2, usegmt=True)
            return web.Response(status=429, headers={"Retry-After": when})
        if how == "429-long":
            return web.Response(status=429, headers={"Retry-After": "3600"})
        if how == "malformed":
            body = {"arxiv": b"<html><body>Just a moment...", "openalex": b'{"results": 5',
                    "s2": b"[1, 2, 3]"}[source]
            return web.Response(body=body, content_type="text/html")
        if how == "huge":
            resp = web.StreamResponse()
            resp.enable_chunked_encoding()
            await resp.prepare(request)
            for _ in range(12):
                await resp.write(b" " * (1024 * 1024))
            await resp.write_eof()
            return resp
        if how == "moved":
            raise web.HTTPMovedPermanently("http://127.0.0.1:9/elsewhere")
        if how == "echo":
            return web.Response(status=301, headers={"Location": self.echo(request.headers.get("x-api-key", ""))})
        if how == "refuse":
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=500)
        return None

    # -- arXiv ---------------------------------------------------------------------------------

    async def arxiv_query(self, request: web.Request) -> web.StreamResponse:
        if (faulty := await self._fault("arxiv", request)) is not None:
            return faulty
        ids = [i for i in request.query.get("id_list", "").split(",") if i]
        entries = []
        for pid in ids[: int(request.query.get("max_results", "10"))]:
            e = self.arxiv.get(pid)
            if e is not None:
                entries.append(arxiv_entry_xml(pid, e))
            elif self.arxiv_error_entries:
                entries.append(ARXIV_ERROR_ENTRY.format(id=escape(pid)))
        if self.fault.get("arxiv") in ("dtd", "dtd-utf16"):
            codec, bom = ("utf-16-le", codecs.BOM_UTF16_LE) if self.fault["arxiv"] == "dtd-utf16" else ("utf-8", b"")
            return web.Response(body=arxiv_bomb(self.bomb_bytes, "\n".join(entries), codec=codec, bom=bom),
                                content_type="application/atom+xml")
        body = ARXIV_FEED.format(query=escape(",".join(ids)), total=len(entries), entries="\n".join(entries))
        if self.fault.get("arxiv") == "shift_jis":
            return web.Response(body=body.replace('"UTF-8"', '"Shift_JIS"', 1).encode(),
                                content_type="application/atom+xml")
        return web.Response(body=body.encode(), content_type="application/atom+xml", charset="utf-8")

    # -- OpenAlex ------------------------------------------------------------------------------

    async def openalex_works(self, request: web.Request) -> web.StreamResponse:
        if (faulty := await self._fault("openalex", request)) is not None:
            return faulty
        flt = request.query.get("filter", "")
        if flt.startswith("from_publication_date:"):
            return self._new_works(request, flt)
        if flt.startswith("cites:"):
            return self._citing(request, flt)
        if not flt.startswith("doi:"):
            return web.json_response({"error": "Invalid query parameters error."}, status=400)
        dois = {d.lower().removeprefix("https://doi.org/") for d in flt[4:].split("|")}
        if len(dois) > 50:
            return web.json_response({"error": "Maximum of 50 values in an OR filter"}, status=400)
        def doi_of(w: dict[str, Any]) -> str:
            return str(w.get("doi") or "").lower().removeprefix("https://doi.org/")

        matches = []
        for d in sorted(dois):  # by paper id first (a dict look-up), else a scan (an id in other case)
            w = self.openalex.get(d.removeprefix("10.48550/arxiv."))
            if w is not None and doi_of(w) == d:
                matches.append(w)
            else:
                matches += [x for x in self.openalex.values() if doi_of(x) == d][:1]
        per_page, page = int(request.query.get("per-page", "25")), int(request.query.get("page", "1"))
        shown = matches[(page - 1) * per_page: page * per_page]
        return web.json_response({"meta": {"count": len(matches), "db_response_time_ms": 12, "page": page,
                                           "per_page": per_page}, "results": shown, "group_by": []})

    def _new_works(self, request: web.Request, flt: str) -> web.StreamResponse:
        """`filter=from_publication_date:D,to_publication_date:D,locations.source.id:S…` paged by
        `cursor` (`*` first; OpenAlex's `meta.next_cursor`, null on the last page)."""
        parts = dict(p.split(":", 1) for p in flt.split(","))
        day = parts.get("from_publication_date")
        if day != parts.get("to_publication_date") or parts.get("locations.source.id") != "S4306400194":
            return web.json_response({"error": "Invalid query parameters error."}, status=400)
        works = self.new_works.get(day or "", [])
        per_page = int(request.query.get("per-page", "25"))
        cursor = request.query.get("cursor", "")
        if not cursor:
            return web.json_response({"error": "this fake pages by cursor only"}, status=400)
        start = 0 if cursor == "*" else int(cursor)
        nxt = start + per_page if start + per_page < len(works) else None
        return web.json_response({"meta": {"count": len(works), "next_cursor": None if nxt is None else str(nxt),
                                           "per_page": per_page}, "results": works[start:start + per_page]})

    def _citing(self, request: web.Request, flt: str) -> web.StreamResponse:
        """`filter=cites:W1|W2…,from_publication_date:D&sort=publication_date:desc`: the new works
        of `new_works` published since D that reference one of the works, the newest first, paged
        by `cursor`."""
        parts = dict(p.split(":", 1) for p in flt.split(","))
        cited = {f"https://openalex.org/{w}" for w in parts["cites"].split("|")}
        since = parts.get("from_publication_date", "")
        if len(cited) > 50 or request.query.get("sort") != "publication_date:desc" or not since:
            return web.json_response({"error": "Invalid query parameters error."}, status=400)
        works = [w for day in sorted(self.new_works, reverse=True) if day >= since
                 for w in self.new_works[day] if cited & set(w.get("referenced_works") or ())]
        per_page, cursor = int(request.query.get("per-page", "25")), request.query.get("cursor", "*")
        start = 0 if cursor == "*" else int(cursor)
        nxt = start + per_page if start + per_page < len(works) else None
        return web.json_response({"meta": {"count": len(works), "next_cursor": None if nxt is None else str(nxt),
                                           "per_page": per_page}, "results": works[start:start + per_page]})

    # -- Semantic Scholar ----------------------------------------------------------------------

    async def s2_citations(self, request: web.Request) -> web.StreamResponse:
        if (faulty := await self._fault("s2", request)) is not None:
            return faulty
        ref = request.match_info["ref"]
        pid = ref.removeprefix("arXiv:")
        items = self.s2.get(pid)
        if items is None:
            return web.json_response({"error": f"Paper with id {ref} not found"}, status=404)
        offset, limit = int(request.query.get("offset", "0")), int(request.query.get("limit", "100"))
        shown = items[offset: offset + limit]
        body: dict[str, Any] = {"offset": offset, "data": shown}
        if offset + limit < len(items):
            body["next"] = offset + limit
        return web.json_response(body)


    async def s2_paper(self, request: web.Request) -> web.StreamResponse:
        """`/paper/arXiv:<id>?fields=citationCount`: how many citers it lists (any kind)."""
        if (faulty := await self._fault("s2", request)) is not None:
            return faulty
        ref = request.match_info["ref"]
        items = self.s2.get(ref.removeprefix("arXiv:"))
        if items is None:
            return web.json_response({"error": f"Paper with id {ref} not found"}, status=404)
        return web.json_response({"paperId": f"s2-{ref}", "citationCount": len(items)})


ARXIV_FEED = """<?xml version="1.0" encoding="UTF-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/"
      xmlns:arxiv="http://arxiv.org/schemas/atom">
  <id>https://arxiv.org/api/fake</id>
  <title>arXiv Query: id_list={query}</title>
  <updated>2026-11-01T00:00:00Z</updated>
  <link href="https://arxiv.org/api/query?id_list={query}" type="application/atom+xml"/>
  <opensearch:itemsPerPage>100</opensearch:itemsPerPage>
  <opensearch:totalResults>{total}</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
{entries}
</feed>
"""

ARXIV_ERROR_ENTRY = """  <entry>
    <id>http://arxiv.org/api/errors#incorrect_id_format_for_{id}</id>
    <title>Error</title>
    <summary>incorrect id format for {id}</summary>
    <updated>2026-11-01T00:00:00Z</updated>
    <link href="http://arxiv.org/api/errors#incorrect_id_format_for_{id}" rel="alternate" type="text/html"/>
    <author><name>arXiv api core</name></author>
  </entry>"""


def arxiv_bomb(size: int, entries: str = "", *, codec: str = "utf-8", bom: bytes = b"", comment: int = 5000,
               per: int = 112) -> bytes:
    """A hostile arXiv answer of about `size` bytes: the feed of `entries`, with a DTD after a
    comment of `comment` bytes (past the first 4 KB), declaring an entity of `per` empty
    elements that the rest of the feed references, one `<x>&y;</x>` after another (with the
    default `per`, 448 bytes for 11: 40 times the answer, within the 100 times expat allows).
    Encoded in `codec` (its XML declaration naming it) after `bom`."""
    name = codec.upper().removesuffix("-LE").removesuffix("-BE")
    head, rest = ARXIV_FEED.replace('"UTF-8"', f'"{name}"', 1).split("\n", 1)
    head += f"\n<!--{' ' * comment}-->\n<!DOCTYPE feed [<!ENTITY y \"{'<y/>' * per}\">]>\n"
    feed = rest.format(query="x", total=0, entries=entries)
    unit, end = "<x>&y;</x>\n", "</feed>\n"
    width = len(unit.encode(codec))
    times = max(0, (size - len(bom) - len((head + feed).encode(codec))) // width)
    return bom + (head + feed.removesuffix(end) + unit * times + end).encode(codec)


def arxiv_entry_xml(pid: str, e: ArxivEntry) -> str:
    authors = "\n".join(
        "    <author><name>" + escape(name) + "</name>"
        + "".join(f"<arxiv:affiliation>{escape(a)}</arxiv:affiliation>" for a in affs) + "</author>"
        for name, affs in e.authors)
    cats = "\n".join(f'    <category term={quoteattr(c)} scheme="http://arxiv.org/schemas/atom"/>'
                     for c in e.categories)
    extra = "".join(f"\n    <arxiv:{tag}>{escape(v)}</arxiv:{tag}>"
                    for tag, v in (("doi", e.doi), ("journal_ref", e.journal_ref), ("comment", e.comment)) if v)
    return f"""  <entry>
    <id>http://arxiv.org/abs/{escape(pid)}v{e.version}</id>
    <updated>{e.updated}</updated>
    <published>{e.published}</published>
    <title>{escape(e.title)}</title>
    <summary>An abstract.</summary>
{authors}
    <link href="http://arxiv.org/abs/{escape(pid)}v{e.version}" rel="alternate" type="text/html"/>
    <link title="pdf" href="http://arxiv.org/pdf/{escape(pid)}v{e.version}" rel="related" type="application/pdf"/>
    <arxiv:primary_category term={quoteattr(e.primary)} scheme="http://arxiv.org/schemas/atom"/>
{cats}{extra}
  </entry>"""


def openalex_work(pid: str, work_id: str, authors: list[dict[str, Any]], venue: str | None = None) -> dict[str, Any]:
    """A Work as `/works` gives it, for an arXiv paper. `authors`: dicts of name, id, orcid, institutions
    (dicts of name, id, ror, country)."""
    doi = f"https://doi.org/10.48550/arxiv.{pid.lower()}"
    arxiv_loc = {"is_oa": True, "landing_page_url": f"https://arxiv.org/abs/{pid}", "pdf_url": None,
                 "source": {"id": "https://openalex.org/S4306400194", "display_name": "arXiv (Cornell University)",
                            "type": "repository"}}
    locations = [arxiv_loc]
    if venue:
        locations.insert(0, {"is_oa": False, "landing_page_url": None,
                             "source": {"id": "https://openalex.org/S1", "display_name": venue, "type": "conference"}})
    return {
        "id": f"https://openalex.org/{work_id}", "doi": doi, "title": f"Paper {pid}",
        "ids": {"openalex": f"https://openalex.org/{work_id}", "doi": doi},
        "authorships": [{
            "author_position": "first" if i == 0 else "middle",
            "author": {"id": a.get("id") and f"https://openalex.org/{a['id']}", "display_name": a["name"],
                       "orcid": a.get("orcid") and f"https://orcid.org/{a['orcid']}"},
            "institutions": [{"id": inst.get("id") and f"https://openalex.org/{inst['id']}",
                              "display_name": inst["name"], "ror": inst.get("ror") and f"https://ror.org/{inst['ror']}",
                              "country_code": inst.get("country"), "type": "education"}
                             for inst in a.get("institutions", [])],
            "countries": [], "is_corresponding": i == 0, "raw_author_name": a["name"],
        } for i, a in enumerate(authors)],
        "primary_location": locations[0], "locations": locations,
    }


def s2_citation(citing_id: str | None, contexts: list[str], intents: list[str], influential: bool,
                title: str | None = None, year: int | None = None) -> dict[str, Any]:
    paper: dict[str, Any] = {"paperId": "f" * 40, "externalIds": {"ArXiv": citing_id, "CorpusId": 1} if citing_id
                             else {"CorpusId": 2}}
    if title is not None:
        paper |= {"title": title, "year": year}
    return {"contexts": contexts, "intents": intents, "isInfluential": influential, "citingPaper": paper}


def new_work(paper_id: str, work_id: str, title: str, year: int, references: list[str]) -> dict[str, Any]:
    """A new arXiv work as OpenAlex's `/works` gives it (the fields mapwatch selects)."""
    return {"id": f"https://openalex.org/{work_id}", "doi": f"https://doi.org/10.48550/arxiv.{paper_id}",
            "ids": {"openalex": f"https://openalex.org/{work_id}",
                    "doi": f"https://doi.org/10.48550/arxiv.{paper_id}"},
            "title": title, "publication_year": year,
            "referenced_works": [f"https://openalex.org/{w}" for w in references],
            "locations": [{"landing_page_url": f"https://arxiv.org/abs/{paper_id}", "pdf_url": None,
                           "source": {"id": "https://openalex.org/S4306400194",
                                      "display_name": "arXiv (Cornell University)", "type": "repository"}}]}


def journal_work(doi: str | None, work_id: str, title: str, year: int, references: list[str], *,
                 venue: str = "Journal of Reward Studies", authors: tuple[str, ...] = ("Ana Lima", "Bo Chen"),
                 arxiv_id: str | None = None) -> dict[str, Any]:
    """A work not on arXiv (a journal article) as OpenAlex's `/works` gives it, with the fields
    the newest citers' query selects; with `arxiv_id`, the same work once OpenAlex has merged
    its arXiv version into it (the journal DOI stays its DOI, an arXiv location is added)."""
    journal = {"landing_page_url": f"https://doi.org/{doi}" if doi else None, "pdf_url": None,
               "source": {"id": "https://openalex.org/S9", "display_name": venue, "type": "journal"}}
    locations = [journal]
    if arxiv_id:
        locations.append({"landing_page_url": f"https://arxiv.org/abs/{arxiv_id}", "pdf_url": None,
                          "source": {"id": "https://openalex.org/S4306400194",
                                     "display_name": "arXiv (Cornell University)", "type": "repository"}})
    return {"id": f"https://openalex.org/{work_id}", "doi": f"https://doi.org/{doi}" if doi else None,
            "ids": {"openalex": f"https://openalex.org/{work_id}",
                    **({"doi": f"https://doi.org/{doi}"} if doi else {})},
            "title": title, "publication_year": year,
            "referenced_works": [f"https://openalex.org/{w}" for w in references],
            "authorships": [{"author_position": "first" if i == 0 else "middle",
                             "author": {"id": f"https://openalex.org/A77{i}", "display_name": name, "orcid": None},
                             "institutions": [], "raw_author_name": name} for i, name in enumerate(authors)],
            "primary_location": journal, "locations": locations}


# -- the seeds' papers, as the fakes describe them ----------------------------------------------

MIT = {"name": "Massachusetts Institute of Technology", "id": "I63966007", "ror": "042nb2s44", "country": "US"}
ETH = {"name": "ETH Zurich", "id": "I35440088", "ror": "05a28rw58", "country": "CH"}
SURVEY_AUTHORS = [
    {"name": "Shuhe Wang", "id": "A5000000001", "orcid": "0000-0002-1825-0097", "institutions": [MIT]},
    {"name": "Shengyu Zhang", "id": "A5000000002", "institutions": [ETH]},
    {"name": "Jie Zhang", "id": "A5000000003", "institutions": [MIT, ETH]},
]


def from_seeds(db: Any, *, without_openalex: tuple[str, ...] = ("1706.03762",)) -> ScholarlyFakes:
    """Fakes that know every paper of a seeded database: arXiv all of them, OpenAlex all but
    `without_openalex`, Semantic Scholar the citers of both pages (with contexts)."""
    fakes = ScholarlyFakes()
    for n, (pid, title) in enumerate(db.conn.execute("SELECT id, title FROM papers ORDER BY id")):
        if pid == "2412.10400":
            authors = [(a["name"], [i["name"] for i in a["institutions"]][:1]) for a in SURVEY_AUTHORS]
            fakes.arxiv[pid] = ArxivEntry(title or pid, authors, journal_ref="ACM Computing Surveys 58 (2026)",
                                          comment="40 pages", doi="10.1145/1234567")
            fakes.openalex[pid] = openalex_work(pid, "W4405000000", SURVEY_AUTHORS, venue="ACM Computing Surveys")
            continue
        names = [f"Author {k} of {pid}" for k in range(1, 3)]
        fakes.arxiv[pid] = ArxivEntry(title or pid, [(nm, []) for nm in names])
        if pid not in without_openalex:
            fakes.openalex[pid] = openalex_work(pid, f"W{4000000000 + n}", [
                {"name": nm, "id": f"A{5100000000 + 10 * n + k}", "institutions": [ETH] if k == 0 else []}
                for k, nm in enumerate(names)])
    for cited in ("2412.10400", "2507.04136"):
        citers = [r[0] for r in db.conn.execute("SELECT citing_id FROM citations WHERE cited_id = ? ORDER BY citing_id",
                                                [cited])]
        fakes.s2[cited] = [s2_citation(c, [f"As {cited} shows, ..."], ["background"], k % 3 == 0)
                           for k, c in enumerate(citers)] + [s2_citation(None, ["not on arXiv"], [], False),
                                                            s2_citation("2601.99999", ["not in the map"], [], False)]
    return fakes


@contextmanager
def serve_scholarly(fakes: ScholarlyFakes) -> Iterator[ScholarlyFakes]:
    """The three fakes on one loopback port, in a thread of their own."""
    def routes(app: web.Application) -> None:
        app.router.add_get("/api/query", fakes.arxiv_query)
        app.router.add_get("/works", fakes.openalex_works)
        app.router.add_get("/graph/v1/paper/{ref:.+}/citations", fakes.s2_citations)
        app.router.add_get("/graph/v1/paper/{ref:.+}", fakes.s2_paper)

    with serve_in_thread(routes) as base:
        fakes.base = base
        yield fakes


@contextmanager
def serving_seeds(db_path: Any) -> Iterator[ScholarlyFakes]:
    """The three fakes, served, knowing the papers of the database at `db_path` (from_seeds)."""
    from mapwatch.store.database.db import open_db

    db = open_db(db_path)
    try:
        data = from_seeds(db)
    finally:
        db.close()
    with serve_scholarly(data) as served:
        yield served


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()
