"""The citers of a set of papers as bibliography records (`mapwatch export citers`, /export):
one record per citing paper, with what a reference manager keeps (authors, title, year, venue,
arXiv id, DOI, URL) and what mapwatch knows of the citation (when it was first seen and where
from, whether it is a self-citation). Writing them as BibTeX, CSV or RIS is feeds/bibliography.py's.

Where each fact comes from (docs/enrichment.md, "Exporting citers"): the title, year and links
from the map (`papers`); authors, venue and DOI from the open sources (`paper_authors`,
`openalex_works`, `arxiv_records`), absent until an enrichment round names them; `first_seen` and
`provenance` from `citations`; self-citations as everywhere else (store/questions/authors.py).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from datetime import date

from sqlite_utils import Database

from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.errors import BadOption
from mapwatch.store.ids import paper_link
from mapwatch.store.questions.authors import bylines, self_citations
from mapwatch.store.questions.paper_rows import KEYED_CITATIONS, seen_seconds, seen_text
from mapwatch.store.questions.types import Provenance, from_sources


@dataclass(frozen=True)
class CiterRecord:
    """A paper citing one or more of the exported papers."""

    id: str  # its arXiv id (the eprint), or a citer beyond arXiv's DOI or OpenAlex work id (store/ids.py)
    title: str
    authors: tuple[str, ...]  # in order, as the sources name them; () when none has yet
    year: int | None
    venue: str | None  # OpenAlex's venue, else arXiv's journal reference
    doi: str | None  # the journal DOI arXiv gives, else OpenAlex's
    primary_category: str | None  # arXiv's, e.g. cs.CL
    arxiv_url: str
    map_url: str | None  # its page in the map
    first_seen: str  # ISO timestamp: when mapwatch first saw it cite one of them (of those kept)
    provenance: Provenance  # map: a map page names a citation of them; else the one source that does
    cites: tuple[str, ...]  # the exported papers it cites (first seen since the date, if one was given)
    self_cites: tuple[str, ...]  # those of `cites` it shares an author with

    @property
    def self_citation(self) -> bool:
        """A self-citation: it shares an author with every one of the papers it cites here (the
        rule of `self:hide` on a person's or a team's track; for one paper, with that paper)."""
        return bool(self.cites) and set(self.self_cites) == set(self.cites)


def since_date(text: str) -> str:
    """A `since` date as typed (YYYY-MM-DD) -> the same, checked; BadOption otherwise."""
    value = text.strip()
    try:
        if len(value) != 10:
            raise ValueError(value)
        return date.fromisoformat(value).isoformat()
    except ValueError:
        raise BadOption(f"since must be a date as YYYY-MM-DD, e.g. 2026-01-31 (got {value[:40]!r})") from None


def citer_records(db: Database, papers: Collection[str], since: str | None = None) -> tuple[CiterRecord, ...]:
    """Every paper citing one of `papers`, once, oldest first seen first; with `since`
    (YYYY-MM-DD), only the citations first seen on or after that day count."""
    cited = sorted(set(papers))
    if not cited:
        return ()
    after = f"c.first_seen_unix >= {seen_seconds('?')} AND " if since else ""
    found: dict[str, list[tuple[str, str, str]]] = {}  # citing -> (cited, first_seen, provenance)
    for r in rows_in_chunks(db, f"SELECT c.citing_id, c.cited_id, {seen_text('c.first_seen_unix')} AS first_seen,"
                            f" c.provenance FROM {KEYED_CITATIONS} c WHERE {after}c.cited_id IN ({{}})", cited,
                            [since] if since else []):
        found.setdefault(r["citing_id"], []).append((r["cited_id"], r["first_seen"], r["provenance"]))
    ids = sorted(found)
    papers_read = {r["id"]: r for r in rows_in_chunks(
        db, "SELECT p.id, p.title, p.year, p.first_posted, p.url, p.arxiv_url,"
        " a.doi AS arxiv_doi, a.primary_category, w.doi AS openalex_doi FROM papers p"
        " LEFT JOIN arxiv_records a ON a.paper_id = p.id LEFT JOIN openalex_works w ON w.paper_id = p.id"
        " WHERE p.id IN ({})", ids)}
    known = bylines(db, ids)
    selfs = self_citations(db, [(citing, c) for citing, rows in found.items() for c, _, _ in rows])
    out = []
    for pid in ids:
        p = papers_read.get(pid)
        if p is None:
            continue
        rows = sorted(found[pid])
        b = known.get(pid)
        posted = p["first_posted"] or ""
        out.append(CiterRecord(
            id=pid, title=p["title"], authors=tuple(a.name for a in b.authors) if b else (),
            year=p["year"] or (int(posted[:4]) if posted[:4].isdigit() else None),
            venue=(b.venue or b.journal_ref) if b else None, doi=p["arxiv_doi"] or p["openalex_doi"],
            primary_category=p["primary_category"], arxiv_url=p["arxiv_url"] or paper_link(pid),
            map_url=p["url"], first_seen=min(seen for _, seen, _ in rows),
            provenance=from_sources(how for _, _, how in rows), cites=tuple(c for c, _, _ in rows),
            self_cites=tuple(c for c, _, _ in rows if (pid, c) in selfs)))
    out.sort(key=lambda r: (r.first_seen, r.id))
    return tuple(out)
