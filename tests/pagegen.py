"""A small deterministic generator of map pages for crash and load tests.

`generate(n, seed)` makes a citation graph over n papers (each cites a few earlier ones)
in two versions: v2 is v1 thirty days later with extra citations and larger stated counts.
`write(folder, pages)` writes them with `format_page`, one file per paper.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList, Placement

HOST = "https://mlsanity.com"
LIST_LIMIT = 30
AREAS = ["LLM reasoning", "LLM alignment", "Vision", "Theory"]


@dataclass(frozen=True)
class Corpus:
    v1: list[MapPage]
    v2: list[MapPage]


def paper_id(i: int) -> str:
    return f"2601.{i:05d}"


def _pages(n: int, edges: set[tuple[int, int]], through: date, rng: random.Random,
           extra: dict[int, int], directions: list[tuple[str, str, str]]) -> list[MapPage]:
    refs: dict[int, list[int]] = {i: [] for i in range(n)}
    citers: dict[int, list[int]] = {i: [] for i in range(n)}
    for citing, cited in sorted(edges):
        refs[citing].append(cited)
        citers[cited].append(citing)

    def lst(ids: list[int], total: int) -> PaperList:
        shown = ids[:LIST_LIMIT]
        items = tuple(ListedPaper(id=paper_id(j), title=f"Paper {j}: a [study] of (things) — ü",
                                  year=2020 + j % 7, position=k + 1, url=f"{HOST}/paper/{paper_id(j)}/")
                      for k, j in enumerate(shown))
        return PaperList(shown=len(shown), total=max(total, len(shown)), items=items)

    out = []
    for i in range(n):
        area, name, slug = directions[i % len(directions)]
        out.append(MapPage(
            id=paper_id(i), title=f"Paper {i}: a [study] of (things) — ü",
            arxiv_url=f"https://arxiv.org/abs/{paper_id(i)}", map_url=f"{HOST}/paper/{paper_id(i)}/",
            cited_by=len(citers[i]) + extra.get(i, 0), data_through=through,
            direction=name, direction_count=len(directions), area=area,
            refs_in_map=len(refs[i]), refs_total=len(refs[i]) + 5, first_posted=date(2026, 1, 1),
            placements=(Placement(breadcrumb=f"{area} / {name}", area=area, direction=name, slug=slug,
                                  url=f"{HOST}/{slug}/"),),
            builds_on=lst(refs[i], len(refs[i])), built_on_by=lst(citers[i], len(citers[i]) + extra.get(i, 0)),
            abstract=f"Abstract of paper {i}.",
        ))
    return out


def generate(n: int, seed: int = 7) -> Corpus:
    rng = random.Random(seed)
    directions = [(area, f"Direction {k}", f"d{k % len(AREAS)}/direction-{k}")
                  for k, area in ((k, AREAS[k % len(AREAS)]) for k in range(12))]
    e1 = {(i, j) for i in range(1, n) for j in rng.sample(range(i), min(i, rng.randint(1, 4)))}
    e2 = set(e1) | {(i, j) for i in rng.sample(range(1, n), n // 5) for j in rng.sample(range(i), 1)}
    extra2 = {i: rng.randint(1, 3) for i in rng.sample(range(n), n // 10)}
    through = date(2026, 9, 1)
    return Corpus(v1=_pages(n, e1, through, rng, {}, directions),
                  v2=_pages(n, e2, through + timedelta(days=30), rng, extra2, directions))


def write(folder: Path, pages: list[MapPage]) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for p in pages:
        path = folder / f"{p.id}.txt"
        path.write_text(format_page(p), encoding="utf-8")
        paths.append(path)
    return paths
