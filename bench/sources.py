"""The citers the map never names (issue 32, item 2): bench/freshness.py's simulated map, crawled
tick by tick by the real refresh, with and without the open sources asked after each refresh
(the real enrichment round), as `mapwatch run` does.

    python -m bench.sources --pages 10000 --hours 48 --variant all
    python -m bench.sources --pages 100000 --hours 48 --variant no-sitemap --steady
    python -m bench.sources --small            (seconds; what CI runs)

`--steady` starts the crawl in its steady state (bench/freshness.py's schedule_steady): without
it, every page of the template was checked at T0 - 1 h, and the first ticks re-check the map.

The simulated site (bench/livemap.py) also answers, from the same ground truth, as
- Semantic Scholar: `/graph/v1/paper/arXiv:<id>/citations`: every citer of a paper, paged, and
  `/graph/v1/paper/arXiv:<id>?fields=citationCount`: how many;
- OpenAlex: `/works?filter=doi:...` (a map paper's work, `W<index + 1>`) and
  `/works?filter=from_publication_date:D,...`: the new papers of day D with their references,
  and `/works?filter=cites:W1|W2,from_publication_date:D`: the new papers since D citing them,
  the newest first.
A new paper is known to both sources from its arrival (`--source-lag` hours later with the
option): a best case for the sources' own delay, which the real ones add (days, for OpenAlex).

Each variant runs twice from the same database and seed: sources off (the map alone) and on.
The database is bench/freshness.py's (a full crawl at T0 - 1 h, the most cited papers
tracked), and, as after enrichment, every map paper matched to its OpenAlex work and asked
once; with the sources on, one enrichment round at T0 takes their baseline (what a source
says first about a paper is kept, not announced), as a mapwatch running before would have.

What is measured: the share of new citations in the feeds (`citations`) within one tick and
24 h, the share of the unlisted ones (no page names them) among them, the tracked papers' new
citers alerted (`events`) within one tick, the citations a source announced first (their event
has no snapshot; a map page may name them later), and each tick's requests to each and CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

from aiohttp import web

from bench import livemap
from bench.freshness import (
    SETUP,
    STEADY_AGE,
    Config,
    SimProcess,
    build_template,
    delays_summary,
    fmt,
    free_port,
    schedule_steady,
)
from bench.livemap import DEFAULT_RATE, T0, VARIANTS, LiveMap, Site
from mapwatch.store.clock import iso, parse_iso
from mapwatch.store.database.db import open_db
from mapwatch.store.scholarly.enrich import EnrichSettings, enrich_round
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.subscriptions.tracking import tracked_paper_ids

FAST = {s: Politeness(0.0, timeout=60.0) for s in POLITENESS}  # loopback: no rate to keep
ARXIV_SOURCE = "https://openalex.org/S4306400194"
SOURCES = ("openalex", "s2")  # the request kinds that are the sources'; the others are the map's


class SourcesSite(Site):
    """The live map, and the two sources answering from its ground truth."""

    def __init__(self, live: LiveMap, variant: str, lag_hours: float) -> None:
        super().__init__(live, variant)
        self.lag = lag_hours * 3600
        self.arrived: dict[int, float] = {}  # new paper -> arrival time

    def known(self, i: int) -> bool:
        return i < self.live.n0 or self.arrived.get(i, float("inf")) + self.lag <= self.live.now

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        if path.startswith("/graph/v1/paper/arXiv:") and path.endswith("/citations"):
            self.counts["s2"] += 1
            return self._s2(request, path[len("/graph/v1/paper/arXiv:"):-len("/citations")])
        if path.startswith("/graph/v1/paper/arXiv:"):  # ?fields=citationCount
            self.counts["s2"] += 1
            i = self.live.index.get(path[len("/graph/v1/paper/arXiv:"):])
            if i is None:
                return web.json_response({"error": "not found"}, status=404)
            return web.json_response({"citationCount": sum(1 for c in self.live.citers[i] if self.known(c))})
        if path == "/works":
            self.counts["openalex"] += 1
            return self._openalex(request)
        if path == "/_sim/advance":
            before = self.live.size
            resp = self.control(request)
            for k, (_pid, at, _cited) in enumerate(json.loads(resp.body)["new"]):  # type: ignore[arg-type]
                self.arrived[before + k] = at
            return resp
        return await super().handle(request)

    def _work(self, i: int, refs: bool) -> dict:
        live = self.live
        pid = live.ids[i]
        work = {"id": f"https://openalex.org/W{i + 1}", "doi": f"https://doi.org/10.48550/arxiv.{pid}",
                "title": live.titles[i], "publication_year": live.posted[i].year,
                "locations": [{"landing_page_url": f"https://arxiv.org/abs/{pid}",
                               "source": {"id": ARXIV_SOURCE, "type": "repository"}}], "authorships": []}
        if refs:
            work["referenced_works"] = [f"https://openalex.org/W{j + 1}" for j in live.refs[i]]
        return work

    def _openalex(self, request: web.Request) -> web.Response:
        live = self.live
        flt = request.query.get("filter", "")
        if flt.startswith("doi:"):
            ids = [d.removeprefix("10.48550/arxiv.") for d in flt[4:].split("|")]
            found = [i for pid in ids if (i := live.index.get(pid)) is not None and self.known(i)]
            return web.json_response({"meta": {"count": len(found)}, "results": [self._work(i, False) for i in found]})
        parts = dict(p.split(":", 1) for p in flt.split(",") if ":" in p)
        day = date.fromisoformat(parts["from_publication_date"])
        if "cites" in parts:  # the works since `day` citing these, the newest first
            cited = [int(w.removeprefix("W")) - 1 for w in parts["cites"].split("|")]
            found = {c for i in cited if 0 <= i < live.size for c in live.citers[i]
                     if live.posted[c] >= day and self.known(c)}
            works = sorted(found, key=lambda c: (live.posted[c], c), reverse=True)
        else:
            works = [i for i in range(live.n0, live.size) if live.posted[i] == day and self.known(i)]
        start = 0 if request.query.get("cursor", "*") == "*" else int(request.query["cursor"])
        per = int(request.query.get("per-page", "200"))
        nxt = start + per if start + per < len(works) else None
        return web.json_response({"meta": {"count": len(works), "next_cursor": None if nxt is None else str(nxt)},
                                  "results": [self._work(i, True) for i in works[start:start + per]]})

    def _s2(self, request: web.Request, pid: str) -> web.Response:
        live = self.live
        i = live.index.get(pid)
        if i is None:
            return web.json_response({"error": "not found"}, status=404)
        citers = [c for c in live.citers[i] if self.known(c)]
        offset, limit = int(request.query.get("offset", "0")), int(request.query.get("limit", "1000"))
        data = [{"contexts": [], "intents": [], "isInfluential": False,
                 "citingPaper": {"externalIds": {"ArXiv": live.ids[c]}, "title": live.titles[c],
                                 "year": live.posted[c].year}} for c in citers[offset:offset + limit]]
        body: dict = {"offset": offset, "data": data}
        if offset + limit < len(citers):
            body["next"] = offset + limit
        return web.json_response(body)


def serve(pages: int, seed: int, rate: float, variant: str, lag: float, port: int, initial_age: float) -> None:
    live = LiveMap(pages, seed, rate, initial_age)
    livemap.serve(live, variant, port, SourcesSite(live, variant, lag))


class Server(SimProcess):
    def __init__(self, cfg: Config, variant: str, lag: float, port: int, initial_age: float = 1.0) -> None:
        super().__init__(["bench.sources", "--serve", "--pages", str(cfg.pages), "--seed", str(cfg.seed),
                          "--rate", str(cfg.rate), "--variant", variant, "--source-lag", str(lag), "--port",
                          str(port), "--initial-age", str(initial_age)])


def as_enriched(db_path: Path, pages: int) -> None:
    """Every map paper matched to its OpenAlex work (`W<index + 1>`, as the site numbers them) and
    asked once by OpenAlex, as after enrichment (bench/livemap.py builds the same ids)."""
    live = LiveMap(pages)
    db = open_db(db_path)
    later = iso(SETUP + timedelta(days=30))
    with db.atomic():
        db.conn.executemany("INSERT OR REPLACE INTO openalex_works (paper_id, work_id, venue, doi, fetched_at)"
                            " VALUES (?, ?, NULL, NULL, ?)",
                            [(pid, f"W{i + 1}", iso(SETUP)) for i, pid in enumerate(live.ids)])
        db.conn.executemany("INSERT OR REPLACE INTO enrichment_fetches (paper_id, source, fetched_at, status,"
                            " next_fetch_at) VALUES (?, 'openalex', ?, 'ok', ?)",
                            [(pid, iso(SETUP), later) for pid in live.ids])
    db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def tick_row(counts: dict[str, int], cpu: dict[str, float]) -> dict:
    """One tick's figures: the map's requests, each source's, and the CPU of each part."""
    return {"map": sum(v for kind, v in counts.items() if kind not in SOURCES), "openalex": counts.get("openalex", 0),
            "s2": counts.get("s2", 0), "cpu_refresh_s": round(cpu["refresh"], 3),
            "cpu_sources_s": round(cpu["sources"], 3)}


