"""OpenAlex's new arXiv works of a day, with their references: who newly cites the map's papers,
whether or not a map page names them (docs/enrichment.md, "Citations the map does not name").

Once a day, the works arXiv published the day before (and again three days before: OpenAlex
lists some late) (`/works?filter=from_publication_date:D,
to_publication_date:D,locations.source.id:<arXiv>`, paged by cursor, bounded) are read. A
reference is an OpenAlex work id; the map papers OpenAlex has matched (`openalex_works`, from
enrichment) are what it can name. A new work citing one of them is stored as a citation from
`openalex` (store/scholarly/discovered.py), and its stub queues its map page for the next tick.

Every round, the newest citers of the tracked papers (and daily, of the team's papers) are asked for too
(`/works?filter=cites:W1|W2…,from_publication_date:D&sort=publication_date:desc`, 50 papers a
request, newest first, bounded): a work published in the last RECENT_DAYS days that cites one of
them is a citation within the hour, whatever its number of citers (Semantic Scholar reads at most
10,000 citers of a paper, in an order of its own), and before the day's pass.
The newest citers' answer names works that are not on arXiv too (journal and conference papers):
unless $MAPWATCH_BEYOND_ARXIV is `off`, they are citers beyond arXiv, keyed by DOI, else by
OpenAlex work id, with the title, year, venue and authors OpenAlex gives (docs/enrichment.md,
"Citers beyond arXiv"; one citer per work: store/scholarly/versions.py). The papers of a followed
direction are asked for daily too, after the team's (the caller hands them in:
store/subscriptions/watched.py).
`fetch_*` do the I/O, `parse_*` read, `save_*` write; nothing here trusts what it is told.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlite_utils import Database

from mapwatch.store import records as r
from mapwatch.store.clock import iso
from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.ids import ARXIV_DOI_PREFIX, arxiv_link_id, doi_key, normalize_id
from mapwatch.store.records import FoundCiter, OpenAlexWork
from mapwatch.store.scholarly.budget import MAX_CITATIONS_PER_ANSWER, Budget
from mapwatch.store.scholarly.discovered import Findings, save_found_citers
from mapwatch.store.scholarly.parse import (
    Malformed,
    as_dict,
    as_list,
    found_citer,
    json_body,
    openalex_authors,
    venue_of,
)
from mapwatch.store.scholarly.saved import ASK_TEAM, ASK_TRACKED

ARXIV_SOURCE = "S4306400194"  # arXiv's id among OpenAlex's sources (a repository)
NEW_WORKS_PAGE = 200  # works per request (OpenAlex's most)
NEW_WORKS_MAX_PAGES = 50  # per day: 10,000 works (arXiv posts about 1,000 to 2,000 a day)
MAX_REFERENCES = 2_000  # references read per work
# A day's works are read the day after, and again three days after: OpenAlex lists some arXiv
# works days late, and reading one again adds nothing twice.
LAGS = (1, 3)
NEW_WORKS_SELECT = "id,doi,ids,title,publication_year,referenced_works,locations"
# The newest citers' works may not be on arXiv: what a citer beyond arXiv is named with comes too.
RECENT_SELECT = NEW_WORKS_SELECT + ",authorships,primary_location"
RECENT_DAYS = max(LAGS)  # the newest citers: works published since this many days ago
CITES_BATCH = 50  # cited works per request (OpenAlex ORs up to 50 values of a filter)
RECENT_MAX_PAGES = 5  # per batch and round: the newest 1,000 works that cite one of them


@dataclass(frozen=True)
class NewWork:
    """A new work: the citer (an arXiv id, or a citer beyond arXiv's key), and the OpenAlex ids
    of what it references."""

    citer: FoundCiter
    references: tuple[str, ...]


@dataclass(frozen=True)
class NewWorksPage:
    works: tuple[NewWork, ...]
    next_cursor: str | None
    skipped: int  # works without an arXiv id when those are not read (or otherwise unreadable)


def work_arxiv_id(work: Mapping[str, Any]) -> str | None:
    """The arXiv id of a work: its arXiv DOI, else an arXiv location's URL."""
    for value in (work.get("doi"), as_dict(work.get("ids")).get("doi")):
        d = r.doi(value)
        if d and d.lower().startswith(ARXIV_DOI_PREFIX) and (pid := normalize_id(d[len(ARXIV_DOI_PREFIX):])):
            return pid
    for loc in as_list(work.get("locations"), 50):
        for key in ("landing_page_url", "pdf_url"):
            url = as_dict(loc).get(key)
            if isinstance(url, str) and (pid := arxiv_link_id(url)):
                return pid
    return None


def _beyond_arxiv(item: Mapping[str, Any], work_id: str | None) -> FoundCiter | None:
    """A work without an arXiv id as a citer beyond arXiv: keyed by its DOI, else its OpenAlex
    work id, with the title, year, authors and venue OpenAlex gives; None without a work id."""
    if work_id is None:
        return None
    work_doi = r.doi(item.get("doi")) or r.doi(as_dict(item.get("ids")).get("doi"))
    key = (doi_key(work_doi) if work_doi else None) or work_id
    doi = key if key != work_id else None
    citer = found_citer(key, item)
    return FoundCiter(key, citer.title, citer.year,
                      OpenAlexWork(key, work_id, openalex_authors(item), venue_of(item), doi))


def parse_new_works(body: bytes, *, beyond_arxiv: bool = False) -> NewWorksPage:
    """The works of one `/works` page of new works, and the cursor of the next page. A work
    without an arXiv id is skipped, or with `beyond_arxiv` read as a citer beyond arXiv."""
    data = json_body(body, "OpenAlex")
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise Malformed("the OpenAlex answer has no results list")
    works: list[NewWork] = []
    skipped = 0
    for item in as_list(data["results"], NEW_WORKS_PAGE * 2):
        item = as_dict(item)
        pid = work_arxiv_id(item)
        work_id = r.openalex_work(item.get("id"))
        if pid is not None:
            citer = found_citer(pid, item)
            if work_id is not None:  # (its id alone: a citer beyond arXiv stored under it becomes this paper)
                citer = FoundCiter(pid, citer.title, citer.year, OpenAlexWork(pid, work_id, (), None, None))
        else:
            outside = _beyond_arxiv(item, work_id) if beyond_arxiv else None
            if outside is None:
                skipped += 1
                continue
            citer = outside
        refs = tuple(dict.fromkeys(w for w in (r.openalex_work(x) for x in as_list(item.get("referenced_works"),
                                                                                  MAX_REFERENCES)) if w))
        works.append(NewWork(citer, refs))
    cursor = as_dict(data.get("meta")).get("next_cursor")
    return NewWorksPage(tuple(works), cursor if isinstance(cursor, str) and 0 < len(cursor) <= 1000 else None,
                        skipped)


def new_works_params(day: date, cursor: str, contact: str | None) -> dict[str, str]:
    """The query of one page of the works arXiv published on `day`."""
    params = {"filter": f"from_publication_date:{day.isoformat()},to_publication_date:{day.isoformat()},"
                        f"locations.source.id:{ARXIV_SOURCE}",
              "per-page": str(NEW_WORKS_PAGE), "cursor": cursor, "select": NEW_WORKS_SELECT}
    if contact:
        params["mailto"] = contact  # the polite pool
    return params


def recent_citers_params(work_ids: Sequence[str], since: date, cursor: str, contact: str | None) -> dict[str, str]:
    """The query of one page of the works published since `since` that cite one of `work_ids`,
    the newest first."""
    params = {"filter": f"cites:{'|'.join(work_ids)},from_publication_date:{since.isoformat()}",
              "sort": "publication_date:desc", "per-page": str(NEW_WORKS_PAGE), "cursor": cursor,
              "select": RECENT_SELECT}
    if contact:
        params["mailto"] = contact
    return params


def recent_due(db: Database, tracked: Sequence[str], team: Sequence[str], now: datetime,
               followed: Sequence[str] = ()) -> list[tuple[str, str]]:
    """The (paper, OpenAlex work) pairs whose newest citers are due: the tracked papers not asked
    within ASK_TRACKED, then the team's and then the followed directions' papers not within
    ASK_TEAM, the longest unasked first. A paper enrichment has not matched to a work yet is
    left out: its citers come with the day's pass once it is."""
    ids = list(dict.fromkeys([*tracked, *team, *followed]))
    work = {row["paper_id"]: row["work_id"] for row in rows_in_chunks(
        db, "SELECT paper_id, work_id FROM openalex_works WHERE paper_id IN ({})", ids)}
    asked = {row["paper_id"]: row["asked_at"] for row in rows_in_chunks(
        db, "SELECT paper_id, asked_at FROM recent_citers_asked WHERE paper_id IN ({})", ids)}
    due: dict[str, tuple[int, str]] = {}  # paper -> (its tier, last asked): a tracked team paper as tracked
    for papers, every, of_team in ((tracked, ASK_TRACKED, 0), (team, ASK_TEAM, 1), (followed, ASK_TEAM, 2)):
        for pid in papers:
            last = asked.get(pid, "")
            if pid in work and pid not in due and (not last or last <= iso(now - every)):
                due[pid] = (of_team, last)
    return [(pid, work[pid]) for pid in sorted(due, key=due.__getitem__)]  # by tier, longest unasked first


def asked_recent(db: Database, paper_ids: Sequence[str], now: datetime) -> None:
    """Record that the newest citers of `paper_ids` were read (their answer stored)."""
    with db.atomic():
        db.conn.executemany("INSERT OR REPLACE INTO recent_citers_asked (paper_id, asked_at) VALUES (?, ?)",
                            [(p, iso(now)) for p in paper_ids])


def days_due(db: Database, today: date) -> list[tuple[date, int]]:
    """The (publication day, lag) passes due by `today` and not read to the end yet, oldest first."""
    out = []
    for lag in sorted(LAGS, reverse=True):
        day = date.fromordinal(today.toordinal() - lag)
        if db.conn.execute("SELECT 1 FROM discovery_passes WHERE day = ? AND lag = ?",
                           [day.isoformat(), lag]).fetchone() is None:
            out.append((day, lag))
    return out


def save_new_works(db: Database, works: Sequence[NewWork], now: datetime, *, include: bool,
                   budget: Budget | None = None) -> Findings:
    """Store the citations of map papers among `works`' references (each cited paper's in one
    transaction); the map papers are found by the OpenAlex work id enrichment matched them to.
    One answer names at most MAX_CITATIONS_PER_ANSWER of them, all cited papers together (the
    rest are left out and counted as `over`), and adds no more than `budget` allows."""
    refs = sorted({w for work in works for w in work.references})
    paper_of = {row["work_id"]: row["paper_id"] for row in rows_in_chunks(
        db, "SELECT work_id, paper_id FROM openalex_works WHERE work_id IN ({})", refs)}
    by_cited: dict[str, list[FoundCiter]] = {}
    named = 0
    total = Findings()
    for work in works:
        for ref in work.references:
            if (cited := paper_of.get(ref)) is None:
                continue
            if named == MAX_CITATIONS_PER_ANSWER:
                total.over += 1
                continue
            by_cited.setdefault(cited, []).append(work.citer)
            named += 1
    if total.over and budget is not None:
        budget.note(f"{budget.source}: an answer named {named + total.over:,} citations of map papers, more than "
                    f"the {MAX_CITATIONS_PER_ANSWER:,} one answer may add: the rest of it was left out")
    for cited, citers in sorted(by_cited.items()):
        if budget is not None and budget.spent:
            total.over += len(citers)
            continue
        f = save_found_citers(db, cited, "openalex", citers, now, include=include, baseline=False, budget=budget)
        total.new += f.new
        total.held += f.held
        total.dropped += f.dropped
        total.known += f.known
        total.over += f.over
    return total


def finish_day(db: Database, day: date, lag: int, works: int, citations: int, now: datetime) -> None:
    """Record that `day`'s new works were read to the end at `lag` (not read again at it)."""
    with db.atomic():
        db.conn.execute("INSERT OR REPLACE INTO discovery_passes (day, lag, works, citations, finished_at)"
                        " VALUES (?, ?, ?, ?, ?)", [day.isoformat(), lag, works, citations, iso(now)])
