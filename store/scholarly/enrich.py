"""One enrichment round (docs/enrichment.md): ask each source about the papers due, politely,
and store what it says, batch by batch.

The sources are asked side by side (each its own host, rate and client), so a slow one
delays only itself; the database work runs in one thread of its own (sqlite connections are
single-thread), the parsing in worker threads, never on the loop. A source that is down, too
slow or asks to wait too long is left for the next round with one line (`SourceReport.down`);
the batch it was asked about is marked failed (asked again after an hour; failing again, after
twice as long as the time before, up to a day), and nothing stored before is touched.
`fetch_*` do the I/O, `parse_*` (store/scholarly/parse.py) read, `save_*`
(store/scholarly/saved.py) write.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.records import CitationContext, FoundCiter, OpenAlexWork
from mapwatch.store.scholarly import budget, new_works, saved
from mapwatch.store.scholarly.budget import Budget, Rules
from mapwatch.store.scholarly.discovered import save_found_citers
from mapwatch.store.scholarly.parse import (
    Malformed,
    openalex_doi,
    parse_arxiv,
    parse_openalex,
    parse_s2_citations,
    parse_s2_count,
)
from mapwatch.store.scholarly.polite import POLITENESS, BadAnswer, OutOfTime, PoliteClient, Politeness, SourceDown
from mapwatch.store.settings_table import BeyondArxivMode, SourceCitationsMode, SourceSettings

if TYPE_CHECKING:
    from sqlite_utils import Database

    from mapwatch.store.environment import Environment

T = TypeVar("T")

FAILURE_KINDS = ("down", "bad_answer", "bound")  # SourceReport.failures (the metrics' `kind`)

DEFAULT_LIMIT = 10_000  # papers per source and round (arXiv: 100 requests, 5 minutes)
ARXIV_BATCH = 100  # ids per arXiv request (its `id_list`)
OPENALEX_BATCH = 50  # DOIs per OpenAlex request (its filter takes up to 50 values OR-ed with `|`)
OPENALEX_MAX_PAGES = 3  # per batch: one answers it unless OpenAlex holds duplicate works
S2_PAGE = 1000  # citations per Semantic Scholar request (its most)
S2_MAX_PAGES = 10  # per paper and round: 10,000 citers
MAX_BAD_ANSWERS = 3  # malformed answers in a row before a source is left for the next round
S2_FIELDS = "contexts,intents,isInfluential,externalIds,title,year"  # the last two: a citer's stub
OPENALEX_SELECT = "id,doi,ids,authorships,primary_location,locations"
HOUR = timedelta(hours=1)
FAILED_WAITS = f"{saved.REFETCH['failed'] // HOUR} to {saved.FAILED_WAIT_MOST // HOUR} hours"  # a failed paper's wait


@dataclass(frozen=True)
class EnrichSettings:
    """What a round asks and how: the sources (in order), their base URLs, the contact
    address and the Semantic Scholar key (never shown: repr leaves it out), the papers per
    source, each source's politeness."""

    sources: tuple[str, ...]
    apis: Mapping[str, str]
    contact: str | None = None
    s2_key: str | None = field(default=None, repr=False)
    limit: int = DEFAULT_LIMIT
    politeness: Mapping[str, Politeness] = field(default_factory=lambda: dict(POLITENESS))
    source_citations: SourceCitationsMode = "include"  # $MAPWATCH_SOURCE_CITATIONS
    bounds: Rules = field(default_factory=Rules)  # how much a source may add (store/scholarly/budget.py)
    retry_failed: bool = False  # the papers whose last ask failed are due now (`enrich --retry-failed`)
    beyond_arxiv: BeyondArxivMode = "include"  # $MAPWATCH_BEYOND_ARXIV: citers without an arXiv id

    @property
    def discover(self) -> bool:
        """Whether the sources are asked for citers the map does not name (store/scholarly/discovered.py)."""
        return self.source_citations != "off"

    @property
    def source_settings(self) -> SourceSettings:
        """The sources and $MAPWATCH_SOURCE_CITATIONS, as the bot's `/why` reports them."""
        return SourceSettings(self.sources, self.source_citations)

    @classmethod
    def from_environment(cls, env: Environment) -> EnrichSettings:
        """$MAPWATCH_ENRICH, the three API bases, $MAPWATCH_CONTACT, $MAPWATCH_S2_KEY, each
        checked (BadSetting names a bad one)."""
        return cls(env.enrich_sources(), env.source_apis(), env.contact_address(), env.s2_api_key(),
                   source_citations=env.source_citations(), beyond_arxiv=env.beyond_arxiv())

    def only(self, source: str) -> EnrichSettings:
        return replace(self, sources=(source,))


