"""`/why PAPER CITER`: where the citation "CITER cites PAPER" is known from and since when, and,
when mapwatch does not know it, the reasons it can see
(docs/bot.md, "Where a citation is known from: /why").

A citation is known from the map when a page names it: the snapshot that first did (PAPER's
"Built on by" list or CITER's "Builds on" list, `citations.snapshot_id`), and from OpenAlex or
Semantic Scholar when they said so (`source_citations`, with when each first did). What is missing
is explained from what is stored: the pages' lists and how much of them they show, whether the
papers are in the map, the settings the sources run under, when each source was last asked and
what came of it (`enrichment_fetches`, `discovery_asked`, `recent_citers_asked`,
`discovery_passes`). Every read is a primary-key or index probe.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from datetime import date
from typing import Literal

from sqlite_utils import Database

from mapwatch.store.database.rows import named_row, named_rows, scalar
from mapwatch.store.errors import BadOption, PaperNotFound
from mapwatch.store.ids import is_outside_key, paper_key, possible_key
from mapwatch.store.questions.queries import get_paper, resolve_paper
from mapwatch.store.questions.types import PaperRow, Provenance
from mapwatch.store.settings_table import SourceSettings

Section = Literal["Built on by", "Builds on"]  # the cited paper's list of citers, the citing paper's of references
DiscoverySource = Literal["openalex", "s2"]  # the sources that name citers (store/scholarly/discovered.py)
DISCOVERY_SOURCES: tuple[DiscoverySource, ...] = ("openalex", "s2")

# What a reason says (bot/rendering/render_why.py words each one):
ReasonKind = Literal[
    "paper_missing",  # PAPER is not in the map: no page, no list names it
    "paper_no_page",  # PAPER has no page of its own yet: its citers are not listed
    "citers_unlisted",  # PAPER's page lists `shown` of its `total` citers: it may be among the rest
    "citers_all_listed",  # PAPER's page lists all its `total` citers (through `data_through`), not CITER
    "citer_missing",  # CITER is not in the map
    "citer_no_page",  # CITER is a stub: no page of its own, so no "Builds on" list
    "citer_not_arxiv",  # CITER is a citer beyond arXiv (a DOI): the map, of arXiv papers, has no page of it
    "refs_unlisted",  # CITER's page lists `shown` of its `total` references in the map
    "refs_all_listed",  # CITER's page lists all its references in the map, PAPER not among them
    "reversed",  # the other way round is known: PAPER cites CITER
    "baseline",  # `source` named it in its first answer about PAPER: kept in source_citations only
    "held_back",  # `source` named it later, not in citations: `detail` omit (the setting) or waiting
    "sources_off",  # no source is asked for citers here ($MAPWATCH_ENRICH: `detail`)
    "discovery_off",  # $MAPWATCH_SOURCE_CITATIONS=off: the sources are not asked for citers
    "source_off",  # `source` is not among $MAPWATCH_ENRICH's (`detail`)
    "fetch_failed",  # `source`'s last fetch of `paper_id` failed at `at`: `detail`
    "paper_unknown_to_openalex",  # OpenAlex has no work for PAPER (`at`: when it said so; None: not asked)
    "citer_not_listed",  # OpenAlex did not list CITER when asked at `at` (again from `until`)
    "recent_asked",  # OpenAlex was last asked for PAPER's newest citers at `at`
    "recent_never",  # ... never (asked for tracked and team papers only)
    "day_pass_done",  # OpenAlex's pass over the new works of `day` was read at `at` (`lag` days after)
    "day_pass_pending",  # ... not read to the end yet
    "day_unknown",  # CITER's publication day is not known: no day pass to point at
    "citers_asked",  # Semantic Scholar was last asked for PAPER's citers at `at` (first at `until`)
    "citers_never_asked",  # ... never (asked for tracked and team papers only)
]


@dataclass(frozen=True)
class PageSnapshot:
    """A stored version of a map page (a `snapshots` row)."""

    id: int
    paper_id: str  # whose page it is
    data_through: str | None
    ingested_at: str
    location: str  # where it was read from (a file or URL)
    cited_by: int | None = None  # the counts it stated, and how many of them it lists by name
    citers_listed: int | None = None
    refs_in_map: int | None = None
    refs_listed: int | None = None


@dataclass(frozen=True)
class KnownFrom:
    """One provenance of the citation: the map (with the page version that named it) or an open
    source (what it said, `source_citations`), and when it was first seen there."""

    source: Provenance
    first_seen: str
    page: PageSnapshot | None = None  # the map's: the snapshot that first named it (None: not recorded)
    section: Section | None = None  # the map's: which list of that page
    baseline: bool = False  # a source's: in its first answer about the cited paper (there before it was asked)


@dataclass(frozen=True)
class Reason:
    """One thing mapwatch can see that explains why it does not know the citation (or why no map
    page names it); the fields each kind uses are named beside `ReasonKind`."""

    kind: ReasonKind
    source: str = ""  # openalex | s2, for the sources' reasons
    paper_id: str = ""  # the paper the fact is about
    at: str | None = None  # when (ISO)
    until: str | None = None  # a second instant: asked again from, first asked
    shown: int | None = None
    total: int | None = None
    data_through: str | None = None
    day: str | None = None  # a publication day (YYYY-MM-DD)
    lag: int | None = None
    detail: str = ""  # a failure's reason, a setting's value


@dataclass(frozen=True)
class WhyAnswer:
    """Whether mapwatch knows that `citer_id` cites `paper_id`, where from, since when, and the
    reasons it can see when it does not (or when only a source does)."""

    paper_id: str
    citer_id: str
    paper: PaperRow | None  # None: not in the map
    citer: PaperRow | None
    first_seen: str | None  # when it entered `citations` (None: it is not there)
    provenance: Provenance | None  # `citations.provenance`
    known_from: tuple[KnownFrom, ...]
    reasons: tuple[Reason, ...]
    settings: SourceSettings

    @property
    def by_map(self) -> bool:
        return self.provenance == "map"


# -- the ids -----------------------------------------------------------------------------------

def _looks_like_id(text: str) -> bool:
    """Whether `text` was meant as an id or a link rather than a title: one word with digits, or
    "arXiv:…", or a URL."""
    low = text.lower()
    if low.startswith(("arxiv:", "http://", "https://", "arxiv.org/")):
        return True
    return " " not in text and any(ch.isdigit() for ch in text) and any(ch in "./" for ch in text)


def resolve_id(db: Database, text: str, today: date) -> str:
    """The versionless arXiv id a user gave (an id with or without version, old or new style,
    `arXiv:<id>`, an arXiv or map URL), or the id of the map paper a title names. An id need not
    be in the map (that is an answer of its own), but must be one arXiv can have given by
    `today`. Raises BadOption for a malformed id, PaperNotFound for a title the map lacks."""
    words = " ".join(text.split())
    if not words:
        raise BadOption("Give two papers: the cited paper and its citer, as arXiv ids, arXiv or map URLs, or titles.")
    pid = paper_key(words) if len(words) <= 300 else None
    if pid is not None:
        if not possible_key(pid, today) and get_paper(db, pid) is None:
            raise BadOption(f"“{pid}” cannot be an arXiv id: no such month yet, or the wrong number of digits "
                            "for its month (4 after the dot up to 1412, 5 from 1501).")
        return pid
    try:
        return resolve_paper(db, words).id
    except PaperNotFound:
        if _looks_like_id(words):
            shown = words if len(words) <= 80 else words[:79] + "…"
            raise BadOption(f"“{shown}” is not an arXiv id: give one such as 2412.10400, 2412.10400v2, "
                            "hep-th/9901001, arXiv:2412.10400, or an arXiv or map URL.") from None
        raise


def resolve_pair(db: Database, paper: str, citer: str, today: date) -> tuple[str, str]:
    """(cited, citing) ids from what a user gave; BadOption when they are one paper."""
    paper_id, citer_id = resolve_id(db, paper, today), resolve_id(db, citer, today)
    if paper_id == citer_id:
        raise BadOption(f"Both are {paper_id}: give the cited paper first, then a paper that cites it.")
    return paper_id, citer_id


# -- the answer --------------------------------------------------------------------------------

_SNAPSHOT_COLS = ("id, paper_id, data_through, ingested_at, source AS location, cited_by, citers_listed,"
                  " refs_in_map, refs_listed")


def _snapshot(row: sqlite3.Row | None) -> PageSnapshot | None:
    return PageSnapshot(row["id"], row["paper_id"], row["data_through"], row["ingested_at"], row["location"],
                        row["cited_by"], row["citers_listed"], row["refs_in_map"],
                        row["refs_listed"]) if row is not None else None


def latest_snapshot(db: Database, paper_id: str) -> PageSnapshot | None:
    """The newest stored version of the paper's page (index snapshots_paper)."""
    return _snapshot(named_row(db, f"SELECT {_SNAPSHOT_COLS} FROM snapshots WHERE paper_id = ? ORDER BY id DESC"
                                   " LIMIT 1", (paper_id,)))


