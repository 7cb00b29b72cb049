"""How much an open source may add, in a round and in a day, at the scale of the map
(docs/enrichment.md, "How much a source may add").

What a source says is checked answer by answer (store/scholarly/discovered.py), but nothing in
an answer bounds how much a source says overall: OpenAlex's new works of a day, each citing every
map paper, made 4,157,999 citations and events and 42,000 stub papers in one round on a 99-paper
map. So a source asked for citers gets a `Budget` each round: what it may still add, as
citations (each pair it names a first time, kept in `source_citations`, and each that enters
`citations` with its event) and stub papers (`has_page` 0), within both

- the round's bound: max(5,000, 2 per map page) citations, max(2,000, 1 per 10 map pages) stubs;
- the day's (UTC): max(10,000, 4 per map page) citations, max(4,000, 1 per 5 map pages) stubs,
  what it added today kept in `source_additions`, so a restart does not reset it.

A map page is a paper whose page was read (`papers.has_page` 1): the map's own word, which no
source can add to (a stub a source adds has no page until the map serves one). When a bound is
reached the source stops adding, and what it added stays; `Budget.reached` holds one line for
the round's report. One answer (a page of works) may name at most MAX_CITATIONS_PER_ANSWER
citations of map papers, all cited papers together; the rest of it is left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Literal

from sqlite_utils import Database

from mapwatch.store.database.rows import named_row, scalar

MAX_CITATIONS_PER_ANSWER = 20_000  # (work, map paper) pairs one answer may name: 200 works x 100 each
MAX_LINES = 3  # bounds reached, kept per source and round (the first of each kind)
Period = Literal["round", "day"]
Kind = Literal["citations", "stubs"]
_NAMES: dict[Kind, str] = {"citations": "new citations", "stubs": "new stub papers"}


@dataclass(frozen=True)
class Rule:
    """A bound: at least `floor`, else `per_page` for each map page."""

    floor: int
    per_page: float

    def of(self, pages: int) -> int:
        return max(self.floor, int(self.per_page * pages))

    def shown(self) -> str:
        per = f"{self.per_page:g} per map page" if self.per_page >= 1 else f"1 per {round(1 / self.per_page)} map pages"
        return f"the larger of {self.floor:,} and {per}"


@dataclass(frozen=True)
class Rules:
    """The four bounds of a source (EnrichSettings.bounds; the defaults are the documented ones)."""

    round_citations: Rule = Rule(5_000, 2)
    round_stubs: Rule = Rule(2_000, 0.1)
    day_citations: Rule = Rule(10_000, 4)
    day_stubs: Rule = Rule(4_000, 0.2)

    def rule(self, period: Period, kind: Kind) -> Rule:
        rule: Rule = getattr(self, f"{period}_{kind}")
        return rule


def map_pages(db: Database) -> int:
    """The papers whose map page was read: what the bounds scale with."""
    return int(scalar(db, "SELECT count(*) FROM papers") or 0) - int(
        scalar(db, "SELECT count(*) FROM papers WHERE has_page = 0") or 0)


@dataclass
class Budget:
    """What one source added this round, against its bounds; `reached`: one line per bound
    reached (the round's report shows them). Used in the round's database thread only."""

    source: str
    pages: int
    rules: Rules = field(default_factory=Rules)
    citations: int = 0  # added this round
    stubs: int = 0
    reached: list[str] = field(default_factory=list)
    spent: bool = False  # a round's or day's bound reached: nothing more is added this round
    added_today: tuple[int, int] = field(default=(0, 0), init=False, repr=False)  # added today, at the last `room`

    def bound(self, period: Period, kind: Kind) -> int:
        return self.rules.rule(period, kind).of(self.pages)

    def room(self, db: Database, today: date) -> tuple[int, int]:
        """The citations and stubs the source may still add now."""
        row = named_row(db, "SELECT citations, stubs FROM source_additions WHERE source = ? AND day = ?",
                        [self.source, today.isoformat()])
        self.added_today = (row["citations"], row["stubs"]) if row else (0, 0)
        day_citations, day_stubs = self.added_today
        return (max(0, min(self.bound("round", "citations") - self.citations,
                           self.bound("day", "citations") - day_citations)),
                max(0, min(self.bound("round", "stubs") - self.stubs, self.bound("day", "stubs") - day_stubs)))

    def spend(self, db: Database, today: date, citations: int, stubs: int) -> None:
        """Count what was added (in the caller's transaction, with the rows themselves)."""
        if not citations and not stubs:
            return
        self.citations += citations
        self.stubs += stubs
        db.conn.execute("INSERT INTO source_additions (source, day, citations, stubs) VALUES (?, ?, ?, ?)"
                        " ON CONFLICT (source, day) DO UPDATE SET citations = citations + excluded.citations,"
                        " stubs = stubs + excluded.stubs", [self.source, today.isoformat(), citations, stubs])

    def cut(self, db: Database, today: date, kind: Kind) -> None:
        """`kind` was cut short by a bound (the tighter one at the last `room`; called before
        `spend`): the source adds nothing more this round, and the bound is named once."""
        self.spent = True
        used = self.citations if kind == "citations" else self.stubs
        today_used = self.added_today[0 if kind == "citations" else 1]
        period: Period = ("round" if self.bound("round", kind) - used < self.bound("day", kind) - today_used
                          else "day")  # the day's when both are reached
        rule = self.rules.rule(period, kind)
        when = "this round (the rest waits for the next)" if period == "round" else "until tomorrow (UTC)"
        line = (f"{self.source} reached its bound of {self.bound(period, kind):,} {_NAMES[kind]} a {period} "
                f"({rule.shown()}, {self.pages:,} pages): it adds no more {when}")
        self.note(line)
        db.conn.execute("INSERT INTO source_additions (source, day, citations, stubs, reached) VALUES (?, ?, 0, 0, ?)"
                        " ON CONFLICT (source, day) DO UPDATE SET reached = coalesce(reached, excluded.reached)",
                        [self.source, today.isoformat(), line])

    def note(self, line: str) -> None:
        if line not in self.reached and len(self.reached) < MAX_LINES:
            self.reached.append(line)


def for_round(db: Database, source: str, rules: Rules, today: date) -> Budget:
    """A source's budget for a round beginning `today`: already spent when the day's bound was
    reached in an earlier round (then the source is not asked for citers this round)."""
    budget = Budget(source, map_pages(db), rules)
    citations, stubs = budget.room(db, today)
    rooms: tuple[tuple[Kind, int], ...] = (("citations", citations), ("stubs", stubs))
    with db.atomic():
        for kind, room in rooms:
            if not room:
                budget.cut(db, today, kind)
    return budget
