"""The lookups a user waits on read indexes, not whole tables (docs/database.md, "Why each
index"): every statement `/paper`, `/citers` (both orders), `/refs`, a paper's feed and `/rising` run is
captured as SQLite runs it and its plan asked for; none scans a table or builds an automatic index.
The listing order of citers comes from `citations.event_id`: no plan reads `events` for it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from mapwatch.store.database.migrations._paper_keys import OUTSIDE_FIRST
from mapwatch.store.database.rows import one_column
from mapwatch.store.questions import feed_queries, graph, queries
from mapwatch.store.questions.paper_rows import newest_citations_sql
from tests.conftest import FakeClock

# Plans name a table by its alias: every full scan is refused but of what is small by
# construction (a list of values, a subquery's rows, `merged`: the first rows of two sorted
# parts, store/questions/paper_rows.py); an automatic index is built by reading the whole
# table, so it is refused too.
# merged, parts: the newest citers' two parts, at most :n rows each (paper_rows.newest_citations_sql)
SMALL_SCANS = ("SCAN CONSTANT ROW", "SCAN (subquery", "SCAN json_each", "SCAN v", "SCAN merged", "SCAN parts")
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


def test_citers_without_a_month_are_read_from_their_own_index(seeded) -> None:
    """The newest citers' second part (old-style ids, citers beyond arXiv: dated by their rows)
    reads the partial index of those citers alone (migration 0046), for one paper (`/citers`
    newest) and for many (a person's card): SQLite takes a partial index only when the query
    states its WHERE, so a change to either text would silently read every citer again."""
    many = one_column(seeded, "SELECT DISTINCT cited_id FROM citations ORDER BY cited_id LIMIT 20")
    named = {f"i{k}": pid for k, pid in enumerate(many)}
    sql = newest_citations_sql(f"c.cited_id IN ({','.join(':' + k for k in named)})", "merged.citing_id")
    for found in (plans(seeded, lambda: ASKS["citers newest"](seeded)),
                  {sql: [row[3] for row in seeded.conn.execute(f"EXPLAIN QUERY PLAN {sql}",
                                                               {**named, "n": 10, "lim": 10, "off": 0})]}):
        newest = [lines for text, lines in found.items() if f"c.citing_key >= {OUTSIDE_FIRST}" in text]
        assert newest, "the newest citers' statement was captured"
        for lines in newest:
            reads = [line for line in lines if line.startswith("SEARCH e ")]
            assert reads == ["SEARCH e USING COVERING INDEX citations_cited_seen (cited_key=?)",
                             "SEARCH e USING COVERING INDEX citations_cited_seen_old (cited_key=?)"]
