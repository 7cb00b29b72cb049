"""/paper and /author with authors stored (issue 29, item 7): latency, database growth, store time.

    python -m bench.authors --papers 100000 [--seed 1] [--calls 300] [--base FILE] [--work DIR]

A map of `--papers` pages from the generator (bench/generate.py, the Zipf vocabulary as section
9 uses it) is ingested in-process (`ingest_fed`, the bulk load above its threshold); with
`--base FILE` that database is kept there and copied on the next run instead of built again.
Then, in one process:

1. `/paper <id>` for `--calls` random papers (the bot's `paper_core`: resolve, `paper_view`,
   the card, the chart when the paper has two snapshots), before any author is stored;
2. authors for every paper of the map, stored with `save_openalex` as the enrichment round
   does (batches of 50 works, one `now` for the whole run): 1-15 authors a paper, drawn from a
   pool of papers/3 people (each with an OpenAlex id, 60% with an ORCID, 1-2 institutions from a
   pool of 3,000; the most prolific on about a thousandth of the author slots, a power law as
   real bylines have); the time to build the records is kept apart from the time to store them;
3. the database's growth (bytes a paper, after a WAL checkpoint);
4. `/paper <id>` again, the same papers, now with bylines on the card and its lists;
5. `/author <OpenAlex id>` (the bot's `author_core`: find the person, `author_view`, the
   card) for `--calls` people drawn at random from the pool, and for the 50 with most papers;
6. `/search` (the bot's `search_core`) for `--calls` people's whole names, then their
   surnames alone.

    python -m bench.authors --measure DB [--cold]

measures steps 4-6 alone on a database that already holds authors (people drawn from it):
each list of calls twice, a first pass and the same calls again; `--cold` drops the page cache
before each list (Linux, as root).

Latencies are wall (and CPU) milliseconds per call, p50/p95/p99/max; the CLI prints a
readable summary and then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from bench import generate as gen
from bench.queries import BASE_URL, NOW, Sample, measure, percentile
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed
from mapwatch.store.pages.format import format_page
from mapwatch.store.records import AuthorRecord, Institution, OpenAlexWork
from mapwatch.store.scholarly.saved import save_openalex

if TYPE_CHECKING:
    from sqlite_utils import Database

    from mapwatch.bot.rendering.replies import Ctx

BATCH = 50  # OpenAlex works a request (store/scholarly/enrich.py, OPENALEX_BATCH)
STORED_AT = datetime(2026, 12, 1, 3, 0, tzinfo=UTC)  # the round's one `now`
INSTITUTIONS = 3_000
ORCID_SHARE = 0.6
SKEW = 1.5  # a person's index is pool * u**SKEW: the first ~1/1000 of the slots go to one person
PROLIFIC = 50

_SYLLABLES = ("an", "bel", "chi", "da", "el", "fa", "go", "hu", "in", "jo", "ka", "li", "mo", "na", "or", "pe",
              "qi", "ra", "su", "ta", "ul", "vi", "wen", "xi", "ya", "zu", "ber", "cor", "dan", "fen", "gar", "hao")
_COUNTRIES = ("US", "CN", "DE", "GB", "FR", "JP", "CA", "IN", "KR", "CH", "NL", "IT", "ES", "AU", "SE", "IL")


@dataclass(frozen=True)
class Person:
    name: str
    author_id: str
    orcid: str | None
    institutions: tuple[Institution, ...]


def orcid_for(k: int) -> str:
    """A valid ORCID iD (ISO 7064 11,2 check digit) made from `k`."""
    digits = f"0000{2000_0000_000 + k:011d}"[-15:]
    total = 0
    for d in digits:
        total = (total + int(d)) * 2
    check = (12 - total % 11) % 11
    full = digits + ("X" if check == 10 else str(check))
    return "-".join(full[i:i + 4] for i in range(0, 16, 4))


def _word(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


def institutions(rng: random.Random, n: int = INSTITUTIONS) -> list[Institution]:
    kinds = ("University of", "Institute of", "Technical University of", "Laboratory of")
    return [Institution(f"{rng.choice(kinds)} {_word(rng, 3)}", f"I{100_000_000 + k}",
                        f"0{k:06d}{k % 100:02d}", rng.choice(_COUNTRIES)) for k in range(n)]


def people(rng: random.Random, n: int, places: Sequence[Institution]) -> list[Person]:
    out = []
    for k in range(n):
        name = f"{_word(rng, rng.randint(1, 2))} {_word(rng, rng.randint(2, 3))}"
        mine = tuple(rng.sample(places, rng.randint(1, 2)))
        out.append(Person(name, f"A{5_000_000_000 + k}", orcid_for(k) if rng.random() < ORCID_SHARE else None, mine))
    return out


def _draw(rng: random.Random, pool: int) -> int:
    return min(pool - 1, int(pool * rng.random() ** SKEW))


def works(rng: random.Random, paper_ids: Sequence[str], pool: Sequence[Person]) -> Iterator[list[OpenAlexWork]]:
    """OpenAlex's works for `paper_ids`, BATCH at a time, shaped as parse_openalex returns them."""
    batch: list[OpenAlexWork] = []
    for n, pid in enumerate(paper_ids):
        chosen: dict[int, None] = {}
        want = rng.randint(1, 15)
        while len(chosen) < want:
            chosen[_draw(rng, len(pool))] = None
        authors = tuple(AuthorRecord(p.name, p.author_id, p.orcid, p.institutions[:rng.randint(1, len(p.institutions))])
                        for p in (pool[k] for k in chosen))
        batch.append(OpenAlexWork(pid, f"W{4_000_000_000 + n}", authors,
                                  "A venue of the field" if n % 3 == 0 else None, None))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def db_bytes(db_path: Path) -> int:
    return sum(os.path.getsize(p) for p in (db_path, Path(f"{db_path}-wal")) if p.exists())


