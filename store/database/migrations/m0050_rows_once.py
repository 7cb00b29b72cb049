"""Migration 0050_rows_once: `placements`, `enrichment_fetches` and `openalex_works` keep each
row once (issue 44). A table with a primary key other than an INTEGER one keeps its rows in its
rowid b-tree and again in the key's index (`sqlite_autoindex_…`); WITHOUT ROWID, the key's
b-tree holds the rows. Same names, columns, rows and indexes; 98 bytes a paper fewer at 30,000
papers with authors (bench/RESULTS.md, "The compact database", part 11). One transaction: a
kill leaves the tables as they were, and the next open makes it again."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.migrations._table_rebuild import rebuild_without_rowid

NAME = "0050_rows_once"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Each table rebuilt WITHOUT ROWID, its rows and indexes kept (a table already so is left)."""
    for table in ("placements", "enrichment_fetches", "openalex_works"):
        rebuild_without_rowid(db, table)
