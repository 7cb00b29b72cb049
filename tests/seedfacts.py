"""The facts the bundled seed pages state, as the store must hold them after reading them
(from their text, from their HTML, from a folder or over HTTP: docs/pages.md, "Page formats")."""

from __future__ import annotations

import re

HOST = "https://mlsanity.com"


def assert_seed_facts(db, host: str = HOST) -> None:
    """Every seed fact the suite asserts, on a database that has read both seed pages once.
    `host`: where the pages' own links point (the map's host, or a test site's)."""
    assert db["papers"].count == 99
    assert db["citations"].count == 111

    p = db["papers"].get("2412.10400")
    assert {k: p[k] for k in ("cited_by", "refs_in_map", "refs_total", "first_posted",
                              "data_through", "has_page", "year")} == {
        "cited_by": 71, "refs_in_map": 78, "refs_total": 110, "first_posted": "2024-12-05",
        "data_through": "2026-10-14", "has_page": 1, "year": 2024}
    assert p["title"] == "Reinforcement Learning Enhanced LLMs: A Survey"
    assert p["url"] == f"{host}/paper/2412.10400/"
    slugs = [r[0] for r in db.conn.execute(
        "SELECT direction_slug FROM placements WHERE paper_id = '2412.10400' ORDER BY position")]
    assert slugs == ["lr/reinforcement-learning-for-reasoning", "alignment/reward-modeling-and-rlhf"]

    def count(sql: str, *args: str) -> int:
        return db.conn.execute(sql, args).fetchone()[0]

    # 30 listed citers + 30 listed references for 2412.10400 (one citer, 2507.04136, is also a page).
    assert count("SELECT count(*) FROM citations WHERE cited_id = ?", "2412.10400") == 30
    assert count("SELECT count(*) FROM citations WHERE citing_id = ?", "2412.10400") == 30
    assert count("SELECT count(*) FROM citations WHERE cited_id = ?", "2507.04136") == 21
    # 30 listed references, plus 2412.10400, which lists it as a citer (both sides are evidence).
    assert count("SELECT count(*) FROM citations WHERE citing_id = ?", "2507.04136") == 31
    q = db["papers"].get("2507.04136")
    assert (q["cited_by"], q["refs_in_map"], q["refs_total"], q["first_posted"]) == (21, 79, 106, "2025-07-05")
    # The edge both pages state is stored once.
    assert count("SELECT count(*) FROM citations WHERE citing_id = '2507.04136' AND cited_id = '2412.10400'") == 1

    stub = db["papers"].get("1706.03762")
    assert (stub["title"], stub["year"], stub["has_page"]) == ("Attention Is All You Need", 2017, 0)
    d = db["directions"].get("alignment/reward-modeling-and-rlhf")
    assert (d["name"], d["area"], d["breadcrumb"]) == (
        "Reward modeling and RLHF", "LLM alignment",
        "LLM alignment / RLHF / preference optimisation / Reward modeling and RLHF")
    assert db["directions"].get("lr/reinforcement-learning-for-reasoning")["direction_count"] == 17
    # Every edge got an event with a growing id; no count events on a first import.
    assert count("SELECT count(*) FROM events WHERE kind = 'citation'") == 111
    assert count("SELECT count(*) FROM events WHERE kind = 'count'") == 0
    assert db["snapshots"].count == 2

    def fts(term: str) -> list[str]:
        return [r[0] for r in db.conn.execute(
            "SELECT p.id FROM papers_fts JOIN papers p ON p.rowid = papers_fts.rowid"
            " WHERE papers_fts MATCH ? ORDER BY p.id", [term])]

    assert fts("roadmap") == ["2507.04136"]  # only in its abstract
    assert fts("attention") == ["1706.03762"]


def own_date(paper_id: str, first_posted: str | None, year: int | None) -> str:
    """A paper's own date as mapwatch orders papers newest first where they are otherwise alike
    (store/questions/paper_rows.py NEWEST_PAPERS_FIRST), worked out apart from its SQL: the month
    of a new-style arXiv id, else the day first posted, else the year."""
    if re.fullmatch(r"\d{4}\.\d{4,5}", paper_id):
        return f"20{paper_id[:2]}-{paper_id[2:4]}"
    return first_posted or ("" if year is None else str(year))