def why(db: Database, paper_id: str, citer_id: str, settings: SourceSettings | None = None) -> WhyAnswer:
    """Where "`citer_id` cites `paper_id`" is known from, since when, and what explains its absence
    (from the map's pages; and, when mapwatch does not hold it at all, from the sources).
    `settings`: the sources this process asks and $MAPWATCH_SOURCE_CITATIONS (default: the defaults)."""
    settings = settings or SourceSettings()
    paper, citer = get_paper(db, paper_id), get_paper(db, citer_id)
    row = named_row(db, "SELECT first_seen, provenance, snapshot_id FROM citations WHERE citing_id = ?"
                        " AND cited_id = ?", (citer_id, paper_id))
    known: list[KnownFrom] = []
    if row is not None and row["provenance"] == "map":
        page = _snapshot(named_row(db, f"SELECT {_SNAPSHOT_COLS} FROM snapshots WHERE id = ?", (row["snapshot_id"],)))
        section: Section | None = None if page is None else "Built on by" if page.paper_id == paper_id else "Builds on"
        known.append(KnownFrom("map", page.ingested_at if page else row["first_seen"], page, section))
    said = named_rows(db, "SELECT source, first_seen, baseline FROM source_citations WHERE citing_id = ?"
                          " AND cited_id = ? ORDER BY first_seen, source", (citer_id, paper_id))
    known += [KnownFrom(s["source"], s["first_seen"], baseline=bool(s["baseline"])) for s in said]
    reasons: list[Reason] = []
    if row is None or row["provenance"] != "map":
        reasons += _map_reasons(db, paper, citer, paper_id, citer_id)
    if row is None:
        if scalar(db, "SELECT 1 FROM citations WHERE citing_id = ? AND cited_id = ?", (paper_id, citer_id)):
            reasons.append(Reason("reversed", paper_id=paper_id))
        if paper is not None:
            reasons += _held_reasons(said, settings, paper_id)
            named = {s["source"] for s in said}
            reasons += _source_reasons(db, paper_id, citer_id, settings, [s for s in DISCOVERY_SOURCES
                                                                          if s not in named])
    return WhyAnswer(paper_id, citer_id, paper, citer, row["first_seen"] if row else None,
                     row["provenance"] if row else None, tuple(known), tuple(reasons), settings)


