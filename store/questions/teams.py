"""People and teams as subjects of tracks and feeds (docs/bot.md, "Following people and teams"):
who a person is (an ORCID, an OpenAlex author id, or a name that fits exactly one person),
which of the map's papers are theirs, which papers a team holds, and the papers newly citing
any of a set of papers, grouped per citing paper.

A person is named by an author key: an OpenAlex author id (`A5023888391`), an ORCID
(`0000-0002-1825-0097`), or, for someone no source has given either, `name:<name>`. Their papers
are the `paper_authors` rows with that id or ORCID (and with the other identifier those rows
pair it with), or, for a name key, the rows of that name (any case) that carry neither. A name
that fits several people (different ids) is never guessed: `PersonChoice` lists them.

No discord here: plain frozen dataclasses out.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sqlite_utils import Database

from mapwatch.store.database.rows import fill, named_row, named_rows, one_column, rows_in_chunks

# defined in the one exception tree (store/errors.py), and importable from here as before
from mapwatch.store.errors import PersonChoice as PersonChoice
from mapwatch.store.errors import PersonNotFound as PersonNotFound
from mapwatch.store.ids import paper_link
from mapwatch.store.one_line import one_line
from mapwatch.store.person_ids import orcid, person_id
from mapwatch.store.questions.authors import author_key, with_alert_bylines
from mapwatch.store.questions.provenance import with_provenance
from mapwatch.store.questions.types import AlertCiter, NewCiter, NewsOrder, PaperRef, from_sources

NAME_KEY = "name:"
CHOICES_MAX = 10  # people a choice lists


@dataclass(frozen=True)
class Person:
    """Someone the sources name as an author of papers in the map."""

    key: str  # the author key: A…, an ORCID, or name:<name>
    name: str  # as most of their papers give it
    author_id: str | None = None
    orcid: str | None = None
    papers: int = 0  # how many papers in the map are theirs
    example: PaperRef | None = None  # their most cited paper in the map

    @property
    def has_feed(self) -> bool:
        """Only a person known by an id has a feed address (/feeds/authors/<id>.atom)."""
        return not self.key.startswith(NAME_KEY)


def key_of(ref: str) -> str | None:
    """The author key an ORCID or OpenAlex author id (bare or as a URL) stands for; None otherwise."""
    return person_id(ref)


def is_orcid(key: str) -> bool:
    return orcid(key) == key


def _identifiers(db: Database, key: str) -> tuple[set[str], set[str]]:
    """(OpenAlex ids, ORCIDs) that stand for the person of `key`: the key, and the other
    identifier the rows carrying it pair it with."""
    c = db.conn
    if is_orcid(key):
        ids = set(one_column(c, "SELECT DISTINCT author_id FROM paper_authors WHERE orcid = ?"
                                " AND author_id IS NOT NULL", (key,)))
        return ids, {key}
    orcids = set(one_column(c, "SELECT DISTINCT orcid FROM paper_authors WHERE author_id = ?"
                               " AND orcid IS NOT NULL", (key,)))
    return {key}, orcids


def person_papers(db: Database, key: str) -> set[str]:
    """The ids of the map's papers the person of `key` wrote."""
    c = db.conn
    if key.startswith(NAME_KEY):
        return set(one_column(
            c, "SELECT DISTINCT pa.paper_id FROM paper_authors pa JOIN papers p ON p.id = pa.paper_id"
            " WHERE pa.name = ? COLLATE NOCASE AND pa.author_id IS NULL AND pa.orcid IS NULL",
            (key[len(NAME_KEY):],)))
    ids, orcids = _identifiers(db, key)
    out: set[str] = set()
    for col, values in (("author_id", sorted(ids)), ("orcid", sorted(orcids))):
        out |= {r["paper_id"] for r in rows_in_chunks(
            c, "SELECT DISTINCT pa.paper_id FROM paper_authors pa JOIN papers p ON p.id = pa.paper_id"
            f" WHERE pa.{col} IN ({{}})", values)}
    return out


