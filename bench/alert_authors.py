"""Alerts that name their authors (docs/enrichment.md, "Before the alerts"): a tick whose refresh
stores 300 new citers of a tracked paper, papers the map has never seen, and the time from the
refresh's end to the alert about them POSTed to the fake Discord (tests/fakediscord), with the
open sources at their published rates, down, and off.

    python -m bench.alert_authors [--papers 2000] [--citers 300] [--seed 1] [--json F]
    python -m bench.alert_authors --small        (seconds; what CI runs)

The map is bench/generate.py's, ingested from its folder, its most cited paper tracked in
#alerts. The tick reads the same folder, into which `--citers` new pages were put, each citing
the tracked paper and two to four other papers of the map. The tick is
mapwatch.service.tick.Tick built as `mapwatch run` builds it (run_services), from the settings
`mapwatch run` reads ($MAPWATCH_ENRICH, the sources' APIs, $MAPWATCH_BEFORE_ALERTS): the hold,
the refresh, the step before the alerts (`DescribeNewCiters`, as mapwatch.service.run makes it),
the publish, the release, then the bot's delivery (`BotSide.deliver_alerts`: the real
MapwatchBot, connected to the fake Discord). The enrichment round a tick starts after its
alerts is left out: it comes after what is measured.

The sources are the loopback fakes of tests/scholarly_fakes.py, which answer at once; mapwatch's
PoliteClient keeps the published intervals (store/scholarly/polite.py POLITENESS: arXiv one
request every 3 s, OpenAlex 0.1 s, Semantic Scholar 1 s), so the waiting is the real one and the
sources' own answer times are left out (each real request adds its own).

Three runs in one process, each from a copy of the same database and after one quiet tick (the
feeds published, the bot connected and idle):
  up    the sources at their published rates;
  down  every source answers 503;
  off   MAPWATCH_ENRICH=off: no step before the alerts (the floor).
Each run: seconds from the refresh's end to the first alert's POST (and the step before the
alerts alone), the requests each source received, the alert's citers whose entry names their
authors and those quoting Semantic Scholar (an alert lists the first 10 new citers, "and N
more" for the rest), and of all the new citers, those whose authors and citing sentences were
stored when the alert went out.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import random
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench import generate as gen
from bench.enrich import fake_data
from bench.harness import copy_db
from mapwatch.service.tick import BeforeAlerts, Publish, Refresh
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import MapPage, PaperList, Placement
from tests.scholarly_fakes import ScholarlyFakes, s2_citation, serve_scholarly

if TYPE_CHECKING:
    from sqlite_utils import Database

    from mapwatch.feeds.publish_report import PublishReport
    from mapwatch.service.tick import Threads
    from mapwatch.store.sources.refresh_report import RefreshReport
    from tests.fakediscord import FakeDiscord

RUNS = ("up", "down", "off")
SMALL = {"papers": 300, "citers": 120}
CONTACT = "bench@example.org"
NEW_MONTH = "2611"  # the new citers' ids: a month no page of the map is from (snapshot 1 ends in October)


@dataclass(frozen=True)
class TimedRefresh(Refresh):
    """The tick's refresh, noting when each ends (time.monotonic: the fake Discord's clock too)."""

    ends: list[float] = field(default_factory=list)

    async def __call__(self, db: Database, clock: Callable[[], datetime], threads: Threads) -> RefreshReport:
        report = await super().__call__(db, clock, threads)
        self.ends.append(time.monotonic())
        return report


@dataclass(frozen=True)
class TimedPublish(Publish):
    """The tick's publish, noting when each starts and ends."""

    spans: list[tuple[float, float]] = field(default_factory=list)

    def __call__(self, db: Database, clock: Callable[[], datetime]) -> PublishReport:
        started = time.monotonic()
        report = super().__call__(db, clock)
        self.spans.append((started, time.monotonic()))
        return report


def timed(step: BeforeAlerts | None, spans: list[tuple[float, float]]) -> BeforeAlerts | None:
    """`step`, noting when each call starts and ends."""
    if step is None:
        return None

    async def before_alerts(after_event: int, clock: Callable[[], datetime]) -> None:
        started = time.monotonic()
        try:
            await step(after_event, clock)
        finally:
            spans.append((started, time.monotonic()))

    return before_alerts


