"""Migration 0026_citation_provenance: citations the map never names, known from the open sources."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0026_citation_provenance"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Where each citation is known from (docs/enrichment.md, "Citations the map does not name").

    - `citations.provenance`: `map` (a map page names it; every citation stored before), or
      `openalex` / `s2` while only that source has said so. A map page naming it later makes
      it `map`; its first_seen, and so its feed entry and alert, stay the first.
    - `source_citations`: what each source said, whether or not it entered `citations`
      (`baseline` 1: in the source's first answer about the cited paper, so not news).
    - `discovery_asked`: when each source was first asked for a paper's citers (what makes
      its later answers news), and `discovery_passes`: the days of OpenAlex's new works read
      (whose references are matched to map papers by `openalex_works.work_id`, now indexed).
    """
    db.executescript(
        """
        ALTER TABLE citations ADD COLUMN provenance TEXT NOT NULL DEFAULT 'map'
            CHECK (provenance IN ('map', 'openalex', 's2'));
        CREATE TABLE source_citations (
            citing_id TEXT NOT NULL,
            cited_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('openalex', 's2')),
            first_seen TEXT NOT NULL,
            baseline INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (cited_id, citing_id, source)
        ) WITHOUT ROWID;
        CREATE TABLE discovery_asked (
            paper_id TEXT NOT NULL,
            source TEXT NOT NULL,
            first_asked TEXT NOT NULL,
            last_asked TEXT NOT NULL,
            PRIMARY KEY (paper_id, source)
        ) WITHOUT ROWID;
        CREATE INDEX openalex_works_work ON openalex_works(work_id);
        CREATE TABLE discovery_passes (
            day TEXT NOT NULL,              -- YYYY-MM-DD: OpenAlex's works of that publication day
            lag INTEGER NOT NULL,           -- read this many days after it (once at each lag)
            works INTEGER NOT NULL,
            citations INTEGER NOT NULL,
            finished_at TEXT NOT NULL,
            PRIMARY KEY (day, lag)
        );
        """
    )