@dataclass
class SourceReport:
    """What one source gave in a round."""

    source: str
    due: int = 0  # papers due when the round began (at most the limit)
    asked: int = 0
    found: int = 0
    not_found: int = 0
    failed: int = 0
    requests: int = 0
    stored: int = 0  # rows of records, authors or contexts written
    discovered: int = 0  # citations no map page names, added (or held back by `omit`)
    unchanged: int = 0  # papers whose citation count had not moved: their citers not read again
    down: str | None = None  # why it was left for the next round (one line)
    unreachable: bool = False  # down: not answering, too slow, or asking to wait too long (polite.SourceDown)
    bounds: list[str] = field(default_factory=list)  # the bounds it reached (store/scholarly/budget.py), a line each
    problems: list[str] = field(default_factory=list)  # failed requests' reasons (the first few)
    out_of_time: bool = False
    failed_waiting: int = 0  # with nothing due: the papers that failed before and wait to be asked again
    failed_due: str = ""  # when the first of them is due: "06:10 UTC", "7 Dec 06:10 UTC"

    def summary(self, retry: str = "") -> str:
        """One line: what was asked and what came of it; "unavailable this round" first when the
        source was left for the next round; "nothing due", and why when papers that failed
        wait, when there was nothing to ask (`retry`: how to ask them at once, e.g. a flag)."""
        requests = f"{self.requests:,} request{'' if self.requests == 1 else 's'}"
        if self.due:
            text = (f"{self.asked:,} of {self.due:,} due asked in {requests}, {self.found:,} found, "
                    f"{self.not_found:,} not found, {self.failed:,} failed")
        else:
            text = "nothing due"
            if self.failed_waiting:
                text += (f" ({self.failed_waiting:,} paper{'' if self.failed_waiting == 1 else 's'} failed in an "
                         f"earlier round: asked again from {self.failed_due}{retry})")
            if self.requests:  # OpenAlex's new works, Semantic Scholar's counts
                text += f", {requests}"
        if self.down:
            text = f"unavailable this round; {text}"
        text = f"{self.source}: {text}"
        if self.discovered:
            text += f", {self.discovered:,} citations the map does not name"
        if self.unchanged:
            text += f", {self.unchanged:,} with the same citation count (not read again)"
        if self.out_of_time:
            text += "; the rest next round (time up)"
        return text

    def failures(self) -> list[str]:
        """What went wrong with the source this round, of FAILURE_KINDS: `down` (it did not
        answer, was too slow, or asked to wait too long), `bad_answer` (an answer it could not
        read: an error status, a malformed or hostile body), `bound` (it reached a bound of what it
        may add, store/scholarly/budget.py)."""
        return [kind for kind, happened in (("down", self.unreachable), ("bad_answer", bool(self.problems)),
                                            ("bound", bool(self.bounds))) if happened]

    @property
    def outcome(self) -> str:
        """`failed` (down, or an answer it could not read), `ok` (asked, and every answer read),
        or `idle` (nothing asked: nothing was due, or the round's time was up first)."""
        if self.unreachable or self.problems:
            return "failed"
        return "ok" if self.requests else "idle"

    def failure(self) -> str | None:
        """Why the source failed this round, in a few words (None: it did not)."""
        if self.unreachable:
            return f"unavailable ({self.down})"
        if self.problems:
            return f"answered badly ({self.problems[0]}; {self.failed:,} papers failed)"
        return None


