"""The inverse of parsing: a `MapPage` -> page text in the map's format.

Used by the benchmark generator and the round-trip property tests.
"""

from __future__ import annotations

from datetime import date

from mapwatch.store.ids import arxiv_url
from mapwatch.store.pages.model import MapPage, PaperList


def _d(d: date) -> str:
    return f"{d.day} {d.strftime('%b')} {d.year}"


def _plural(n: int, word: str) -> str:
    return f"{n:,} {word}" if n == 1 else f"{n:,} {word}s"


def format_page(page: MapPage) -> str:
    out = [f"# {page.title}", ""]
    links = []
    links.append(f"arXiv: {page.arxiv_url or arxiv_url(page.id)}")
    if page.map_url:
        links.append(f"HTML: {page.map_url}")
    out += [" · ".join(links), "", "## Key facts", ""]
    if page.cited_by is not None:
        through = f" (data through {_d(page.data_through)})" if page.data_through else ""
        out.append(f"- Cited by {_plural(page.cited_by, 'paper')} in the map{through}.")
    if page.direction and page.direction_count is not None and page.area:
        out.append(f"- Placed in {page.direction}, one of {_plural(page.direction_count, 'direction')}"
                   f" in {page.area}.")
    if page.refs_in_map is not None and page.refs_total is not None:
        verb = "is" if page.refs_in_map == 1 else "are"
        out.append(f"- Builds on {page.refs_in_map:,} of its {_plural(page.refs_total, 'reference')}"
                   f" that {verb} in the map.")
    if page.first_posted:
        out.append(f"- First posted on arXiv {_d(page.first_posted)}.")
    out.append("")
    if page.placements:
        out += ["## Placed in", ""]
        for p in page.placements:
            crumb = p.breadcrumb.removesuffix(p.direction).removesuffix(" / ")
            prefix = f"{crumb} / " if crumb else ""
            out.append(f"- {prefix}[{p.direction}]({p.url})")
        out.append("")
    for heading, lst in (("Builds on", page.builds_on), ("Built on by", page.built_on_by)):
        if lst is not None:
            out += _list(heading, lst)
    if page.abstract is not None:
        out += ["## Abstract (arXiv)", "", page.abstract]
    return "\n".join(out).rstrip("\n") + "\n"


def _list(heading: str, lst: PaperList) -> list[str]:
    out = [f"## {heading} (most cited first, {lst.shown:,} of {lst.total:,})", ""]
    for item in lst.items:
        year = f" ({item.year})" if item.year is not None else ""
        out.append(f"- [{item.title}]({item.url}){year}")
    out.append("")
    return out