def build_map_db(path: Path, n: int, seed: int) -> dict:
    """The generator's map of `n` pages ingested into `path` (in-process, no files)."""
    gen.use_vocabulary("zipf")
    try:
        t0 = time.perf_counter()
        m = gen.build_map(n, seed)

        def fed() -> Iterator[FedPage]:
            for i in range(m.n):
                pid = m.ids[i]
                yield FedPage(f"{gen.HOST}/paper/{pid}/", None, 1, format_page(gen.page(m, i, 1)).encode("utf-8"))

        db = open_db(path)
        report = ingest_fed(db, fed(), f"generator: {n:,} pages", clock=lambda: NOW, expected=n)
        db.close()
    finally:
        gen.use_vocabulary("small")
    return {"pages": n, "stored": report.stored, "rejected": len(report.rejected),
            "seconds": time.perf_counter() - t0}


def stats(samples: list[Sample]) -> dict:
    wall = sorted(s[0] for s in samples)
    cpu = sorted(s[1] for s in samples)
    return {"n": len(wall), "p50_ms": percentile(wall, 0.50), "p95_ms": percentile(wall, 0.95),
            "p99_ms": percentile(wall, 0.99), "max_ms": wall[-1] if wall else None,
            "cpu_p50_ms": percentile(cpu, 0.50), "cpu_p99_ms": percentile(cpu, 0.99)}


def timed(calls: list[Callable[[], object]]) -> dict:
    measure(calls[:5])  # warm the page and statement caches
    return stats(measure(calls))


def checkpoint(db_path: Path) -> None:
    db = open_db(db_path)
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def most_prolific(db: Database) -> list[str]:
    """The OpenAlex ids of the PROLIFIC people on most papers, most first."""
    return [r[0] for r in db.conn.execute(
        "SELECT author_id FROM paper_authors WHERE author_id IS NOT NULL GROUP BY author_id"
        " ORDER BY count(*) DESC, author_id LIMIT ?", (PROLIFIC,))]


def command_calls(db: Database, ctx: Ctx, *, papers: Sequence[str], keys: Sequence[str], top: Sequence[str],
                  names: Sequence[str]) -> dict[str, list[Callable[[], object]]]:
    """The calls of steps 4-6, as the bot makes them: `/paper` for `papers`, `/author` for
    `keys` and for `top`, `/search` for each of `names` whole and for its surname alone
    (papers_by_name beside the full-text match)."""
    from mapwatch.bot.commands.papers import paper_core, search_core
    from mapwatch.bot.commands.people import author_core

    return {
        "paper": [lambda p=p: paper_core(db, ctx, paper=p) for p in papers],
        "author_random": [lambda k=k: author_core(db, ctx, author=k) for k in keys],
        "author_prolific": [lambda k=k: author_core(db, ctx, author=k) for k in top],
        "search_name": [lambda q=q: search_core(db, ctx, query=q) for q in names],
        "search_surname": [lambda q=q: search_core(db, ctx, query=q.split()[-1]) for q in names],
    }