def _example(db: Database, papers: set[str]) -> PaperRef | None:
    best: sqlite3.Row | None = None
    for row in rows_in_chunks(db, "SELECT id, title, year, url, arxiv_url, coalesce(cited_by, -1) AS rank_by"
                                  " FROM papers WHERE id IN ({}) ORDER BY cited_by DESC, id LIMIT 1", sorted(papers)):
        if best is None or row["rank_by"] > best["rank_by"]:  # each chunk's best
            best = row
    if best is None:
        return None
    return PaperRef(best["id"], best["title"], best["year"], best["url"], best["arxiv_url"] or paper_link(best["id"]))


def person(db: Database, key: str) -> Person:
    """What is known of the person of `key` (their name as most rows give it, their papers)."""
    papers = person_papers(db, key)
    if key.startswith(NAME_KEY):
        where, params, aid, oid = "name = ? COLLATE NOCASE", [key[len(NAME_KEY):]], None, None
    else:
        ids, orcids = _identifiers(db, key)
        aid = key if not is_orcid(key) else (min(ids) if ids else None)
        oid = key if is_orcid(key) else (min(orcids) if orcids else None)
        where = "author_id = ? OR orcid = ?"
        params = [aid or "", oid or ""]
    row = named_row(db, f"SELECT name FROM paper_authors WHERE {where} GROUP BY name"
                    " ORDER BY count(*) DESC, name LIMIT 1", params)
    name = row["name"] if row else (key[len(NAME_KEY):] if key.startswith(NAME_KEY) else key)
    return Person(key, name, aid, oid, len(papers), _example(db, papers))


def tracked_author(db: Database, key: str) -> bool:
    """Whether a /track somewhere (a server's channel or someone's DMs) follows the person of
    `key`: their feed answers before any paper of theirs is known (feeds/people_feeds.py)."""
    return db.conn.execute("SELECT 1 FROM tracks WHERE author_key = ? LIMIT 1", (key,)).fetchone() is not None


def resolve_person(db: Database, ref: str) -> Person:
    """An ORCID or OpenAlex author id (bare or a URL; taken even before any paper of theirs is
    known), or a name matched against the papers' authors in any case. A name that fits
    several people raises PersonChoice; one that fits nobody PersonNotFound."""
    text = one_line(ref, 200)
    if not text:
        raise PersonNotFound(ref)
    key = author_key(text)
    if key:
        return person(db, key)
    groups: list[tuple[set[str], set[str]]] = []  # one per person: (OpenAlex ids, ORCIDs)
    nameless = False
    for aid, oid in db.conn.execute("SELECT DISTINCT author_id, orcid FROM paper_authors"
                                    " WHERE name = ? COLLATE NOCASE", (text,)):
        if aid is None and oid is None:
            nameless = True
            continue
        joined = [g for g in groups if (aid and aid in g[0]) or (oid and oid in g[1])]
        merged: tuple[set[str], set[str]] = ({aid} if aid else set(), {oid} if oid else set())
        for g in joined:
            merged[0].update(g[0])
            merged[1].update(g[1])
            groups.remove(g)
        groups.append(merged)
    if len(groups) == 1:
        ids, orcids = groups[0]
        return person(db, min(ids) if ids else min(orcids))
    if len(groups) > 1:
        people = sorted((person(db, min(ids) if ids else min(orcids)) for ids, orcids in groups),
                        key=lambda p: (-p.papers, p.key))
        raise PersonChoice(text, tuple(people[:CHOICES_MAX]), max(0, len(people) - CHOICES_MAX))
    if nameless:
        row = named_row(db, "SELECT name FROM paper_authors WHERE name = ? COLLATE NOCASE LIMIT 1", (text,))
        assert row is not None  # `nameless`: a row of that name was just read
        return person(db, NAME_KEY + row["name"])
    raise PersonNotFound(text, suggest_names(db, text))


