"""When each published file's bytes were first written into its folder (`published_files`,
migration 0036), so that a file keeps its modification time, and the feed server its
Last-Modified, as long as its bytes do: across restarts, and when the folder is written again
from nothing (a new disk after a restore from the replica, a platform whose disk does not
outlast the process, an emptied folder). publish (feeds/publish.py) records each file it
hands the folder and sets back the time of those rewritten with bytes already recorded.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlite_utils import Database

from mapwatch.store.database.rows import rows_in_chunks


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
