"""A small hand-built map with known graph answers, stored through the real save path."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime

from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList, Placement

HOST = "https://map.example"

# Readable names -> arXiv-style ids (the order of the ids is the order of the names).
NAMES = ["A", "B", "C", "D", "E", "P1", "P2", "P3", "P4", "P5", "R1", "R2", "R3",
         "X1", "X2", "X3", "X4", "Z", *(f"L{i}" for i in range(8))]
ID = {name: f"2101.{i + 1:05d}" for i, name in enumerate(NAMES)}
NAME = {v: k for k, v in ID.items()}

# citing -> cited, by name.
CITES: dict[str, list[str]] = {
    "A": ["R1", "R2", "R3", "E"],
    "B": ["R1", "R2"],
    "D": ["R1"],
    "P1": ["A", "B", "C", "E"],
    "P2": ["A", "B"],
    "P3": ["A", "C"],
    "P4": ["B"],
    "P5": ["A", "B"],
    # an island: X1 cites X2, X3 cites X2 and X4
    "X1": ["X2"],
    "X3": ["X2", "X4"],
    # a chain of 7 steps, alternating directions: L0 cites L1, L2 cites L1, L2 cites L3, ...
    "L0": ["L1"], "L2": ["L1", "L3"], "L4": ["L3", "L5"], "L6": ["L5", "L7"],
}

DIRECTIONS = {"core": ["A", "B", "C", "D", "E"], "citers": ["P1", "P2", "P3", "P4", "P5"]}


def placement(slug: str, name: str | None = None) -> Placement:
    name = name or slug.title()
    return Placement(breadcrumb=f"Area / {name}", area="Area", direction=name, slug=f"area/{slug}",
                     url=f"{HOST}/area/{slug}/")


def listed(pid: str, position: int) -> ListedPaper:
    return ListedPaper(id=pid, title=f"Paper {NAME.get(pid, pid)}", year=2021, position=position,
                       url=f"{HOST}/paper/{pid}/")


def make_page(pid: str, *, refs: Sequence[str] = (), citers: Sequence[str] | None = None,
              cited_by: int | None = None, through: date = date(2026, 10, 1),
              directions: Sequence[str] = ()) -> MapPage:
    """A map page for `pid` listing references `refs` and (if given) citers, by id."""
    places = tuple(placement(d) for d in directions)
    return MapPage(
        id=pid, title=f"Paper {NAME.get(pid, pid)}", arxiv_url=f"https://arxiv.org/abs/{pid}",
        map_url=f"{HOST}/paper/{pid}/",
        cited_by=cited_by if cited_by is not None else len(citers or ()), data_through=through,
        direction=places[0].direction if places else None, direction_count=3 if places else None,
        area="Area" if places else None, refs_in_map=len(refs), refs_total=len(refs),
        first_posted=date(2021, 1, 1), placements=places,
        builds_on=PaperList(len(refs), len(refs), tuple(listed(r, i + 1) for i, r in enumerate(refs))),
        built_on_by=None if citers is None else PaperList(
            len(citers), cited_by if cited_by is not None else len(citers),
            tuple(listed(c, i + 1) for i, c in enumerate(citers))),
        abstract=None)


def store(db, pages: Sequence[MapPage], now: datetime) -> None:
    save_pages(db, [(p, SourceInfo(location=f"mem:{p.id}", sha256=p.id)) for p in pages], now)


def build_map(db, now: datetime) -> None:
    """Every named paper gets a page listing its references (by the CITES table)."""
    direction_of = {n: [slug] for slug, names in DIRECTIONS.items() for n in names}
    store(db, [make_page(ID[n], refs=[ID[r] for r in CITES.get(n, [])], directions=direction_of.get(n, ()))
               for n in NAMES], now)