def suggest_names(db: Database, text: str, limit: int = 5) -> tuple[str, ...]:
    """Authors' names holding the last word typed (a surname, usually)."""
    words = text.split()
    if not words:
        return ()
    last = words[-1].replace("%", "").replace("_", "")
    if len(last) < 2:
        return ()
    return tuple(one_column(
        db, "SELECT name FROM paper_authors WHERE name LIKE ? GROUP BY name ORDER BY count(*) DESC, name LIMIT ?",
        (f"%{last}%", limit)))


# -- teams ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Member:
    kind: Literal["author", "paper"]  # whom a team counts: a person, or one paper
    value: str  # author key, or paper id
    label: str


@dataclass(frozen=True)
class Team:
    guild_id: int
    slug: str
    name: str
    feed_slug: str  # /feeds/teams/<feed_slug>.atom
    created_at: str
    created_by: int | None
    members: tuple[Member, ...] = ()
    feed_renewed_at: str | None = None  # when migration 0035 replaced its guessable feed address


_TEAM_COLS = "guild_id, slug, name, feed_slug, created_at, created_by, feed_renewed_at"


def _team(db: Database, row: sqlite3.Row | None) -> Team | None:
    if row is None:
        return None
    members = tuple(fill(Member, r) for r in named_rows(
        db, "SELECT kind, value, label FROM team_members WHERE guild_id = ? AND team_slug = ?"
        " ORDER BY kind, label COLLATE NOCASE, value", (row["guild_id"], row["slug"])))
    return fill(Team, row, members=members)


def get_team(db: Database, guild_id: int, slug: str) -> Team | None:
    return _team(db, named_row(db, f"SELECT {_TEAM_COLS} FROM teams WHERE guild_id = ? AND slug = ?",
                               (guild_id, slug)))


def find_team(db: Database, guild_id: int, ref: str) -> Team | None:
    """A server's team by slug or by name (any case)."""
    return _team(db, named_row(
        db, f"SELECT {_TEAM_COLS} FROM teams WHERE guild_id = ? AND (slug = ? OR name = ? COLLATE NOCASE)"
        " ORDER BY slug = ? DESC LIMIT 1", (guild_id, ref.strip().lower(), ref.strip(), ref.strip().lower())))


def teams_called(db: Database, ref: str) -> list[Team]:
    """The teams of every server with that slug or name (any case): one server's, or several
    servers' that chose the same name (`mapwatch export citers --team` then needs the server)."""
    rows = named_rows(db, f"SELECT {_TEAM_COLS} FROM teams WHERE slug = ? OR name = ? COLLATE NOCASE"
                      " ORDER BY guild_id", (ref.strip().lower(), ref.strip()))
    return [t for t in (_team(db, r) for r in rows) if t is not None]


def team_by_feed(db: Database, feed_slug: str) -> Team | None:
    return _team(db, named_row(db, f"SELECT {_TEAM_COLS} FROM teams WHERE feed_slug = ?", (feed_slug,)))


def list_teams(db: Database, guild_id: int) -> list[Team]:
    rows = named_rows(db, f"SELECT {_TEAM_COLS} FROM teams WHERE guild_id = ? ORDER BY name COLLATE NOCASE",
                      (guild_id,))
    return [t for t in (_team(db, r) for r in rows) if t is not None]


def team_papers(db: Database, team: Team) -> set[str]:
    """The papers a team holds: its papers, and every paper of its people."""
    out = {m.value for m in team.members if m.kind == "paper"}
    for m in team.members:
        if m.kind == "author":
            out |= person_papers(db, m.value)
    return out


def subject_papers(db: Database, *, guild_id: int | None, author_key: str | None,
                   team_slug: str | None) -> set[str]:
    """The papers a track on a person or a team covers, as of now."""
    if author_key:
        return person_papers(db, author_key)
    team = get_team(db, guild_id, team_slug) if guild_id is not None and team_slug else None
    return team_papers(db, team) if team else set()


