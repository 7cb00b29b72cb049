"""Who wrote the map's papers, from what the open sources said (store/scholarly): bylines for
any list of papers in one query, a person's papers, and whether a citation is a self-citation
(the citing and the cited paper share an author)."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from sqlite_utils import Database

from mapwatch.store.database.paper_keys import stored_keys
from mapwatch.store.database.rows import named_rows, one_column, rows_in_chunks, scalar
from mapwatch.store.errors import BadOption
from mapwatch.store.questions.paper_rows import (
    PAPER_COLS,
    named_paper,
    newest_citations_sql,
    newest_papers_sql,
    seen_paper,
)
from mapwatch.store.questions.person_names import index_byline, person_keys, share_an_author, shares_an_author
from mapwatch.store.questions.types import (
    AlertCiter,
    Author,
    Byline,
    CitationRow,
    CitingContext,
    NewCiter,
    PaperRow,
)


def bylines(db: Database, paper_ids: Sequence[str]) -> dict[str, Byline]:
    """paper id -> its Byline, for the papers some source named authors for (others absent)."""
    ids = list(dict.fromkeys(paper_ids))
    rows: dict[str, list[tuple[int, str, str | None, str | None]]] = {}
    institutions: dict[tuple[str, int], list[str]] = {}
    venues: dict[str, tuple[str | None, str | None]] = {}
    for pid, pos, name, aid, orcid in rows_in_chunks(
            db, "SELECT paper_id, position, name, author_id, orcid FROM paper_authors WHERE paper_id IN ({})"
            " ORDER BY paper_id, position", ids):
        rows.setdefault(pid, []).append((pos, name, aid, orcid))
    for pid, pos, name in rows_in_chunks(
            db, "SELECT pai.paper_id, pai.position, i.name FROM paper_author_institutions pai"
            " JOIN institutions i ON i.id = pai.institution_id WHERE pai.paper_id IN ({})"
            " ORDER BY pai.paper_id, pai.position, i.name", ids):
        institutions.setdefault((pid, pos), []).append(name)
    for pid, venue, journal in rows_in_chunks(
            db, "SELECT p.id, w.venue, a.journal_ref FROM papers p LEFT JOIN openalex_works w ON w.paper_id = p.id"
            " LEFT JOIN arxiv_records a ON a.paper_id = p.id WHERE p.id IN ({})", ids):
        venues[pid] = (venue, journal)
    out = {}
    for pid, authors in rows.items():
        venue, journal = venues.get(pid, (None, None))
        out[pid] = Byline(pid, tuple(Author(name, aid, orcid, tuple(institutions.get((pid, pos), ())))
                                     for pos, name, aid, orcid in authors), venue, journal)
    return out


def self_citations(db: Database, pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (citing, cited) pairs whose papers share an author (store/questions/person_names.py:
    by OpenAlex id or ORCID where both authors have one of a scheme, else by name). A paper
    whose authors no source has named shares none."""
    return self_pairs(bylines(db, [p for pair in pairs for p in pair]), pairs)


AuthorRow = tuple[str, str | None, str | None]  # an author's name, OpenAlex id and ORCID


def author_rows(db: Database, paper_ids: Iterable[str]) -> dict[str, list[AuthorRow]]:
    """paper id -> its authors in order, as bare rows (no institutions, no venue): what telling
    people apart needs, for many thousands of papers in one query."""
    out: dict[str, list[AuthorRow]] = {}
    for pid, name, aid, orcid in db.conn.execute(
            "SELECT paper_id, name, author_id, orcid FROM paper_authors WHERE paper_id IN"
            " (SELECT value FROM json_each(?)) ORDER BY paper_id, position", (json.dumps(sorted(set(paper_ids))),)):
        out.setdefault(pid, []).append((name, aid, orcid))
    return out


def self_pairs_of_rows(rows: Mapping[str, Sequence[AuthorRow]], pairs: Iterable[tuple[str, str]]
                       ) -> set[tuple[str, str]]:
    """self_pairs over author_rows, for many pairs: only the pairs some of whose authors' keys
    meet (person_names.person_keys) are looked at author by author."""
    known: dict[AuthorRow, set[tuple[str, str]]] = {}  # the same person on many papers: their keys once
    keys = {pid: set().union(*(known[a] if a in known else known.setdefault(a, person_keys(*a)) for a in authors))
            for pid, authors in rows.items()}
    maybe = [(a, b) for a, b in pairs if a in keys and b in keys and not keys[a].isdisjoint(keys[b])]
    papers = {p for pair in maybe for p in pair}
    return self_pairs({p: Byline(p, tuple(Author(*a) for a in rows[p])) for p in papers}, maybe)


