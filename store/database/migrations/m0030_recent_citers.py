"""Migration 0030_recent_citers: when OpenAlex was last asked for a paper's newest citers."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0030_recent_citers"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """When OpenAlex was last asked for the works of the last days that cite a tracked or team
    paper (store/scholarly/new_works.py): each round asks for the papers due (tracked: every
    round; team: daily), not every paper every time."""
    db.executescript(
        """
        CREATE TABLE recent_citers_asked (
            paper_id TEXT PRIMARY KEY,
            asked_at TEXT NOT NULL
        );
        """
    )
