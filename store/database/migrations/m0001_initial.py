"""Migration 0001_initial: the first schema (papers, directions, citations, snapshots, events, sources, ingests)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0001_initial"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """The first schema: papers, directions, placements, citations, the page snapshots and the
    events feeds and alerts read, what was read from each source, rejected pages and the ingests
    run; a full-text index over titles and abstracts (docs/design.md, "2. History rules")."""
    db.executescript(
        """
        CREATE TABLE papers (
            id TEXT PRIMARY KEY,          -- arXiv id without version, e.g. 2412.10400
            title TEXT NOT NULL,
            year INTEGER,
            url TEXT,                     -- the paper's map page
            arxiv_url TEXT,
            abstract TEXT,
            first_posted TEXT,            -- ISO date
            cited_by INTEGER,             -- as the newest page states it
            refs_in_map INTEGER,
            refs_total INTEGER,
            data_through TEXT,            -- ISO date of the newest page stored
            has_page INTEGER NOT NULL DEFAULT 0,  -- 0: only seen in other pages' lists
            first_seen TEXT NOT NULL,     -- ISO timestamp (UTC)
            updated TEXT NOT NULL
        );
        CREATE INDEX papers_cited_by ON papers(cited_by DESC);

        CREATE TABLE directions (
            slug TEXT PRIMARY KEY,        -- the link's path, e.g. lr/reinforcement-learning-for-reasoning
            name TEXT NOT NULL,
            area TEXT NOT NULL,
            breadcrumb TEXT NOT NULL,
            url TEXT,
            direction_count INTEGER       -- "one of K directions in <area>", when stated
        );

        CREATE TABLE snapshots (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_id TEXT NOT NULL REFERENCES papers(id),
            data_through TEXT,
            cited_by INTEGER,
            refs_in_map INTEGER,
            refs_total INTEGER,
            citers_listed INTEGER,
            refs_listed INTEGER,
            content_hash TEXT NOT NULL,   -- sha256 of what the page says (see store.save.page_hash)
            source TEXT NOT NULL,         -- file path or URL
            ingested_at TEXT NOT NULL
        );
        CREATE INDEX snapshots_paper ON snapshots(paper_id, id);

        CREATE TABLE placements (
            paper_id TEXT NOT NULL REFERENCES papers(id),
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            position INTEGER NOT NULL,    -- 1 = the paper's main direction
            PRIMARY KEY (paper_id, direction_slug)
        );
        CREATE INDEX placements_direction ON placements(direction_slug);

        CREATE TABLE citations (
            citing_id TEXT NOT NULL REFERENCES papers(id),
            cited_id TEXT NOT NULL REFERENCES papers(id),
            first_seen TEXT NOT NULL,     -- ISO timestamp (UTC) of the ingest that revealed it
            snapshot_id INTEGER REFERENCES snapshots(id),
            PRIMARY KEY (citing_id, cited_id)
        ) WITHOUT ROWID;
        CREATE INDEX citations_cited ON citations(cited_id, citing_id);

        -- The change log feeds and alerts read with a cursor (ids only grow).
        -- kind 'citation': citing_id newly cites paper_id.
        -- kind 'count': paper_id's stated cited-by count grew from old_count to new_count;
        --   unlisted = how many of the gained citers its page does not list by name.
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('citation', 'count')),
            paper_id TEXT NOT NULL REFERENCES papers(id),
            citing_id TEXT REFERENCES papers(id),
            old_count INTEGER,
            new_count INTEGER,
            unlisted INTEGER,
            snapshot_id INTEGER REFERENCES snapshots(id),
            seen_at TEXT NOT NULL
        );
        CREATE INDEX events_paper ON events(paper_id, id);
        CREATE INDEX events_citing ON events(citing_id);

        -- What was last read from each source location, so unchanged pages are skipped.
        CREATE TABLE sources (
            location TEXT PRIMARY KEY,    -- file path or URL
            paper_id TEXT,
            sha256 TEXT,
            size INTEGER,
            mtime_ns INTEGER,
            etag TEXT,
            last_modified TEXT,
            checked_at TEXT
        );

        -- Pages currently rejected (cleared when the page parses again).
        CREATE TABLE ingest_errors (
            location TEXT PRIMARY KEY,
            line INTEGER,
            reason TEXT NOT NULL,
            sha256 TEXT,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL
        );

        CREATE TABLE ingests (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            source TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            pages_read INTEGER NOT NULL,
            unchanged INTEGER NOT NULL,
            stale INTEGER NOT NULL,
            rejected INTEGER NOT NULL,
            stored INTEGER NOT NULL,
            new_citations INTEGER NOT NULL
        );
        """
    )
    db.table("papers").enable_fts(["title", "abstract"], create_triggers=True, tokenize="porter")
