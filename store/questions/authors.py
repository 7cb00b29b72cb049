"""Who wrote the map's papers, from what the open sources said (store/scholarly): bylines for
any list of papers in one query, a person's papers, and whether a citation is a self-citation
(the citing and the cited paper share an author)."""

from __future__ import annotations

from collections.abc import Sequence

from sqlite_utils import Database

from mapwatch.store.questions.types import Author, Byline

_CHUNK = 500


def bylines(db: Database, paper_ids: Sequence[str]) -> dict[str, Byline]:
    """paper id -> its Byline, for the papers some source named authors for (others absent)."""
    ids = list(dict.fromkeys(paper_ids))
    rows: dict[str, list[tuple[int, str, str | None, str | None]]] = {}
    institutions: dict[tuple[str, int], list[str]] = {}
    venues: dict[str, tuple[str | None, str | None]] = {}
    for i in range(0, len(ids), _CHUNK):
        chunk = ids[i:i + _CHUNK]
        marks = ",".join("?" * len(chunk))
        for pid, pos, name, aid, orcid in db.conn.execute(
                f"SELECT paper_id, position, name, author_id, orcid FROM paper_authors WHERE paper_id IN ({marks})"
                " ORDER BY paper_id, position", chunk):
            rows.setdefault(pid, []).append((pos, name, aid, orcid))
        for pid, pos, name in db.conn.execute(
                "SELECT pai.paper_id, pai.position, i.name FROM paper_author_institutions pai"
                f" JOIN institutions i ON i.id = pai.institution_id WHERE pai.paper_id IN ({marks})"
                " ORDER BY pai.paper_id, pai.position, i.name", chunk):
            institutions.setdefault((pid, pos), []).append(name)
        for pid, venue, journal in db.conn.execute(
                "SELECT p.id, w.venue, a.journal_ref FROM papers p LEFT JOIN openalex_works w ON w.paper_id = p.id"
                f" LEFT JOIN arxiv_records a ON a.paper_id = p.id WHERE p.id IN ({marks})", chunk):
            venues[pid] = (venue, journal)
    out = {}
    for pid, authors in rows.items():
        venue, journal = venues.get(pid, (None, None))
        out[pid] = Byline(pid, tuple(Author(name, aid, orcid, tuple(institutions.get((pid, pos), ())))
                                     for pos, name, aid, orcid in authors), venue, journal)
    return out


def self_citations(db: Database, pairs: Sequence[tuple[str, str]]) -> set[tuple[str, str]]:
    """The (citing, cited) pairs whose papers share an author (by OpenAlex id or ORCID, or by
    name where neither paper's author has one)."""
    known = bylines(db, [p for pair in pairs for p in pair])
    return {(a, b) for a, b in pairs if a in known and b in known and known[a].people() & known[b].people()}
