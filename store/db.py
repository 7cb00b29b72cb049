"""Opening the database: one place for the file, pragmas and schema."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from sqlite_utils import Database

from store import schema

DEFAULT_DB = "mapwatch.db"


def default_db_path() -> str:
    return os.environ.get("MAPWATCH_DB") or DEFAULT_DB


def open_db(path: str | Path | None = None, *, migrate: bool = True) -> Database:
    """Open (creating if needed) the mapwatch database: WAL, foreign keys, schema applied."""
    target = str(path) if path is not None else default_db_path()
    if target != ":memory:":
        Path(target).parent.mkdir(parents=True, exist_ok=True)
    # check_same_thread=False: the bot hands the connection to worker threads
    # (asyncio.to_thread); callers that share one connection serialise its use.
    db = Database(sqlite3.connect(target, check_same_thread=False), execute_plugins=False)
    db.conn.execute("PRAGMA busy_timeout = 10000")
    if target != ":memory:":
        db.conn.execute("PRAGMA journal_mode = WAL")
        db.conn.execute("PRAGMA synchronous = NORMAL")
    db.conn.execute("PRAGMA foreign_keys = ON")
    if migrate:
        schema.apply(db)
    return db
