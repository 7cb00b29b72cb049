"""Kill moments chosen by what a process has done, never by the clock.

A crash test kills its child process with SIGKILL once it sees that the child has reached a
point of its work (so many pages stored, so many feeds written), so the kill lands where the
test means it to however loaded the machine is. (A kill after a delay drawn from an earlier
run's duration lands before the first write whenever the machine slows down in between.)

- `kill_when(proc, reached, timeout, what=...)`: SIGKILL `proc` as soon as `reached()` holds
  (looked at every 5 ms unless told); True when it was killed, False when it ended by itself
  first (a point beyond the end of its work). AssertionError naming `what` if neither happens
  within `timeout` seconds.
- `stored_count(db)`: the snapshots (pages stored) a database holds, read beside its writer;
  `has_stored(db, n)`: the condition "at least n of them".
- `Commits(db)`: whether another connection has committed to `db` since it was made.
- `MIGRATION_PAUSED`: a child's script (`python -c MIGRATION_PAUSED DB MARKER`) that applies the
  migrations `DB` lacks and, 4,000 instructions into a migration's transaction, writes MARKER
  and waits: a kill once MARKER exists lands inside the transaction whatever the machine's speed.
  `kill_inside_migration(db, marker)` runs it and kills it there (asserted).
"""

from __future__ import annotations

import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from tests.waiting import wait_until

# The marker is written beside its name, then renamed into place: a kill between a file's creation
# and its text would leave it empty.
MIGRATION_PAUSED = """
import sys, threading
from pathlib import Path
from sqlite_utils import Database
from mapwatch.store.database.migrations import migrations
db = Database(sys.argv[1])
calls = 0
def handler():
    global calls
    calls += db.conn.in_transaction
    if calls == 200:
        Path(sys.argv[2] + ".part").write_text(f"in transaction: {db.conn.in_transaction}")
        Path(sys.argv[2] + ".part").replace(sys.argv[2])
        threading.Event().wait()
    return 0
db.conn.set_progress_handler(handler, 20)
migrations.apply(db)
"""

ROOT = Path(__file__).resolve().parent.parent


def kill_inside_migration(db: Path, marker: Path) -> None:
    """Apply the migrations `db` lacks in a child process and SIGKILL it inside the first one's
    transaction (MIGRATION_PAUSED); asserts that the kill landed there."""
    proc = subprocess.Popen([sys.executable, "-c", MIGRATION_PAUSED, str(db), str(marker)], cwd=ROOT,
                            stderr=subprocess.PIPE)
    killed = kill_when(proc, marker.exists, timeout=120, what="the migration under way")
    assert killed, proc.stderr.read() if proc.stderr else ""
    assert marker.read_text() == "in transaction: True"


INTERVAL = 0.005  # seconds between two looks: a kill lands about this late after its point, at most


def kill_when(proc: subprocess.Popen, reached: Callable[[], object], timeout: float, *, what: str,
              interval: float = INTERVAL) -> bool:
    """SIGKILL `proc` as soon as `reached()` is true; whether it was killed (False: it ended first)."""
    try:
        wait_until(lambda: proc.poll() is not None or reached(), timeout, what=f"{what} (or the process to end)",
                   interval=interval)
    finally:  # at the point, or when the wait failed: no process is left behind
        proc.send_signal(signal.SIGKILL)  # harmless if it has just ended: not reaped yet
    return proc.wait() == -signal.SIGKILL


def stored_count(db: Path) -> int:
    """Pages stored so far (snapshots), read as a reader beside the writer; 0 before the schema."""
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM snapshots").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def has_stored(db: Path, snapshots: int) -> Callable[[], bool]:
    """A condition for `kill_when`: the database holds at least `snapshots` snapshots."""
    return lambda: stored_count(db) >= snapshots


class Commits:
    """Sees commits to a database made by other connections (`PRAGMA data_version` of a
    read-only connection, which changes with each of them). Make it before the writer starts."""

    def __init__(self, db: Path) -> None:
        self.conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        self.start = self._version()
        self.seen = False

    def _version(self) -> int:
        return self.conn.execute("PRAGMA data_version").fetchone()[0]

    def any(self) -> bool:
        """Has another connection committed since this was made?"""
        self.seen = self.seen or self._version() != self.start
        return self.seen

    def close(self) -> None:
        self.conn.close()