def self_pairs(known: Mapping[str, Byline], pairs: Iterable[tuple[str, str]]) -> set[tuple[str, str]]:
    """self_citations over bylines already read (`known`: paper id -> its Byline)."""
    pairs = list(pairs)
    index = {b: index_byline(known[b]) for b in {b for _, b in pairs} if b in known}
    return {(a, b) for a, b in pairs if a in known and b in index and shares_an_author(index[b], known[a])}


# -- bylines and self-citations on the rows an answer returns (one bylines() call per answer) --------

P = TypeVar("P", bound=PaperRow)


def with_bylines(db: Database, rows: Sequence[P], of: str | None = None) -> tuple[P, ...]:
    """`rows` with their bylines, and, for a list about paper `of` (its citers, its references),
    each CitationRow marked as a self-citation when it shares an author with `of`. Rows without
    stored authors come back as they were (the same objects)."""
    known = bylines(db, [r.id for r in rows] + ([of] if of else []))
    if not known:
        return tuple(rows)
    mine = index_byline(known[of]) if of and of in known else None
    out = []
    for r in rows:
        b = known.get(r.id)
        if b is None:
            out.append(r)
        elif isinstance(r, CitationRow) and mine is not None and shares_an_author(mine, b):
            out.append(replace(r, byline=b, self_citation=True))
        else:
            out.append(replace(r, byline=b))
    return tuple(out)


def _self_cites(known: dict[str, Byline], citer: str, cited: Sequence[str]) -> tuple[str, ...]:
    if citer not in known:
        return ()
    mine = index_byline(known[citer])
    return tuple(c for c in cited if c in known and shares_an_author(mine, known[c]))


def with_alert_bylines(db: Database, citers: Sequence[AlertCiter]) -> list[AlertCiter]:
    """Follow and digest entries with their bylines and the cited papers each shares an author with."""
    known = bylines(db, [c.id for c in citers] + [r.id for c in citers for r in c.cites])
    if not known:
        return list(citers)
    return [replace(c, byline=known.get(c.id), self_cites=_self_cites(known, c.id, [r.id for r in c.cites]))
            if c.id in known else c for c in citers]


def with_feed_bylines(db: Database, citers: Sequence[NewCiter]) -> list[NewCiter]:
    """Feed entries with their citers' bylines and the cited papers each shares an author with."""
    known = bylines(db, [c.citer.id for c in citers] + [r.id for c in citers for r in c.cites])
    if not known:
        return list(citers)
    return [replace(c, byline=known.get(c.citer.id),
                    self_cites=_self_cites(known, c.citer.id, [r.id for r in c.cites]))
            if c.citer.id in known else c for c in citers]


def self_citers(db: Database, cited_id: str, citing_ids: Sequence[str]) -> set[str]:
    """Of `citing_ids`, those sharing an author with `cited_id` (for `self:hide`)."""
    return {a for a, _ in self_citations(db, [(c, cited_id) for c in citing_ids])}


def contexts(db: Database, cited_id: str, citing_ids: Sequence[str]) -> dict[str, CitingContext]:
    """citing id -> what Semantic Scholar says of its citation of `cited_id` (those where it says
    something: a sentence, an intent or influence)."""
    ids = list(dict.fromkeys(citing_ids))
    out: dict[str, CitingContext] = {}
    for citing, sentences, intents, influential in rows_in_chunks(
            db, "SELECT citing_id, contexts, intents, is_influential FROM citation_contexts WHERE cited_id = ?"
            " AND citing_id IN ({})", ids, [cited_id]):
        said = tuple(s for s in _json_strings(sentences) if s.strip())
        why = tuple(_json_strings(intents))
        if said or why or influential:
            out[citing] = CitingContext(said, why, bool(influential))
    return out


def with_alert_contexts(db: Database, citers: Sequence[AlertCiter]) -> list[AlertCiter]:
    """Alert entries with what Semantic Scholar says of their citation of the first paper they
    cite (in `cites` order) that it says something about."""
    said: dict[tuple[str, str], CitingContext] = {}
    for cited in dict.fromkeys(r.id for c in citers for r in c.cites):
        for citing, ctx in contexts(db, cited, [c.id for c in citers if any(r.id == cited for r in c.cites)]).items():
            said[citing, cited] = ctx
    if not said:
        return list(citers)
    return [replace(c, context=next((said[c.id, r.id] for r in c.cites if (c.id, r.id) in said), None))
            for c in citers]


