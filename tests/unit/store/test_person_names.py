"""Whether two authors are one person, and two papers share one (store/questions/person_names.py):
names folded for accents, case, hyphens, initials and order; ids deciding where both have some."""

from __future__ import annotations

from itertools import combinations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mapwatch.store.questions.person_names import (
    PersonName,
    index_byline,
    normalise_name,
    same_name,
    same_person,
    share_an_author,
    shares_an_author,
)
from mapwatch.store.questions.types import Author, Byline

HALVORSEN = ["I. Halvorsen", "Ingrid Halvorsen", "Halvorsen, Ingrid", "Ingrid  HALVORSEN", "Íngrid Halvorsen",
             "Halvorsen, I.", "ingrid halvorsen", "Ingrid M. Halvorsen"]
DUPONT = ["Jean-Pierre Dupont", "J.-P. Dupont", "Jean Pierre Dupont", "JP Dupont", "J. P. Dupont",
          "Dupont, Jean-Pierre", "J.P.Dupont", "Jean\u2010Pierre Dupont", "Jeanpierre Dupont"]


@pytest.mark.parametrize(("text", "name"), [
    ("Ingrid Halvorsen", PersonName("halvorsen", ("ingrid",))),
    ("I. Halvorsen", PersonName("halvorsen", ("i",))),
    ("Halvorsen, Ingrid", PersonName("halvorsen", ("ingrid",))),
    ("Ingrid  HALVORSEN", PersonName("halvorsen", ("ingrid",))),
    ("Íngrid Halvorsen", PersonName("halvorsen", ("ingrid",))),
    ("Jean-Pierre Dupont", PersonName("dupont", ("jean", "pierre"))),
    ("J.-P. Dupont", PersonName("dupont", ("j", "p"))),
    ("JP Dupont", PersonName("dupont", ("j", "p"))),
    ("JOHN SMITH", PersonName("smith", ("john",))),  # all capitals: "JOHN" is not initials
    ("Ludwig van Beethoven", PersonName("beethoven", ("ludwig",))),
    ("van Beethoven, Ludwig", PersonName("beethoven", ("ludwig",))),
    ("Van Nguyen", PersonName("nguyen", ("van",))),  # a given name, not a particle
    ("Smith, John, Jr.", PersonName("smith", ("john",))),
    ("John Smith III", PersonName("smith", ("john",))),
    ("Ødegård, Øystein", PersonName("odegard", ("oystein",))),
    ("Seán O'Brien", PersonName("obrien", ("sean",))),
    ("Anna Smith-Jones", PersonName("smithjones", ("anna",))),
    ("Mallory", PersonName("mallory", ())),
    ("", PersonName("", ())),
    (" , . ", PersonName("", ())),
])
def test_a_name_is_folded_to_surname_and_given_names(text: str, name: PersonName) -> None:
    assert normalise_name(text) == name


@pytest.mark.parametrize("names", [HALVORSEN, DUPONT])
def test_the_spellings_of_one_name_match_each_other(names: list[str]) -> None:
    for a, b in combinations(names, 2):
        assert same_name(a, b) and same_name(b, a), (a, b)


@pytest.mark.parametrize(("a", "b", "same"), [
    ("Ingrid Halvorsen", "Inga Halvorsen", False),  # both given names whole, and different
    ("I. Halvorsen", "Inga Halvorsen", True),  # the initial fits
    ("Ingrid Halvorsen", "Ingrid Halvorson", False),
    ("Ingrid Halvorsen", "K. Halvorsen", False),
    ("Halvorsen", "Ingrid Halvorsen", False),  # a surname alone is nobody in particular
    ("Mallory", "mallory", True),
    ("Jean-Pierre Dupont", "Jean-Paul Dupont", False),
    ("J.-P. Dupont", "J.-M. Dupont", False),
    ("Ludwig van Beethoven", "L. van Beethoven", True),
    ("Anna Smith-Jones", "A. Smith\u2013Jones", True),
    ("Anna Smith-Jones", "Anna Jones", False),
    ("", "", False),
])
def test_different_names_do_not_match(a: str, b: str, same: bool) -> None:
    assert same_name(a, b) is same and same_name(b, a) is same