def run(db_path: Path, *, papers: int, seed: int = 1, calls: int = 300, base: Path | None = None) -> dict:
    from mapwatch.bot.commands.papers import paper_core
    from mapwatch.bot.rendering.replies import Ctx

    for suffix in ("", "-wal", "-shm"):
        Path(f"{db_path}{suffix}").unlink(missing_ok=True)
    result: dict = {"papers": papers, "seed": seed, "load_average_start": os.getloadavg()}
    if base is not None and base.exists():
        shutil.copyfile(base, db_path)
        result["map"] = {"pages": papers, "reused": str(base)}
    else:
        result["map"] = build_map_db(db_path, papers, seed)
        checkpoint(db_path)
        if base is not None:
            base.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(db_path, base)
    checkpoint(db_path)
    before = db_bytes(db_path)

    rng = random.Random(seed)
    ctx = Ctx(guild_id=1, channel_id=1, user_id=1, now=NOW, base_url=BASE_URL)
    db = open_db(db_path)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY id")]
    with_pages = [r[0] for r in db.conn.execute("SELECT id FROM papers WHERE has_page = 1 ORDER BY id")]
    sample = [rng.choice(with_pages) for _ in range(calls)]
    paper_calls: list[Callable[[], object]] = [lambda p=p: paper_core(db, ctx, paper=p) for p in sample]
    result["paper_without_authors"] = timed(paper_calls)

    # Authors for every paper of the map, as the enrichment round stores OpenAlex's answers.
    pool = people(rng, max(1, len(ids) // 3), institutions(rng))
    build = store = store_cpu = 0.0
    batches = 0
    made = works(rng, ids, pool)
    while True:
        t = time.perf_counter()
        batch = next(made, None)
        build += time.perf_counter() - t
        if batch is None:
            break
        t, c = time.perf_counter(), time.process_time()
        save_openalex(db, batch, [w.paper_id for w in batch], STORED_AT)
        store += time.perf_counter() - t
        store_cpu += time.process_time() - c
        batches += 1
    slots = db.conn.execute("SELECT count(*) FROM paper_authors").fetchone()[0]
    db.close()
    checkpoint(db_path)
    after = db_bytes(db_path)
    result["authors"] = {"papers": len(ids), "people": len(pool), "author_slots": slots, "batches": batches,
                         "store_seconds": store, "store_cpu_seconds": store_cpu, "build_seconds": build,
                         "per_batch_ms": store / max(1, batches) * 1000}
    result["db_bytes_before"], result["db_bytes_after"] = before, after
    result["bytes_per_paper"] = (after - before) / max(1, len(ids))

    db = open_db(db_path)
    keys = [pool[rng.randrange(len(pool))].author_id for _ in range(calls)]
    top = most_prolific(db)
    result["most_papers"] = db.conn.execute(
        "SELECT count(*) FROM paper_authors WHERE author_id = ?", (top[0],)).fetchone()[0] if top else 0
    named = [pool[rng.randrange(len(pool))].name for _ in range(calls)]  # /search: people of the pool
    made = command_calls(db, ctx, papers=sample, keys=keys, top=top, names=named)
    result["paper_with_authors"] = timed(made.pop("paper"))
    for key, listed in made.items():
        result[key] = timed(listed)
    db.close()
    ratio = result["paper_with_authors"]["p99_ms"] / result["paper_without_authors"]["p99_ms"]
    result["paper_p99_with_over_without"] = ratio
    result["paper_p50_with_over_without"] = (result["paper_with_authors"]["p50_ms"]
                                             / result["paper_without_authors"]["p50_ms"])
    result["load_average_end"] = os.getloadavg()
    return result


def report(r: dict) -> str:
    a = r["authors"]
    made = r["map"]
    lines = [f"map: {r['papers']:,} pages"
             + (f", built in {made['seconds']:.0f} s" if "seconds" in made else f" (reused {made['reused']})"),
             f"authors: {a['papers']:,} papers, {a['people']:,} people, {a['author_slots']:,} author rows "
             f"({a['author_slots'] / max(1, a['papers']):.1f} a paper; the most prolific on "
             f"{r['most_papers']:,} papers)",
             f"   stored in {a['batches']:,} save_openalex batches of {BATCH}: {a['store_seconds']:.1f} s wall, "
             f"{a['store_cpu_seconds']:.1f} s CPU ({a['per_batch_ms']:.1f} ms a batch); records built apart in "
             f"{a['build_seconds']:.1f} s",
             f"   database {r['db_bytes_before'] / 2**20:,.1f} MiB -> {r['db_bytes_after'] / 2**20:,.1f} MiB: "
             f"{r['bytes_per_paper']:,.0f} bytes a paper",
             "command                       n   p50 ms   p95 ms   p99 ms   max ms  CPU p50  CPU p99"]
    rows = (("/paper without authors", "paper_without_authors"), ("/paper with authors", "paper_with_authors"),
            ("/author, random people", "author_random"), (f"/author, {PROLIFIC} most papers", "author_prolific"),
            ("/search, a person's name", "search_name"), ("/search, a surname", "search_surname"))
    for label, key in rows:
        if key not in r:  # a result written before the key was measured
            continue
        s = r[key]
        lines.append(f"{label:26} {s['n']:4} {s['p50_ms']:8.2f} {s['p95_ms']:8.2f} {s['p99_ms']:8.2f} "
                     f"{s['max_ms']:8.2f} {s['cpu_p50_ms']:8.2f} {s['cpu_p99_ms']:8.2f}")
    lines.append(f"/paper with / without authors: p50 x{r['paper_p50_with_over_without']:.2f}, "
                 f"p99 x{r['paper_p99_with_over_without']:.2f}")
    lines.append("load average: start " + ", ".join(f"{x:.2f}" for x in r["load_average_start"])
                 + "; end " + ", ".join(f"{x:.2f}" for x in r["load_average_end"]))
    return "\n".join(lines)


COMMANDS = (("/paper with authors", "paper"), ("/author, random people", "author_random"),
            (f"/author, {PROLIFIC} most papers", "author_prolific"), ("/search, a person's name", "search_name"),
            ("/search, a surname", "search_surname"))


def measure_only(db_path: Path, *, calls: int, seed: int, cold: bool) -> dict:
    """The commands of steps 4-6 on a database that already holds authors (`--measure`): each
    list of calls twice, a first pass and then the same calls again (warm). With `cold`, the
    page cache is dropped before the first pass (Linux, as root: /proc/sys/vm/drop_caches)."""
    from mapwatch.bot.rendering.replies import Ctx

    rng = random.Random(seed)
    ctx = Ctx(guild_id=1, channel_id=1, user_id=1, now=NOW, base_url=BASE_URL)
    db = open_db(db_path)
    c = db.conn
    with_pages = [r[0] for r in c.execute("SELECT id FROM papers WHERE has_page = 1 ORDER BY id")]
    people_ids = c.execute("SELECT max(id) FROM people").fetchone()[0]
    drawn = [c.execute("SELECT name, author_id FROM people WHERE id >= ? AND author_id IS NOT NULL ORDER BY id"
                       " LIMIT 1", (rng.randint(1, people_ids),)).fetchone() for _ in range(calls)]
    sample = [rng.choice(with_pages) for _ in range(calls)]
    lists = command_calls(db, ctx, papers=sample, keys=[aid for _name, aid in drawn], top=most_prolific(db),
                          names=[name for name, _aid in drawn])
    out: dict = {"papers": len(with_pages), "calls": calls, "cold": cold, "load_average_start": os.getloadavg()}
    for key, made in lists.items():
        if cold:
            os.sync()
            Path("/proc/sys/vm/drop_caches").write_text("1")
        out[key] = {"first": stats(measure(made)), "again": stats(measure(made))}
    out["load_average_end"] = os.getloadavg()
    db.close()
    return out


def measure_report(r: dict) -> str:
    how = "the page cache dropped before each command" if r["cold"] else "warm"
    lines = [f"{r['papers']:,} papers with pages; {how}",
             "command                     pass     n   p50 ms   p95 ms   p99 ms   max ms  CPU p50  CPU p99"]
    for label, key in COMMANDS:
        for part in ("first", "again"):
            s = r[key][part]
            lines.append(f"{label:27} {part:6} {s['n']:4} {s['p50_ms']:8.2f} {s['p95_ms']:8.2f} {s['p99_ms']:8.2f} "
                         f"{s['max_ms']:8.2f} {s['cpu_p50_ms']:8.2f} {s['cpu_p99_ms']:8.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.authors", description=__doc__.split("\n\n")[0])
    p.add_argument("--papers", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--calls", type=int, default=300, help="calls of each command (default 300)")
    p.add_argument("--base", type=Path, help="keep the generated map here, and reuse it when it exists")
    p.add_argument("--work", type=Path, help="folder of the database measured (default: a temporary one)")
    p.add_argument("--measure", type=Path, metavar="DB",
                   help="only measure the commands on DB, a database that holds authors (each list twice)")
    p.add_argument("--cold", action="store_true", help="with --measure: drop the page cache before each command")
    a = p.parse_args(argv)
    if a.measure:
        m = measure_only(a.measure, calls=a.calls, seed=a.seed, cold=a.cold)
        print(measure_report(m), flush=True)
        print(json.dumps(m), flush=True)
        return 0
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-authors-") as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        r = run(work / f"authors-{a.papers}.db", papers=a.papers, seed=a.seed, calls=a.calls, base=a.base)
    print(report(r), flush=True)
    print(json.dumps(r), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
