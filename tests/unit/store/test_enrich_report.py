"""What a round of enrichment says of each source: a source left for the next round says so in
its summary too, and a source with nothing due says why when the papers it failed on wait
(`mapwatch enrich --retry-failed` asks them at once)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from mapwatch.cli import main
from mapwatch.store.scholarly.enrich import EnrichSettings, RoundReport, enrich_round
from mapwatch.store.scholarly.polite import POLITENESS, Politeness
from tests.scholarly_fakes import ScholarlyFakes, serving_seeds

FAST = {s: Politeness(0.01, timeout=1.0, max_retry_after=1.0) for s in POLITENESS}


@pytest.fixture
def fakes(seeded_path: Path) -> Iterator[ScholarlyFakes]:
    with serving_seeds(seeded_path) as served:
        yield served


def round_(fakes: ScholarlyFakes, db_path: Path, clock, *, retry_failed: bool = False,
           discover: bool = False) -> RoundReport:
    settings = EnrichSettings(("arxiv", "openalex"), fakes.apis(), "team@example.org", politeness=FAST,
                              source_citations="include" if discover else "off", retry_failed=retry_failed)
    return asyncio.run(enrich_round(db_path, settings, clock=clock))


def test_nothing_due_after_a_failed_round_says_why_and_when(fakes: ScholarlyFakes, seeded_path: Path, clock) -> None:
    fakes.down("arxiv")
    first = round_(fakes, seeded_path, clock)
    arxiv = first.sources["arxiv"]
    assert arxiv.down and arxiv.failed == 99
    assert arxiv.summary() == "arxiv: unavailable this round; 99 of 99 due asked in 1 request, 0 found, 0 not found, " \
                              "99 failed"
    assert first.sources["openalex"].summary() == ("openalex: 99 of 99 due asked in 2 requests, 98 found, "
                                                   "1 not found, 0 failed")

    fakes.fault["arxiv"] = None  # back, but its papers wait an hour after the failure
    clock.advance(minutes=10)
    second = round_(fakes, seeded_path, clock)
    assert second.sources["arxiv"].summary(", or now with --retry-failed") == (
        "arxiv: nothing due (99 papers failed in an earlier round: asked again from 13:00 UTC, or now with "
        "--retry-failed)")  # before: "arxiv: 0 of 0 due asked in 0 requests, 0 found, 0 not found, 0 failed"
    assert second.sources["openalex"].summary() == "openalex: nothing due"
    assert not fakes.seen("arxiv")[1:]  # nothing asked of arXiv

    clock.advance(hours=11)  # 23:10: the wait of a failure that follows a failure (2 hours) ends the next day
    fakes.down("arxiv")
    assert round_(fakes, seeded_path, clock).sources["arxiv"].failed == 99
    assert round_(fakes, seeded_path, clock).sources["arxiv"].summary() == (
        "arxiv: nothing due (99 papers failed in an earlier round: asked again from 2 Nov 01:10 UTC)")

    fakes.fault["arxiv"] = None
    again = round_(fakes, seeded_path, clock, retry_failed=True)
    assert again.sources["arxiv"].summary() == "arxiv: 99 of 99 due asked in 1 request, 99 found, 0 not found, " \
                                               "0 failed"


def test_a_source_down_after_its_papers_says_so_in_its_summary(fakes: ScholarlyFakes, seeded_path: Path,
                                                                 clock) -> None:
    """OpenAlex answers about the papers, then is down for its new works: its summary was
    "openalex: 0 of 0 due …, 0 failed" right under "openalex is unavailable this round"."""
    assert not round_(fakes, seeded_path, clock).troubles()
    clock.advance(days=1)  # a day on: no paper due, the new works of a new day are
    fakes.down("openalex")
    report = round_(fakes, seeded_path, clock, discover=True)
    assert report.down() == {"openalex": "HTTP 503"}
    assert report.sources["openalex"].summary() == "openalex: unavailable this round; nothing due, 1 request"
    assert report.trouble_lines()[0].startswith("enrichment: openalex is unavailable this round (HTTP 503)")


def test_enrich_retry_failed_asks_at_once(fakes: ScholarlyFakes, seeded_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for name, value in fakes.env().items():
        monkeypatch.setenv(name, value)
    fakes.down("arxiv")
    assert main(["enrich", "--db", str(seeded_path), "--source", "arxiv"]) == 1
    capsys.readouterr()
    fakes.fault["arxiv"] = None
    assert main(["enrich", "--db", str(seeded_path), "--source", "arxiv"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Enriched from arxiv: nothing due (99 papers failed in an earlier round: asked again from ")
    assert out.endswith(" UTC, or now with --retry-failed).\n")
    assert main(["enrich", "--db", str(seeded_path), "--source", "arxiv", "--retry-failed"]) == 0
    assert capsys.readouterr().out == ("Enriched from arxiv: 99 of 99 due asked in 1 request, 99 found, 0 not found, "
                                       "0 failed.\n")