def _hour(when: datetime, now: datetime) -> str:
    """06:10 UTC, with the day when it is not today ("7 Dec 06:10 UTC")."""
    when = when.astimezone(UTC)
    day = "" if when.date() == now.astimezone(UTC).date() else f"{when.day} {when:%b} "
    return f"{day}{when:%H:%M} UTC"


@dataclass
class RoundReport:
    sources: dict[str, SourceReport] = field(default_factory=dict)
    seconds: float = 0.0

    def down(self) -> dict[str, str]:
        """source -> why it was left for the next round."""
        return {s: r.down for s, r in self.sources.items() if r.down}

    def troubles(self) -> dict[str, str]:
        """source -> what went wrong with it this round: why it was down, else its first bad
        answer and how many papers it failed."""
        out = dict(self.down())
        for s, r in self.sources.items():
            if s not in out and r.problems:
                out[s] = f"{r.problems[0]}; {r.failed:,} papers failed, asked again in {FAILED_WAITS}"
        return out

    def trouble_lines(self) -> list[str]:
        """One line per source that was down or answered badly, and per bound a source reached
        (what it may add in a round or a day, or in one answer): what `run` logs once a round."""
        lines = []
        for s, why in self.troubles().items():
            if s in self.down():
                lines.append(f"enrichment: {s} is unavailable this round ({why}); the map, feeds and alerts "
                             "go on, enrichment resumes next round")
            else:
                lines.append(f"enrichment: {s} answered badly ({why})")
        return lines + [f"enrichment: {line}" for r in self.sources.values() for line in r.bounds]

    def summary(self, retry: str = "") -> str:
        return "; ".join(r.summary(retry) for r in self.sources.values()) or "no source asked"


class _Round:
    """The shared parts of one round: its database thread and connection, clock, progress."""

    def __init__(self, db_path: str | Path | None, settings: EnrichSettings, sessions: Mapping[str, Any], clock: Clock,
                 progress: Callable[[int, int], None] | None, deadline: float | None,
                 monotonic: Callable[[], float], sleep: Callable[[float], Awaitable[object]]) -> None:
        self.db_path = db_path
        self.settings = settings
        self.sessions = sessions
        self.clock = clock
        self.progress = progress
        self.deadline = deadline
        self.monotonic = monotonic
        self.sleep = sleep
        self.writer = ThreadPoolExecutor(1, thread_name_prefix="mapwatch-enrich")
        self.db: Database | None = None
        self.total = 0
        self.done = 0
        # The tracked and team papers, whose newest citers are asked for (the sources asked for citers).
        self.tracked: Sequence[str] = ()
        self.team: Sequence[str] = ()
        self.followed: Sequence[str] = ()  # the papers of followed directions (their newest citers, daily)
        self.new_works = True  # OpenAlex's passes over new works follow its papers (not before alerts)
        # What each source asked for citers may still add (store/scholarly/budget.py).
        self.budgets: dict[str, Budget] = {}

    async def in_db(self, fn: Callable[..., T], *args: Any) -> T:
        assert self.db is not None
        return await asyncio.get_running_loop().run_in_executor(self.writer, functools.partial(fn, self.db, *args))

    def client(self, source: str) -> PoliteClient:
        s = self.settings
        key = s.s2_key if source == "s2" else None
        return PoliteClient(self.sessions[source], source, s.politeness[source], s.contact,
                            headers={"x-api-key": key} if key else {}, secrets=(key,) if key else (),
                            deadline=self.deadline, monotonic=self.monotonic, sleep=self.sleep)

    def advance(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)


