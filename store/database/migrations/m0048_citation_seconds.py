"""Migration 0048_citation_seconds: each citation's first-seen time as a number of seconds,
not 25 characters, in the table and in its index (issue 44). `citations` becomes a view with
the same columns, over `citation_edges`."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.migrations._refused import Refused

NAME = "0048_citation_seconds"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """A citation's `first_seen` took 25 bytes in its row and 25 again in `citations_cited_seen`:
    42% of an edge's 119 bytes at 30,000 papers. `citation_edges` keeps it as Unix seconds
    (`first_seen_unix`, 4 bytes until 2038), both indexes sort on that, in the same order (a
    timestamp to the second in UTC sorts as its seconds do). `citations` is a view that gives
    the text back, exactly: a time that would not come back the same (another zone, a fraction
    of a second: no version wrote such) stops the migration with its edge, before anything
    changed. The table names its papers and snapshots without foreign keys, as `event_log`
    (0047): a bulk load writes with the checks off, and what it wrote is copied whatever it
    holds. One transaction: a migration interrupted is rolled back and runs again."""
    iso = "'%Y-%m-%dT%H:%M:%S+00:00'"  # a stored timestamp: ISO 8601 in UTC, to the second (store/clock.py)
    for citing, cited, seen in db.execute(
            f"SELECT citing_id, cited_id, first_seen FROM citations"
            f" WHERE strftime({iso}, first_seen) IS NOT first_seen LIMIT 1"):
        raise Refused(f"migration {NAME}: the citation {citing} -> {cited} was first seen at {seen!r}, not a time"
                      " to the second in UTC")
    db.executescript(f"""
        CREATE TABLE citation_edges (
            citing_id TEXT NOT NULL,                -- papers.id
            cited_id TEXT NOT NULL,                 -- papers.id
            first_seen_unix INTEGER NOT NULL,       -- Unix time (UTC seconds) of the ingest that revealed it
            snapshot_id INTEGER,                    -- snapshots.id
            at_first_read INTEGER NOT NULL DEFAULT 0,
            provenance TEXT NOT NULL DEFAULT 'map' CHECK (provenance IN ('map', 'openalex', 's2')),
            event_id INTEGER,                       -- event_log.id
            PRIMARY KEY (citing_id, cited_id)
        ) WITHOUT ROWID;
        INSERT INTO citation_edges (citing_id, cited_id, first_seen_unix, snapshot_id, at_first_read, provenance,
                                    event_id)
            SELECT citing_id, cited_id, CAST(strftime('%s', first_seen) AS INTEGER), snapshot_id, at_first_read,
                   provenance, event_id FROM citations ORDER BY citing_id, cited_id;
        DROP TABLE citations;
        CREATE INDEX citations_cited_seen ON citation_edges(cited_id, first_seen_unix, citing_id);
        CREATE INDEX citations_cited_seen_old ON citation_edges(cited_id, first_seen_unix)
            WHERE NOT (citing_id GLOB '[0-9][0-9][0-9][0-9].[0-9][0-9][0-9][0-9]*');
        CREATE VIEW citations AS
            SELECT citing_id, cited_id, strftime({iso}, first_seen_unix, 'unixepoch') AS first_seen, snapshot_id,
                   at_first_read, provenance, event_id
            FROM citation_edges;
        """)
