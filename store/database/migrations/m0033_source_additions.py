"""Migration 0033_source_additions: what each open source added each day, against its daily bound."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0033_source_additions"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """The citations and stub papers each source (OpenAlex, Semantic Scholar) added on a UTC
    day, so its daily bound holds across rounds and restarts (store/scholarly/budget.py,
    docs/enrichment.md, "How much a source may add"), and the first bound it reached that day."""
    db.executescript(
        """
        CREATE TABLE source_additions (
            source TEXT NOT NULL,
            day TEXT NOT NULL,              -- YYYY-MM-DD, UTC
            citations INTEGER NOT NULL DEFAULT 0,
            stubs INTEGER NOT NULL DEFAULT 0,
            reached TEXT,                   -- the first bound reached that day (a line); NULL: none
            PRIMARY KEY (source, day)
        ) WITHOUT ROWID;
        """
    )