def _map_reasons(db: Database, paper: PaperRow | None, citer: PaperRow | None, paper_id: str,
                 citer_id: str) -> list[Reason]:
    """Why no map page names it: what each of the two pages shows, or that there is none."""
    return [_list_reason(db, paper, paper_id, "cited"), _list_reason(db, citer, citer_id, "citing")]


# For each side of the citation, its reasons: not in the map, no page, a list showing some, showing all.
_SIDES: dict[str, tuple[ReasonKind, ReasonKind, ReasonKind, ReasonKind]] = {
    "cited": ("paper_missing", "paper_no_page", "citers_unlisted", "citers_all_listed"),
    "citing": ("citer_missing", "citer_no_page", "refs_unlisted", "refs_all_listed"),
}


def _list_reason(db: Database, p: PaperRow | None, paper_id: str, side: Literal["cited", "citing"]) -> Reason:
    """What one paper's page says of the citation: the cited paper's list of citers, the citing
    paper's of references in the map (how many it names of how many), or that it has no page."""
    missing, no_page, unlisted, all_listed = _SIDES[side]
    if side == "citing" and is_outside_key(paper_id):
        return Reason("citer_not_arxiv", paper_id=paper_id)
    page = latest_snapshot(db, paper_id) if p is not None and p.has_page else None
    if p is None or page is None:
        return Reason(missing if p is None else no_page, paper_id=paper_id)
    shown, total = (page.citers_listed, page.cited_by) if side == "cited" else (page.refs_listed, page.refs_in_map)
    if total is not None and (shown or 0) < total:
        return Reason(unlisted, paper_id=paper_id, shown=shown or 0, total=total, data_through=page.data_through)
    return Reason(all_listed, paper_id=paper_id, total=shown, data_through=page.data_through)


