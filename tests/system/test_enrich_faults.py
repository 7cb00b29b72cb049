"""When a scholarly source misbehaves (tests/scholarly_fakes.py): down, slow, 429 with a
Retry-After, malformed, endless, hanging up. The round goes on with the others, the reason is
reported once, nothing stored before is lost, and the papers it failed are asked again after
an hour. And politeness: arXiv one request every 3 s, a Retry-After honoured."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.questions.teams import team_papers_by_server
from mapwatch.store.scholarly.enrich import EnrichSettings, RoundReport, enrich_round
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from mapwatch.store.subscriptions import tracking
from tests.scholarly_fakes import ScholarlyFakes, from_seeds, serve_scholarly

FAST = {s: Politeness(0.01, timeout=1.0, max_retry_after=5.0) for s in POLITENESS}
TABLES = {"arxiv": ("arxiv_records",), "openalex": ("openalex_works", "institutions"), "s2": ("citation_contexts",)}


@pytest.fixture
def fakes(seeded_path: Path, clock) -> Iterator[ScholarlyFakes]:
    db = open_db(seeded_path)
    try:
        tracking.add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id="2412.10400", created_by=3,
                           now=clock())
        data = from_seeds(db)
    finally:
        db.close()
    with serve_scholarly(data) as served:
        yield served


def round_(fakes: ScholarlyFakes, db_path: Path, clock, **kw: Any) -> RoundReport:
    settings = EnrichSettings(("arxiv", "openalex", "s2"), fakes.apis(), "team@example.org", politeness=FAST,
                              source_citations="off")  # the faults of asking for citers: test_source_citations
    settings = replace(settings, **{k: v for k, v in kw.items() if k in ("sources", "limit", "politeness")})
    rest = {k: v for k, v in kw.items() if k not in ("sources", "limit", "politeness")}
    return asyncio.run(enrich_round(db_path, settings, tracked=tracking.tracked_paper_ids, team=team_papers_by_server,
                                    clock=clock, **rest))


def snapshot(db_path: Path, source: str) -> dict[str, list[tuple[Any, ...]]]:
    db = open_db(db_path)
    try:
        out = {t: db.conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall() for t in TABLES[source]}
        if source != "s2":
            out["paper_authors"] = db.conn.execute(
                "SELECT * FROM paper_authors WHERE source = ? ORDER BY 1, 2", [source]).fetchall()
        return out
    finally:
        db.close()


def statuses(db_path: Path) -> dict[str, int]:
    db = open_db(db_path)
    try:
        return dict(db.conn.execute("SELECT source || ':' || status, count(*) FROM enrichment_fetches GROUP BY 1"))
    finally:
        db.close()


FAULTS = ["down", "slow", "429-long", "malformed", "huge", "refuse", "moved"]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("source", ["arxiv", "openalex", "s2"])
def test_a_faulty_source_delays_only_itself(fakes: ScholarlyFakes, seeded_path: Path, clock, source: str,
                                            fault: str) -> None:
    late = fakes.s2["2412.10400"][:3]
    del fakes.s2["2412.10400"][:3]  # three citations Semantic Scholar describes only later
    first = round_(fakes, seeded_path, clock)
    assert not first.troubles()
    before = snapshot(seeded_path, source)
    assert any(before.values())
    clock.advance(days=31)  # everything due again
    fakes.fault[source] = fault
    fakes.slow_seconds = 3.0
    # A new version on arXiv, the late citations described: the sources that answer store them.
    fakes.arxiv["2412.10400"].updated = "2026-11-20T09:00:00Z"
    fakes.s2["2412.10400"][:0] = late
    r = round_(fakes, seeded_path, clock)
    lines = r.trouble_lines()
    assert len(lines) == 1 and lines[0].startswith(f"enrichment: {source} "), lines
    others = [s for s in ("arxiv", "openalex", "s2") if s != source]
    for s in others:
        o = r.sources[s]
        assert o.failed == 0 and o.due >= 1 and o.found + o.not_found == o.due, o
    assert snapshot(seeded_path, source) == before  # nothing it had said is lost
    st = statuses(seeded_path)
    assert st.get(f"{source}:failed", 0) >= 1  # what it was asked is asked again in an hour
    if source != "arxiv":
        db = open_db(seeded_path)
        assert db["arxiv_records"].get("2412.10400")["updated"] == "2026-11-20T09:00:00+00:00"
        db.close()
    # An hour later the source is back: the failed papers are asked and stored.
    fakes.fault[source] = None
    clock.advance(hours=1, minutes=1)
    again = round_(fakes, seeded_path, clock, sources=(source,))
    assert not again.troubles() and again.sources[source].found >= 1
    assert f"{source}:failed" not in statuses(seeded_path)


def test_a_malformed_answer_fails_its_batch_and_three_in_a_row_end_the_source(fakes: ScholarlyFakes,
                                                                               seeded_path: Path, clock) -> None:
    fakes.fault["openalex"] = "malformed"
    r = round_(fakes, seeded_path, clock, sources=("openalex",), limit=40)  # one batch
    assert r.sources["openalex"].down is None and r.sources["openalex"].failed == 40
    assert r.trouble_lines() == ["enrichment: openalex answered badly (the OpenAlex answer is not JSON; 40 papers "
                                 "failed, asked again in 1 to 24 hours)"]
    clock.advance(hours=2)
    r = round_(fakes, seeded_path, clock, sources=("openalex",))  # 99 papers due: 2 batches
    assert r.sources["openalex"].failed == 99 and r.sources["openalex"].requests == 2
    fakes.fault["arxiv"] = "malformed"
    r = round_(fakes, seeded_path, clock, sources=("arxiv",), limit=99)
    assert r.sources["arxiv"].problems[0].startswith("the arXiv answer is not XML (")


def reasons(db_path: Path, source: str) -> dict[str | None, int]:
    db = open_db(db_path)
    try:
        return dict(db.conn.execute("SELECT reason, count(*) FROM enrichment_fetches WHERE source = ? GROUP BY 1",
                                    [source]))
    finally:
        db.close()


@pytest.mark.parametrize(("fault", "reason"), [
    ("dtd", "the arXiv answer declares a DTD"), ("dtd-utf16", "the arXiv answer declares a DTD"),
    ("shift_jis", "the arXiv answer is not XML (ValueError: multi-byte encodings are not supported)")],
    ids=["dtd", "dtd-utf16", "shift_jis"])
def test_a_hostile_arxiv_answer_fails_its_batch_and_stores_nothing(fakes: ScholarlyFakes, seeded_path: Path, clock,
                                                                    fault: str, reason: str) -> None:
    """The feed arXiv would give for the 99 papers, with a DTD past its first 4 KB (before: the
    entity expanded and the 99 records stored), or in UTF-16, or in an encoding no parser reads
    (before: a ValueError ended the round, the batch never marked failed, asked again every
    round)."""
    fakes.fault["arxiv"] = fault
    r = round_(fakes, seeded_path, clock, sources=("arxiv",))
    a = r.sources["arxiv"]
    assert (a.asked, a.found, a.not_found, a.failed, a.stored, a.requests) == (99, 0, 0, 99, 0, 1)
    assert r.trouble_lines() == [f"enrichment: arxiv answered badly ({reason}; 99 papers failed, asked again in "
                                 "1 to 24 hours)"]
    assert snapshot(seeded_path, "arxiv") == {"arxiv_records": [], "paper_authors": []}
    assert statuses(seeded_path) == {"arxiv:failed": 99} and reasons(seeded_path, "arxiv") == {reason: 99}


def test_a_batch_that_keeps_failing_waits_twice_as_long_each_time(fakes: ScholarlyFakes, seeded_path: Path,
                                                                    clock) -> None:
    """Hourly rounds (the default) against an arXiv whose answer is hostile every time: the
    batch waits 1, 2, 4, 8, 16 hours, then a day (before: asked again every round). An answer
    read starts again at an hour."""
    fakes.fault["arxiv"] = "dtd"
    asked = []
    for hour in range(60):
        r = round_(fakes, seeded_path, clock, sources=("arxiv",))
        if r.sources["arxiv"].requests:
            asked.append(hour)
            assert r.sources["arxiv"].failed == 99 and r.trouble_lines() == [
                "enrichment: arxiv answered badly (the arXiv answer declares a DTD; 99 papers failed, asked again "
                "in 1 to 24 hours)"]
        clock.advance(hours=1)
    assert asked == [0, 1, 3, 7, 15, 31, 55]
    clock.advance(hours=55 + 24 - 60)
    fakes.fault["arxiv"] = None
    assert round_(fakes, seeded_path, clock, sources=("arxiv",)).sources["arxiv"].found == 99
    clock.advance(days=30)
    fakes.fault["arxiv"] = "dtd"
    assert round_(fakes, seeded_path, clock, sources=("arxiv",)).sources["arxiv"].failed == 99
    clock.advance(hours=1)
    assert round_(fakes, seeded_path, clock, sources=("arxiv",)).sources["arxiv"].requests == 1


def test_retry_after_is_honoured(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    fakes.fault["openalex"] = "429"
    fakes.fault["s2"] = "429-date"
    r = round_(fakes, seeded_path, clock, sources=("openalex", "s2"))
    assert not r.troubles() and r.sources["openalex"].found == 98 and r.sources["s2"].found == 1
    oa = fakes.seen("openalex")
    assert len(oa) == 3 and oa[1].at - oa[0].at >= 0.95  # Retry-After: 1
    s2 = fakes.seen("s2")
    assert len(s2) == 2 and s2[1].at - s2[0].at >= 1.0  # an HTTP date 2 s ahead (to the second)


def test_a_retry_after_beyond_the_cap_skips_the_source_with_the_reason(fakes: ScholarlyFakes, seeded_path: Path,
                                                                        clock) -> None:
    fakes.fault["arxiv"] = "429-long"
    r = round_(fakes, seeded_path, clock, sources=("arxiv",))
    assert r.sources["arxiv"].down == "HTTP 429, asked to wait 3,600 s (more than the 5 s honoured)"
    assert len(fakes.seen("arxiv")) == 1


class VirtualTime:
    """A monotonic clock that moves only when slept on."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)  # no wait: lets other tasks run, as a real sleep would