async def _batches(rnd: _Round, report: SourceReport, client: PoliteClient, due: Sequence[str], size: int,
                   ask: Callable[[Sequence[str]], Awaitable[None]], *, mark_failed: bool = True) -> None:
    """Ask about `due` in batches of `size`; a bad answer fails its batch, a source down ends the source.
    `mark_failed`: record a failed batch as failed (asked again later); False leaves the papers'
    schedule as it was (the step before the alerts, store/scholarly/before_alerts.py)."""

    async def failed(batch: Sequence[str], reason: str) -> None:
        if mark_failed:
            await rnd.in_db(saved.save_status, batch, report.source, "failed", rnd.clock(), reason)

    bad_in_a_row = 0
    for i in range(0, len(due), size):
        batch = due[i:i + size]
        try:
            await ask(batch)
            bad_in_a_row = 0
        except OutOfTime:
            report.out_of_time = True
            return
        except SourceDown as e:
            report.down, report.unreachable = client.scrub(str(e)), True
            report.asked += len(batch)
            report.failed += len(batch)
            await failed(batch, report.down)
            return
        except (BadAnswer, Malformed) as e:
            reason = client.scrub(str(e))
            report.failed += len(batch)
            if len(report.problems) < 5:
                report.problems.append(reason)
            await failed(batch, reason)
            bad_in_a_row += 1
            if bad_in_a_row >= MAX_BAD_ANSWERS:
                report.down = f"{bad_in_a_row} bad answers in a row, the last: {reason}"
                return
        finally:
            report.requests = client.requests
        report.asked += len(batch)
        rnd.advance(len(batch))


# -- arXiv -------------------------------------------------------------------------------


async def fetch_arxiv(client: PoliteClient, base: str, ids: Sequence[str]) -> bytes:
    """arXiv's API answer for `ids` (one `id_list` request)."""
    status, body = await client.get(base, {"id_list": ",".join(ids), "max_results": str(len(ids))})
    if status != 200:
        raise BadAnswer(f"HTTP {status}")
    return body


async def _arxiv(rnd: _Round, report: SourceReport, due: Sequence[str]) -> None:
    client = rnd.client("arxiv")
    base = rnd.settings.apis["arxiv"]

    async def ask(batch: Sequence[str]) -> None:
        body = await fetch_arxiv(client, base, batch)
        records = await asyncio.to_thread(parse_arxiv, body, batch)
        await rnd.in_db(saved.save_arxiv, records, batch, rnd.clock())
        report.found += len(records)
        report.not_found += len(batch) - len(records)
        report.stored += len(records) + sum(len(r.authors) for r in records)

    await _batches(rnd, report, client, due, ARXIV_BATCH, ask)


# -- OpenAlex ----------------------------------------------------------------------------


async def fetch_openalex(client: PoliteClient, base: str, ids: Sequence[str], page: int = 1) -> bytes:
    """One page of OpenAlex's `/works` filtered by the papers' arXiv DOIs."""
    params = {"filter": "doi:" + "|".join(openalex_doi(p) for p in ids), "per-page": str(OPENALEX_BATCH),
              "page": str(page), "select": OPENALEX_SELECT}
    if client.contact:
        params["mailto"] = client.contact  # the polite pool
    status, body = await client.get(f"{base}/works", params)
    if status != 200:
        raise BadAnswer(f"HTTP {status}")
    return body


async def _openalex(rnd: _Round, report: SourceReport, due: Sequence[str]) -> None:
    client = rnd.client("openalex")
    base = rnd.settings.apis["openalex"]

    async def ask(batch: Sequence[str]) -> None:
        works: list[OpenAlexWork] = []
        for page in range(1, OPENALEX_MAX_PAGES + 1):
            body = await fetch_openalex(client, base, batch, page)
            got = await asyncio.to_thread(parse_openalex, body, batch)
            works.extend(got.works)
            if got.count <= page * OPENALEX_BATCH:
                break
        firsts = list({w.paper_id: w for w in reversed(works)}.values())  # the first work of each paper
        await rnd.in_db(saved.save_openalex, firsts, batch, rnd.clock())
        report.found += len(firsts)
        report.not_found += len(batch) - len(firsts)
        report.stored += len(firsts) + sum(len(w.authors) for w in firsts)

    await _batches(rnd, report, client, due, OPENALEX_BATCH, ask)
    if (rnd.new_works and rnd.settings.discover and not report.down and not report.out_of_time
            and not report.problems):
        await _new_works(rnd, report, client, base)


