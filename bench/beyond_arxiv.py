"""What citers beyond arXiv cost (docs/enrichment.md, "Citers beyond arXiv"): rows and bytes a
citer, measured with SQLite's dbstat, and the requests a day they take, for a map of any size.

    python -m bench.beyond_arxiv [--citers 10000] [--authors 5] [--seed 1] [--json F]

The database holds the bundled seeds (their 2 pages and ~100 papers they name, each matched to an
OpenAlex work). Then
`--citers` works without an arXiv id are stored as OpenAlex's newest citers' answers store them
(store/scholarly/new_works.py `save_new_works`: stubs keyed by DOI, their OpenAlex work, venue and
authors, a citation from `openalex`, its event, what the source said), each citing one to three
of the map's papers, with 1 to 2 x `--authors` authors (mean `--authors`), a third of them with
an institution. The database is vacuumed before and after, and dbstat's bytes per table (its
indexes counted with it) are divided by the citers stored. A citer's bytes do not depend on the
map's size (each row is its own, and a b-tree's depth grows by one level per ~100 times more
rows), so a map of 1,000,000 papers pays the same per citer; what scales with the map is how many
there are, which the requests bound: each request names up to 200 works.

Requests: the newest citers of the tracked papers are asked every round (hourly) and those of
the teams' and the followed directions' papers daily, 50 papers a request, at most 5 pages of 200
works (store/scholarly/new_works.py); these queries existed for tracked and team papers before
citers beyond arXiv (which add the followed directions' papers and two fields a work).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sqlite3
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.records import AuthorRecord, FoundCiter, Institution, OpenAlexWork
from mapwatch.store.scholarly.new_works import CITES_BATCH, NEW_WORKS_PAGE, RECENT_MAX_PAGES, NewWork, save_new_works
from mapwatch.store.scholarly.saved import save_openalex

NOW = datetime(2026, 12, 6, 12, 0, tzinfo=UTC)
VENUES = ("Journal of Machine Learning Research", "Proceedings of the AAAI Conference on Artificial Intelligence",
          "IEEE Transactions on Neural Networks and Learning Systems", "Nature Machine Intelligence", "ACL")


def table_bytes(path: Path) -> dict[str, int]:
    """Bytes each table holds with its indexes (dbstat, the file vacuumed first)."""
    conn = sqlite3.connect(path)
    try:
        conn.execute("VACUUM")
        owner = {name: tbl for name, tbl in conn.execute("SELECT name, tbl_name FROM sqlite_master")}
        out: dict[str, int] = {}
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            table = owner.get(name, name)
            out[table] = out.get(table, 0) + size
        return out
    finally:
        conn.close()


def row_counts(path: Path, tables: Sequence[str]) -> dict[str, int]:
    conn = sqlite3.connect(path)
    try:
        return {t: conn.execute(f"SELECT count(*) FROM [{t}]").fetchone()[0] for t in tables}
    finally:
        conn.close()


def _works(n: int, authors: int, refs: Sequence[str], rng: random.Random) -> list[NewWork]:
    out = []
    for i in range(n):
        doi = f"10.{1000 + i % 9000}/bench.{i:07d}"
        people = tuple(AuthorRecord(f"Author {i}-{k} Surname{rng.randrange(10_000)}", f"A9{i:07d}{k:02d}", None,
                                    (Institution(f"University {rng.randrange(500)}", f"I{rng.randrange(500)}"),)
                                    if rng.random() < 1 / 3 else ())
                       for k in range(rng.randint(1, 2 * authors - 1)))
        work = OpenAlexWork(doi, f"W9{i:09d}", people, rng.choice(VENUES), doi)
        citer = FoundCiter(doi, f"A journal article {i} on reward models and their uses", 2026, work)
        out.append(NewWork(citer, tuple(rng.sample(refs, rng.randint(1, 3)))))
    return out


def requests_a_day(tracked: int, daily: int) -> int:
    """Requests of the newest citers' queries a day, when each batch fits one page (the usual
    case: 50 papers' works of three days); at most RECENT_MAX_PAGES times that."""
    return 24 * math.ceil(tracked / CITES_BATCH) + math.ceil(daily / CITES_BATCH)


def run(citers: int, authors: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.db"
        db = open_db(path)
        ingest_paths(db, [SEEDS_DIR], clock=lambda: NOW)
        ids = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY id")]
        works = {pid: f"W8{i:09d}" for i, pid in enumerate(ids)}
        save_openalex(db, [OpenAlexWork(pid, w, (), None, None) for pid, w in works.items()], ids, NOW)
        db.close()
        tables = ("papers", "openalex_works", "paper_authors", "paper_author_institutions", "institutions",
                  "citations", "event_log", "source_citations", "papers_fts", "papers_title_fts")
        before_rows = row_counts(path, tables)
        before = table_bytes(path)
        db = open_db(path)
        new = _works(citers, authors, list(works.values()), rng)
        started = time.perf_counter()
        stored = 0
        for i in range(0, len(new), NEW_WORKS_PAGE):  # one answer page at a time, as a round stores them
            stored += save_new_works(db, new[i:i + NEW_WORKS_PAGE], NOW, include=True).new
        seconds = time.perf_counter() - started
        db.close()
        after = table_bytes(path)
        after_rows = row_counts(path, tables)
    per_table = {t: round((after.get(t, 0) - before.get(t, 0)) / citers) for t in sorted(after)
                 if after.get(t, 0) != before.get(t, 0)}
    rows = {t: round((after_rows[t] - before_rows[t]) / citers, 2) for t in tables}
    return {
        "citers": citers, "citations": stored, "authors_mean": authors,
        "bytes_a_citer": round((sum(after.values()) - sum(before.values())) / citers),
        "bytes_by_table": dict(sorted(per_table.items(), key=lambda kv: -kv[1])),
        "rows_a_citer": rows, "store_seconds": round(seconds, 2),
        "citers_a_second": round(citers / seconds),
        "requests_a_day": {
            "200 tracked, 500 team papers": requests_a_day(200, 500),
            "200 tracked, 500 team, 20,000 followed papers": requests_a_day(200, 20_500),
            "1,000 tracked, 5,000 team, 100,000 followed papers": requests_a_day(1_000, 105_000),
            "most works a request": NEW_WORKS_PAGE, "most pages a batch": RECENT_MAX_PAGES,
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m bench.beyond_arxiv", description=__doc__.splitlines()[0])
    ap.add_argument("--citers", type=int, default=10_000)
    ap.add_argument("--authors", type=int, default=5, help="mean authors a work (1 to 2N-1)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    out = run(args.citers, args.authors, args.seed)
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")


if __name__ == "__main__":
    main()
