"""Migration 0012_drop_events_citing: drops events_citing, a prefix of events_citing_edge."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0012_drop_events_citing"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """events_citing (citing_id) is a prefix of events_citing_edge (citing_id, paper_id, id),
    which answers every lookup by citer as well: one index less to write and to build
    (docs/pages.md, "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]")."""
    db.executescript("DROP INDEX IF EXISTS events_citing;")
