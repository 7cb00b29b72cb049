"""A parsed page as the rows the store writes: everything `save` needs, nothing it does not.

Built once per page (in the ingest's parse workers for a large ingest, else in-process):
the content hashes and the paper row are computed here, so the one process that writes
does only the SQL and the diff against what is stored. Plain tuples, cheap to send from a
worker process (docs/pages.md, "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]").
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mapwatch.store.pages.model import MapPage
from mapwatch.store.pages.page_hash import legacy_page_hash, page_hash

# (id, title, year, url) of a list item
Listed = tuple[str, str, "int | None", "str | None"]


class SourceInfo(NamedTuple):
    """Where a page came from and the validators to skip it next time."""

    location: str
    sha256: str
    size: int | None = None
    mtime_ns: int | None = None
    etag: str | None = None
    last_modified: str | None = None


class Prepared(NamedTuple):
    id: str
    hash: str  # page_hash
    # legacy_page_hash, to recognise a page stored before the hash format; None when the map
    # holds no hash of that format (none is stored into a map with no snapshot)
    legacy: str | None
    through: str | None  # data_through, ISO
    year: int | None
    url: str | None  # the page's own map URL
    row: tuple[Any, ...]  # title, arxiv_url, abstract, first_posted, cited_by, refs_in_map, refs_total
    cited_by: int | None
    direction_count: int | None
    placements: tuple[tuple[str, str, str, str, str | None], ...]  # slug, name, area, breadcrumb, url
    # The papers the lists name, each once as first listed ("Builds on", then "Built on by"),
    # the page's own paper left out: what a stub of each would hold.
    listed: tuple[Listed, ...]
    refs_listed: int  # items of "Builds on"
    citers_listed: int  # items of "Built on by"
    source: SourceInfo
    # (citing, cited) from both lists, self-citations left out, each once in the place of its
    # last mention: the order in which the page's new citations are logged
    edges: tuple[tuple[str, str], ...]


def prepare(page: MapPage, source: SourceInfo, *, legacy: bool = True) -> Prepared:
    posted = page.first_posted
    refs = page.builds_on.items if page.builds_on else ()
    citers = page.built_on_by.items if page.built_on_by else ()
    pid = page.id
    edges = [(pid, it.id) for it in refs if it.id != pid] + [(it.id, pid) for it in citers if it.id != pid]
    if len(set(edges)) != len(edges):
        last = {e: i for i, e in enumerate(edges)}
        edges = sorted(last, key=last.__getitem__)
    listed: dict[str, Listed] = {}
    for it in (*refs, *citers):
        if it.id != pid and it.id not in listed:
            listed[it.id] = (it.id, it.title, it.year, it.url)
    return Prepared(
        page.id, page_hash(page), legacy_page_hash(page) if legacy else None,
        page.data_through.isoformat() if page.data_through else None,
        posted.year if posted else None, page.map_url,
        (page.title, page.arxiv_url, page.abstract, posted.isoformat() if posted else None, page.cited_by,
         page.refs_in_map, page.refs_total),
        page.cited_by, page.direction_count,
        tuple((p.slug, p.direction, p.area, p.breadcrumb, p.url) for p in page.placements),
        tuple(listed.values()), len(refs), len(citers), source, tuple(edges))
