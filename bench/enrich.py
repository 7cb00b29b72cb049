"""Enrichment at 100k and 1M papers (docs/enrichment.md): requests, wall time at each source's
published rate, database growth, and a day's incremental cost.

    python -m bench.enrich --papers 20000 [--authors 6] [--latency-arxiv 1.0] [--latency-openalex 0.5]

Measured here, on a real database of `--papers` papers (the `papers` rows a map of that size
holds): the CPU of one batch (parsing a realistic answer: arXiv's Atom with abstracts, OpenAlex's
works with authorships and institutions; then saving it in one transaction), and the database
growth per paper once every paper is enriched by both. A full round also runs against the
loopback fakes (tests/scholarly_fakes.py) with the rate limit at 0, which bounds the cost of
everything but the waiting (HTTP on loopback, the fakes' own work in the same process included).

Computed: requests = papers / batch; the wall time of a source is requests x max(interval,
latency + CPU) (one request at a time; `interval` is the source's published rate, `latency`
an assumption given on the command line, not measured: no internet here); the growth scales
with papers. A day: the papers new that day (`--new-per-day` of the map) plus the monthly
refetch (1/30 of the map), and Semantic Scholar's requests for the tracked papers that gained
citers (`--tracked`, `--gaining`).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from mapwatch.store.database.db import open_db
from mapwatch.store.scholarly import enrich
from mapwatch.store.scholarly.enrich import ARXIV_BATCH, OPENALEX_BATCH, EnrichSettings, enrich_round
from mapwatch.store.scholarly.parse import parse_arxiv, parse_openalex
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.scholarly.saved import save_arxiv, save_openalex
from tests.scholarly_fakes import (
    ARXIV_FEED,
    ArxivEntry,
    ScholarlyFakes,
    arxiv_entry_xml,
    openalex_work,
    serve_scholarly,
)

NOW = datetime(2026, 12, 1, tzinfo=UTC)
WORDS = ("model", "learning", "reward", "policy", "language", "reasoning", "preference", "training", "data",
         "optimization", "alignment", "human", "feedback", "large", "agents", "transformer", "attention")
FIRST = ("Wei", "Anna", "Jie", "Lukas", "Maria", "Hiroshi", "Priya", "Omar", "Sofia", "Chen", "David", "Amara")
LAST = ("Zhang", "Müller", "Wang", "Smith", "Rossi", "Tanaka", "Patel", "Haddad", "García", "Li", "Kim", "Okafor")
INSTITUTIONS = [{"name": f"University {k}", "id": f"I{1000 + k}", "ror": f"0{k:06d}1{k % 10}", "country": "US"}
                for k in range(400)]


def ids(n: int) -> list[str]:
    return [f"{2000 + i // 90_000 % 26:04d}.{i % 90_000 + 10_000:05d}" for i in range(n)]


def make_db(path: Path, papers: list[str]) -> None:
    db = open_db(path)
    when = "2026-11-01T00:00:00+00:00"
    with db.atomic():
        db.conn.executemany("INSERT INTO papers (id, title, has_page, first_seen, updated) VALUES (?, ?, 1, ?, ?)",
                            [(p, f"Paper {p}", when, when) for p in papers])
    db.close()


def fake_data(papers: list[str], authors: int, rng: random.Random) -> ScholarlyFakes:
    fakes = ScholarlyFakes()
    for n, pid in enumerate(papers):
        names = [f"{rng.choice(FIRST)} {rng.choice(LAST)}" for _ in range(rng.randint(1, 2 * authors - 1))]
        title = " ".join(rng.choice(WORDS) for _ in range(10)).capitalize()
        affs = [[rng.choice(INSTITUTIONS)["name"]] for _ in names]
        fakes.arxiv[pid] = ArxivEntry(title, list(zip(names, affs, strict=True)), comment="12 pages, 4 figures",
                                      journal_ref="Proceedings of a conference 2025" if n % 3 == 0 else None)
        fakes.openalex[pid] = openalex_work(pid, f"W{4000000000 + n}", [
            {"name": nm, "id": f"A{5000000000 + n * 20 + k}", "orcid": None,
             "institutions": [rng.choice(INSTITUTIONS)]} for k, nm in enumerate(names)],
            venue="A venue" if n % 3 == 0 else None)
    return fakes


ABSTRACT = " ".join(["We study how models learn from preference data and propose a method."] * 18)  # ~1,300 chars


def arxiv_body(fakes: ScholarlyFakes, batch: list[str]) -> bytes:
    entries = [arxiv_entry_xml(p, fakes.arxiv[p]).replace("An abstract.", ABSTRACT) for p in batch]
    return ARXIV_FEED.format(query=",".join(batch), total=len(entries), entries="\n".join(entries)).encode()


def openalex_body(fakes: ScholarlyFakes, batch: list[str]) -> bytes:
    import json

    works = [fakes.openalex[p] for p in batch]
    return json.dumps({"meta": {"count": len(works)}, "results": works}).encode()


def file_bytes(path: Path) -> int:
    with sqlite3.connect(path) as c:
        c.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return c.execute("PRAGMA page_count").fetchone()[0] * c.execute("PRAGMA page_size").fetchone()[0]


def per_batch(path: Path, fakes: ScholarlyFakes, papers: list[str]) -> dict[str, dict[str, float]]:
    """CPU seconds of parsing and of saving one batch (medians), and bytes of the answers."""
    db = open_db(path)
    out: dict[str, dict[str, float]] = {}
    try:
        for source, size, body_of, parse, save in (
                ("arxiv", ARXIV_BATCH, arxiv_body, parse_arxiv, save_arxiv),
                ("openalex", OPENALEX_BATCH, openalex_body, parse_openalex, save_openalex)):
            parse_s, save_s, sizes = [], [], []
            for i in range(0, len(papers), size):
                batch = papers[i:i + size]
                body = body_of(fakes, batch)
                sizes.append(len(body))
                t0 = time.process_time()
                got = parse(body, batch)
                t1 = time.process_time()
                records = got.works if source == "openalex" else got  # type: ignore[union-attr]
                save(db, records, batch, NOW)  # type: ignore[operator]
                t2 = time.process_time()
                parse_s.append(t1 - t0)
                save_s.append(t2 - t1)
            out[source] = {"parse": statistics.median(parse_s), "save": statistics.median(save_s),
                           "bytes": statistics.mean(sizes), "batches": len(parse_s)}
    finally:
        db.close()
    return out


def full_round(path: Path, fakes: ScholarlyFakes, n: int) -> tuple[float, dict[str, int]]:
    """A real round against the loopback fakes at rate 0: wall seconds and requests."""
    fast = {s: Politeness(0.0, timeout=60.0) for s in POLITENESS}
    with serve_scholarly(fakes) as served:
        settings = EnrichSettings(("arxiv", "openalex"), served.apis(), "bench@example.org", limit=n, politeness=fast)
        t0 = time.perf_counter()
        report = asyncio.run(enrich_round(path, settings, clock=lambda: NOW))
        wall = time.perf_counter() - t0
    return wall, {s: r.requests for s, r in report.sources.items()}


def hms(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:,.0f} s"
    if seconds < 2 * 3600:
        return f"{seconds / 60:,.1f} min"
    if seconds < 3 * 86400:
        return f"{seconds / 3600:,.1f} h"
    return f"{seconds / 86400:,.1f} days"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.enrich", description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=20_000, help="papers of the measured database")
    ap.add_argument("--authors", type=int, default=6, help="mean authors a paper")
    ap.add_argument("--latency-arxiv", type=float, default=1.0, help="seconds arXiv takes to answer 100 ids (assumed)")
    ap.add_argument("--latency-openalex", type=float, default=0.5, help="seconds OpenAlex takes for 50 DOIs (assumed)")
    ap.add_argument("--new-per-day", type=float, default=0.003, help="new papers a day, as a share of the map")
    ap.add_argument("--tracked", type=int, default=200, help="tracked papers")
    ap.add_argument("--gaining", type=float, default=0.2, help="share of tracked papers gaining a citer a day")
    ap.add_argument("--sizes", default="100000,1000000")
    args = ap.parse_args(argv)
    rng = random.Random(1)
    papers = ids(args.papers)
    fakes = fake_data(papers, args.authors, rng)
    with tempfile.TemporaryDirectory() as tmp:
        measured = Path(tmp) / "measured.db"
        make_db(measured, papers)
        before = file_bytes(measured)
        batch = per_batch(measured, fakes, papers)
        after = file_bytes(measured)
        growth = (after - before) / args.papers
        whole = Path(tmp) / "round.db"
        make_db(whole, papers)
        wall, reqs = full_round(whole, fakes, args.papers)
    print(f"Measured on {args.papers:,} papers ({args.authors} authors a paper on average), one core:")
    for s, b in batch.items():
        print(f"  {s}: a batch of {ARXIV_BATCH if s == 'arxiv' else OPENALEX_BATCH} papers: answer "
              f"{b['bytes'] / 1024:,.0f} KiB, parse {b['parse'] * 1000:,.1f} ms, save {b['save'] * 1000:,.1f} ms CPU "
              f"(medians of {int(b['batches'])})")
    print(f"  database growth: {growth:,.0f} bytes a paper enriched by both ({(after - before) / 2**20:,.1f} MiB)")
    print(f"  a real round on loopback at rate 0 (arXiv and OpenAlex side by side): {wall:,.1f} s, requests {reqs}")
    latency = {"arxiv": args.latency_arxiv, "openalex": args.latency_openalex}
    size = {"arxiv": ARXIV_BATCH, "openalex": OPENALEX_BATCH}
    per_request = {s: max(POLITENESS[s].interval, latency[s] + batch[s]["parse"] + batch[s]["save"])
                   for s in ("arxiv", "openalex")}
    print("\nComputed (one request at a time per source; sources side by side; latency assumed: "
          f"arXiv {args.latency_arxiv:g} s, OpenAlex {args.latency_openalex:g} s):")
    print("| papers | arXiv requests | arXiv wall | OpenAlex requests | OpenAlex wall | round-limited (10k/h) "
          "| DB growth |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for n in (int(x) for x in args.sizes.split(",")):
        r = {s: math.ceil(n / size[s]) for s in size}
        w = {s: r[s] * per_request[s] for s in size}
        rounds = math.ceil(n / enrich.DEFAULT_LIMIT)
        print(f"| {n:,} | {r['arxiv']:,} | {hms(w['arxiv'])} | {r['openalex']:,} | {hms(w['openalex'])} "
              f"| {rounds:,} rounds: {hms(rounds * 3600)} | {growth * n / 2**20:,.0f} MiB |")
    print("\nA day's incremental cost:")
    print("| papers | papers asked a day | arXiv requests | arXiv time | OpenAlex requests | OpenAlex time "
          "| S2 requests | S2 time |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    s2 = math.ceil(args.tracked * args.gaining)
    for n in (int(x) for x in args.sizes.split(",")):
        daily = math.ceil(n * args.new_per_day + n / 30)
        r = {s: math.ceil(daily / size[s]) for s in size}
        print(f"| {n:,} | {daily:,} | {r['arxiv']:,} | {hms(r['arxiv'] * per_request['arxiv'])} | {r['openalex']:,} "
              f"| {hms(r['openalex'] * per_request['openalex'])} | {s2:,} | {hms(s2 * POLITENESS['s2'].interval)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
