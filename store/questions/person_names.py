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
from collections.abc import Iterable, Mapping, Sequence
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


def names_fit(x: PersonName, y: PersonName) -> bool:
    """Whether two normalised names can be one person's (same_name, once normalised)."""
    return bool(x.surname) and x.surname == y.surname and given_names_fit(x.given, y.given)


def same_name(a: str, b: str) -> bool:
    """Whether two names can be one person's: "I. Halvorsen" and "Íngrid Halvorsen" can,
    "Ingrid Halvorsen" and "Inga Halvorsen" cannot."""
    return names_fit(normalise_name(a), normalise_name(b))


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


def person_keys(name: str, author_id: str | None, orcid: str | None) -> set[tuple[str, str]]:
    """The keys an author is found by in an AuthorIndex (OpenAlex id, ORCID, folded surname):
    two authors none of whose keys meet are never one person (same_person is true only through
    one of them), so papers whose authors' keys do not meet share no author."""
    keys = {("surname", normalise_name(name).surname)}
    if author_id:
        keys.add(("openalex", author_id))
    if orcid:
        keys.add(("orcid", orcid))
    return keys


def shares_an_author(index: AuthorIndex, byline: Byline) -> bool:
    """Whether some author of `byline` is the same person as one of the indexed byline's."""
    return any(same_person(a, b) for a in byline.authors for b in _candidates(index, a))


def share_an_author(a: Byline, b: Byline) -> bool:
    """Whether two papers share an author (a citation between them is a self-citation)."""
    return shares_an_author(index_byline(b), a)


# -- the people among many authors (who cites a team: store/questions/team_stats.py) ----------------


_NO_SCHEME: frozenset[str] = frozenset()
_SCHEMES = {(True, True): frozenset({"openalex", "orcid"}), (True, False): frozenset({"openalex"}),
            (False, True): frozenset({"orcid"}), (False, False): _NO_SCHEME}


def _schemes(a: Author) -> frozenset[str]:
    """The identifier schemes an author has: OpenAlex, ORCID, both or neither."""
    return _SCHEMES[bool(a.author_id), bool(a.orcid)]


def _name_key(n: PersonName) -> tuple[str, str]:
    """Where a name is looked for: its surname and first initial (a name fits only names with both the same)."""
    return n.surname, n.given[0][:1] if n.given else ""


@dataclass
class _Group:
    members: list[int]
    schemes: frozenset[str]
    names: set[PersonName]


def group_people(authors: Sequence[Author]) -> list[tuple[int, ...]]:
    """The people among `authors` (rows of many bylines), each as the indices of their rows, by
    same_person's rule made a partition: rows sharing an OpenAlex id or an ORCID are one person
    (and so, through them, are the ids a row pairs); rows with neither and the same name (as
    normalise_name folds it) are one. A group with no identifier of some scheme (a name only,
    or an OpenAlex id without an ORCID) then joins the one group with an identifier, of no
    scheme it has, every name of which fits every one of its names; with several such groups
    it stays apart, never a guess. Groups in the order of their first row."""
    parent = list(range(len(authors)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(i: int, j: int) -> int:
        a, b = sorted((find(i), find(j)))
        parent[b] = a
        return a

    first: dict[tuple[str, object], int] = {}
    for i, a in enumerate(authors):
        keys: list[tuple[str, object]] = [(s, v) for s, v in (("openalex", a.author_id), ("orcid", a.orcid)) if v]
        for key in keys or [("name", normalise_name(a.name))]:
            union(i, first.setdefault(key, i))
    groups: dict[int, _Group] = {}
    for i, a in enumerate(authors):
        g = groups.setdefault(find(i), _Group([], _NO_SCHEME, set()))
        g.members.append(i)
        g.schemes |= _schemes(a)
        g.names.add(normalise_name(a.name))
    index: dict[tuple[str, str], set[int]] = {}  # groups with an identifier, by the keys of their names
    for root, g in groups.items():
        for n in g.names if g.schemes else ():
            index.setdefault(_name_key(n), set()).add(root)
    for root in sorted((r for r, g in groups.items() if len(g.schemes) < 2), key=lambda r: (not groups[r].schemes, r)):
        mine = groups.get(root)
        if mine is None or len(mine.schemes) == 2:  # joined meanwhile
            continue
        some = next(iter(mine.names))  # a group that fits has a name of its key (with any of ours)
        found = {find(r) for r in index.get(_name_key(some), ())} - {root}
        fits = [r for r in found if not (groups[r].schemes & mine.schemes)
                and all(names_fit(x, y) for x in mine.names for y in groups[r].names)]
        if len(fits) == 1:
            kept, gone = union(root, fits[0]), max(root, fits[0])
            merged, into = groups.pop(gone), groups[kept]
            into.members += merged.members
            into.schemes |= merged.schemes
            into.names |= merged.names
            for n in into.names:
                index.setdefault(_name_key(n), set()).add(kept)
    return [tuple(sorted(g.members)) for _, g in sorted(groups.items())]