async def _read_works(rnd: _Round, report: SourceReport, client: PoliteClient, base: str,
                      params: Callable[[str], dict[str, str]], max_pages: int,
                      beyond_arxiv: bool = False) -> tuple[int, int, bool]:
    """Page through one `/works` query of new works (by cursor, at most `max_pages`), storing
    the citations of map papers among their references page by page: (works, citations,
    whether it was read to the end). It stops when OpenAlex reaches a bound of what it may add
    (store/scholarly/budget.py): no further page is asked for. `beyond_arxiv`: works without
    an arXiv id are citers too (store/scholarly/new_works.py)."""
    include = rnd.settings.source_citations == "include"
    spending = rnd.budgets["openalex"]
    cursor, works, citations = "*", 0, 0
    try:
        for _ in range(max_pages):
            status, body = await client.get(f"{base}/works", params(cursor))
            if status != 200:
                raise BadAnswer(f"HTTP {status}")
            page = await asyncio.to_thread(functools.partial(new_works.parse_new_works, beyond_arxiv=beyond_arxiv),
                                           body)
            found = await rnd.in_db(functools.partial(new_works.save_new_works, include=include, budget=spending),
                                    page.works, rnd.clock())
            works += len(page.works)
            citations += found.new + found.held
            report.discovered += found.new + found.held
            if spending.spent:
                return works, citations, False
            if page.next_cursor is None or not page.works:
                break
            cursor = page.next_cursor
    finally:
        report.requests = client.requests
    return works, citations, True


async def _new_works(rnd: _Round, report: SourceReport, client: PoliteClient, base: str) -> None:
    """The passes over OpenAlex's new arXiv works that are due, then the newest citers of the
    tracked and team papers (store/scholarly/new_works.py). A pass stopped by a bound of what
    OpenAlex may add is not finished (read again next round, within the day's bound), and
    nothing more is asked this round."""
    what = "new works"
    spending = rnd.budgets["openalex"]
    try:
        for day, lag in await rnd.in_db(new_works.days_due, rnd.clock().date()):
            if spending.spent:
                return
            what = f"new works of {day}"
            works, citations, whole = await _read_works(
                rnd, report, client, base, functools.partial(new_works.new_works_params, day, contact=client.contact),
                new_works.NEW_WORKS_MAX_PAGES)
            if whole:
                await rnd.in_db(new_works.finish_day, day, lag, works, citations, rnd.clock())
        what = "the newest citers of tracked, team and followed papers"
        due = await rnd.in_db(new_works.recent_due, rnd.tracked, rnd.team, rnd.clock(), rnd.followed)
        since = rnd.clock().date() - timedelta(days=new_works.RECENT_DAYS)
        for i in range(0, len(due), new_works.CITES_BATCH):
            if spending.spent:
                return
            batch = due[i:i + new_works.CITES_BATCH]
            cited = list(dict.fromkeys(w for _, w in batch))
            _, _, whole = await _read_works(
                rnd, report, client, base,
                functools.partial(new_works.recent_citers_params, cited, since, contact=client.contact),
                new_works.RECENT_MAX_PAGES, beyond_arxiv=rnd.settings.beyond_arxiv == "include")
            if whole:
                await rnd.in_db(new_works.asked_recent, [p for p, _ in batch], rnd.clock())
    except OutOfTime:
        report.out_of_time = True
    except SourceDown as e:
        report.down, report.unreachable = client.scrub(str(e)), True
    except (BadAnswer, Malformed) as e:  # the day, or the newest citers, are read again next round
        if len(report.problems) < 5:
            report.problems.append(f"{what}: {client.scrub(str(e))}")


