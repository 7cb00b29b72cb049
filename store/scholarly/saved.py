"""Storing what the scholarly sources said (`save_*`, each one transaction), and what is due
to be asked (`due_papers`). A record replaces what the same source said before; the map's own
tables are never written here."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Literal

from sqlite_utils import Database

from mapwatch.store.clock import iso, parse_iso
from mapwatch.store.database.rows import named_row, one_column, rows_in_chunks
from mapwatch.store.ids import arxiv_only
from mapwatch.store.records import ArxivRecord, AuthorRecord, CitationContext, OpenAlexWork
from mapwatch.store.scholarly.versions import merge_versions_of

Source = Literal["arxiv", "openalex", "s2"]
Status = Literal["ok", "not_found", "failed"]

# When a paper is asked again: a record found is refreshed monthly (new versions, new ORCID
# links), one not found weekly (OpenAlex lists an arXiv paper days after it appears), a failure
# the next round after an hour, and each failure in a row after twice the wait before it, up to
# FAILED_WAIT_MOST (1, 2, 4, 8, 16, 24, 24... hours: an answer broken or hostile every time is
# not asked for every round).
REFETCH = {"ok": timedelta(days=30), "not_found": timedelta(days=7), "failed": timedelta(hours=1)}
FAILED_WAIT_MOST = timedelta(days=1)


def _byline(db: Database, paper_id: str) -> tuple[object, ...]:
    """What the feeds and pages show of a paper's authors and venue, to see whether it changed."""
    conn = db.conn
    authors = conn.execute("SELECT position, name, author_id, orcid FROM paper_authors WHERE paper_id = ?"
                           " ORDER BY position", [paper_id]).fetchall()
    places = conn.execute("SELECT pai.position, i.name FROM paper_author_institutions pai JOIN institutions i"
                          " ON i.id = pai.institution_id WHERE pai.paper_id = ? ORDER BY 1, 2", [paper_id]).fetchall()
    venue = conn.execute("SELECT (SELECT venue FROM openalex_works WHERE paper_id = ?),"
                         " (SELECT journal_ref FROM arxiv_records WHERE paper_id = ?)", [paper_id, paper_id]).fetchone()
    return tuple(authors), tuple(places), tuple(venue)


def _note_change(db: Database, paper_id: str, before: tuple[object, ...], now: datetime) -> None:
    """Log a change of what the feeds show of the paper (table enrichment_changes)."""
    if _byline(db, paper_id) != before:
        db.conn.execute("INSERT INTO enrichment_changes (paper_id, changed_at) VALUES (?, ?)", [paper_id, iso(now)])


