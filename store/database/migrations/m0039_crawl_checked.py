"""Migration 0039_crawl_checked: the crawl plan's "every paper with a page was checked over
HTTP" kept in the database, so a new process need not find it again (issue 44)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0039_crawl_checked"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """One row per page-location pattern of a crawled site: the papers with a page, and the
    newest papers row, when every one of those papers was found checked over HTTP there. A
    process used to find this once by joining every paper with a page with its `sources` row
    (3.8 s of CPU at 1,000,000 pages, a process's first tick); it now reads this row
    (store/sources/plan_counts.py)."""
    db.executescript(
        """
        CREATE TABLE crawl_checked (
            head TEXT NOT NULL,             -- a page's location is head || paper_id || tail
            tail TEXT NOT NULL,
            pages INTEGER NOT NULL,         -- papers with a page when every one was found checked
            top_rowid INTEGER NOT NULL,     -- the newest papers row then (its rowid and id)
            top_id TEXT NOT NULL,
            PRIMARY KEY (head, tail)
        ) WITHOUT ROWID;
        """
    )
