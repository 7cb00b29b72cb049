"""Migration 0049_paper_keys: the citations and the events name their papers by integer keys,
not by text ids (issue 44). `paper_keys` holds each id once; the views `citations` and
`events` give the ids back, under the same names, columns and values."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.migrations._paper_keys import OUTSIDE_FIRST, arxiv_key_sql
from mapwatch.store.database.migrations._sequence import carry_sequence

NAME = "0049_paper_keys"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """A citation named its two papers by text ids twice, in its row and in its index, and an
    event its paper and citer in its row and its paper in its index: 10 bytes and more each
    time, where a key takes 4. Every id the tables name gets a key in `paper_keys` (a new-style
    arXiv id its own number, in its order: migrations/_paper_keys.py), those of `papers` and any
    other an edge or event names (no version wrote such; no foreign key stopped one). The
    tables are copied onto the keys under the same rows, event ids and id sequence, and their
    indexes made again on the keys; the views join the ids back. One transaction: a migration
    interrupted is rolled back and runs again."""
    iso = "'%Y-%m-%dT%H:%M:%S+00:00'"  # a stored timestamp: ISO 8601 in UTC, to the second (store/clock.py)
    key = arxiv_key_sql("id")
    absent = "NOT EXISTS (SELECT 1 FROM papers p WHERE p.id = x)"
    db.executescript(f"""
        CREATE TABLE paper_keys (
            key INTEGER PRIMARY KEY,   -- a new-style arXiv id's own number, else from {OUTSIDE_FIRST:,} on
            id TEXT NOT NULL UNIQUE    -- papers.id
        );
        CREATE TEMP TABLE named_elsewhere (id TEXT PRIMARY KEY) WITHOUT ROWID;
        INSERT OR IGNORE INTO temp.named_elsewhere
            SELECT x FROM (SELECT DISTINCT citing_id AS x FROM citation_edges) WHERE {absent};
        INSERT OR IGNORE INTO temp.named_elsewhere
            SELECT x FROM (SELECT DISTINCT cited_id AS x FROM citation_edges) WHERE {absent};
        INSERT OR IGNORE INTO temp.named_elsewhere
            SELECT x FROM (SELECT DISTINCT paper_id AS x FROM event_log) WHERE {absent};
        INSERT OR IGNORE INTO temp.named_elsewhere
            SELECT x FROM (SELECT DISTINCT citing_id AS x FROM event_log) WHERE x IS NOT NULL AND {absent};
        INSERT INTO paper_keys (key, id)
            SELECT {key}, id FROM (SELECT id FROM papers UNION ALL SELECT id FROM temp.named_elsewhere)
            WHERE {key} IS NOT NULL;
        INSERT INTO paper_keys (key, id)
            SELECT {OUTSIDE_FIRST - 1} + row_number() OVER (ORDER BY id), id
            FROM (SELECT id FROM papers UNION ALL SELECT id FROM temp.named_elsewhere) WHERE {key} IS NULL;
        DROP TABLE temp.named_elsewhere;

        DROP VIEW citations;
        DROP INDEX citations_cited_seen;
        DROP INDEX citations_cited_seen_old;
        ALTER TABLE citation_edges RENAME TO citation_edges_by_id;
        CREATE TABLE citation_edges (
            citing_key INTEGER NOT NULL,            -- paper_keys.key
            cited_key INTEGER NOT NULL,             -- paper_keys.key
            first_seen_unix INTEGER NOT NULL,       -- Unix time (UTC seconds) of the ingest that revealed it
            snapshot_id INTEGER,                    -- snapshots.id
            at_first_read INTEGER NOT NULL DEFAULT 0,
            provenance TEXT NOT NULL DEFAULT 'map' CHECK (provenance IN ('map', 'openalex', 's2')),
            event_id INTEGER,                       -- event_log.id
            PRIMARY KEY (citing_key, cited_key)
        ) WITHOUT ROWID;
        INSERT INTO citation_edges (citing_key, cited_key, first_seen_unix, snapshot_id, at_first_read, provenance,
                                    event_id)
            SELECT kc.key, kd.key, e.first_seen_unix, e.snapshot_id, e.at_first_read, e.provenance, e.event_id
            FROM citation_edges_by_id e JOIN paper_keys kc ON kc.id = e.citing_id
                 JOIN paper_keys kd ON kd.id = e.cited_id
            ORDER BY kc.key, kd.key;
        DROP TABLE citation_edges_by_id;
        CREATE INDEX citations_cited_seen ON citation_edges(cited_key, first_seen_unix, citing_key);
        CREATE INDEX citations_cited_seen_old ON citation_edges(cited_key, first_seen_unix)
            WHERE citing_key >= {OUTSIDE_FIRST};
        CREATE VIEW citations AS
            SELECT kc.id AS citing_id, kd.id AS cited_id,
                   strftime({iso}, c.first_seen_unix, 'unixepoch') AS first_seen, c.snapshot_id,
                   c.at_first_read, c.provenance, c.event_id
            FROM citation_edges c JOIN paper_keys kc ON kc.key = c.citing_key
                 JOIN paper_keys kd ON kd.key = c.cited_key;

        DROP VIEW events;
        DROP INDEX events_paper;
        ALTER TABLE event_log RENAME TO event_log_by_id;
        CREATE TABLE event_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_key INTEGER NOT NULL,             -- paper_keys.key
            citing_key INTEGER,                     -- paper_keys.key: a citation event's citer; none: a count event
            old_count INTEGER,
            new_count INTEGER,
            unlisted INTEGER,
            snapshot_id INTEGER                     -- snapshots.id
        );
        INSERT INTO event_log (id, paper_key, citing_key, old_count, new_count, unlisted, snapshot_id)
            SELECT l.id, kp.key, (SELECT kc.key FROM paper_keys kc WHERE kc.id = l.citing_id), l.old_count, l.new_count,
                   l.unlisted, l.snapshot_id
            FROM event_log_by_id l JOIN paper_keys kp ON kp.id = l.paper_id ORDER BY l.id;
        {carry_sequence('event_log_by_id', 'event_log')}
        DROP TABLE event_log_by_id;
        CREATE INDEX events_paper ON event_log(paper_key, id);
        CREATE VIEW events AS
            SELECT l.id, CASE WHEN l.citing_key IS NULL THEN 'count' ELSE 'citation' END AS kind,
                   kp.id AS paper_id, (SELECT kc.id FROM paper_keys kc WHERE kc.key = l.citing_key) AS citing_id,
                   l.old_count, l.new_count, l.unlisted, l.snapshot_id,
                   (SELECT b.seen_at FROM event_batches b WHERE b.first_id <= l.id
                    ORDER BY b.first_id DESC LIMIT 1) AS seen_at
            FROM event_log l JOIN paper_keys kp ON kp.key = l.paper_key;
        """)