def run_one(cfg: Config, variant: str, sources: bool, lag: float, port: int, template: Path, work: Path,
            log: Callable[[str], None], steady: bool = False) -> dict:
    db_path = work / f"{variant}-{'on' if sources else 'off'}.db"
    for stale in (Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):
        stale.unlink(missing_ok=True)
    shutil.copyfile(template, db_path)
    if steady:
        log(f"scheduled {schedule_steady(db_path, variant, cfg.budget):,} pages as in a steady state")
    server = Server(cfg, variant, lag, port, STEADY_AGE if steady else 1.0)
    try:
        settings = EnrichSettings(("openalex", "s2"), {"arxiv": server.base, "openalex": server.base,
                                                       "s2": f"{server.base}/graph/v1"}, politeness=FAST)
        if sources:
            # The sources' first answer about a paper is its baseline (store/scholarly/discovered.py):
            # kept, never announced. A running mapwatch took it long before; here, at T0, before
            # the first new paper (not counted: the counts are reset each tick).
            for line in asyncio.run(enrich_round(db_path, settings, tracked=tracked_paper_ids,
                                                 clock=lambda: T0)).trouble_lines():
                log(line)
        truth: dict[tuple[str, str], float] = {}
        cpu = {"refresh": 0.0, "sources": 0.0}
        by_kind: Counter[str] = Counter()
        ticks: list[dict] = []  # each tick's requests (the map's, each source's) and CPU
        def tick(k: int, quiet: bool = False) -> dict:
            """One hour: the site moves on (nothing new if `quiet`), a refresh, an enrichment round."""
            now = T0 + timedelta(hours=k)
            for pid, at, cited in server.call(f"advance?to={now.timestamp()}" + ("&quiet=1" if quiet else ""),
                                              "POST")["new"]:
                for c in cited:
                    truth[(pid, c)] = at
            server.call("counts?reset=1")
            db = open_db(db_path)
            try:
                c0 = time.process_time()
                refresh(db, server.base, clock=lambda now=now: now, priority=tracked_paper_ids(db),
                        options=HttpOptions(budget=cfg.budget))
                tick_cpu = {"refresh": time.process_time() - c0, "sources": 0.0}
            finally:
                db.close()
            if sources:
                c0 = time.process_time()
                report = asyncio.run(enrich_round(db_path, settings, tracked=tracked_paper_ids,
                                                  clock=lambda now=now: now))
                tick_cpu["sources"] = time.process_time() - c0
                for line in report.trouble_lines():
                    log(line)
            counts = server.call("counts")
            counts.pop("new_pages_requested", None)
            log(f"{variant} sources {'on' if sources else 'off'} tick {k}{' (quiet)' if quiet else ''}: "
                f"{sum(counts.values())} requests, CPU refresh {tick_cpu['refresh']:.2f} s,"
                f" sources {tick_cpu['sources']:.2f} s")
            return {"counts": counts, "cpu": tick_cpu}

        for k in range(1, cfg.hours + 1):
            one = tick(k)
            counts, tick_cpu = one["counts"], one["cpu"]
            for part, v in tick_cpu.items():
                cpu[part] += v
            by_kind.update(counts)
            ticks.append(tick_row(counts, tick_cpu))
        end = (T0 + timedelta(hours=cfg.hours)).timestamp()
        db = open_db(db_path)
        try:
            seen = {(a, b): parse_iso(t).timestamp() for a, b, t in db.conn.execute(
                "SELECT citing_id, cited_id, first_seen FROM citations WHERE first_seen >= ?", (iso(T0),))}
            provenance = Counter(p for (p,) in db.conn.execute(
                "SELECT provenance FROM citations WHERE first_seen >= ?", (iso(T0),)))
            tracked = set(tracked_paper_ids(db))
            alerted = {(c, p): parse_iso(t).timestamp() for p, c, t in db.conn.execute(
                "SELECT paper_id, citing_id, min(seen_at) FROM events WHERE kind = 'citation' AND seen_at >= ?"
                " GROUP BY paper_id, citing_id", (iso(T0),)) if p in tracked}
            # Announced first by a source (its event has no snapshot: no page named it then), by the
            # source(s) that said it at that moment; the map may name it later (its provenance then
            # becomes `map`, so `provenance` counts only what is still source-only at the end).
            first_from: Counter[str] = Counter()
            for (src,) in db.conn.execute(
                    "SELECT group_concat(s.source) FROM events e JOIN source_citations s ON s.cited_id = e.paper_id"
                    " AND s.citing_id = e.citing_id AND s.first_seen <= e.seen_at AND s.baseline = 0"
                    " WHERE e.kind = 'citation' AND e.snapshot_id IS NULL AND e.seen_at >= ? GROUP BY e.id",
                    (iso(T0),)):
                first_from["+".join(sorted(set(src.split(","))))] += 1
            doubled = db.conn.execute("SELECT count(*) FROM (SELECT paper_id, citing_id FROM events WHERE kind ="
                                      " 'citation' GROUP BY 1, 2 HAVING count(*) > 1)").fetchone()[0]
        finally:
            db.close()
        unlisted = {(a, b) for a, b in server.call("unlisted")["unlisted"]} & truth.keys()
        stored = Counter(round((t - T0.timestamp()) / 3600) for e, t in seen.items() if e in truth)
        for k, row in enumerate(ticks, 1):
            row["stored"] = stored.get(k, 0)  # new citations stored (or learned from a source) this tick
        # The quiet tick: one more hour with nothing new on the site, measured apart (not in the
        # figures above: what it stores arrived earlier).
        q = tick(cfg.hours + 1, quiet=True)
        quiet = tick_row(q["counts"], q["cpu"])
        quiet["budget_share"] = round(quiet["map"] / cfg.budget, 4)
        return {"pages": cfg.pages, "variant": variant, "sources": sources, "hours": cfg.hours, "steady": steady,
                "quiet": quiet,
                "feeds": delays_summary(truth, seen, end),
                "unlisted": delays_summary({e: truth[e] for e in unlisted}, seen, end),
                "alerts": delays_summary({e: at for e, at in truth.items() if e[1] in tracked}, alerted, end),
                "provenance": dict(provenance), "first_from_sources": dict(first_from), "doubled_events": doubled,
                "requests": dict(by_kind), "cpu_refresh_s": round(cpu["refresh"], 1),
                "cpu_sources_s": round(cpu["sources"], 1), "ticks": ticks}
    finally:
        server.stop()
        for copy in (db_path, Path(f"{db_path}-wal"), Path(f"{db_path}-shm")):  # (the starting database is kept)
            copy.unlink(missing_ok=True)


