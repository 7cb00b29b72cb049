"""The paper ids a database has a row for, read once per process and then only what was added.

A tick's crawl asks of every link it meets whether the database knows the paper
(store.sources.http_source: a paper it does not know is fetched as new). Reading every id for
that is the one part of a tick's plan that grows with the map (about 0.7 s of CPU at 1,000,000
papers, `FIRST_READ`). Papers are never deleted, so the ids read at one tick are still known at the next:
`known_papers` keeps them per database file and reads only the rows added since (by rowid), after
checking that the file still holds the row it read last (the same id at the same rowid; a file
replaced, restored or rebuilt is read again whole).

`KnownIds` is what a plan holds: the shared ids (never changed by the plan) with the plan's own
additions (the frontier) and removals (papers a covering sitemap stopped naming).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from operator import itemgetter

from sqlite_utils import Database

from mapwatch.store.database.rows import scalar


@dataclass
class _Read:
    rowid: int  # the highest rowid read
    last_id: str | None  # the id at that rowid
    ids: set[str] = field(default_factory=set)


_READ: dict[str, _Read] = {}  # database file -> what was read of its papers
# A process's first read of a file: every id, in id order, which SQLite reads from a narrow index
# alone (the key's, or papers_id_cited_by): 0.7 s of CPU at 1,000,000 papers, against 2.1-3.2 s
# through the table's rows, abstracts and all. Papers are never deleted, so every row up to the
# newest rowid read just before is in it; the rows after are read by rowid, as at later calls.
FIRST_READ = "SELECT id FROM papers ORDER BY id"
_LOCK = threading.Lock()


def database_file(db: Database) -> str:
    """The main database's file ('' for one in memory)."""
    for _seq, name, path in db.conn.execute("PRAGMA database_list"):
        if name == "main":
            return str(path or "")
    return ""


def same_row(db: Database, rowid: int, paper_id: str) -> bool:
    """Whether the papers row at `rowid` still holds `paper_id`: the file at a path is the one
    read before (papers are never deleted; one replaced, restored or rebuilt fails this)."""
    return bool(scalar(db, "SELECT id FROM papers WHERE rowid = ?", (rowid,)) == paper_id)


def known_papers(db: Database) -> frozenset[str] | set[str]:
    """Every paper id `db` has a row for. Kept between calls for a database file (see the
    module's docstring): the caller must not change what it is given."""
    path = database_file(db)
    if not path:  # in memory: nothing to keep it for
        return {pid for (pid,) in db.conn.execute("SELECT id FROM papers")}
    with _LOCK:
        read = _READ.get(path)
        if read is not None and read.last_id is not None and not same_row(db, read.rowid, read.last_id):
            read = None  # another file at this path (replaced, restored, rebuilt): read it whole
        if read is None:
            read = _READ[path] = _Read(0, None)
            top = db.conn.execute("SELECT rowid, id FROM papers ORDER BY rowid DESC LIMIT 1").fetchone()
            if top is not None:  # every id up to it, from an index: not the (wide) rows
                read.ids.update(map(itemgetter(0), db.conn.execute(FIRST_READ)))
                read.rowid, read.last_id = top
        for rowid, pid in db.conn.execute("SELECT rowid, id FROM papers WHERE rowid > ? ORDER BY rowid",
                                          (read.rowid,)):
            read.ids.add(pid)
            read.rowid, read.last_id = rowid, pid
        return read.ids


def forget(path: str | None = None) -> None:
    """Drop what was kept (of one database file, or of all)."""
    with _LOCK:
        if path is None:
            _READ.clear()
        else:
            _READ.pop(path, None)


class KnownIds:
    """A plan's known papers: the database's (shared, never changed here), plus those the plan
    adds, less those it drops."""

    def __init__(self, base: frozenset[str] | set[str] = frozenset()) -> None:
        self.base = base
        self.added: set[str] = set()
        self.dropped: set[str] = set()

    def __contains__(self, pid: object) -> bool:
        return pid in self.added or (pid in self.base and pid not in self.dropped)

    def add(self, pid: str) -> None:
        self.dropped.discard(pid)
        if pid not in self.base:
            self.added.add(pid)

    def update(self, pids: Iterable[str]) -> None:
        for pid in pids:
            self.add(pid)

    def discard(self, pid: str) -> None:
        self.added.discard(pid)
        if pid in self.base:
            self.dropped.add(pid)

    def ids(self) -> set[str]:
        """Every id, as one new set (for tests and small maps: it copies the database's)."""
        return (set(self.base) - self.dropped) | self.added

    def __eq__(self, other: object) -> bool:
        if isinstance(other, KnownIds):
            return self.ids() == other.ids()
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self.base) - len(self.dropped) + len(self.added)

    def __bool__(self) -> bool:
        return len(self) > 0