class Lines(logging.Handler):
    """What a logger says while a run goes on."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(f"{record.levelname} {record.getMessage()}")


@contextlib.contextmanager
def heard(name: str) -> Iterator[list[str]]:
    log = logging.getLogger(name)
    handler, level = Lines(), log.level
    log.addHandler(handler)
    log.setLevel(logging.INFO)
    try:
        yield handler.lines
    finally:
        log.removeHandler(handler)
        log.setLevel(level)


@contextlib.contextmanager
def discord_py_restored() -> Iterator[None]:
    """discord.py's endpoints as they were after the block (they are process-wide)."""
    import discord.gateway
    import discord.http

    saved = discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY
    try:
        yield
    finally:
        discord.http.Route.BASE, discord.gateway.DiscordWebSocket.DEFAULT_GATEWAY = saved


# -- the map, the new citers, the sources ---------------------------------------------------------

@dataclass(frozen=True)
class Scenario:
    folder: Path  # the map's pages (the source of every tick)
    template: Path  # the database before the tick: the map ingested
    new_pages: Path  # the new citers' pages, put into `folder` for the measured tick
    tracked: str
    citers: tuple[str, ...]
    fakes: ScholarlyFakes


def new_citer_page(m: gen.SyntheticMap, pid: str, k: int, cites: Sequence[int], rng: random.Random) -> MapPage:
    """A new paper's page: no citers, building on `cites` (the tracked paper first)."""
    d = m.dirs[m.main_dir[cites[rng.randrange(len(cites))]]]
    items = tuple(gen._listed(m, j, n + 1) for n, j in enumerate(cites))
    return MapPage(id=pid, title=gen._title(rng), arxiv_url=f"https://arxiv.org/abs/{pid}",
                   map_url=f"{gen.HOST}/paper/{pid}/", cited_by=0, data_through=gen.DATA_THROUGH[1],
                   direction=d.name, direction_count=d.in_area, area=d.area, refs_in_map=len(cites),
                   refs_total=len(cites) + rng.randint(0, 20), first_posted=date(2026, 11, 1 + k % 12),
                   placements=(Placement(breadcrumb=d.breadcrumb, area=d.area, direction=d.name, slug=d.slug,
                                         url=d.url),),
                   builds_on=PaperList(shown=len(cites), total=len(cites), items=items), built_on_by=None,
                   abstract=gen._abstract(m.seed, m.n + k))


def build(work: Path, papers: int, citers: int, seed: int) -> Scenario:
    """The map (ingested into the template database), the new citers' pages kept apart, and the
    sources' fakes knowing the new citers: arXiv and OpenAlex their authors (bench/enrich.py's),
    Semantic Scholar the tracked paper's citations, old and new, each with a sentence."""
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths

    m = gen.build_map(papers, seed)
    folder, new_pages, template = work / "map", work / "new-citers", work / "template.db"
    gen.write_map(m, folder, 1)
    if (folder / NEW_MONTH).exists():
        raise RuntimeError(f"the map already has pages of {NEW_MONTH}")
    db = open_db(template)
    ingest_paths(db, [folder])
    db.close()
    t = max(range(m.n), key=lambda i: (len(m.citers[i]), -i))
    rng = random.Random(seed * 31 + 7)
    ids = [f"{NEW_MONTH}.{90_000 + k:05d}" for k in range(citers)]
    others = [i for i in range(m.n) if i != t]
    for k, pid in enumerate(ids):
        page = new_citer_page(m, pid, k, [t, *rng.sample(others, rng.randint(2, 4))], rng)
        path = gen.page_path(new_pages, pid)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(format_page(page), encoding="utf-8")
    fakes = fake_data(ids, 6, rng)
    old = [m.ids[i] for i in m.citers[t]]
    fakes.s2[m.ids[t]] = [s2_citation(c, [f"Building on {m.ids[t]}, we ..."], ["background"], False) for c in old] + [
        s2_citation(c, [f"We adopt the method of {m.ids[t]} for our setting."], ["methodology"], k % 4 == 0)
        for k, c in enumerate(ids)]
    return Scenario(folder, template, new_pages, m.ids[t], tuple(ids), fakes)


# -- one run ------------------------------------------------------------------------------------

def environment(run: str, fakes: ScholarlyFakes) -> dict[str, str]:
    """The settings `mapwatch run` would read for `run` (the sources' APIs point at the fakes)."""
    if run == "off":
        return {"MAPWATCH_ENRICH": "off"}
    return {**fakes.env(), "MAPWATCH_CONTACT": CONTACT}


def entries(description: str) -> list[str]:
    """An alert's citers, each entry from its bullet line to the next."""
    out: list[str] = []
    for line in description.splitlines():
        if line.startswith("• "):
            out.append(line)
        elif out:
            out[-1] += "\n" + line
    return out