# -- their new citers -----------------------------------------------------------------------

@dataclass(frozen=True)
class Growth:
    """A subject's paper whose stated cited-by count grew in a window."""

    paper: PaperRef
    old_count: int
    new_count: int
    unlisted: int


@dataclass(frozen=True)
class News:
    """What a window of events (after, upto] brought a set of papers: each new citing paper
    once (event order), with the set's papers it newly cites; the count growth."""

    citers: tuple[AlertCiter, ...]
    total: int
    growth: tuple[Growth, ...]
    upto_event_id: int  # the newest event of the window that concerns the set (0: none)
    first_direction: str = ""  # of the first citer, when the map places it (a forum tag)
    hidden: int = 0  # self-citations left out (`self:hide`)


def _refs(db: Database, ids: Iterable[str]) -> dict[str, PaperRef]:
    out: dict[str, PaperRef] = {}
    for r in rows_in_chunks(db, "SELECT id, title, year, url, arxiv_url FROM papers WHERE id IN ({})",
                            sorted(set(ids))):
        pid = r["id"]
        out[pid] = PaperRef(pid, r["title"], r["year"], r["url"], r["arxiv_url"] or paper_link(pid))
    return out


def news(db: Database, papers: set[str], after: int, upto: int, *, limit: int = 10,
         order: NewsOrder = "event", hide_self: bool = False) -> News:
    """The set's events in (after, upto], grouped per citing paper (most cited first with
    order="cited"), each with its byline and self-citation marks; with `hide_self`, a citing
    paper whose every citation of the set is a self-citation is left out (counted in `hidden`)."""
    c = db.conn
    events = rows_in_chunks(
        c, "SELECT e.id, e.kind, e.paper_id, e.citing_id, e.old_count, e.new_count, e.unlisted, e.seen_at"
        " FROM events e WHERE e.paper_id IN ({}) AND e.id > ? AND e.id <= ?", sorted(papers), after=(after, upto))
    events.sort(key=lambda e: e["id"])  # event ids are unique: the order a sort of whole rows gave
    grouped: dict[str, tuple[int, str, list[str]]] = {}
    counts: dict[str, list[int]] = {}
    for e in events:
        eid, kind, pid, citing, seen = e["id"], e["kind"], e["paper_id"], e["citing_id"], e["seen_at"]
        old, new, unlisted = e["old_count"], e["new_count"], e["unlisted"]
        if kind == "citation" and citing:
            first = grouped.setdefault(citing, (eid, seen, []))
            if pid not in first[2]:
                first[2].append(pid)
        elif kind == "count" and old is not None and new is not None:
            g = counts.setdefault(pid, [old, new, 0])
            g[0], g[1], g[2] = min(g[0], old), max(g[1], new), g[2] + (unlisted or 0)
    refs = _refs(db, [*grouped, *(p for _, _, ps in grouped.values() for p in ps), *counts])
    cited_by = {r["id"]: r["cited_by"] for r in rows_in_chunks(
        db, "SELECT id, cited_by FROM papers WHERE id IN ({})", list(grouped))}
    citers = [AlertCiter(id=cid, title=refs[cid].title, year=refs[cid].year, url=refs[cid].url,
                         arxiv_url=refs[cid].arxiv_url or paper_link(cid), cited_by=cited_by.get(cid), event_id=eid,
                         seen_at=seen, cites=tuple(refs[p] for p in cited if p in refs))
              for cid, (eid, seen, cited) in grouped.items() if cid in refs]
    citers = with_alert_bylines(db, with_provenance(db, citers))  # their authors, and which cited papers share one
    hidden = 0
    if hide_self:  # `self:hide`: a citing paper every one of whose citations here is a self-citation
        kept = [a for a in citers if set(a.self_cites) != {r.id for r in a.cites}]
        hidden, citers = len(citers) - len(kept), kept
    citers.sort(key=(lambda a: (-(a.cited_by or 0), a.event_id)) if order == "cited" else (lambda a: a.event_id))
    growth = tuple(Growth(refs[p], o, n, u) for p, (o, n, u) in sorted(counts.items()) if n > o and p in refs)
    shown = tuple(citers[:limit])
    first_direction = ""
    if shown:
        row = named_row(c, "SELECT d.name FROM placements pl JOIN directions d ON d.slug = pl.direction_slug"
                        " WHERE pl.paper_id = ? ORDER BY pl.position LIMIT 1", (shown[0].id,))
        first_direction = row["name"] if row else ""
    return News(shown, len(citers), growth, max((e["id"] for e in events), default=0), first_direction, hidden)


