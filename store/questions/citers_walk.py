"""A paper's most cited citers, found by walking papers from the most cited down.

store/questions/queries.py's `citers(sort="cited")` uses this for papers with many citers, where
sorting every citer by its count would read them all (tests/unit/store/test_citers_walk.py checks
page for page that both give the same answer)."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.paper_keys import stored_keys
from mapwatch.store.questions.paper_rows import seen_text

WALK_MAX_ROWS = 20_000  # papers looked at before falling back to sorting every citer


def most_cited_citers_by_walk(db: Database, paper_id: str, offset: int,
                              limit: int) -> list[tuple[str, str]] | None:
    """The (citing_id, first_seen) of `citers(sort="cited")`'s page, found by walking papers
    from the most cited down (index papers_cited_by) and keeping those that cite
    `paper_id`: for a paper with thousands of citers the top ten are reached after a few
    hundred papers, where sorting every citer reads them all. Same order as the sort: the
    stated count, then the map's listing order (first event), then id. None when the walk
    would be long (few of the most cited papers cite it, or the page reaches its citers
    without a stated count): the caller sorts instead."""
    need = offset + limit
    cited = stored_keys(db.conn, [paper_id]).get(paper_id)
    if cited is None:
        return None  # no citation names it
    # Each paper's citation of it on the primary key, by their keys (paper_keys): the plan is
    # stated (CROSS JOIN), for SQLite would otherwise walk the paper's citers for each paper.
    edge = "paper_keys k CROSS JOIN citation_edges c ON c.citing_key = k.key AND c.cited_key = ?"
    cur = db.conn.execute(
        "SELECT p.id, p.cited_by FROM papers p INDEXED BY papers_cited_by WHERE p.cited_by IS NOT NULL"
        f" AND EXISTS (SELECT 1 FROM {edge} WHERE k.id = p.id) ORDER BY p.cited_by DESC", (cited,))
    picked: list[tuple[str, int]] = []
    for looked, (pid, count) in enumerate(cur, 1):
        if len(picked) >= need and count < picked[-1][1]:
            break  # past the page and past any tie with its last paper
        if looked > WALK_MAX_ROWS:
            return None
        picked.append((pid, count))
    else:
        if len(picked) < need:
            return None  # the page reaches citers without a stated count
    marks = ",".join("?" * len(picked))
    first = dict(db.conn.execute(
        f"SELECT k.id, c.event_id FROM {edge} WHERE k.id IN ({marks}) AND c.event_id IS NOT NULL",
        (cited, *(p for p, _ in picked))).fetchall())
    picked.sort(key=lambda pick: (-pick[1], first.get(pick[0], 1e18), pick[0]))  # pick: (id, cited_by)
    page = [p for p, _ in picked[offset:need]]
    seen = dict(db.conn.execute(
        f"SELECT k.id, {seen_text('c.first_seen_unix')} FROM {edge} WHERE k.id IN ({','.join('?' * len(page))})",
        (cited, *page)).fetchall()) if page else {}
    return [(p, seen[p]) for p in page]
