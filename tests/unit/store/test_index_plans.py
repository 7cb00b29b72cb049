"""The lookups a user waits on read indexes, not whole tables (docs/database.md, "Why each
index"): every statement `/paper`, `/citers` (both orders), `/refs` and a paper's feed run is
captured as SQLite runs it and its plan asked for; none scans `papers`, `citations` or `events`.
The listing order of citers comes from `citations.event_id`: no plan reads `events` for it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mapwatch.store.questions import feed_queries, queries

BIG = ("papers", "citations", "events", "snapshots", "placements", "paper_authors")
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
}


@pytest.mark.parametrize("name", ASKS)
def test_no_lookup_scans_a_large_table(seeded, name: str) -> None:
    found = plans(seeded, lambda: ASKS[name](seeded))
    assert found, "the statements were captured"
    scans = [(sql, line) for sql, lines in found.items() for line in lines
             if any(line == f"SCAN {t}" or line.startswith(f"SCAN {t} ") for t in BIG)]
    assert scans == []


@pytest.mark.parametrize("name", ["citers cited", "refs"])
def test_the_listing_order_reads_no_event(seeded, name: str) -> None:
    found = plans(seeded, lambda: ASKS[name](seeded))
    assert not [sql for sql in found if " events " in f" {sql} "]
