"""Migration 0042_recheck_weight: the re-checks' total weight kept in the database, so a new
process's first tick need not sum it over every page again (issue 44)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0042_recheck_weight"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """One row: Σ recheck_weight over the pages checked over HTTP, and when (on the tick clock)
    it was summed. A tick's plan sums it again when WEIGHT_KEPT has passed since
    (store/sources/plan_counts.py); it used to keep it in the process only, so each new process
    summed 1,000,000 sources rows once (0.28 s of CPU)."""
    db.executescript(
        """
        CREATE TABLE recheck_weight (
            id INTEGER PRIMARY KEY CHECK (id = 1),  -- one row
            total REAL NOT NULL,                    -- the sum of the pages' weights
            summed_at TEXT NOT NULL                 -- when, on the tick clock (ISO, UTC)
        );
        """
    )