def _held_reasons(said: list[sqlite3.Row], settings: SourceSettings, paper_id: str) -> list[Reason]:
    """A source named it, yet `citations` does not hold it: its baseline, or held back."""
    out = []
    for s in said:
        if s["baseline"]:
            out.append(Reason("baseline", s["source"], paper_id, at=s["first_seen"]))
        else:
            out.append(Reason("held_back", s["source"], paper_id, at=s["first_seen"],
                              detail="omit" if settings.citations == "omit" else "waiting"))
    return out


def _source_reasons(db: Database, paper_id: str, citer_id: str, settings: SourceSettings,
                    silent: list[DiscoverySource]) -> list[Reason]:
    """Why the sources that have not named it have not: the settings, then what is stored of
    their asking (the last fetch of each paper, the citers asked for, OpenAlex's day passes)."""
    if not silent:
        return []
    out: list[Reason] = []
    enrich = ",".join(settings.sources) or "off"
    if not any(s in settings.sources for s in DISCOVERY_SOURCES):
        out.append(Reason("sources_off", detail=enrich))
    elif settings.citations == "off":
        out.append(Reason("discovery_off", detail="off"))
    else:
        out += [Reason("source_off", s, detail=enrich) for s in silent if s not in settings.sources]
    fetched = {r["source"]: r for r in named_rows(
        db, "SELECT source, fetched_at, status, reason FROM enrichment_fetches WHERE paper_id = ?", (paper_id,))}
    for source in silent:
        last = fetched.get(source)
        said: list[Reason] = []
        if last is not None and last["status"] == "failed":
            said.append(Reason("fetch_failed", source, paper_id, at=last["fetched_at"], detail=last["reason"] or ""))
        if source == "openalex":
            said += _openalex_reasons(db, paper_id, citer_id, last)
        else:
            asked = named_row(db, "SELECT first_asked, last_asked FROM discovery_asked WHERE paper_id = ?"
                                  " AND source = 's2'", (paper_id,))
            said.append(Reason("citers_asked", "s2", paper_id, at=asked["last_asked"], until=asked["first_asked"])
                        if asked else Reason("citers_never_asked", "s2", paper_id))
        asked_here = source in settings.sources and settings.citations != "off"
        # A source not asked here: what it did before (under another setting, or in another process)
        # still counts; that it never did goes without saying.
        out += [r for r in said if asked_here or r.at is not None]
    return out


def _openalex_reasons(db: Database, paper_id: str, citer_id: str, last: sqlite3.Row | None) -> list[Reason]:
    """OpenAlex names a citer only of a paper it has matched to a work: by its newest citers
    (tracked and team papers) or by the day's pass over the new works of the citer's day."""
    if not scalar(db, "SELECT 1 FROM openalex_works WHERE paper_id = ?", (paper_id,)):
        at = last["fetched_at"] if last is not None and last["status"] == "not_found" else None
        return [Reason("paper_unknown_to_openalex", "openalex", paper_id, at=at)]
    out: list[Reason] = []
    citer = named_row(db, "SELECT fetched_at, status, reason, next_fetch_at FROM enrichment_fetches"
                          " WHERE paper_id = ? AND source = 'openalex'", (citer_id,))
    if citer is not None and citer["status"] == "not_found":
        out.append(Reason("citer_not_listed", "openalex", citer_id, at=citer["fetched_at"],
                          until=citer["next_fetch_at"]))
    elif citer is not None and citer["status"] == "failed":
        out.append(Reason("fetch_failed", "openalex", citer_id, at=citer["fetched_at"], detail=citer["reason"] or ""))
    recent = scalar(db, "SELECT asked_at FROM recent_citers_asked WHERE paper_id = ?", (paper_id,))
    out.append(Reason("recent_asked", "openalex", paper_id, at=recent) if recent
               else Reason("recent_never", "openalex", paper_id))
    day = scalar(db, "SELECT coalesce((SELECT substr(published, 1, 10) FROM arxiv_records WHERE paper_id = :id),"
                     " (SELECT substr(first_posted, 1, 10) FROM papers WHERE id = :id))", {"id": citer_id})
    if not day:
        out.append(Reason("day_unknown", "openalex", citer_id))
        return out
    passes = named_rows(db, "SELECT lag, finished_at FROM discovery_passes WHERE day = ? ORDER BY lag DESC LIMIT 1",
                        (day,))
    out.append(Reason("day_pass_done", "openalex", citer_id, at=passes[0]["finished_at"], day=day,
                      lag=passes[0]["lag"]) if passes else Reason("day_pass_pending", "openalex", citer_id, day=day))
    return out