def read_alert(description: str, sc: Scenario) -> dict[str, int]:
    """How many of the new citers the alert names, with their authors, with Semantic Scholar's sentence."""
    shown = [(pid, e) for e in entries(description) for pid in sc.citers if f"`{pid}`" in e]
    return {"shown": len(shown),
            "with_authors": sum(1 for pid, e in shown if sc.fakes.arxiv[pid].authors[0][0] in e),
            "with_s2": sum(1 for _pid, e in shown if "— Semantic Scholar" in e)}


def stored(db_path: Path, sc: Scenario) -> dict[str, int]:
    """Of the new citers, those with authors stored, and with the tracked paper's citing sentence."""
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.rows import rows_in_chunks

    db = open_db(db_path)
    try:
        authors = rows_in_chunks(db, "SELECT DISTINCT paper_id FROM paper_authors WHERE paper_id IN ({})", sc.citers)
        contexts = rows_in_chunks(db, "SELECT citing_id FROM citation_contexts WHERE cited_id = ? AND citing_id"
                                  " IN ({})", sc.citers, [sc.tracked])
        return {"authors": len(authors), "s2_sentences": len(contexts)}
    finally:
        db.close()


async def run_one(run: str, sc: Scenario, work: Path) -> dict[str, Any]:
    """A quiet tick, then the tick that stores the new citers; what it took to alert them."""
    from mapwatch.feeds.serving.health import Health
    from mapwatch.feeds.serving.metrics import Metrics
    from mapwatch.service.run import _before_alerts, _bot_side
    from mapwatch.service.settings import RunSettings
    from mapwatch.service.tick import Tick
    from mapwatch.store.clock import utc_now
    from mapwatch.store.database.db import open_db
    from mapwatch.store.environment import Environment
    from mapwatch.store.scholarly.enrich import EnrichSettings
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.subscriptions import tracking
    from tests.fakediscord import FakeDiscord

    db_path, out_dir = work / f"{run}.db", work / f"{run}-feeds"
    copy_db(sc.template, db_path)
    shutil.rmtree(sc.folder / NEW_MONTH, ignore_errors=True)
    sc.fakes.fault.update(dict.fromkeys(sc.fakes.fault, "down" if run == "down" else None))
    env = Environment.read(environment(run, sc.fakes))
    fake: FakeDiscord = await FakeDiscord().start()
    channel = fake.guild.channel("alerts").id
    db = open_db(db_path)
    tracking.add_track(db, guild_id=fake.guild.id, channel_id=channel, user_id=None, paper_id=sc.tracked,
                       created_by=fake.user.id, now=utc_now())
    db.close()
    settings = RunSettings(db_path=db_path, source=str(sc.folder), out_dir=out_dir, port=0,
                           enrich=EnrichSettings.from_environment(env), before_alerts=env.before_alerts_seconds(),
                           token=fake.token, discord_api=fake.api_base, discord_gateway=fake.gateway_url,
                           alert_interval=env.alert_seconds(), client_kwargs={"guild_ready_timeout": 0.05})
    bot_side = _bot_side(settings, Metrics(db_path, Health(db_path)), lambda _: None)
    assert bot_side is not None
    spans: list[tuple[float, float]] = []
    refresh = TimedRefresh(settings.source, tracking.tracked_paper_ids, HttpOptions(deadline=settings.tick_deadline))
    publish = TimedPublish(settings.out_dir, "http://127.0.0.1:8080")
    tick = Tick(settings.db_path, refresh, publish,
                [bot_side.deliver_alerts], None, nice=settings.nice,
                before_alerts=timed(_before_alerts(settings), spans), before_alerts_seconds=settings.before_alerts)
    try:
        async with fake.connected(bot_side.make_bot()) as bot:
            bot_side.current.append(bot)
            await tick.run(utc_now())  # the tick before: the feeds published, nothing new
            await asyncio.to_thread(shutil.copytree, sc.new_pages / NEW_MONTH, sc.folder / NEW_MONTH)
            sc.fakes.requests.clear()
            spans.clear()
            publish.spans.clear()
            with heard("mapwatch.enrich") as said:
                started = time.monotonic()
                result = await tick.run(utc_now())
            posts = fake.requests_to("POST", f"/channels/{channel}/messages")
            if not posts:
                raise RuntimeError(f"run {run}: no alert was posted; the tick: {result.refresh.summary()}")
            [message] = fake.channel_messages(channel)
    finally:
        tick.close()
        await fake.close()
        shutil.rmtree(sc.folder / NEW_MONTH, ignore_errors=True)
    end = refresh.ends[-1]
    first = posts[0].at
    requests = Counter(r.source for r in sc.fakes.requests)
    return {
        "run": run, "sources": list(settings.enrich.sources) if settings.enrich else [],
        "before_alerts_step": bool(spans),
        "new_citations": result.refresh.new_citations,
        "seconds_refresh_to_alert": round(first - end, 3), "seconds_tick_to_alert": round(first - started, 3),
        "seconds_refresh": round(end - started, 3),
        "seconds_before_alerts": round(spans[-1][1] - spans[-1][0], 3) if spans else None,
        "seconds_publish": round(publish.spans[-1][1] - publish.spans[-1][0], 3),
        "seconds_publish_end_to_alert": round(first - publish.spans[-1][1], 3),
        "requests": {s: requests.get(s, 0) for s in ("arxiv", "openalex", "s2")},
        "arxiv_starts": [round(r.at - end, 2) for r in sc.fakes.seen("arxiv")],
        "alert": {"title": message.embed.get("title"), **read_alert(message.embed.get("description", ""), sc)},
        "stored": stored(db_path, sc), "citers": len(sc.citers), "log": said,
    }