def newest_citers(db: Database, papers: set[str], limit: int = 100) -> list[NewCiter]:
    """The feed entries of a set of papers: each paper citing one of them, once, at the first
    event that made it so, newest first; with the set's papers it cites."""
    first: dict[str, tuple[str, int]] = {}
    for citing, eid, seen in rows_in_chunks(
            db, "SELECT e.citing_id, min(e.id), min(e.seen_at) FROM events e"
            " WHERE e.kind = 'citation' AND e.paper_id IN ({}) GROUP BY e.citing_id", sorted(papers)):
        if citing not in first or eid < first[citing][1]:
            first[citing] = (seen, eid)
    chosen = sorted(first.items(), key=lambda kv: (kv[1][0], -kv[1][1]), reverse=True)[:limit]
    cites: dict[str, list[str]] = {}
    new: set[str] = set()  # citers with a citation of the set not known at its paper's first read
    known_from: dict[str, list[str]] = {}
    ids = [cid for cid, _ in chosen]
    for citing, cited, first_read, provenance in rows_in_chunks(
            db, "SELECT citing_id, cited_id, at_first_read, provenance FROM citations WHERE citing_id IN ({})", ids):
        if cited in papers:
            cites.setdefault(citing, []).append(cited)
            known_from.setdefault(citing, []).append(provenance)
            if not first_read:
                new.add(citing)
    posted: dict[str, str | None] = {r["id"]: r["first_posted"] for r in rows_in_chunks(
        db, "SELECT id, first_posted FROM papers WHERE id IN ({})", ids)}
    refs = _refs(db, [*ids, *(p for ps in cites.values() for p in ps)])
    return [NewCiter(refs[cid], seen, eid, tuple(refs[p] for p in sorted(cites.get(cid, ())) if p in refs),
                     at_first_read=cid not in new, posted=posted.get(cid),
                     provenance=from_sources(known_from.get(cid, ())))
            for cid, (seen, eid) in chosen if cid in refs]


def newest_event(db: Database, papers: set[str]) -> int:
    """The newest event of a set of papers (a feed's mark)."""
    return max((r["top"] or 0 for r in rows_in_chunks(
        db, "SELECT max(id) AS top FROM events WHERE paper_id IN ({})", sorted(papers))), default=0)


def team_paper_ids(db: Database) -> list[str]:
    """Every team's papers, of every server: those whose citers the open sources are asked for
    (docs/enrichment.md, "Citations the map does not name")."""
    return sorted({pid for papers in team_papers_by_server(db).values() for pid in papers})


def team_papers_by_server(db: Database) -> dict[int, list[str]]:
    """Each server's team papers (all its teams together), by guild id: Semantic Scholar asks
    the servers' papers in turn (store/scholarly/saved.py `due_citations`)."""
    out: dict[int, set[str]] = {}
    for row in named_rows(db, f"SELECT {_TEAM_COLS} FROM teams ORDER BY guild_id, slug"):
        team = _team(db, row)
        if team is not None:
            out.setdefault(team.guild_id, set()).update(team_papers(db, team))
    return {guild: sorted(papers) for guild, papers in out.items()}

