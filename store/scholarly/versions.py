"""One citer per work: a citer beyond arXiv that turns out to be an arXiv paper (docs/enrichment.md,
"Citers beyond arXiv").

A work OpenAlex names without an arXiv id is stored under its DOI's key, else its OpenAlex work
id's (store/ids.py). The same work can later show its arXiv version: OpenAlex merges the two and
names the work with an arXiv location, or arXiv (or OpenAlex) gives an arXiv paper that DOI.
Then the work is one citer, not two:

- before a source's citers are stored, each is looked up under the key it is stored under
  (`canonical`): an alias, an arXiv paper with its DOI, an arXiv paper with its OpenAlex work;
- when an arXiv paper is described (`merge_versions_of`, in the same transaction), a citer
  beyond arXiv with its DOI or work moves to its arXiv id (`merge`): its citations keep their
  first-seen time, and of the two events of a citation the first is kept, so nobody is alerted
  again; the old key is kept in `paper_aliases` (`/paper <DOI>` still finds it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from sqlite_utils import Database

from mapwatch.store.clock import iso
from mapwatch.store.database.paper_keys import keys_of
from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.ids import arxiv_only, arxiv_url, is_outside_key
from mapwatch.store.records import FoundCiter

_ARXIV_PAPER = arxiv_only("paper_id")


def canonical(db: Database, citers: Sequence[FoundCiter], now: datetime) -> list[FoundCiter]:
    """`citers` under the keys they are stored under. A citer beyond arXiv that is a known
    arXiv paper (an alias of one, its DOI or its OpenAlex work) takes its arXiv id; an arXiv
    citer whose OpenAlex work is stored as a citer beyond arXiv takes that citer's rows first
    (`merge`). Call inside the transaction that stores them."""
    outside = [c for c in citers if is_outside_key(c.citing_id)]
    works = {c.work.work_id: c.citing_id for c in citers if c.work is not None and not is_outside_key(c.citing_id)}
    if not outside and not works:
        return list(citers)
    keys = [c.citing_id for c in outside]
    found: dict[str, str] = {}  # outside key -> arXiv id
    for row in rows_in_chunks(db, "SELECT alias, paper_id FROM paper_aliases WHERE alias IN ({})", keys):
        found[row["alias"]] = row["paper_id"]
    for row in rows_in_chunks(db, f"SELECT doi, paper_id FROM arxiv_records WHERE doi IN ({{}}) AND {_ARXIV_PAPER}",
                              keys):
        found.setdefault(row["doi"], row["paper_id"])
    for row in rows_in_chunks(db, "SELECT doi, paper_id FROM openalex_works WHERE doi IN ({})"
                              f" AND doi NOT LIKE '10.48550/%' AND {_ARXIV_PAPER}", keys):
        found.setdefault(row["doi"], row["paper_id"])
    by_work = {c.work.work_id: c.citing_id for c in outside if c.work is not None}
    for row in rows_in_chunks(db, f"SELECT work_id, paper_id FROM openalex_works WHERE work_id IN ({{}})"
                              f" AND {_ARXIV_PAPER}", list(by_work)):
        found.setdefault(by_work[row["work_id"]], row["paper_id"])
    # An arXiv citer whose work is stored under an outside key: that key's rows move to it first.
    stored = [(row["paper_id"], works[row["work_id"]]) for row in rows_in_chunks(
        db, "SELECT work_id, paper_id FROM openalex_works WHERE work_id IN ({})", list(works))
        if is_outside_key(row["paper_id"])]
    for alias, pid in stored:
        merge(db, alias, pid, "openalex-work", now)
    return [replace(c, citing_id=found[c.citing_id]) if c.citing_id in found else c for c in citers]


def merge_versions_of(db: Database, paper_ids: Sequence[str], now: datetime) -> int:
    """Merge into each of `paper_ids` (arXiv papers just described) the citer beyond arXiv that
    is the same work: by the DOI arXiv or OpenAlex gives it, or by its OpenAlex work. Returns
    how many were merged. Call inside the transaction that stored the description."""
    ids = [p for p in dict.fromkeys(paper_ids) if not is_outside_key(p)]
    if not ids:
        return 0
    pairs: dict[str, tuple[str, str]] = {}  # outside key -> (arXiv id, how)
    for how, sql in (
            ("arxiv-doi", "SELECT a.paper_id AS pid, o.id AS alias FROM arxiv_records a JOIN papers o ON o.id = a.doi"
                          " WHERE a.paper_id IN ({}) AND a.doi IS NOT NULL"),
            ("openalex-doi", "SELECT w.paper_id AS pid, o.id AS alias FROM openalex_works w"
                             " JOIN papers o ON o.id = w.doi WHERE w.paper_id IN ({}) AND w.doi IS NOT NULL"),
            ("openalex-work", "SELECT w.paper_id AS pid, v.paper_id AS alias FROM openalex_works w"
                              " JOIN openalex_works v ON v.work_id = w.work_id AND v.paper_id != w.paper_id"
                              " WHERE w.paper_id IN ({})")):
        for row in rows_in_chunks(db, sql, ids):
            if is_outside_key(row["alias"]):
                pairs.setdefault(row["alias"], (row["pid"], how))
    for alias, (pid, how) in sorted(pairs.items()):
        merge(db, alias, pid, how, now)
    return len(pairs)


def merge(db: Database, alias: str, paper_id: str, how: str, now: datetime) -> None:
    """Move every row of the citer beyond arXiv `alias` to the arXiv paper `paper_id`: one
    citer. A citation both hold keeps the earlier first-seen time and the map's provenance if
    either has it; of their events the first is kept (re-keyed), the later deleted, so an alert
    or feed entry already given is not given again. The old key is kept as an alias."""
    conn = db.conn
    if not is_outside_key(alias) or is_outside_key(paper_id):
        raise ValueError(f"not a citer beyond arXiv and an arXiv id: {alias!r}, {paper_id!r}")
    # The arXiv paper not stored yet: the row is copied to its stub (its map page is queued).
    conn.execute("INSERT OR IGNORE INTO papers (id, title, year, arxiv_url, has_page, first_seen, updated)"
                 " SELECT ?, title, year, ?, 0, first_seen, ? FROM papers WHERE id = ?",
                 [paper_id, arxiv_url(paper_id), iso(now), alias])
    keys = {"alias": alias, "pid": paper_id}
    key = keys_of(conn, [alias, paper_id])  # how citation_edges and event_log name them (paper_keys)
    by_key = {"alias": key[alias], "pid": key[paper_id]}
    # Events (found by the citations that hold their ids): of the two citation events of a cited
    # paper, the first stays; the alias's others are re-keyed.
    both = conn.execute("SELECT a.event_id, p.event_id FROM citations a JOIN citations p ON p.cited_id = a.cited_id"
                        " WHERE a.citing_id = :alias AND p.citing_id = :pid", keys).fetchall()
    later = [(max(a, b),) for a, b in both if a is not None and b is not None]
    conn.executemany("DELETE FROM event_log WHERE id = ?", later)
    conn.execute("UPDATE event_log SET citing_key = :pid WHERE id IN"
                 " (SELECT event_id FROM citation_edges WHERE citing_key = :alias)", by_key)
    # Citations: one per cited paper, the earlier first seen and event, the map's provenance kept.
    conn.execute(
        "UPDATE citation_edges SET first_seen_unix = min(citation_edges.first_seen_unix, d.first_seen_unix),"
        " event_id = min(coalesce(citation_edges.event_id, d.event_id), coalesce(d.event_id, citation_edges.event_id))"
        " FROM citation_edges d WHERE d.citing_key = :alias AND d.cited_key = citation_edges.cited_key"
        " AND citation_edges.citing_key = :pid", by_key)
    conn.execute("DELETE FROM citation_edges WHERE citing_key = :alias AND cited_key IN"
                 " (SELECT cited_key FROM citation_edges WHERE citing_key = :pid)", by_key)
    conn.execute("UPDATE citation_edges SET citing_key = :pid WHERE citing_key = :alias", by_key)
    conn.execute(
        "UPDATE feed_direction_citers SET first_seen = min(first_seen, (SELECT d.first_seen FROM feed_direction_citers"
        " d WHERE d.citing_id = :alias AND d.direction_slug = feed_direction_citers.direction_slug)),"
        " first_event_id = min(first_event_id, (SELECT d.first_event_id FROM feed_direction_citers d"
        " WHERE d.citing_id = :alias AND d.direction_slug = feed_direction_citers.direction_slug))"
        " WHERE citing_id = :pid AND direction_slug IN"
        " (SELECT direction_slug FROM feed_direction_citers WHERE citing_id = :alias)",
        {"alias": alias, "pid": paper_id})
    for table, column in (("feed_direction_citers", "citing_id"), ("source_citations", "citing_id"),
                          ("citation_contexts", "citing_id"), ("forum_posts", "citer_id"),
                          ("tracks", "paper_id")):
        conn.execute(f"UPDATE OR IGNORE {table} SET {column} = ? WHERE {column} = ?", [paper_id, alias])
        conn.execute(f"DELETE FROM {table} WHERE {column} = ?", [alias])
    # What OpenAlex said of the work: the arXiv paper's own description wins where it has one.
    for table in ("openalex_works", "paper_people", "paper_author_institutions"):
        if conn.execute(f"SELECT 1 FROM {table} WHERE paper_id = ? LIMIT 1", [paper_id]).fetchone() is None:
            conn.execute(f"UPDATE {table} SET paper_id = ? WHERE paper_id = ?", [paper_id, alias])
        conn.execute(f"DELETE FROM {table} WHERE paper_id = ?", [alias])
    conn.execute("DELETE FROM enrichment_fetches WHERE paper_id = ?", [alias])
    conn.execute("UPDATE paper_aliases SET paper_id = ? WHERE paper_id = ?", [paper_id, alias])
    conn.execute("INSERT OR REPLACE INTO paper_aliases (alias, paper_id, merged_at, how) VALUES (?, ?, ?, ?)",
                 [alias, paper_id, iso(now), how])
    conn.execute("DELETE FROM papers WHERE id = ?", [alias])  # last: nothing refers to it any more
    conn.execute("INSERT INTO enrichment_changes (paper_id, changed_at) VALUES (?, ?)", [paper_id, iso(now)])
