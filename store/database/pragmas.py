"""PRAGMA settings for the length of a block: each set on entry, each restored on exit."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

from mapwatch.store.database.rows import scalar


@contextmanager
def temporary_pragmas(conn: sqlite3.Connection, **values: int) -> Iterator[None]:
    """Set each named PRAGMA to its integer value for the block and put back what it was
    after it, whatever happens inside (a PRAGMA that cannot change inside a transaction
    needs the block to end its own)."""
    previous = {name: int(scalar(conn, f"PRAGMA {name}")) for name in values}
    for name, value in values.items():
        conn.execute(f"PRAGMA {name} = {int(value)}")
    try:
        yield
    finally:
        for name, value in previous.items():
            conn.execute(f"PRAGMA {name} = {value}")