COLUMNS = ("pages", "site", "sources", "new citations", "feeds ≤1 tick", "feeds ≤24 h", "unlisted: count, found, ≤24 h",
           "tracked: citations, ≤1 tick", "first from a source (openalex, s2; source-only at the end)", "doubled",
           "map requests (per citation stored)", "source requests a tick (openalex, s2)",
           "CPU s: refresh, sources (sources a tick)", "quiet tick: map requests (budget), CPU s refresh, sources")


def cells(r: dict) -> list[str]:
    """One result's row of the table, in COLUMNS' order."""
    f, u, a, req, prov = r["feeds"], r["unlisted"], r["alerts"], r["requests"], r["provenance"]
    q = r.get("quiet")
    first = Counter[str]()
    for who, n in r.get("first_from_sources", {}).items():
        for s in who.split("+"):
            first[s] += n
    site = sum(v for kind, v in req.items() if kind not in SOURCES)
    per_citation = f"{site / f['found']:.1f}" if f["found"] else "-"
    hours = max(1, r["hours"])
    return [f"{r['pages']:,}", r["variant"], "on" if r["sources"] else "off", f"{f['citations']:,}",
            fmt(f["within_1_tick"], True), fmt(f["within_24h"], True),
            f"{u['citations']:,}, {u['found']:,}, {fmt(u['within_24h'], True)}",
            f"{a['citations']:,}, {fmt(a['within_1_tick'], True)}",
            f"{first['openalex']:,}, {first['s2']:,} ({prov.get('openalex', 0) + prov.get('s2', 0):,})",
            str(r["doubled_events"]), f"{site:,} ({per_citation})",
            f"{req.get('openalex', 0) / hours:.1f}, {req.get('s2', 0) / hours:.1f}",
            f"{r['cpu_refresh_s']}, {r['cpu_sources_s']} ({r['cpu_sources_s'] / hours:.2f})",
            f"{q['map']:,} ({fmt(q['budget_share'], True)}), {q['cpu_refresh_s']}, {q['cpu_sources_s']}" if q else "-"]


