"""What a publish leaves in the database for the next one into the same folder.

When each published file's bytes were first written into its folder (`published_files`,
migration 0036), so that a file keeps its modification time, and the feed server its
Last-Modified, as long as its bytes do: across restarts, and when the folder is written again
from nothing (a new disk after a restore from the replica, a platform whose disk does not
outlast the process, an emptied folder). publish (feeds/publish.py) records each file it
hands the folder and sets back the time of those rewritten with bytes already recorded.

And the cursors it published up to (`feed_publishes`): with the same base URL and limit, the
next publish rebuilds only what changed since (feeds/publish_changes.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlite_utils import Database

from mapwatch.store.database.rows import fill, named_row, rows_in_chunks


@dataclass(frozen=True)
class PublishCursors:
    """Where a publish into a folder stopped: its settings and the newest event, snapshot and
    author change its files include."""

    base_url: str
    entry_limit: int
    last_event_id: int
    last_snapshot_id: int
    last_enrichment_id: int


def last_publish(db: Database, key: str) -> PublishCursors | None:
    """The cursors the last publish under `key` (the folder, and its kind) left; None before the first."""
    row = named_row(db, "SELECT base_url, entry_limit, last_event_id, last_snapshot_id, last_enrichment_id"
                        " FROM feed_publishes WHERE out_dir = ?", (key,))
    return fill(PublishCursors, row) if row is not None else None


def record_publish(db: Database, key: str, cursors: PublishCursors, published_at: str) -> None:
    """Keep `cursors` as where the publish under `key` stopped (replacing the last), in one
    transaction: the next publish there starts from them."""
    with db.atomic():
        db.conn.execute(
            "INSERT INTO feed_publishes (out_dir, base_url, entry_limit, last_event_id, last_snapshot_id,"
            " last_enrichment_id, published_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(out_dir) DO UPDATE SET"
            " base_url = excluded.base_url, entry_limit = excluded.entry_limit,"
            " last_event_id = excluded.last_event_id, last_snapshot_id = excluded.last_snapshot_id,"
            " last_enrichment_id = excluded.last_enrichment_id, published_at = excluded.published_at",
            (key, cursors.base_url, cursors.entry_limit, cursors.last_event_id, cursors.last_snapshot_id,
             cursors.last_enrichment_id, published_at))


def keep_times(db: Database, out_dir: str, files: Mapping[str, tuple[str, int]]) -> dict[str, int]:
    """`files`: path in `out_dir` -> (the hash of its bytes, its modification time now, Unix
    seconds). A file whose bytes are recorded under another time gets that time back (in the
    answer: path -> the time to set); any other is recorded at its time now. One transaction."""
    if not files:
        return {}
    known = {row["path"]: (row["digest"], row["modified_at"]) for row in rows_in_chunks(
        db, "SELECT path, digest, modified_at FROM published_files WHERE out_dir = ? AND path IN ({})",
        list(files), [out_dir])}
    back: dict[str, int] = {}
    new: list[tuple[str, str, str, int]] = []
    for path, (digest, mtime) in files.items():
        held = known.get(path)
        if held is not None and held[0] == digest:
            if held[1] != mtime:
                back[path] = held[1]
        else:
            new.append((out_dir, path, digest, mtime))
    if new:
        with db.atomic():
            db.conn.executemany(
                "INSERT INTO published_files (out_dir, path, digest, modified_at) VALUES (?, ?, ?, ?)"
                " ON CONFLICT(out_dir, path) DO UPDATE SET digest = excluded.digest,"
                " modified_at = excluded.modified_at", new)
    return back
