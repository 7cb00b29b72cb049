"""Migration 0018_enrichment: what arXiv, OpenAlex and Semantic Scholar say of the papers."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0018_enrichment"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """What the open scholarly sources (arXiv, OpenAlex, Semantic Scholar) say of the map's
    papers, and when each was asked (store/scholarly, docs/enrichment.md)."""
    db.executescript(
        """
        -- One row per paper and source: when it was last asked, what came of it, when to ask again.
        CREATE TABLE enrichment_fetches (
            paper_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('arxiv', 'openalex', 's2')),
            fetched_at TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'not_found', 'failed')),
            reason TEXT,                          -- why it failed (one line)
            next_fetch_at TEXT NOT NULL,          -- asked again from then on (new versions, new ORCID links)
            PRIMARY KEY (paper_id, source)
        );
        CREATE INDEX enrichment_fetches_due ON enrichment_fetches(source, next_fetch_at);
        -- arXiv's record of a paper (its API's Atom entry).
        CREATE TABLE arxiv_records (
            paper_id TEXT PRIMARY KEY,
            title TEXT,
            primary_category TEXT,
            categories TEXT,                      -- space-separated, primary first
            published TEXT,                       -- the first version (ISO date-time)
            updated TEXT,                         -- the latest version
            doi TEXT,
            journal_ref TEXT,
            comments TEXT,
            fetched_at TEXT NOT NULL
        );
        -- OpenAlex's work for a paper.
        CREATE TABLE openalex_works (
            paper_id TEXT PRIMARY KEY,
            work_id TEXT NOT NULL,                -- W2741809807
            venue TEXT,                           -- its primary location's source, e.g. a journal
            doi TEXT,
            fetched_at TEXT NOT NULL
        );
        -- A paper's authors in order: arXiv's names, with OpenAlex's author id and ORCID where
        -- OpenAlex has the paper (`source` says whose list it is).
        CREATE TABLE paper_authors (
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,            -- 1 = first author
            name TEXT NOT NULL,
            author_id TEXT,                       -- OpenAlex author id (A5023888391)
            orcid TEXT,                           -- 0000-0002-1825-0097
            source TEXT NOT NULL CHECK (source IN ('arxiv', 'openalex')),
            PRIMARY KEY (paper_id, position)
        );
        CREATE INDEX paper_authors_author_id ON paper_authors(author_id) WHERE author_id IS NOT NULL;
        CREATE INDEX paper_authors_orcid ON paper_authors(orcid) WHERE orcid IS NOT NULL;
        CREATE INDEX paper_authors_name ON paper_authors(name COLLATE NOCASE);
        CREATE TABLE institutions (
            id TEXT PRIMARY KEY,                  -- OpenAlex institution id (I136199984), else "name:<name>"
            name TEXT NOT NULL,
            ror TEXT,
            country TEXT                          -- ISO 3166-1 alpha-2
        );
        -- The institutions an author gave on a paper.
        CREATE TABLE paper_author_institutions (
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            institution_id TEXT NOT NULL REFERENCES institutions(id),
            PRIMARY KEY (paper_id, position, institution_id)
        );
        -- What Semantic Scholar says of a citation: the citing sentences, intents, influence.
        CREATE TABLE citation_contexts (
            citing_id TEXT NOT NULL,
            cited_id TEXT NOT NULL,
            contexts TEXT NOT NULL,               -- JSON list of sentences (clipped)
            intents TEXT NOT NULL,                -- JSON list, e.g. ["methodology"]
            is_influential INTEGER NOT NULL,
            fetched_at TEXT NOT NULL,
            PRIMARY KEY (citing_id, cited_id)
        );
        """
    )