def table(results: list[dict]) -> str:
    lines = [COLUMNS, ("---",) * len(COLUMNS), *(cells(r) for r in results)]
    return "\n".join("| " + " | ".join(line) + " |" for line in lines)


def starting_database(cfg: Config, work: Path, log: Callable[[str], None]) -> tuple[Path, int]:
    """The starting database of `cfg`'s map in `work`, built once (bench.freshness.build_template,
    then as_enriched) and reused by later runs with the same folder; and the loopback port its
    pages name (every run's site listens there)."""
    template = work / f"template-{cfg.pages}-{cfg.seed}-{cfg.tracked}.db"
    meta = template.with_suffix(".json")
    if template.exists() and meta.exists():
        port = int(json.loads(meta.read_text())["port"])
        log(f"reusing the starting database {template} (site port {port})")
        return template, port
    port = free_port()
    partial = template.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    log(f"building the starting database of {cfg.pages:,} pages")
    info = build_template(cfg, f"http://127.0.0.1:{port}", partial)
    as_enriched(partial, cfg.pages)
    partial.replace(template)
    meta.write_text(json.dumps({"port": port, **info}) + "\n")
    log(f"built in {info['setup_seconds']} s")
    return template, port


SMALL = {"pages": 400, "hours": 30, "budget": 150, "rate": 0.3, "tracked": 5}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.sources", description=__doc__.split("\n\n")[0])
    for flag, default in (("--pages", 10_000), ("--hours", 48), ("--budget", 3_600), ("--rate", DEFAULT_RATE),
                          ("--seed", 1), ("--tracked", 20)):  # as bench.freshness has them
        p.add_argument(flag, type=type(default), default=default)
    p.add_argument("--variant", default="no-sitemap", help=f"one of {', '.join(VARIANTS)}, or all (comma-separated)")
    p.add_argument("--source-lag", type=float, default=0.0, help="hours before the sources know a new paper")
    p.add_argument("--steady", action="store_true",
                   help="start the crawl in its steady state, as bench.freshness --steady does (see schedule_steady)")
    p.add_argument("--initial-age", type=float, default=1.0, help=argparse.SUPPRESS)
    p.add_argument("--small", action="store_true", help=f"a run of seconds: {SMALL}")
    p.add_argument("--sources", choices=("on", "off", "both"), default="both",
                   help="run each variant with the open sources on, off, or both (default)")
    p.add_argument("--work", type=Path, default=None,
                   help="folder for the databases; its starting database is kept and reused (default: a temporary one)")
    p.add_argument("--json", type=Path, default=None)
    p.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.serve:
        serve(a.pages, a.seed, a.rate, a.variant, a.source_lag, a.port, a.initial_age)
        return 0
    if a.small:
        for k, v in SMALL.items():
            if getattr(a, k) == p.get_default(k):
                setattr(a, k, v)
    variants = list(VARIANTS) if a.variant == "all" else a.variant.split(",")
    if any(v not in VARIANTS for v in variants):
        p.error(f"--variant: one of {', '.join(VARIANTS)} or all")
    cfg = Config(a.pages, a.hours, a.budget, a.rate, a.seed, a.tracked)

    def log(s: str) -> None:
        print(f"{datetime.now(UTC):%H:%M:%S} {s}", file=sys.stderr, flush=True)

    modes = {"on": (True,), "off": (False,), "both": (False, True)}[a.sources]
    with tempfile.TemporaryDirectory(prefix="mapwatch-sources-") as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        template, port = starting_database(cfg, work, log)
        results = []
        for variant in variants:
            for sources in modes:
                results.append(run_one(cfg, variant, sources, a.source_lag, port, template, work, log, a.steady))
                if a.json:
                    a.json.write_text(json.dumps(results, indent=1) + "\n")
    print(f"{cfg.pages:,} pages, {cfg.hours} ticks of 1 simulated hour, budget {cfg.budget:,}, new papers "
          f"{cfg.rate:g} of the map a day, {cfg.tracked} tracked, sources know a new paper after {a.source_lag:g} h"
          + (", steady crawl" if a.steady else ""))
    print(table(results))
    return 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
