"""Where the citations an answer names are known from (docs/enrichment.md, "Citations the map does
not name"): a citer is the map's when a map page names one of its citations listed, else the
open source's. Answers of the map's citations only cost one index probe per citer."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import TypeVar

from sqlite_utils import Database

from mapwatch.store.database.rows import rows_in_chunks
from mapwatch.store.questions.types import AlertCiter, from_sources

C = TypeVar("C", bound=AlertCiter)


def source_only(db: Database, citing_ids: Sequence[str]) -> dict[tuple[str, str], str]:
    """(citing, cited) -> provenance, for the citations of `citing_ids` no map page names."""
    ids = list(dict.fromkeys(citing_ids))
    out: dict[tuple[str, str], str] = {}
    for citing, cited, provenance in rows_in_chunks(
            db, "SELECT citing_id, cited_id, provenance FROM citations WHERE provenance != 'map'"
            " AND citing_id IN ({})", ids):
        out[(citing, cited)] = provenance
    return out


def with_provenance(db: Database, citers: Sequence[C]) -> list[C]:
    """The alert's citers, each with where its listed citations are known from."""
    known = source_only(db, [c.id for c in citers])
    if not known:
        return list(citers)
    return [replace(c, provenance=from_sources(known.get((c.id, r.id), "map") for r in c.cites)) if c.cites else c
            for c in citers]
