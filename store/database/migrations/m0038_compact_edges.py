"""Migration 0038_compact_edges: a citation holds its event's id, and the three indexes that
only found an edge's event, or repeated another index, go (issue 44, docs/database.md,
"Why each index").

In place and resumable: it runs outside one transaction (a database of 1,000,000 papers holds
about 18 million citations), in steps each committed on its own and each safe to run again:

1. `citations.event_id` added (NULL everywhere);
2. filled, a range of citers at a time, from the edge's first citation event (found through
   `events_citing_edge`, still there): a process killed here leaves ranges filled and the
   rest NULL, and the next open goes on (a NULL range is filled again, a filled one skipped);
3. in one transaction: `events_edge`, `events_citing_edge` and `citations_cited` dropped, and
   `paper_author_institutions` rebuilt WITHOUT ROWID (its primary key was a second copy of
   every row).

sqlite-utils records the migration after the last step. The pages the indexes held go to the
free list, used again by what the map stores next; a `VACUUM` while mapwatch is stopped gives
them back to the file system (docs/database.md, "Why each index").
"""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.migrations._edge_events import fill_event_ids
from mapwatch.store.database.migrations._table_rebuild import rebuild_without_rowid
from mapwatch.store.database.rows import scalar

NAME = "0038_compact_edges"  # as sqlite-utils records it in _sqlite_migrations: never change it
TRANSACTIONAL = False  # its steps commit on their own: resumable (the module's docstring)


def migrate(db: Database) -> None:
    """A citation holds its event's id, so the edge has one home: the indexes of events by edge
    and citations_cited (a prefix of citations_cited_seen's lookups) go, and
    paper_author_institutions keeps its rows once. In steps, each safe to run again (the
    module's docstring)."""
    conn = db.conn
    if not scalar(conn, "SELECT count(*) FROM pragma_table_info('citations') WHERE name = 'event_id'"):
        with db.atomic():
            conn.execute("ALTER TABLE citations ADD COLUMN event_id INTEGER")
    fill_event_ids(db)  # a range of citers a transaction: resumable
    with db.atomic():
        for index in ("events_edge", "events_citing_edge", "citations_cited"):
            conn.execute(f"DROP INDEX IF EXISTS {index}")
        rebuild_without_rowid(db, "paper_author_institutions")
