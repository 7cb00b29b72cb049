"""/related: the papers most like a paper, by co-citation (cited together with it by the
same papers) and bibliographic coupling (citing the same papers).

The work is bounded so that an answer takes tens of milliseconds on a map of a million
papers, even for a paper cited tens of thousands of times (docs/graph.md, "Graph questions"):

- co-citation reads the references of at most MAX_CITERS (200) of its citers (the newest,
  by key: a new-style arXiv id's is in its order), at most CO_CITATION_ROWS (3,000) of them in all;
- coupling reads at most COUPLING_ROWS (3,000) citers of its references in all, shared out
  evenly (at most MAX_CITERS_PER_REF each), rarer references first, because a reference
  cited by few papers says more about likeness than one cited by thousands.

When a bound leaves something out, the answer says so (`complete` is False). Nothing is
stored ahead of time, so an answer is never staler than the database it is read from.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from itertools import chain
from operator import itemgetter

from sqlite_utils import Database

from mapwatch.store.database.paper_keys import ids_of, stored_keys
from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.questions.graph import paper_refs, resolve_paper
from mapwatch.store.questions.types import PaperRef

MAX_CITERS = 200           # citers of the asked paper whose references are read
MAX_REFERENCES = 250       # references of the asked paper considered (pages list up to 250)
MAX_CITERS_PER_REF = 2000  # citers of one reference read for coupling
CO_CITATION_ROWS = 3_000   # references of those citers read in all
COUPLING_ROWS = 3_000      # citers of its references read in all for coupling
SHARED_NAMED = 25          # shared papers named per related result


@dataclass(frozen=True)
class RelatedPaper:
    paper: PaperRef
    score: int                               # co_citations + coupling
    co_citations: int                        # papers that cite both
    coupling: int                            # references both cite
    cited_together_by: tuple[PaperRef, ...]  # the papers citing both (first SHARED_NAMED)
    shared_references: tuple[PaperRef, ...]  # the references both cite (first SHARED_NAMED)
    link: str | None                         # "cites it", "cited by it", or None (no direct citation)


@dataclass(frozen=True)
class Related:
    paper: PaperRef
    results: tuple[RelatedPaper, ...]
    exclude_direct: bool
    complete: bool  # False when a cap left some citers or references out of the count


def _rarest_first(db: Database, refs: list[str]) -> list[str]:
    """The references, fewest stated citers first (no page, so no stated count: first)."""
    counts: dict[str, int] = {pid: n for pid, n in rows_in_chunks(
        db, "SELECT id, coalesce(cited_by, 0) FROM papers WHERE id IN ({})", refs)}
    return sorted(refs, key=lambda r: (counts.get(r, 0), r))


def related(db: Database, paper_id: str, exclude_direct: bool = False, limit: int = 10) -> Related:
    """The papers most like `paper_id`, best first (see the module's docstring)."""
    paper = resolve_paper(db, paper_id)
    pid = paper.id
    conn = db.conn
    # Read on the citations' keys (paper_keys), the ids looked up once for the rows kept: the
    # samples below are in key order (a new-style arXiv id's is its id's order; the others after).
    key = stored_keys(conn, [pid]).get(pid)
    citer_keys = [r for (r,) in conn.execute(
        "SELECT citing_key FROM citation_edges WHERE cited_key = ? ORDER BY citing_key DESC LIMIT ?",
        (key, MAX_CITERS + 1))]
    ref_keys = [r for (r,) in conn.execute(
        "SELECT cited_key FROM citation_edges WHERE citing_key = ? ORDER BY cited_key LIMIT ?",
        (key, MAX_REFERENCES + 1))]
    complete = len(citer_keys) <= MAX_CITERS and len(ref_keys) <= MAX_REFERENCES
    citer_keys, ref_keys = citer_keys[:MAX_CITERS], ref_keys[:MAX_REFERENCES]

    # (citer of the paper, another paper it cites): one chunk of citers (MAX_CITERS); with more,
    # each chunk's first rows in order, all cut to the bound below
    co_keys: list[tuple[int, int]] = [(citing, cited) for citing, cited in rows_in_chunks(
        conn, "SELECT citing_key, cited_key FROM citation_edges WHERE citing_key IN ({}) AND cited_key != ?"
        " ORDER BY citing_key, cited_key LIMIT ?", sorted(citer_keys), after=(key, CO_CITATION_ROWS + 1))]
    if len(co_keys) > CO_CITATION_ROWS:
        complete = False
        del co_keys[CO_CITATION_ROWS:]
    cp_keys: list[tuple[int, int]] = []  # (another paper citing a reference, that reference)
    budget = COUPLING_ROWS
    ref_ids = ids_of(conn, ref_keys)
    ranked_refs = _rarest_first(db, list(ref_ids.values()))
    ref_key = {i: k for k, i in ref_ids.items()}
    for k, ref in enumerate(ranked_refs):
        share = min(MAX_CITERS_PER_REF, budget // (len(ranked_refs) - k))
        rows = [(citing, cited) for citing, cited in conn.execute(
            "SELECT citing_key, cited_key FROM citation_edges WHERE cited_key = ? AND citing_key != ?"
            " ORDER BY citing_key LIMIT ?", (ref_key[ref], key, share + 1))]
        if len(rows) > share:
            complete = False
            del rows[share:]
        budget -= len(rows)
        cp_keys += rows
    ids = {**ref_ids, **ids_of(conn, chain(citer_keys, *co_keys, *cp_keys))}
    citers, refs = [ids[k] for k in citer_keys], [ids[k] for k in ref_keys]
    co_rows = [(ids[citing], ids[cited]) for citing, cited in co_keys]
    cp_rows = [(ids[citing], ids[cited]) for citing, cited in cp_keys]

    together = Counter(map(itemgetter(1), co_rows))  # candidate -> papers citing both
    shared = Counter(map(itemgetter(0), cp_rows))  # candidate -> references both cite
    scores = Counter(chain(map(itemgetter(1), co_rows), map(itemgetter(0), cp_rows)))
    if exclude_direct:
        for c in (*refs, *citers):
            scores.pop(c, None)
    # Sort (in C) by score alone, then order only the papers tied with the last one kept.
    by_score = scores.most_common()
    cut = by_score[min(limit, len(by_score)) - 1][1] if by_score else 0
    ranked = sorted((c for c, n in by_score if n >= cut), key=lambda c: (-scores[c], -together[c], c))[:limit]
    keep = set(ranked)
    both: dict[str, list[str]] = {c: [] for c in ranked}
    refs_both: dict[str, list[str]] = {c: [] for c in ranked}
    for citing, cited in sorted((citing, cited) for citing, cited in co_rows if cited in keep):
        both[cited].append(citing)
    for citing, ref in sorted((citing, ref) for citing, ref in cp_rows if citing in keep):
        refs_both[citing].append(ref)
    named = [*ranked]
    for c in ranked:
        named += both[c][:SHARED_NAMED] + refs_both[c][:SHARED_NAMED]
    names = paper_refs(db, named)
    cites, cited_by = set(refs), set(citers)
    results = tuple(
        RelatedPaper(
            paper=names[c],
            score=scores[c],
            co_citations=together[c],
            coupling=shared[c],
            cited_together_by=tuple(names[x] for x in both[c][:SHARED_NAMED]),
            shared_references=tuple(names[x] for x in refs_both[c][:SHARED_NAMED]),
            link="cites it" if c in cited_by else "cited by it" if c in cites else None,
        )
        for c in ranked)
    return Related(paper=paper, results=results, exclude_direct=exclude_direct, complete=complete)