# -- Semantic Scholar --------------------------------------------------------------------


async def fetch_s2_count(client: PoliteClient, base: str, paper_id: str) -> int | None:
    """Semantic Scholar's citation count of an arXiv paper (one request); None when it does not
    answer with one (the paper unknown, an error, a malformed answer)."""
    status, body = await client.get(f"{base}/paper/arXiv:{paper_id}", {"fields": "citationCount"})
    return parse_s2_count(body) if status == 200 else None


async def fetch_s2_citations(client: PoliteClient, base: str, paper_id: str, offset: int) -> bytes | None:
    """One page of Semantic Scholar's citations of an arXiv paper; None when it does not know the paper."""
    status, body = await client.get(f"{base}/paper/arXiv:{paper_id}/citations",
                                    {"fields": S2_FIELDS, "limit": str(S2_PAGE), "offset": str(offset)})
    return body if status == 200 else None


async def _s2(rnd: _Round, report: SourceReport, due: Sequence[str]) -> None:
    client = rnd.client("s2")
    base = rnd.settings.apis["s2"]
    discover = rnd.settings.discover
    include = rnd.settings.source_citations == "include"

    async def ask(batch: Sequence[str]) -> None:
        (pid,) = batch
        count: int | None = None
        if discover:  # asked for its citers each round: one request says whether they moved
            count = await fetch_s2_count(client, base, pid)
            if count is not None and await rnd.in_db(saved.same_count, pid, "s2", count, rnd.clock(), include):
                report.found += 1
                report.unchanged += 1
                return
        wanted = await rnd.in_db(saved.citers_without_context, pid)
        contexts: list[CitationContext] = []
        citers: list[FoundCiter] = []
        offset: int | None = 0
        for _ in range(S2_MAX_PAGES):
            assert offset is not None
            body = await fetch_s2_citations(client, base, pid, offset)
            if body is None:
                await rnd.in_db(saved.save_status, [pid], "s2", "not_found", rnd.clock())
                report.not_found += 1
                return
            page = await asyncio.to_thread(parse_s2_citations, body, pid)
            contexts.extend(page.contexts)
            citers.extend(page.citers)
            offset = page.next_offset
            # Every page when asked for new citers too; else only until the map's citers are described.
            if offset is None or (not discover and wanted <= {c.citing_id for c in contexts}):
                break
        if discover:
            found = await rnd.in_db(functools.partial(save_found_citers, include=include, count=count,
                                                      budget=rnd.budgets["s2"]), pid, "s2", citers, rnd.clock())
            report.discovered += found.new + found.held
        known = await rnd.in_db(saved.known_papers, [c.citing_id for c in contexts])
        kept = [c for c in contexts if c.citing_id in known]
        await rnd.in_db(saved.save_contexts, pid, kept, rnd.clock())
        report.found += 1
        report.stored += len(kept)

    await _batches(rnd, report, client, due, 1, ask)


FETCHERS = {"arxiv": _arxiv, "openalex": _openalex, "s2": _s2}


@contextlib.asynccontextmanager
async def opened_round(db_path: str | Path | None, settings: EnrichSettings, *, clock: Clock = utc_now,
                       progress: Callable[[int, int], None] | None = None, seconds: float | None = None,
                       session: Any = None, monotonic: Callable[[], float] = time.monotonic,
                       sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> AsyncIterator[_Round]:
    """A round's shared parts, open for its asking and closed after: its database thread and
    connection, a session per source (one connection each: one request at a time) unless
    `session` is given, and its deadline (`seconds` from now: no request starts later)."""
    import aiohttp

    from mapwatch.store.database.db import open_db

    sessions = {s: session or aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1, ttl_dns_cache=300),
                                                    trust_env=False) for s in settings.sources}
    rnd = _Round(db_path, settings, sessions, clock, progress, None if seconds is None else monotonic() + seconds,
                 monotonic, sleep)
    loop = asyncio.get_running_loop()
    try:
        rnd.db = await loop.run_in_executor(rnd.writer, open_db, db_path)
        yield rnd
    finally:
        if rnd.db is not None:
            await asyncio.shield(loop.run_in_executor(rnd.writer, rnd.db.close))
        rnd.writer.shutdown(wait=False)
        if session is None:
            for own in sessions.values():
                await own.close()


