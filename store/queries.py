"""Read side: questions about the map, answered as plain frozen dataclasses.

No discord, no feedgen here: the bot, the feeds, `mapwatch ask` and the benchmarks all
use these functions.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database


@dataclass(frozen=True)
class MapStats:
    papers: int
    papers_with_page: int
    citations: int
    directions: int
    events: int
    newest_data_through: str | None
    last_ingest_at: str | None
    last_ingest_source: str | None
    pages_rejected_now: int


def map_stats(db: Database) -> MapStats:
    c = db.conn
    papers, with_page, newest = c.execute(
        "SELECT count(*), coalesce(sum(has_page), 0), max(data_through) FROM papers").fetchone()
    last = c.execute("SELECT finished_at, source FROM ingests ORDER BY id DESC LIMIT 1").fetchone()
    return MapStats(
        papers=papers,
        papers_with_page=with_page,
        citations=c.execute("SELECT count(*) FROM citations").fetchone()[0],
        directions=c.execute("SELECT count(*) FROM directions").fetchone()[0],
        events=c.execute("SELECT coalesce(max(id), 0) FROM events").fetchone()[0],
        newest_data_through=newest,
        last_ingest_at=last[0] if last else None,
        last_ingest_source=last[1] if last else None,
        pages_rejected_now=c.execute("SELECT count(*) FROM ingest_errors").fetchone()[0],
    )