def _json_strings(text: str | None) -> list[str]:
    try:
        value = json.loads(text or "[]")
    except ValueError:
        return []
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def intents_of(db: Database, cited_id: str, citing_ids: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """citing id -> Semantic Scholar's intents of its citation of `cited_id`, for those it classified."""
    return {k: v.intents for k, v in contexts(db, cited_id, citing_ids).items() if v.intents}


def with_contexts(db: Database, rows: Sequence[CitationRow], cited_id: str) -> tuple[CitationRow, ...]:
    """A tracked paper's new citers with the sentences in which they cite it."""
    found = contexts(db, cited_id, [r.id for r in rows])
    return tuple(replace(r, context=found[r.id]) if r.id in found else r for r in rows)


# -- people: /author and the author search -------------------------------------------------------------

PEOPLE_MAX = 25  # people a name may match before the answer asks for more of it
PREFIX_MIN = 4  # characters of a name before its start is matched


@dataclass(frozen=True)
class Person:
    """Someone the sources name as an author: by OpenAlex id, else ORCID, else (neither known)
    by name only; `key` is what /author takes to mean exactly them."""

    key: str  # A5023888391 | 0000-0002-1825-0097 | name:<name>
    name: str
    author_id: str | None
    orcid: str | None
    papers: int  # papers of the map they are named on (at most SCAN_MAX: see papers_capped)
    institutions: tuple[str, ...] = ()  # on their newest paper
    papers_capped: bool = False  # named on more than SCAN_MAX papers: `papers` is SCAN_MAX, a lower bound


@dataclass(frozen=True)
class AuthorCitation:
    """A paper citing one of a person's papers (`cited`), newest first seen first."""

    citer: CitationRow
    cited: PaperRow


@dataclass(frozen=True)
class AuthorView:
    person: Person
    papers: tuple[PaperRow, ...]  # newest first
    total_papers: int
    citers: tuple[AuthorCitation, ...]  # the newest first
    total_citers: int
    capped: bool = False  # named on more than SCAN_MAX papers: both totals count SCAN_MAX of them only


def _person_where(key: str, alias: str = "pa") -> tuple[str, list[Any]]:
    """The condition on `alias` (a row of `people`, or of the view `paper_authors`) that the
    person `key` stands for, and its parameters."""
    if key.startswith("name:"):
        return f"{alias}.name = ? COLLATE NOCASE AND {alias}.author_id IS NULL AND {alias}.orcid IS NULL", [key[5:]]
    if orcid_of(key):
        return f"{alias}.orcid = ?", [orcid_of(key)]
    return f"{alias}.author_id = ?", [key]


def orcid_of(text: str) -> str | None:
    from mapwatch.store.person_ids import orcid

    return orcid(text)


def _key_of(text: str) -> str | None:
    """An ORCID, an OpenAlex author id, or `name:<name>` as typed -> the person key; None for a plain name."""
    t = text.strip()
    if t.lower().startswith("name:") and t[5:].strip():
        return "name:" + " ".join(t[5:].split())
    return author_key(t)


def author_key(text: str) -> str | None:
    """The person key an ORCID iD or an OpenAlex author id (bare or as a URL) stands for; None
    for anything else (a name). An ORCID iD whose check digit is wrong is BadOption saying so,
    never a name to look for."""
    from mapwatch.store.person_ids import orcid_misprint, person_id

    misprint = orcid_misprint(text)
    if misprint:
        raise BadOption(misprint)
    return person_id(text)


def find_people(db: Database, text: str, limit: int = PEOPLE_MAX) -> tuple[Person, ...]:
    """The people an ORCID, an OpenAlex id, a `name:` key or a name (its whole, else its start)
    names, those on most papers first. Each is found in `people` (at most SCAN_MAX of its
    rows), then their papers counted on their own, up to SCAN_MAX: a namesake on three papers
    is listed beside one on thousands."""
    text = " ".join(text.split())[:MAX_QUERY]
    if not text:
        return ()
    key = _key_of(text)
    if key:
        where, params = _person_where(key, "p")
    else:
        where, params = "p.name = ? COLLATE NOCASE", [text]
        if not db.conn.execute(f"SELECT 1 FROM people p WHERE {where} LIMIT 1", params).fetchone():
            if len(text) < PREFIX_MIN:
                return ()
            where, params = "p.name >= ? COLLATE NOCASE AND p.name < ? COLLATE NOCASE", [text, text + "\U0010ffff"]
    groups: dict[str, list[sqlite3.Row]] = {}
    for r in named_rows(db, "SELECT p.id, p.name, p.author_id, p.orcid, (SELECT count(*) FROM (SELECT DISTINCT"
                        " pp.paper_id FROM paper_people pp WHERE pp.person = p.id LIMIT ?)) AS papers"
                        f" FROM people p WHERE {where} LIMIT ?", [SCAN_MAX + 1, *params, SCAN_MAX]):
        k = r["author_id"] or r["orcid"] or "name:" + " ".join(r["name"].split()).lower()
        groups.setdefault(k, []).append(r)
    people = [_person(db, rows) for rows in groups.values()]
    people.sort(key=lambda p: (-p.papers, p.name.casefold(), p.key))
    return tuple(people[:limit])


def _person(db: Database, rows: Sequence[sqlite3.Row]) -> Person:
    """One person from their rows in `people` (one, or a few where the sources spelled their
    name or ids differently), with their papers counted and the institutions of the newest."""
    ids = [r["id"] for r in rows]
    marks = ",".join("?" * len(ids))
    name = max(rows, key=lambda r: (r["papers"], r["name"]))["name"]  # the spelling on most papers
    aid = next((r["author_id"] for r in rows if r["author_id"]), None)
    orc = next((r["orcid"] for r in rows if r["orcid"]), None)
    n = sum(r["papers"] for r in rows) if len(rows) == 1 else scalar(
        db, f"SELECT count(*) FROM (SELECT DISTINCT paper_id FROM paper_people WHERE person IN ({marks}) LIMIT ?)",
        [*ids, SCAN_MAX + 1])
    inst: tuple[str, ...] = ()
    newest = db.conn.execute(f"SELECT paper_id, position FROM paper_people WHERE person IN ({marks})"
                             " ORDER BY paper_id DESC LIMIT 1", ids).fetchone()
    if newest:
        inst = tuple(one_column(
            db, "SELECT i.name FROM paper_author_institutions pai JOIN institutions i ON i.id = pai.institution_id"
            " WHERE pai.paper_id = ? AND pai.position = ? ORDER BY i.name", tuple(newest)))
    return Person(aid or orc or f"name:{name}", name, aid, orc, min(n, SCAN_MAX), inst, n > SCAN_MAX)


MAX_QUERY = 200
SCAN_MAX = 5000  # author rows read for one lookup; a person on more papers is counted "5,000+"


def author_view(db: Database, person: Person, *, papers: int = 10, citers: int = 10) -> AuthorView:
    """A person's papers in the map (newest first) and the papers newly citing them (newest first).

    Only the rows the card shows are read whole: of a person on hundreds of papers with
    thousands of citers, the newest `papers` papers and the newest `citers` citations are
    picked on the indexes (citations_cited_seen covers the citers' order), then those few
    papers are read."""
    where, params = _person_where(person.key)
    ids = one_column(db, f"SELECT DISTINCT pa.paper_id FROM paper_authors pa WHERE {where} LIMIT ?",
                     [*params, SCAN_MAX + 1])
    capped = len(ids) > SCAN_MAX  # the totals are of the first SCAN_MAX papers: lower bounds
    ids = ids[:SCAN_MAX]
    if not ids:
        return AuthorView(person, (), 0, (), 0)
    marks = ",".join("?" * len(ids))
    total_papers = scalar(db.conn, f"SELECT count(*) FROM papers p WHERE p.id IN ({marks})", ids)
    mine = [named_paper(r) for r in named_rows(db, *newest_papers_sql(ids, papers))]
    # The citations name papers by key (paper_keys): the papers' keys, stated in the SQL (integers).
    keys = ",".join(str(k) for k in sorted(stored_keys(db.conn, ids).values())) or "NULL"
    total_citers = scalar(db.conn, f"SELECT count(*) FROM citation_edges c WHERE c.cited_key IN ({keys})")
    newest = named_rows(db, newest_citations_sql(f"c.cited_key IN ({keys})",
                                                 "merged.citing_id, merged.first_seen, merged.cited_id"),
                        {"n": citers, "lim": citers, "off": 0})
    by_id = {p.id: p for p in mine}
    cited_unshown = [x["cited_id"] for x in newest if x["cited_id"] not in by_id]
    wanted = list(dict.fromkeys([x["citing_id"] for x in newest] + cited_unshown))
    read: dict[str, sqlite3.Row] = {}
    if wanted:
        read = {r["id"]: r for r in named_rows(
            db, f"SELECT {PAPER_COLS} FROM papers p WHERE p.id IN ({','.join('?' * len(wanted))})", wanted)}
    by_id.update({pid: named_paper(read[pid]) for pid in cited_unshown if pid in read})
    # (citing paper's row, when it was first seen citing, the cited paper)
    rows = [(read[x["citing_id"]], x["first_seen"], x["cited_id"]) for x in newest
            if x["citing_id"] in read and x["cited_id"] in by_id]
    shown = [*mine, *(r for r in (by_id[cited] for _, _, cited in rows) if r not in mine)]
    known = bylines(db, [p.id for p in shown] + [citing["id"] for citing, _, _ in rows])

    def own(p: PaperRow) -> PaperRow:
        return replace(p, byline=known[p.id]) if p.id in known else p

    cites = []
    for citing, seen, cited_id in rows:
        c = seen_paper(citing, seen, {})
        b, cited = known.get(c.id), by_id[cited_id]
        self_cite = bool(b and cited.id in known and share_an_author(b, known[cited.id]))
        cites.append(AuthorCitation(replace(c, byline=b, self_citation=self_cite) if b else c, own(cited)))
    return AuthorView(person, tuple(own(p) for p in mine), total_papers, tuple(cites), total_citers, capped)


# The last word of an author's name (their surname, names being stored single-spaced, given
# names first), exactly as index people_surname has it (migration 0044): SQLite uses an
# expression index only for the very same expression.
SURNAME = "replace(name, rtrim(name, replace(name, ' ', '')), '')"
NAME_WORDS_MAX = 4  # words of a name /search takes as one (a surname, given names before it)
_NAME_WORD = re.compile(r"[^\W\d_](?:[^\W\d_]|[.'’-])*")


def name_parts(text: str) -> tuple[str, str] | None:
    """(surname, start of the given names) when `text` reads as a person's name: one to
    NAME_WORDS_MAX words of letters (dots, apostrophes and hyphens inside), the surname last
    ("I. Halvorsen", "Ingrid Halvorsen") or first before a comma ("Halvorsen, I."); the given
    names' start is the first given name or initial without its dot ('' for a surname
    alone). None otherwise, and for a single word in capitals ("GAN", "BERT": an acronym
    far more often than a surname in a search box)."""
    family, comma, given = text.partition(",")
    words = (given.split() + family.split()) if comma else text.split()
    if not 0 < len(words) <= NAME_WORDS_MAX or not all(_NAME_WORD.fullmatch(w) for w in words):
        return None
    surname = words[-1]
    if len(words) == 1 and (len(surname) < 2 or surname.isupper()):
        return None
    return surname, words[0].rstrip(".") if len(words) > 1 else ""


def papers_by_name(db: Database, text: str, limit: int = 300) -> list[str]:
    """Ids of papers with an author of this name, newest id first: /search's author matches.
    An author matches by the whole name (any case), or when `text` reads as a name
    (`name_parts`), by surname with the given names starting as typed ("Halvorsen",
    "I. Halvorsen", "Ingrid Halvorsen" for "Ingrid M. Halvorsen"); both from an index."""
    name = " ".join(text.split())[:MAX_QUERY]
    found = one_column(
        db, "SELECT DISTINCT paper_id FROM paper_authors WHERE name = ? COLLATE NOCASE ORDER BY paper_id DESC LIMIT ?",
        (name, limit)) if len(name) >= PREFIX_MIN else []
    parts = name_parts(name)
    if parts:
        surname, given = parts  # letters, dots, apostrophes, hyphens: nothing LIKE reads as a wildcard
        found += one_column(
            db, f"SELECT DISTINCT paper_id FROM paper_authors WHERE {SURNAME} = ? COLLATE NOCASE"
            " AND name LIKE ? ORDER BY paper_id DESC LIMIT ?", (surname, given + "%", limit))
    return sorted(set(found), reverse=True)[:limit]