def test_ids_of_a_common_scheme_decide_and_names_decide_without_one() -> None:
    ingrid = Author("Ingrid Halvorsen", "A5000000101")
    namesake = Author("Ingrid Halvorsen", "A5000000999")
    assert not same_person(ingrid, namesake)  # one name, two people: the ids say so
    assert not same_person(Author("Ingrid Halvorsen", orcid="0000-0002-1825-0097"),
                           Author("Ingrid Halvorsen", orcid="0000-0001-5109-3700"))
    assert same_person(ingrid, Author("Halvorsen, I.", "A5000000101"))
    assert same_person(Author("Ann", "A1"), Author("A. N.", "A1"))  # same id, names that never match
    assert same_person(Author("Ingrid Halvorsen", orcid="0000-0002-1825-0097"),
                       Author("Inga H.", orcid="0000-0002-1825-0097"))
    # A common scheme with one id the same is one person, whatever the other scheme says.
    assert same_person(Author("I. Halvorsen", "A1", "0000-0002-1825-0097"),
                       Author("Ingrid Halvorsen", "A2", "0000-0002-1825-0097"))
    # One without ids (an arXiv byline), or ids of no common scheme: names decide.
    assert same_person(ingrid, Author("I. Halvorsen"))
    assert not same_person(ingrid, Author("Inga Halvorsen"))
    assert same_person(ingrid, Author("Ingrid Halvorsen", orcid="0000-0002-1825-0097"))
    assert not same_person(ingrid, Author("Inga Halvorsen", orcid="0000-0002-1825-0097"))


def byline(*authors: Author) -> Byline:
    return Byline("p", authors)


def test_papers_share_an_author_by_id_or_by_name() -> None:
    cited = byline(Author("Kim Lee", "A1"), Author("Ingrid Halvorsen", "A5000000101"))
    assert share_an_author(byline(Author("Q. Zhou"), Author("I. Halvorsen")), cited)
    assert share_an_author(cited, byline(Author("Q. Zhou"), Author("I. Halvorsen")))
    assert not share_an_author(byline(Author("Ingrid Halvorsen", "A5000000999")), cited)
    assert not share_an_author(byline(Author("Inga Halvorsen")), byline(Author("Ingrid Halvorsen")))
    assert share_an_author(byline(Author("K. L.", "A1")), cited)
    assert not share_an_author(byline(), cited) and not share_an_author(cited, byline())


def test_a_thousand_authors_each_are_matched_through_the_index() -> None:
    many = byline(*(Author(f"Given{i} Surname{i}", f"A{i}") for i in range(1000)))
    others = byline(*(Author(f"G. Other{i}") for i in range(1000)))
    assert not share_an_author(many, others)
    last = byline(*others.authors, Author("G. Surname999"))
    assert share_an_author(last, many) and shares_an_author(index_byline(many), last)


NAMES = ["Ingrid Halvorsen", "I. Halvorsen", "Inga Halvorsen", "Halvorsen, Ingrid", "Kim Lee", "K. Lee",
         "Jean-Pierre Dupont", "JP Dupont", "J. Dupont", "Mallory", ""]
authors = st.builds(Author, st.sampled_from(NAMES), st.sampled_from([None, "A1", "A2"]),
                    st.sampled_from([None, "0000-0002-1825-0097", "0000-0001-5109-3700"]))


@given(st.lists(authors, max_size=6), st.lists(authors, max_size=6))
def test_the_index_finds_what_comparing_every_pair_finds(a: list[Author], b: list[Author]) -> None:
    every_pair = any(same_person(x, y) for x in a for y in b)
    assert share_an_author(byline(*a), byline(*b)) is every_pair
    assert share_an_author(byline(*b), byline(*a)) is every_pair
