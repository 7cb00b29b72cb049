"""Who cites a team (docs/bot.md, "Who cites a team"): the papers first seen citing any of a
set of papers (a team's: teams.team_papers) within a window, counted by the institutions,
the people and the venues of those citing papers.

Every count is of distinct citing papers. A citing paper whose every citation of the set in
the window is a self-citation (it shares an author with the paper it cites: authors.self_pairs,
the rule of /track's `self:hide` on a team) is counted apart, in `self_citing`, and in no list;
one whose authors no source has named yet is counted in `authors_unknown` (no institution, no
person). People are told apart as everywhere (store/questions/person_names.py, group_people).
A venue is OpenAlex's (else arXiv's journal reference), arXiv itself not counting as one.

Bounded: one read of the window's citations (on the index citations_cited_seen), then, for at
most CITING_MAX citing papers (the newest first seen, when the window holds more: `examined` says
how many), their and the cited papers' authors in one query, their institutions counted in SQL.
Lists are cut to `top`. No discord here: frozen dataclasses out.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.rows import named_rows, scalar
from mapwatch.store.questions.authors import AuthorRow, author_rows, self_pairs_of_rows
from mapwatch.store.questions.paper_rows import KEYED_CITATIONS, seen_seconds
from mapwatch.store.questions.person_names import group_people
from mapwatch.store.questions.types import Author

DEFAULT_DAYS = 90
DAYS_MAX = 3650
TOP = 10  # entries a list keeps
CITING_MAX = 2000  # citing papers counted at most, the newest first seen (bench/RESULTS.md, "Who cites a team")
_ARXIV = re.compile(r"\s*arxiv\b", re.IGNORECASE)  # "arXiv (Cornell University)", "arXiv preprint …"


@dataclass(frozen=True)
class Tally:
    """An institution, a person or a venue, and how many citing papers name it."""

    label: str  # as most of its papers give it
    key: str  # institution or venue: its name folded; a person: OpenAlex id, ORCID or name:<name>
    papers: int


@dataclass(frozen=True)
class CitedBy:
    """Who cited a set of papers in a window: the `top` of each list, and what was counted apart."""

    since: str  # citations first seen at or after this stored timestamp
    papers: int  # the set's papers
    cited: int  # of them, those cited in the window
    citing: int  # distinct citing papers in the window, self-citations included
    examined: int  # of them, those counted (all, up to CITING_MAX: the newest first seen)
    self_citing: int  # of those, the ones counted apart (every citation of the set a self-citation)
    authors_unknown: int  # of the others, those no source has named authors for yet
    no_venue: int  # of the others, those with no venue known
    institutions: tuple[Tally, ...]
    people: tuple[Tally, ...]
    venues: tuple[Tally, ...]
    institutions_total: int  # how many each list holds before it is cut
    people_total: int
    venues_total: int

    @property
    def counted(self) -> int:
        """The citing papers the lists count: those examined but the self-citations."""
        return self.examined - self.self_citing

    @property
    def lists(self) -> tuple[tuple[str, tuple[Tally, ...], int], ...]:
        """(heading, entries, entries before the cut) of each list, in the order shown."""
        return (("Institutions", self.institutions, self.institutions_total),
                ("People", self.people, self.people_total),
                ("Venues", self.venues, self.venues_total))


def since_days(now: datetime, days: int) -> str:
    """The window of the last `days` days before `now` (the bot's /team stats)."""
    return iso(now - timedelta(days=days))


def since_day_start(now: datetime, days: int) -> str:
    """The window from the start (00:00 UTC) of the day `days` days before `now`'s: the same all
    day long (a team's web page, whose ETag carries the date)."""
    return iso(datetime.combine(now.date() - timedelta(days=days), time(), tzinfo=now.tzinfo))


def window_citations(db: Database, papers: Collection[str], since: str,
                     limit: int | None = None) -> tuple[dict[str, set[str]], int, int]:
    """(citing paper -> the set's papers it was first seen citing at or after `since`, how many
    citing papers the window holds, how many of the set's papers they cite); with `limit`, only
    the `limit` citing papers first seen citing the set the latest are kept. Grouped in SQL: a
    row per citing paper comes back, not one per citation."""
    where = (f"FROM {KEYED_CITATIONS} c WHERE cited_id IN (SELECT value FROM json_each(:papers))"
             f" AND first_seen_unix >= {seen_seconds(':since')}")
    params = {"papers": json.dumps(sorted(papers)), "since": since}
    groups = named_rows(db, f"SELECT citing_id, max(first_seen_unix) AS newest, group_concat(cited_id, ' ') AS cited"
                        f" {where} GROUP BY citing_id", params)  # (arXiv ids hold no space)
    cited = scalar(db.conn, f"SELECT count(DISTINCT cited_id) {where}", params)
    if limit is not None and len(groups) > limit:
        kept = sorted(groups, key=lambda g: (g["newest"], g["citing_id"]), reverse=True)[:limit]
    else:
        kept = groups
    return {g["citing_id"]: set(g["cited"].split(" ")) for g in kept}, len(groups), cited


def cited_by(db: Database, papers: Collection[str], since: str, top: int = TOP,
             limit: int = CITING_MAX) -> CitedBy:
    """Who cited `papers` from `since` on: the top institutions, people and venues of the citing
    papers (the newest `limit` of them), self-citations and citers of unknown authors counted apart."""
    cites, citing, cited_papers = window_citations(db, papers, since, limit)
    cited = {p for ps in cites.values() for p in ps}
    rows = author_rows(db, cites.keys() | cited)
    own = self_pairs_of_rows(rows, ((c, p) for c, ps in cites.items() for p in ps))
    self_citing = {c for c, ps in cites.items() if all((c, p) in own for p in ps)}
    others = sorted(cites.keys() - self_citing)
    named = [c for c in others if rows.get(c)]
    institutions = _institutions(db, named)
    people = _people([rows[c] for c in named])
    venues = _venues(db, others)
    return CitedBy(since, len(papers), cited_papers, citing, len(cites), len(self_citing), len(others) - len(named),
                   len(others) - sum(t.papers for t in venues), tuple(institutions[:top]), tuple(people[:top]),
                   tuple(venues[:top]), len(institutions), len(people), len(venues))


def venue_of(venue: str | None, journal_ref: str | None) -> str | None:
    """Where a paper was published, as OpenAlex names it, else as arXiv's journal reference gives
    it; None when neither names a venue other than arXiv itself."""
    for v in (venue, journal_ref):
        text = " ".join((v or "").split())
        if text and not _ARXIV.match(text):
            return text
    return None


def _sorted(tallies: Iterable[Tally]) -> list[Tally]:
    return sorted(tallies, key=lambda t: (-t.papers, t.label.casefold(), t.key))


def _most(labels: Mapping[str, int]) -> str:
    """The label most papers give; of those as common, the fullest ("Ada Lovelace", not "A. Lovelace")."""
    return min(labels, key=lambda label: (-labels[label], -len(label), label))


def _institutions(db: Database, citing: Sequence[str]) -> list[Tally]:
    """The institutions the authors of `citing` gave, by name whatever its letters' case (SQLite's
    NOCASE: ASCII letters), each with the papers giving it. Grouped in SQL: no row of a paper's
    authors comes back."""
    return _sorted(Tally(name, name.casefold(), n) for name, n in db.conn.execute(
        "SELECT min(i.name), count(DISTINCT pai.paper_id) FROM paper_author_institutions pai"
        " JOIN institutions i ON i.id = pai.institution_id WHERE pai.paper_id IN (SELECT value FROM json_each(?))"
        " GROUP BY i.name COLLATE NOCASE", (json.dumps(citing),)))


def _venues(db: Database, citing: Sequence[str]) -> list[Tally]:
    """The venues of `citing` (venue_of) in any case, each labelled as most of its papers write it."""
    labels: dict[str, Counter[str]] = {}
    for venue, journal_ref in db.conn.execute(
            "SELECT w.venue, a.journal_ref FROM json_each(?) j LEFT JOIN openalex_works w ON w.paper_id = j.value"
            " LEFT JOIN arxiv_records a ON a.paper_id = j.value", (json.dumps(citing),)):
        if v := venue_of(venue, journal_ref):
            labels.setdefault(v.casefold(), Counter())[v] += 1
    return _sorted(Tally(_most(forms), key, sum(forms.values())) for key, forms in labels.items())


def _people(bylines: Sequence[Sequence[AuthorRow]]) -> list[Tally]:
    """The authors of the citing papers (each paper's rows) as people (group_people), each with
    the papers naming them."""
    papers: dict[AuthorRow, set[int]] = {}  # each distinct (name, OpenAlex id, ORCID): its papers
    for n, authors in enumerate(bylines):
        for a in authors:
            papers.setdefault(a, set()).add(n)
    rows = list(papers)
    out = []
    for group in group_people([Author(*a) for a in rows]):
        theirs = set().union(*(papers[rows[i]] for i in group))
        names: Counter[str] = Counter()
        for i in group:
            names[rows[i][0]] += len(papers[rows[i]])
        name = _most(names)
        ids = sorted({rows[i][1] or "" for i in group} - {""})
        orcids = sorted({rows[i][2] or "" for i in group} - {""})
        key = ids[0] if ids else orcids[0] if orcids else f"name:{name}"
        out.append(Tally(name, key, len(theirs)))
    return _sorted(out)
