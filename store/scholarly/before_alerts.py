"""Before the alerts (docs/enrichment.md, "Before the alerts"): the new citers a tick stored
are described by the open sources before anyone is told of them, within a bound.

A tick's new citers are almost always papers the map has never seen, so at delivery they
have no byline. `describe_new_citers` asks about them at once, side by side: arXiv (`id_list`,
100 a request) and OpenAlex (by DOI, 50 a request) for their authors, the citers of watched
papers (tracked, followed, people's and teams') first; Semantic Scholar for the sentences,
intents and influence of the new citations of watched papers. Each source keeps its own
rate; no request starts after `seconds`, and whatever is still under way then is left (the
next round asks again). What is stored is the same as a round's (store/scholarly/saved.py).
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.ids import is_outside_key
from mapwatch.store.records import CitationContext
from mapwatch.store.scholarly import saved
from mapwatch.store.scholarly.enrich import (
    FETCHERS,
    S2_MAX_PAGES,
    EnrichSettings,
    RoundReport,
    SourceReport,
    _batches,
    _Round,
    fetch_s2_citations,
    opened_round,
)
from mapwatch.store.scholarly.parse import parse_s2_citations
from mapwatch.store.settings_table import DEFAULT_BEFORE_ALERTS

if TYPE_CHECKING:
    from sqlite_utils import Database

MAX_PAPERS = 1_000  # papers described before the alerts of one tick (arXiv: 10 requests); the rest: next round


@dataclass(frozen=True)
class NewCiters:
    """A tick's new citers: `papers` to describe (watched papers' citers first), and per
    watched paper that gained citers, those citers (Semantic Scholar's sentences)."""

    papers: tuple[str, ...]
    cited: tuple[tuple[str, frozenset[str]], ...]


def new_citers(db: Database, after_event: int, watched: Sequence[str]) -> NewCiters:
    """The citers in the citation events after `after_event`, and which of them cite `watched` papers."""
    rows = db.conn.execute("SELECT citing_id, paper_id FROM events WHERE id > ? AND kind = 'citation' ORDER BY id",
                           [after_event]).fetchall()
    mine = set(watched)
    rows = [(c, cited) for c, cited in rows if not is_outside_key(c)]  # (OpenAlex described those as it named them)
    first = [c for c, cited in rows if cited in mine]
    rest = [c for c, _ in rows]
    by_cited: dict[str, set[str]] = {}
    for citing, cited in rows:
        if cited in mine:
            by_cited.setdefault(cited, set()).add(citing)
    return NewCiters(tuple(dict.fromkeys([*first, *rest])),
                     tuple((p, frozenset(c)) for p, c in sorted(by_cited.items())))


def not_yet_asked(db: Database, source: str, paper_ids: Sequence[str]) -> list[str]:
    """Of `paper_ids`, in their order, those `source` never answered about (or failed on)."""
    answered = {r["paper_id"] for r in rows_in_chunks(
        db, "SELECT paper_id FROM enrichment_fetches WHERE source = ? AND status != 'failed' AND paper_id IN ({})",
        paper_ids, [source])}
    return [p for p in paper_ids if p not in answered]


async def _s2_new(rnd: _Round, report: SourceReport, cited: Sequence[tuple[str, frozenset[str]]]) -> None:
    """Semantic Scholar's sentences of each watched paper's new citations: its citations read
    page by page until every new citer is described (or the list ends)."""
    client = rnd.client("s2")
    base = rnd.settings.apis["s2"]
    wanted = dict(cited)

    async def ask(batch: Sequence[str]) -> None:
        (pid,) = batch
        found: list[CitationContext] = []
        offset: int | None = 0
        for _ in range(S2_MAX_PAGES):
            assert offset is not None
            body = await fetch_s2_citations(client, base, pid, offset)
            if body is None:
                report.not_found += 1
                return
            page = await asyncio.to_thread(parse_s2_citations, body, pid)
            found.extend(c for c in page.contexts if c.citing_id in wanted[pid])
            offset = page.next_offset
            if offset is None or {c.citing_id for c in found} >= wanted[pid]:
                break
        await rnd.in_db(functools.partial(saved.save_contexts, mark=False), pid, found, rnd.clock())
        report.found += 1
        report.stored += len(found)

    # A failure here leaves Semantic Scholar's schedule of these papers as it was: the round asks them.
    await _batches(rnd, report, client, list(wanted), 1, ask, mark_failed=False)


async def describe_new_citers(db_path: str | Path | None, settings: EnrichSettings, after_event: int, *,
                              watched: Callable[[Database], Sequence[str]] | None = None,
                              seconds: float = DEFAULT_BEFORE_ALERTS, clock: Clock = utc_now,
                              session: Any = None, monotonic: Callable[[], float] = time.monotonic,
                              sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> RoundReport:
    """Ask the sources of `settings` about the citers in the events after `after_event` (see
    the module), for at most `seconds`: a source still asking then is left, marked
    `out_of_time` in the report (its batches are asked again by the next round)."""
    started = monotonic()
    report = RoundReport({s: SourceReport(s) for s in settings.sources})
    if not settings.sources:
        return report
    async with opened_round(db_path, settings, clock=clock, seconds=seconds, session=session,
                            monotonic=monotonic, sleep=sleep) as rnd:
        rnd.new_works = False
        mine = await rnd.in_db(watched) if watched is not None else []
        news = await rnd.in_db(new_citers, after_event, mine)
        work: dict[str, Coroutine[Any, Any, None]] = {}
        for s in settings.sources:
            if s == "s2":
                report.sources[s].due = len(news.cited)
                if news.cited:
                    work[s] = _s2_new(rnd, report.sources[s], news.cited)
            else:
                due = (await rnd.in_db(not_yet_asked, s, news.papers))[:MAX_PAPERS]
                report.sources[s].due = len(due)
                if due:
                    work[s] = FETCHERS[s](rnd, report.sources[s], due)
        tasks = {s: asyncio.create_task(w, name=f"mapwatch-before-alerts-{s}") for s, w in work.items()}
        try:
            if tasks:
                await asyncio.wait(tasks.values(), timeout=max(0.0, seconds - (monotonic() - started)))
        finally:  # at the bound, or this step cancelled: nothing of it outlives the round's connections
            for s, t in tasks.items():
                if not t.done():
                    t.cancel()
                    report.sources[s].out_of_time = True
            results = await asyncio.gather(*tasks.values(), return_exceptions=True)
            for s, result in zip(tasks, results, strict=True):
                if isinstance(result, Exception):  # a bug or the database: said, the alerts go on
                    report.sources[s].down = f"{type(result).__name__}: {result}"
    report.seconds = monotonic() - started
    return report


def late_lines(report: RoundReport, seconds: float) -> list[str]:
    """One line per source the alerts went out without: down, answering badly, or still
    asking at the bound (what `run` logs once a tick, never per alert)."""
    lines = []
    troubles = report.troubles()
    for s, r in report.sources.items():
        if s in troubles:
            lines.append(f"before alerts: {s} gave nothing ({troubles[s]}); this tick's alerts go out without it")
        elif r.out_of_time:
            lines.append(f"before alerts: {s} was still answering after {seconds:g} s; this tick's alerts go out"
                         " without the rest of it (the next round asks again)")
    return lines
