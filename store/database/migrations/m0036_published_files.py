"""Migration 0036_published_files: when each published file's bytes were first written."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0036_published_files"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Each file publish writes into a folder, with the hash of its bytes and when those bytes
    were first written there (store/database/published_files.py), so a file written again
    with the same bytes into a folder that lost it (a new disk, an emptied folder) keeps its
    modification time, and so its Last-Modified, as it keeps its ETag (docs/feeds.md)."""
    db.executescript(
        """
        CREATE TABLE published_files (
            out_dir TEXT NOT NULL,          -- absolute path of the output folder
            path TEXT NOT NULL,             -- the file, relative to it
            digest TEXT NOT NULL,           -- the hash of its bytes (its ETag, without the quotes)
            modified_at INTEGER NOT NULL,   -- Unix time those bytes were first written there
            PRIMARY KEY (out_dir, path)
        ) WITHOUT ROWID;
        """
    )
