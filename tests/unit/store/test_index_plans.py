"""The lookups a user waits on read indexes, not whole tables (docs/database.md, "Why each
index"): every statement `/paper`, `/citers` (both orders), `/refs`, a paper's feed and `/rising` run is
captured as SQLite runs it and its plan asked for; none scans a table or builds an automatic index.
The listing order of citers comes from `citations.event_id`: no plan reads `events` for it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mapwatch.store.questions import feed_queries, graph, queries
from tests.conftest import FakeClock

# Plans name a table by its alias: every full scan is refused but of what is small by
# construction (a list of values, a subquery's rows, `merged`: the first rows of two sorted
# parts, store/questions/paper_rows.py); an automatic index is built by reading the whole
# table, so it is refused too.
SMALL_SCANS = ("SCAN CONSTANT ROW", "SCAN (subquery", "SCAN json_each", "SCAN v", "SCAN merged")
PAPER = "2412.10400"


def plans(db, ask: Callable[[], object]) -> dict[str, list[str]]:
    """Each statement `ask` runs, with the lines of its query plan."""
    ran: list[str] = []
    db.conn.set_trace_callback(ran.append)
    try:
        ask()
    finally:
        db.conn.set_trace_callback(None)
    out = {}
    for sql in dict.fromkeys(s for s in ran if s.lstrip().upper().startswith("SELECT")):
        out[sql] = [row[3] for row in db.conn.execute(f"EXPLAIN QUERY PLAN {sql}")]
    return out


ASKS: dict[str, Callable] = {
    "paper": lambda db: queries.paper_view(db, PAPER),
    "citers cited": lambda db: queries.citers(db, PAPER, sort="cited", limit=10),
    "citers newest": lambda db: queries.citers(db, PAPER, sort="newest", limit=10),
    "refs": lambda db: queries.refs(db, PAPER, limit=10),
    "paper feed": lambda db: feed_queries.paper_citers(db, PAPER),
    "rising": lambda db: graph.rising(db, FakeClock()(), days=30),
    "rising in a direction": lambda db: graph.rising(db, FakeClock()(), days=30,
                                                     direction="lr/reinforcement-learning-for-reasoning"),
}


@pytest.mark.parametrize("name", ASKS)
def test_no_lookup_scans_a_large_table(seeded, name: str) -> None:
    found = plans(seeded, lambda: ASKS[name](seeded))
    assert found, "the statements were captured"
    scans = [(sql, line) for sql, lines in found.items() for line in lines
             if (line.startswith("SCAN ") and not line.startswith(SMALL_SCANS)) or "AUTOMATIC" in line]
    assert scans == []


@pytest.mark.parametrize("name", ["citers cited", "refs"])
def test_the_listing_order_reads_no_event(seeded, name: str) -> None:
    found = plans(seeded, lambda: ASKS[name](seeded))
    assert not [sql for sql in found if " events " in f" {sql} "]