TeamPapers = Mapping[int, Sequence[str]]  # each server's team papers (guild id -> paper ids)


async def enrich_round(db_path: str | Path | None, settings: EnrichSettings, *,
                       tracked: Callable[[Database], Sequence[str]] | Sequence[str] | None = None,
                       team: Callable[[Database], TeamPapers] | None = None,
                       followed: Callable[[Database], Sequence[str]] | None = None, clock: Clock = utc_now,
                       progress: Callable[[int, int], None] | None = None, seconds: float | None = None,
                       session: Any = None, monotonic: Callable[[], float] = time.monotonic,
                       sleep: Callable[[float], Awaitable[object]] = asyncio.sleep) -> RoundReport:
    """One round over `settings.sources`: the papers due (at most `settings.limit` per source;
    Semantic Scholar: the `tracked` papers with citers it has not described), asked side by
    side, stored batch by batch. The papers whose citers are asked for are handed in by the
    caller (store/subscriptions/watched.py has the readers): `tracked` (the ids, or how to read
    them), each server's `team` papers and the `followed` directions' papers; None: none.
    `seconds`: no request starts later than that from now (the rest is due next round).
    `session`: an aiohttp ClientSession (default: one for the round)."""
    started = monotonic()
    report = RoundReport({s: SourceReport(s) for s in settings.sources})
    if not settings.sources:
        return report
    async with opened_round(db_path, settings, clock=clock, progress=progress, seconds=seconds, session=session,
                            monotonic=monotonic, sleep=sleep) as rnd:
        due: dict[str, list[str]] = {}
        # The tracked papers (Semantic Scholar describes their citations) and, when the sources are
        # asked for citers (both of them), the team's papers too.
        asks_citers = settings.discover and bool({"s2", "openalex"} & set(settings.sources))
        ids: Sequence[str] = []
        if tracked is not None and ("s2" in settings.sources or asks_citers):
            ids = tracked if not callable(tracked) else await rnd.in_db(tracked)
        by_server = await rnd.in_db(team) if asks_citers and team is not None else {}
        if asks_citers:
            rnd.tracked, rnd.team = ids, sorted({pid for papers in by_server.values() for pid in papers})
        if asks_citers and "openalex" in settings.sources and followed is not None:
            rnd.followed = await rnd.in_db(followed)
        if settings.discover:
            for s in {"s2", "openalex"} & set(settings.sources):
                rnd.budgets[s] = await rnd.in_db(budget.for_round, s, settings.bounds, clock().date())
        for s in settings.sources:
            if s == "s2":
                due[s] = await rnd.in_db(functools.partial(saved.due_citations, retry_failed=settings.retry_failed),
                                         ids, clock(), settings.limit, by_server if settings.discover else None)
            else:
                due[s] = await rnd.in_db(functools.partial(saved.due_papers, retry_failed=settings.retry_failed),
                                         s, clock(), settings.limit)
            report.sources[s].due = len(due[s])
            if not due[s]:  # why, when papers that failed wait
                now = clock()
                waiting, first = await rnd.in_db(saved.failed_waiting, s, now)
                if first is not None:
                    report.sources[s].failed_waiting, report.sources[s].failed_due = waiting, _hour(first, now)
        rnd.total = sum(len(v) for v in due.values())
        rnd.advance(0)
        try:
            await asyncio.gather(*(FETCHERS[s](rnd, report.sources[s], due[s]) for s in settings.sources))
        finally:
            for s, spent in rnd.budgets.items():
                report.sources[s].bounds = list(spent.reached)
    report.seconds = monotonic() - started
    return report
