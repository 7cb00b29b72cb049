"""What the open sources say is stored bounded and read back as bylines (store/scholarly,
store/questions/authors.py): real SQLite, the seeds' papers."""

from __future__ import annotations

from datetime import timedelta

from mapwatch.store.person_ids import openalex_author, orcid
from mapwatch.store.questions.authors import bylines, self_citations
from mapwatch.store.records import (
    MAX_NAME_CHARS,
    ArxivRecord,
    AuthorRecord,
    Institution,
    OpenAlexWork,
    clean,
    doi,
)
from mapwatch.store.scholarly.saved import due_papers, save_arxiv, save_openalex


def arxiv(pid: str, *names: str) -> ArxivRecord:
    return ArxivRecord(pid, f"Paper {pid}", tuple(AuthorRecord(n) for n in names), "cs.LG", ("cs.LG", "cs.AI"),
                       "2024-12-05T18:00:00Z", "2025-01-10T10:00:00Z", None, None, "10 pages")


def test_bounds_on_what_a_source_says() -> None:
    assert clean("A.\u202e Vaswani\x00\n ") == "A. Vaswani"
    assert len(clean("x" * 5000)) == MAX_NAME_CHARS and clean(None) == ""
    assert orcid("https://orcid.org/0000-0002-1825-0097") == "0000-0002-1825-0097"
    assert orcid("0000-0002-1825-0098") is None  # the checksum
    assert orcid("0000-0002-1694-233X") == "0000-0002-1694-233X"
    assert openalex_author("https://openalex.org/a5023888391") == "A5023888391" and openalex_author("x") is None
    assert doi("https://doi.org/10.48550/arXiv.2412.10400") == "10.48550/arxiv.2412.10400"


def test_arxiv_names_then_openalex_people_and_institutions(seeded, clock) -> None:
    now = clock()
    save_arxiv(seeded, [arxiv("2412.10400", "A. Author", "B. Author")], ["2412.10400", "2507.04136"], now)
    assert bylines(seeded, ["2412.10400", "2507.04136"])["2412.10400"].short() == "A. Author, B. Author"
    assert "2507.04136" not in bylines(seeded, ["2507.04136"])
    mit = Institution("MIT", "I63966007", "042nb2s44", "US")
    work = OpenAlexWork("2412.10400", "W1", (AuthorRecord("Ann Author", "A1", "0000-0002-1825-0097", (mit,)),
                                             AuthorRecord("B. Author", "A2"), AuthorRecord("C. Author", "A3"),
                                             AuthorRecord("D. Author", "A4")), "NeurIPS", None)
    save_openalex(seeded, [work], ["2412.10400"], now)
    b = bylines(seeded, ["2412.10400"])["2412.10400"]
    assert b.short() == "Ann Author, B. Author, C. Author et al. (MIT)" and b.venue == "NeurIPS"
    assert b.authors[0].orcid == "0000-0002-1825-0097"
    # arXiv again: OpenAlex's list (with its people) is kept.
    save_arxiv(seeded, [arxiv("2412.10400", "A. Author")], ["2412.10400"], now)
    assert len(bylines(seeded, ["2412.10400"])["2412.10400"].authors) == 4


def test_self_citations_share_a_person(seeded, clock) -> None:
    now = clock()
    save_openalex(seeded, [OpenAlexWork("2412.10400", "W1", (AuthorRecord("Ann", "A1"),), None, None),
                           OpenAlexWork("2507.04136", "W2", (AuthorRecord("Bob", "A2"), AuthorRecord("A. N.", "A1")),
                                        None, None)], ["2412.10400", "2507.04136"], now)
    pairs = [("2507.04136", "2412.10400"), ("2412.10400", "2507.04136"), ("2507.04136", "2005.14165")]
    assert self_citations(seeded, pairs) == {("2507.04136", "2412.10400"), ("2412.10400", "2507.04136")}


def test_what_is_due_never_asked_first_then_overdue(seeded, clock) -> None:
    now = clock()
    first = due_papers(seeded, "arxiv", now, 2)
    assert first == ["2507.04136", "2412.10400"]  # the papers with pages first, newest id first
    save_arxiv(seeded, [arxiv("2507.04136", "X")], first, now)
    assert "2507.04136" not in due_papers(seeded, "arxiv", now, 1000)
    assert "2412.10400" in due_papers(seeded, "arxiv", now + timedelta(days=8), 10_000)  # not found: weekly
    assert "2507.04136" in due_papers(seeded, "arxiv", now + timedelta(days=31), 10_000)  # found: monthly