async def measure(sc: Scenario, work: Path, runs: Sequence[str] = RUNS) -> list[dict[str, Any]]:
    with discord_py_restored(), serve_scholarly(sc.fakes):
        return [await run_one(run, sc, work) for run in runs]


# -- the report ---------------------------------------------------------------------------------

def table(results: Sequence[dict[str, Any]]) -> str:
    head = ("| run | refresh end → first alert | the step before the alerts | requests: arXiv, OpenAlex, S2 "
            "| alert entries naming the authors | alert entries quoting S2 | new citers with authors stored "
            "| with S2's sentence stored |")
    rows = [head, "|---|---|---|---|---|---|---|---|"]
    for r in results:
        a, s, q, n = r["alert"], r["stored"], r["requests"], r["citers"]
        before = "none" if r["seconds_before_alerts"] is None else f"{r['seconds_before_alerts']:.2f} s"
        rows.append(f"| {r['run']} | {r['seconds_refresh_to_alert']:.2f} s | {before} "
                    f"| {q['arxiv']}, {q['openalex']}, {q['s2']} | {a['with_authors']} of {a['shown']} shown "
                    f"| {a['with_s2']} of {a['shown']} | {s['authors']} of {n} ({s['authors'] / n:.0%}) "
                    f"| {s['s2_sentences']} of {n} |")
    return "\n".join(rows)


def ratios(results: Sequence[dict[str, Any]]) -> dict[str, float]:
    by = {r["run"]: r["seconds_refresh_to_alert"] for r in results}
    floor = by.get("off")
    return {f"{run}/off": round(v / floor, 1) for run, v in by.items() if floor and run != "off"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.alert_authors", description=__doc__.split("\n\n")[0])
    p.add_argument("--papers", type=int, default=2_000, help="pages of the generated map (default 2,000)")
    p.add_argument("--citers", type=int, default=300, help="new citers the tick stores (default 300)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--runs", default=",".join(RUNS), help=f"some of {', '.join(RUNS)}, comma-separated")
    p.add_argument("--small", action="store_true", help=f"a run of seconds: {SMALL}")
    p.add_argument("--work", type=Path, default=None, help="folder for the map and the databases (default: temporary)")
    p.add_argument("--json", type=Path, default=None)
    a = p.parse_args(argv)
    if a.small:
        for k, v in SMALL.items():
            if getattr(a, k) == p.get_default(k):
                setattr(a, k, v)
    runs = [r for r in a.runs.split(",") if r]
    if not runs or set(runs) - set(RUNS):
        p.error(f"--runs: some of {', '.join(RUNS)}")

    def log(s: str) -> None:
        print(f"{datetime.now().astimezone():%H:%M:%S} {s}", file=sys.stderr, flush=True)

    with tempfile.TemporaryDirectory(prefix="mapwatch-alert-authors-") as tmp:
        work = a.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        t = time.perf_counter()
        sc = build(work, a.papers, a.citers, a.seed)
        log(f"map of {a.papers:,} pages, {a.citers} new citers of {sc.tracked}: built in "
            f"{timedelta(seconds=round(time.perf_counter() - t))}")
        results = asyncio.run(measure(sc, work, runs))
    for r in results:
        log(f"{r['run']}: {r['seconds_refresh_to_alert']:.2f} s from the refresh's end to the alert; "
            f"{r['requests']}; arXiv at {r['arxiv_starts']} s; " + " | ".join(r["log"]))
    out = {"papers": a.papers, "citers": a.citers, "seed": a.seed, "tracked": sc.tracked, "runs": results,
           "ratios": ratios(results)}
    if a.json:
        a.json.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    print(f"{a.papers:,}-page map, {a.citers} new citers of the tracked paper {sc.tracked} in one tick; "
          f"ratios to the floor: {out['ratios']}")
    print(table(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
