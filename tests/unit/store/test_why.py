"""`/why PAPER CITER`'s question (store/questions/why.py): where a citation is known from and since
when, on the bundled seeds (2412.10400's page lists 30 of its 71 citers, 2507.04136's all 21), with
what the sources say stored by the functions enrichment uses; and, for a citation mapwatch does not
know, the reasons it can see."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from mapwatch.store.errors import BadOption, PaperNotFound
from mapwatch.store.questions.why import Reason, WhyAnswer, resolve_id, resolve_pair, why
from mapwatch.store.records import ArxivRecord, FoundCiter
from mapwatch.store.scholarly.discovered import save_found_citers
from mapwatch.store.scholarly.new_works import asked_recent, finish_day
from mapwatch.store.scholarly.saved import save_arxiv, save_status
from mapwatch.store.settings_table import SourceSettings
from tests.author_helpers import store_authors

SURVEY = "2412.10400"  # its page: 30 of 71 citers listed
TECH = "2507.04136"  # its page: all 21 of its citers, 30 of its 79 references in the map
LISTED = "2506.12217"  # on the survey's "Built on by" list, no page of its own
REF = "2005.14165"  # on the technical survey's "Builds on" list
NEW = "2610.04321"  # a citer the map has never seen
INGESTED = "2026-11-01T12:00:00+00:00"  # the seeds' ingest, by the test clock
TODAY = date(2026, 11, 1)


def kinds(a: WhyAnswer) -> list[str]:
    return [r.kind for r in a.reasons]


def reason(a: WhyAnswer, kind: str) -> Reason:
    return next(r for r in a.reasons if r.kind == kind)


def test_the_map_page_and_snapshot_that_named_it(seeded) -> None:
    a = why(seeded, SURVEY, LISTED)
    assert a.by_map and a.first_seen == INGESTED and a.reasons == ()
    (k,) = a.known_from
    assert (k.source, k.section, k.first_seen) == ("map", "Built on by", INGESTED)
    assert k.page is not None and (k.page.paper_id, k.page.data_through) == (SURVEY, "2026-10-14")
    assert k.page.location.endswith("2412.10400.txt")
    # the other list: the citing paper's "Builds on"
    (k,) = why(seeded, REF, TECH).known_from
    assert k.section == "Builds on" and k.page is not None and k.page.paper_id == TECH
    # the edge both seeds list was first named by the page read first
    (k,) = why(seeded, SURVEY, TECH).known_from
    assert k.section == "Built on by" and k.page is not None and k.page.paper_id == SURVEY


def test_each_source_with_the_date_it_first_said_so(seeded, clock) -> None:
    first = clock()
    save_found_citers(seeded, SURVEY, "s2", [], first)  # the baseline answer: nothing
    save_found_citers(seeded, SURVEY, "openalex", [], first)
    clock.advance(days=2)
    s2_day = clock()
    save_found_citers(seeded, SURVEY, "s2", [FoundCiter(NEW, "A New Citer", 2026)], s2_day)
    clock.advance(days=1)
    save_found_citers(seeded, SURVEY, "openalex", [FoundCiter(NEW), FoundCiter(LISTED)], clock())
    a = why(seeded, SURVEY, NEW)
    assert a.provenance == "s2" and a.first_seen == "2026-11-03T12:00:00+00:00"
    assert [(k.source, k.first_seen, k.baseline) for k in a.known_from] == [
        ("s2", "2026-11-03T12:00:00+00:00", False), ("openalex", "2026-11-04T12:00:00+00:00", False)]
    # no map page names it: why not (its citer is a stub now, the survey lists 30 of 71)
    assert kinds(a) == ["citers_unlisted", "citer_no_page"]
    assert (reason(a, "citers_unlisted").shown, reason(a, "citers_unlisted").total) == (30, 71)
    # a map citation OpenAlex names too: both, each with its date
    b = why(seeded, SURVEY, LISTED)
    assert [(k.source, k.first_seen) for k in b.known_from] == [("map", INGESTED),
                                                              ("openalex", "2026-11-04T12:00:00+00:00")]
    assert b.provenance == "map" and b.reasons == ()


def test_a_baseline_and_a_held_back_citation_are_in_the_sources_only(seeded, clock) -> None:
    save_found_citers(seeded, SURVEY, "s2", [FoundCiter(NEW)], clock())  # the first answer: its baseline
    a = why(seeded, SURVEY, NEW)
    assert a.first_seen is None and a.provenance is None
    assert [(k.source, k.baseline) for k in a.known_from] == [("s2", True)]
    assert reason(a, "baseline").source == "s2" and "citer_missing" in kinds(a)
    later = "2610.05555"
    save_found_citers(seeded, SURVEY, "s2", [FoundCiter(later)], clock(), include=False)  # omit
    b = why(seeded, SURVEY, later, SourceSettings(citations="omit"))
    assert b.first_seen is None and reason(b, "held_back").detail == "omit"
    # Semantic Scholar named it; OpenAlex, asked of no paper here, is why it did not
    assert "paper_unknown_to_openalex" in kinds(b) and "citers_asked" not in kinds(b)


def test_a_missing_citation_gives_the_reasons_it_can_see(seeded, clock) -> None:
    a = why(seeded, SURVEY, NEW)
    assert a.first_seen is None and a.known_from == () and a.citer is None
    assert kinds(a) == ["citers_unlisted", "citer_missing", "paper_unknown_to_openalex", "citers_never_asked"]
    unlisted = reason(a, "citers_unlisted")
    assert (unlisted.shown, unlisted.total, unlisted.data_through) == (30, 71, "2026-10-14")
    # a page listing every citer: it was not among them then
    b = why(seeded, TECH, LISTED)
    assert kinds(b)[:2] == ["citers_all_listed", "citer_no_page"] and reason(b, "citers_all_listed").total == 21
    # a citer with a page of its own lists 30 of its 79 references in the map
    c = why(seeded, LISTED, TECH)
    assert reason(c, "refs_unlisted").shown == 30 and reason(c, "refs_unlisted").total == 79
    assert kinds(c)[0] == "paper_no_page"
    # the other way round is known
    assert "reversed" in kinds(why(seeded, LISTED, SURVEY))


def test_a_paper_not_in_the_map(seeded) -> None:
    a = why(seeded, "hep-th/9901001", SURVEY)
    assert a.paper is None and kinds(a) == ["paper_missing", "refs_unlisted"]  # no source asks of it


def test_the_sources_off_and_a_failed_fetch(seeded, clock) -> None:
    off = why(seeded, SURVEY, NEW, SourceSettings(sources=()))
    assert kinds(off) == ["citers_unlisted", "citer_missing", "sources_off"]  # nothing "never asked" when off
    assert reason(off, "sources_off").detail == "off"
    assert "discovery_off" in kinds(why(seeded, SURVEY, NEW, SourceSettings(citations="off")))
    only = why(seeded, SURVEY, NEW, SourceSettings(sources=("arxiv", "openalex")))
    assert reason(only, "source_off").source == "s2" and reason(only, "source_off").detail == "arxiv,openalex"
    save_status(seeded, [SURVEY], "s2", "failed", clock(), "HTTP 503 from api.semanticscholar.org")
    failed = why(seeded, SURVEY, NEW, SourceSettings(sources=()))
    f = reason(failed, "fetch_failed")  # what was stored counts even with the sources off here
    assert (f.source, f.paper_id, f.at, f.detail) == ("s2", SURVEY, INGESTED, "HTTP 503 from api.semanticscholar.org")


def test_openalex_lag_and_its_day_passes(seeded, clock) -> None:
    store_authors(seeded, clock())  # OpenAlex has matched the survey and REF to works, not TECH
    a = why(seeded, REF, NEW)  # a citer the map lacks: no publication day to point a day pass at
    assert kinds(a)[2:] == ["recent_never", "day_unknown", "citers_never_asked"]
    save_status(seeded, [LISTED], "openalex", "not_found", clock())  # OpenAlex has not listed the citer yet
    b = why(seeded, REF, LISTED)
    lag = reason(b, "citer_not_listed")
    assert (lag.paper_id, lag.at, lag.until) == (LISTED, INGESTED, "2026-11-08T12:00:00+00:00")
    save_arxiv(seeded, [ArxivRecord(LISTED, "From Emergence to Control", (), "cs.CL", ("cs.CL",),
                                    "2025-06-13T17:59:00Z", None, None, None, None)], [LISTED], clock())
    assert reason(why(seeded, REF, LISTED), "day_pass_pending").day == "2025-06-13"
    asked_recent(seeded, [REF], clock())
    finish_day(seeded, date(2025, 6, 13), 1, 1200, 3, clock() + timedelta(hours=1))
    c = why(seeded, REF, LISTED)
    assert reason(c, "recent_asked").at == INGESTED
    done = reason(c, "day_pass_done")
    assert (done.day, done.lag, done.at) == ("2025-06-13", 1, "2026-11-01T13:00:00+00:00")
    # a paper OpenAlex did not know: it can name none of its citers
    save_status(seeded, [TECH], "openalex", "not_found", clock())
    d = why(seeded, TECH, LISTED)
    assert reason(d, "paper_unknown_to_openalex").at == INGESTED
    assert not {"recent_never", "day_pass_done", "citer_not_listed"} & set(kinds(d))


def test_ids_in_every_form_and_malformed_ones(seeded) -> None:
    for given in ("2412.10400", "2412.10400v2", "arXiv:2412.10400", "https://arxiv.org/abs/2412.10400v3",
                  "https://arxiv.org/pdf/2412.10400v1.pdf", "https://mlsanity.com/paper/2412.10400/",
                  "Reinforcement Learning Enhanced LLMs: A Survey"):
        assert resolve_id(seeded, given, TODAY) == SURVEY, given
    assert resolve_id(seeded, "hep-th/9901001v2", TODAY) == "hep-th/9901001"  # old style, not in the map
    assert resolve_id(seeded, "2610.99999", TODAY) == "2610.99999"  # any possible id, in the map or not
    for bad in ("2412.1040", "2613.00001", "2612.00001", "1402.12345", "arXiv:24x2.1", "https://arxiv.org/abs/x"):
        with pytest.raises(BadOption):
            resolve_id(seeded, bad, TODAY)
    with pytest.raises(PaperNotFound):
        resolve_id(seeded, "a title the map does not have", TODAY)
    with pytest.raises(BadOption, match=r"Both are 2412\.10400"):
        resolve_pair(seeded, "2412.10400", "https://arxiv.org/abs/2412.10400v2", TODAY)
    with pytest.raises(BadOption):
        resolve_pair(seeded, " ", SURVEY, TODAY)