def test_arxiv_is_asked_once_every_3_seconds(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    assert POLITENESS["arxiv"].interval == 3.0  # its Terms of Use
    assert POLITENESS["openalex"].interval == 0.1 and POLITENESS["s2"].interval == 1.0
    vt = VirtualTime()
    fakes.clock = vt
    # 99 papers in batches of 10 (the batch size is the module's): 10 requests.
    import mapwatch.store.scholarly.enrich as enrich

    batch = enrich.ARXIV_BATCH
    enrich.ARXIV_BATCH = 10
    try:
        r = round_(fakes, seeded_path, clock, sources=("arxiv",), politeness=dict(POLITENESS), monotonic=vt,
                   sleep=vt.sleep)
    finally:
        enrich.ARXIV_BATCH = batch
    assert r.sources["arxiv"].found == 99 and r.sources["arxiv"].requests == 10
    at = [q.at for q in fakes.seen("arxiv")]
    assert all(b - a >= 3.0 for a, b in itertools.pairwise(at)), at
    assert at[-1] - at[0] == pytest.approx(27.0)  # no slower than the rate either


def test_a_round_stops_at_its_deadline(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    vt = VirtualTime()
    import mapwatch.store.scholarly.enrich as enrich

    batch = enrich.ARXIV_BATCH
    enrich.ARXIV_BATCH = 10
    try:
        r = round_(fakes, seeded_path, clock, sources=("arxiv",), politeness=dict(POLITENESS), monotonic=vt,
                   sleep=vt.sleep, seconds=10.0)
    finally:
        enrich.ARXIV_BATCH = batch
    a = r.sources["arxiv"]
    assert a.requests == 4 and a.found == 40 and a.out_of_time and not r.troubles()  # at 0, 3, 6, 9 s
    assert "the rest next round" in a.summary()
    assert statuses(seeded_path) == {"arxiv:ok": 40}  # the rest never asked: due next round


def test_a_redirect_is_not_followed_with_the_key(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    fakes.fault["s2"] = "moved"
    r = round_(fakes, seeded_path, clock, sources=("s2",))
    assert r.sources["s2"].down == ("HTTP 301, redirected to 'http://127.0.0.1:9/elsewhere': point its API "
                                    "setting there")
    assert len(fakes.seen("s2")) == 1