def _write_authors(db: Database, paper_id: str, authors: Sequence[AuthorRecord], source: str) -> None:
    conn = db.conn
    conn.execute("DELETE FROM paper_author_institutions WHERE paper_id = ?", [paper_id])
    # Each person once (table people): a position whose person changed points at the new one.
    # A person no byline names any more is deleted: those of the positions cut off by the
    # trigger paper_people_forget, those replaced in place below, once the whole list is written.
    before = one_column(conn, "SELECT person FROM paper_people WHERE paper_id = ?", [paper_id])
    conn.executemany("INSERT INTO people (name, author_id, orcid) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                     [(a.name, a.author_id, a.orcid) for a in authors])
    conn.executemany(
        "INSERT INTO paper_people (paper_id, position, person, from_openalex) VALUES (?, ?, (SELECT id FROM people"
        " WHERE name = ? AND ifnull(author_id, '') = ifnull(?, '') AND ifnull(orcid, '') = ifnull(?, '')), ?)"
        " ON CONFLICT (paper_id, position) DO UPDATE SET person = excluded.person,"
        " from_openalex = excluded.from_openalex",
        [(paper_id, i, a.name, a.author_id, a.orcid, int(source == "openalex")) for i, a in enumerate(authors, 1)])
    conn.execute("DELETE FROM paper_people WHERE paper_id = ? AND position > ?", [paper_id, len(authors)])
    conn.executemany("DELETE FROM people WHERE id = ? AND NOT EXISTS (SELECT 1 FROM paper_people WHERE person = ?)",
                     [(p, p) for p in dict.fromkeys(before)])
    for i, a in enumerate(authors, 1):
        for inst in a.institutions:
            key = inst.id or f"name:{inst.name}"
            conn.execute("INSERT INTO institutions (id, name, ror, country) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO"
                         " UPDATE SET name=excluded.name, ror=coalesce(excluded.ror, ror),"
                         " country=coalesce(excluded.country, country)", [key, inst.name, inst.ror, inst.country])
            conn.execute("INSERT OR IGNORE INTO paper_author_institutions (paper_id, position, institution_id)"
                         " VALUES (?, ?, ?)", [paper_id, i, key])


def mark_fetched(db: Database, paper_ids: Sequence[str], source: Source, status: Status, now: datetime,
                 reason: str | None = None) -> None:
    """Record that `source` was asked about these papers, and when to ask again (REFETCH; a
    failure that follows a failure waits twice as long as that one did, up to FAILED_WAIT_MOST)."""
    waits = dict.fromkeys(paper_ids, REFETCH[status])
    if status == "failed":
        before = rows_in_chunks(db, "SELECT paper_id, fetched_at, next_fetch_at FROM enrichment_fetches WHERE"
                                " source = ? AND status = 'failed' AND paper_id IN ({})", list(waits), [source])
        for row in before:
            waited = parse_iso(row["next_fetch_at"]) - parse_iso(row["fetched_at"])
            waits[row["paper_id"]] = min(max(2 * waited, REFETCH["failed"]), FAILED_WAIT_MOST)
    db.conn.executemany(
        "INSERT INTO enrichment_fetches (paper_id, source, fetched_at, status, reason, next_fetch_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(paper_id, source) DO UPDATE SET fetched_at=excluded.fetched_at,"
        " status=excluded.status, reason=excluded.reason, next_fetch_at=excluded.next_fetch_at",
        [(pid, source, iso(now), status, reason, iso(now + waits[pid])) for pid in paper_ids])


def save_arxiv(db: Database, records: Sequence[ArxivRecord], asked: Sequence[str], now: datetime) -> None:
    """arXiv's records of some of the papers `asked` for; the others are marked not found.
    Authors from arXiv replace a paper's list only where OpenAlex has not given one."""
    with db.atomic():
        conn = db.conn
        for r in records:
            before = _byline(db, r.paper_id)
            conn.execute(
                "INSERT INTO arxiv_records (paper_id, title, primary_category, categories, published, updated, doi,"
                " journal_ref, comments, fetched_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT(paper_id) DO UPDATE SET title=excluded.title,"
                " primary_category=excluded.primary_category, categories=excluded.categories,"
                " published=excluded.published, updated=excluded.updated, doi=excluded.doi,"
                " journal_ref=excluded.journal_ref, comments=excluded.comments, fetched_at=excluded.fetched_at",
                [r.paper_id, r.title, r.primary_category, " ".join(r.categories), r.published, r.updated, r.doi,
                 r.journal_ref, r.comments, iso(now)])
            has_openalex = conn.execute("SELECT 1 FROM paper_people WHERE paper_id = ? AND from_openalex = 1"
                                        " LIMIT 1", [r.paper_id]).fetchone()
            if not has_openalex and r.authors:
                _write_authors(db, r.paper_id, r.authors, "arxiv")
            _note_change(db, r.paper_id, before, now)
        found = {r.paper_id for r in records}
        merge_versions_of(db, sorted(found), now)  # a citer beyond arXiv with this DOI is this paper
        mark_fetched(db, [p for p in asked if p in found], "arxiv", "ok", now)
        mark_fetched(db, [p for p in asked if p not in found], "arxiv", "not_found", now)


def save_openalex(db: Database, works: Sequence[OpenAlexWork], asked: Sequence[str], now: datetime) -> None:
    """OpenAlex's works for some of the papers `asked` for: the work, its venue, and its
    authors with their ids, ORCIDs and institutions (replacing arXiv's names: OpenAlex's list
    is arXiv's, matched to people)."""
    with db.atomic():
        for w in works:
            before = _byline(db, w.paper_id)
            db.conn.execute(
                "INSERT INTO openalex_works (paper_id, work_id, venue, doi, fetched_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(paper_id) DO UPDATE SET work_id=excluded.work_id, venue=excluded.venue,"
                " doi=excluded.doi, fetched_at=excluded.fetched_at",
                [w.paper_id, w.work_id, w.venue, w.doi, iso(now)])
            if w.authors:
                _write_authors(db, w.paper_id, w.authors, "openalex")
            _note_change(db, w.paper_id, before, now)
        found = {w.paper_id for w in works}
        merge_versions_of(db, sorted(found), now)  # a citer beyond arXiv of this work or DOI is this paper
        mark_fetched(db, [p for p in asked if p in found], "openalex", "ok", now)
        mark_fetched(db, [p for p in asked if p not in found], "openalex", "not_found", now)


def save_outside_works(db: Database, works: Sequence[OpenAlexWork], now: datetime) -> None:
    """What OpenAlex says of new citers beyond arXiv (their stubs are stored in the same
    transaction): the work, its venue and DOI, its authors. Nothing else describes them, so
    they are not due to be asked of any source (`due_papers`)."""
    for w in works:
        db.conn.execute(
            "INSERT INTO openalex_works (paper_id, work_id, venue, doi, fetched_at) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT(paper_id) DO NOTHING", [w.paper_id, w.work_id, w.venue, w.doi, iso(now)])
        if w.authors:
            _write_authors(db, w.paper_id, w.authors, "openalex")


def save_contexts(db: Database, cited_id: str, contexts: Sequence[CitationContext], now: datetime, *,
                  mark: bool = True) -> None:
    """Semantic Scholar's citing sentences of `cited_id`'s citations (those of papers the map
    knows); `mark`: record `cited_id` as asked (not for a few new citers read before alerts)."""
    with db.atomic():
        db.conn.executemany(
            "INSERT INTO citation_contexts (citing_id, cited_id, contexts, intents, is_influential, fetched_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(citing_id, cited_id) DO UPDATE SET contexts=excluded.contexts,"
            " intents=excluded.intents, is_influential=excluded.is_influential, fetched_at=excluded.fetched_at",
            [(c.citing_id, c.cited_id, json.dumps(list(c.contexts), ensure_ascii=False),
              json.dumps(list(c.intents)), int(c.is_influential), iso(now)) for c in contexts])
        if mark:
            mark_fetched(db, [cited_id], "s2", "ok", now)


def due_papers(db: Database, source: Source, now: datetime, limit: int, *, retry_failed: bool = False) -> list[str]:
    """Papers of the map `source` has not been asked about, or is due to be asked again:
    never asked first (papers with pages, then the newest ids), then the most overdue. A citer
    beyond arXiv is never due: OpenAlex described it when it named it, and the sources are
    asked by arXiv id.
    `retry_failed`: the papers whose last ask failed are due now, whatever their wait."""
    never = one_column(
        db, "SELECT p.id FROM papers p WHERE NOT EXISTS (SELECT 1 FROM enrichment_fetches f"
        f" WHERE f.paper_id = p.id AND f.source = ?) AND {arxiv_only('p.id')}"  # (a citer beyond arXiv: OpenAlex's)
        " ORDER BY p.has_page DESC, p.id DESC LIMIT ?", [source, limit])
    if len(never) >= limit:
        return never
    failed = " OR status = 'failed'" if retry_failed else ""
    again = one_column(
        db, f"SELECT paper_id FROM enrichment_fetches WHERE source = ? AND (next_fetch_at <= ?{failed})"
        " ORDER BY next_fetch_at LIMIT ?", [source, iso(now), limit - len(never)])
    return never + again


def failed_waiting(db: Database, source: Source, now: datetime) -> tuple[int, datetime | None]:
    """How many papers `source` failed on wait to be asked again (1 to 24 hours after a failure),
    and when the first of them is due: why a round may find nothing due."""
    row = named_row(db, "SELECT count(*) AS n, min(next_fetch_at) AS first FROM enrichment_fetches"
                    " WHERE source = ? AND status = 'failed' AND next_fetch_at > ?", [source, iso(now)])
    return (row["n"], parse_iso(row["first"]) if row["first"] else None) if row else (0, None)


def citers_without_context(db: Database, cited_id: str) -> set[str]:
    """The map's citers of `cited_id` whose citation Semantic Scholar has not described yet."""
    return set(one_column(
        db, "SELECT c.citing_id FROM citations c WHERE c.cited_id = ? AND NOT EXISTS (SELECT 1 FROM citation_contexts x"
        " WHERE x.citing_id = c.citing_id AND x.cited_id = c.cited_id)", [cited_id]))


# How often the citers of a tracked paper, and of a team's paper, are asked for (when the sources
# are asked for citers the map does not name): every round (hourly, with room for a round that
# starts a little early), and daily.
ASK_TRACKED = timedelta(minutes=50)
ASK_TEAM = timedelta(hours=23)
# The most team papers of one server Semantic Scholar is asked about in a round (each is at
# least one request, at its 1 a second; a round has 15 minutes): a server's team of more than
# 23 rounds' worth is asked in turn, less often than daily, and never takes a round from the
# tracked papers or from the other servers' teams.
TEAM_PER_SERVER = 100


def due_citations(db: Database, tracked: Sequence[str], now: datetime, limit: int,
                  team: Mapping[int, Sequence[str]] | None = None, *, retry_failed: bool = False) -> list[str]:
    """The tracked papers Semantic Scholar is due to be asked about: those with map citations
    it has not described, when it was never asked, when a citer appeared since it was last
    asked, or when it is due again (a failure after 1 to 24 hours, an unknown paper after a week, the
    rest after a month). Most undescribed citations first. With `team` (each server's team
    papers, by guild id; the sources are asked for citers, docs/enrichment.md, "Citations the
    map does not name"), then the tracked papers not asked for their citers within ASK_TRACKED,
    the longest unasked first, and only after every tracked paper the team papers not asked
    within ASK_TEAM: the servers in turn (the one whose paper waited longest first), each its
    longest unasked first, at most TEAM_PER_SERVER of one server. `retry_failed`: a paper whose
    last ask failed is due now."""
    due: list[tuple[int, str]] = []
    when = iso(now)
    for pid in dict.fromkeys(tracked):
        row = named_row(db, "SELECT fetched_at, next_fetch_at, status FROM enrichment_fetches WHERE paper_id = ?"
                        " AND source = 's2'", [pid])
        count, newest = db.conn.execute(
            "SELECT count(*), max(c.first_seen) FROM citations c WHERE c.cited_id = ? AND NOT EXISTS (SELECT 1"
            " FROM citation_contexts x WHERE x.citing_id = c.citing_id AND x.cited_id = c.cited_id)", [pid]).fetchone()
        if not count:
            continue
        if (row is None or row["next_fetch_at"] <= when or newest > row["fetched_at"]
                or (retry_failed and row["status"] == "failed")):
            due.append((count, pid))
    due.sort(key=lambda t: (-t[0], t[1]))
    out = [pid for _, pid in due[:limit]]
    if team is None:
        return out
    every = [*tracked, *(pid for papers in team.values() for pid in papers)]
    asked = _asked(db, every)
    chosen = set(out) | _waiting(db, every, now, failed=not retry_failed)

    def unasked(papers: Iterable[str], within: timedelta) -> list[tuple[str, str]]:
        """(last asked, paper) of those not chosen yet and not asked `within`, the longest unasked first."""
        return sorted((asked.get(pid, ""), pid) for pid in dict.fromkeys(papers) if pid not in chosen
                      and (pid not in asked or asked[pid] <= iso(now - within)))

    tracked_due = unasked(tracked, ASK_TRACKED)
    out += [pid for _, pid in tracked_due]
    chosen.update(out)
    queues = [unasked(papers, ASK_TEAM)[:TEAM_PER_SERVER] for _, papers in sorted(team.items())]
    queues = sorted((q for q in queues if q), key=lambda q: q[0])  # the server whose paper waited longest first
    for turn in itertools.zip_longest(*queues):  # one paper of each server in turn
        for item in turn:
            if item is not None and item[1] not in chosen:
                chosen.add(item[1])
                out.append(item[1])
    return out[:limit]


def _waiting(db: Database, paper_ids: Sequence[str], now: datetime, *, failed: bool = True) -> set[str]:
    """The papers Semantic Scholar failed on (unless not `failed`), or did not know, and that are
    not due again yet."""
    waits = "status != 'ok'" if failed else "status = 'not_found'"
    return {r["paper_id"] for r in rows_in_chunks(
        db, f"SELECT paper_id FROM enrichment_fetches WHERE source = 's2' AND {waits} AND next_fetch_at > ?"
        " AND paper_id IN ({})", dict.fromkeys(paper_ids), [iso(now)])}


def _asked(db: Database, paper_ids: Sequence[str]) -> dict[str, str]:
    """When Semantic Scholar was last asked for each paper's citers."""
    return {r["paper_id"]: r["last_asked"] for r in rows_in_chunks(
        db, "SELECT paper_id, last_asked FROM discovery_asked WHERE source = 's2' AND paper_id IN ({})",
        dict.fromkeys(paper_ids))}


# A paper whose citation count has not moved is read in full again after this all the same (a
# citing sentence added to a citation it had does not move the count).
FULL_READ = timedelta(days=7)


def same_count(db: Database, paper_id: str, source: str, count: int, now: datetime, include: bool = True) -> bool:
    """Whether `source` gives `paper_id` the citation count it gave when its citers were last
    read in full, less than FULL_READ ago, and (with `include`) none of what it said then is
    still held back (by `omit` then, or past an answer's most): then they are not read again,
    and the paper counts as asked now (its next ask is a round away: `due_citations`)."""
    if include and db.conn.execute(
            "SELECT EXISTS (SELECT 1 FROM source_citations s WHERE s.cited_id = ? AND s.source = ? AND s.baseline = 0"
            " AND NOT EXISTS (SELECT 1 FROM citations c WHERE c.citing_id = s.citing_id AND c.cited_id = s.cited_id))",
            (paper_id, source)).fetchone() != (0,):
        return False
    with db.atomic():
        for last, read_at in db.conn.execute(
                "SELECT citation_count, read_at FROM discovery_asked WHERE paper_id = ? AND source = ?",
                (paper_id, source)):
            if last == count and read_at and read_at > iso(now - FULL_READ):
                db.conn.execute("UPDATE discovery_asked SET last_asked = ? WHERE paper_id = ? AND source = ?",
                                (iso(now), paper_id, source))
                return True
    return False


def save_status(db: Database, paper_ids: Sequence[str], source: Source, status: Status, now: datetime,
                reason: str | None = None) -> None:
    """`source` could not say anything of these papers (`not_found`; `failed`, asked again after
    an hour or, failing again, longer: `mark_fetched`; with the reason): what is stored of them
    stays."""
    with db.atomic():
        mark_fetched(db, paper_ids, source, status, now, reason)


def known_papers(db: Database, paper_ids: Sequence[str]) -> set[str]:
    """Which of these ids are papers of the map."""
    return {r["id"] for r in rows_in_chunks(db, "SELECT id FROM papers WHERE id IN ({})", dict.fromkeys(paper_ids))}
