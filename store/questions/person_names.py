"""Whether two authors are one person, and whether two papers share an author: the rule of
self-citations (docs/bot.md, "Authors, self-citations and citing sentences").

Two authors are one person when they carry an identifier of a scheme both have (an OpenAlex
author id each, or an ORCID each) and it is the same; such ids decide, a name never overrides
them. Where they have ids in no common scheme, or one has none (an arXiv byline names people
only), their names decide: the same surname, and given names that fit one another, after
folding accents, case, hyphens, initials and "Surname, Given" order.

Pure functions over store.questions.types' Author and Byline; no database here.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from mapwatch.store.questions.types import Author, Byline

# Letters NFKD does not take apart (casefold already turned "ß" into "ss").
_LETTERS = str.maketrans({"ø": "o", "æ": "ae", "œ": "oe", "đ": "d", "ð": "d", "ł": "l", "ı": "i", "þ": "th"})
_HYPHENS = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2212\u00ad-]")
_APOSTROPHES = re.compile("['\u2019\u02bc`]")
# Words: split at spaces, and after a period that a name goes on from ("J.P.Dupont").
_WORDS = re.compile(r"\s+|(?<=\.)(?=[^\W\d_]{2})")
_PIECES = re.compile(r"[-.]+")  # a given name's parts: "Jean-Pierre", "J.-P."
_NOT_WORD = re.compile(r"[\W_]+")
# Surname particles ("van der Berg", "de la Cruz"): left out of the given names.
PARTICLES = frozenset({"al", "bin", "da", "das", "de", "del", "della", "den", "der", "di", "do", "dos", "du",
                       "el", "ibn", "la", "le", "ten", "ter", "van", "von", "zu"})
SUFFIXES = frozenset({"jr", "sr", "ii", "iii", "iv"})


class PersonName(NamedTuple):
    """A name as it is compared: the surname folded whole, the given names in order (a single
    letter is an initial)."""

    surname: str
    given: tuple[str, ...]


def fold(text: str) -> str:
    """Lower case without accents: "Íngrid" -> "ingrid", "Ødegård" -> "odegard"."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c)).translate(_LETTERS)


def _bare(word: str) -> str:
    return _NOT_WORD.sub("", fold(_APOSTROPHES.sub("", word)))


def _given(word: str, mixed_case: bool) -> list[str]:
    """A given-name word's tokens: "Jean-Pierre" -> jean, pierre; "J.-P." and (in a name not
    all in capitals) "JP" -> j, p."""
    out: list[str] = []
    for piece in _PIECES.split(word):
        if mixed_case and piece.isalpha() and piece.isupper() and 2 <= len(piece) <= 3:
            out += list(fold(piece))
        elif bare := _bare(piece):
            out.append(bare)
    return out


@lru_cache(maxsize=65536)
def normalise_name(text: str) -> PersonName:
    """"Ingrid Halvorsen", "Halvorsen, Ingrid", "Ingrid  HALVORSEN" -> ("halvorsen", ("ingrid",));
    "I. Halvorsen" -> ("halvorsen", ("i",)). The surname is the last word (of the part before
    the comma, in "Surname, Given"), hyphens and apostrophes dropped; the particles before it
    and suffixes ("Jr.", "III") are left out."""
    text = _HYPHENS.sub("-", text)
    parts = [p for p in text.split(",") if _bare(p)]
    parts = parts[:1] + [p for p in parts[1:] if _bare(p) not in SUFFIXES]
    ordered = parts[1:] + parts[:1]  # "Surname, Given" -> "Given Surname"
    words = [w for w in _WORDS.split(" ".join(ordered)) if _bare(w)]
    while len(words) > 1 and _bare(words[-1]) in SUFFIXES:
        words.pop()
    if not words:
        return PersonName("", ())
    mixed_case = text != text.upper()
    given_words = [w for w in words[:-1] if _bare(w) not in PARTICLES] or words[:-1]
    return PersonName(_bare(words[-1]), tuple(t for w in given_words for t in _given(w, mixed_case)))


def _fits(a: str, b: str) -> bool:
    """One given name fits another: the same, or an initial of it."""
    return a == b or (len(a) == 1 and b.startswith(a)) or (len(b) == 1 and a.startswith(b))


def given_names_fit(a: tuple[str, ...], b: tuple[str, ...]) -> bool:
    """Given names fit when each pair in order fits (the longer list's extra names, a middle
    name left out, do not count), or when they are the same letters ("Jeanpierre"); a name
    with none fits only another with none."""
    if not a or not b:
        return not a and not b
    return all(_fits(x, y) for x, y in zip(a, b, strict=False)) or "".join(a) == "".join(b)


def same_name(a: str, b: str) -> bool:
    """Whether two names can be one person's: "I. Halvorsen" and "Íngrid Halvorsen" can,
    "Ingrid Halvorsen" and "Inga Halvorsen" cannot."""
    x, y = normalise_name(a), normalise_name(b)
    return bool(x.surname) and x.surname == y.surname and given_names_fit(x.given, y.given)


def same_person(a: Author, b: Author) -> bool:
    """Whether two authors are one person: by the ids of every scheme both have (the same
    OpenAlex id or the same ORCID), or, with no scheme in common, by name."""
    common = [(x, y) for x, y in ((a.author_id, b.author_id), (a.orcid, b.orcid)) if x and y]
    if common:
        return any(x == y for x, y in common)
    return same_name(a.name, b.name)


@dataclass(frozen=True)
class AuthorIndex:
    """A byline's authors by OpenAlex id, ORCID and folded surname: the only ones an author
    can be the same person as (same_person is true only through one of them)."""

    by_id: Mapping[str, tuple[Author, ...]]
    by_orcid: Mapping[str, tuple[Author, ...]]
    by_surname: Mapping[str, tuple[Author, ...]]


def _grouped(pairs: Iterable[tuple[str | None, Author]]) -> dict[str, tuple[Author, ...]]:
    out: dict[str, list[Author]] = {}
    for key, author in pairs:
        if key:
            out.setdefault(key, []).append(author)
    return {k: tuple(v) for k, v in out.items()}


def index_byline(byline: Byline) -> AuthorIndex:
    """`byline`'s authors indexed, so that another byline is checked against it in time linear
    in both (not every pair of a thousand authors each)."""
    authors = byline.authors
    return AuthorIndex(_grouped((a.author_id, a) for a in authors), _grouped((a.orcid, a) for a in authors),
                       _grouped((normalise_name(a.name).surname, a) for a in authors))


def _candidates(index: AuthorIndex, a: Author) -> Iterable[Author]:
    yield from index.by_id.get(a.author_id, ()) if a.author_id else ()
    yield from index.by_orcid.get(a.orcid, ()) if a.orcid else ()
    yield from index.by_surname.get(normalise_name(a.name).surname, ())


def shares_an_author(index: AuthorIndex, byline: Byline) -> bool:
    """Whether some author of `byline` is the same person as one of the indexed byline's."""
    return any(same_person(a, b) for a in byline.authors for b in _candidates(index, a))


def share_an_author(a: Byline, b: Byline) -> bool:
    """Whether two papers share an author (a citation between them is a self-citation)."""
    return shares_an_author(index_byline(b), a)
