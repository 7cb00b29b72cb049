"""Is the database's Litestream replica current? (docs/operations.md, "Replication (Litestream)")

A replica is configured by `$MAPWATCH_REPLICA`: the replica URL that the shipped
litestream.yml also reads (`file:///path`, a plain path, `s3://…`, `sftp://…`). Litestream
keeps its own state next to the database, in `.NAME-litestream/ltx/0/`: one LTX file per
batch of transactions it took from the WAL, named `MINTXID-MAXTXID.ltx` (hex), with the
WAL's modification time. A file replica holds the same names under `ltx/LEVEL/`.

The lag is the age of the oldest change not yet on the replica: a local LTX file the replica
does not cover, or a WAL written after Litestream's last LTX file (Litestream is not running,
or has not caught up). 0 when everything is on the replica. Remote replicas (S3, SFTP) are
not read from here: their lag counts only what Litestream has not yet taken from the WAL.

Pure: reads a few file names and modification times, never opens the database; the time
is passed in (`now`, seconds since the epoch, as file times are).
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import asdict, dataclass
from pathlib import Path

from mapwatch.store.urls import redact_url

MAX_LAG = 60.0  # seconds: a replica further behind is not current
LTX_NAME = re.compile(r"([0-9a-f]{16})-([0-9a-f]{16})\.ltx")


@dataclass(frozen=True)
class ReplicaStatus:
    url: str
    local_txid: int | None  # the last transaction Litestream took from the WAL
    replica_txid: int | None  # the last transaction on the replica; None: not readable from here
    lag_seconds: float | None  # the oldest change not on the replica, its age; None: unknown
    current: bool  # lag known and at most MAX_LAG
    error: str | None  # why it is not current, when it is known

    def shown(self) -> dict[str, object]:
        """What /healthz and /metrics may show: the fields, the URL's credentials hidden."""
        return {**asdict(self), "url": redact_url(self.url), "error": self.error and redact_url(self.error)}

    def line(self) -> str:
        """One line for people (`mapwatch replica`), the URL's credentials hidden."""
        txids = f"local txid {self.local_txid or 0}, replica txid " + (
            str(self.replica_txid) if self.replica_txid is not None else "not read from here")
        if self.current:
            return f"replica {redact_url(self.url)}: current (lag {self.lag_seconds:.0f} s; {txids})"
        return f"replica {redact_url(self.url)}: NOT current: {redact_url(self.error or '')} ({txids})"


def replica_url(env: dict[str, str] | None = None) -> str | None:
    """`$MAPWATCH_REPLICA`, or None when no replica is configured."""
    from mapwatch.store.environment import Environment, current

    return (current() if env is None else Environment.read(env)).replica_url()


def file_replica_dir(url: str) -> Path | None:
    """The folder of a file replica (`file:///path` or a plain path); None for other schemes."""
    parsed = urllib.parse.urlparse(url)
    if parsed.scheme == "file":
        return Path(urllib.parse.unquote(parsed.path))
    if not parsed.scheme or len(parsed.scheme) == 1:  # a path (C: on Windows is not a scheme)
        return Path(url)
    return None


def meta_dir(db_path: str | Path) -> Path:
    """Litestream's own folder for the database: `.NAME-litestream` beside it."""
    p = Path(db_path)
    return p.parent / f".{p.name}-litestream"


def _ltx_files(folder: Path) -> list[tuple[int, float]]:
    """(max txid, modification time) of each LTX file in a folder; [] if there is none."""
    out = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for e in entries:
        m = LTX_NAME.fullmatch(e.name)
        if m:
            try:
                out.append((int(m.group(2), 16), e.stat().st_mtime))
            except OSError:  # compacted away meanwhile
                continue
    return out


def _replica_txid(folder: Path) -> int | None:
    levels = folder / "ltx"
    if not levels.is_dir():
        return None
    txids = [t for level in levels.iterdir() for t, _ in _ltx_files(level)]
    return max(txids) if txids else None


def replica_status(db_path: str | Path, url: str | None, now: float) -> ReplicaStatus | None:
    """The replica's state for the database at `db_path`, or None when no replica is configured
    (`url` None: pass `replica_url()`)."""
    if not url:
        return None
    local = _ltx_files(meta_dir(db_path) / "ltx" / "0")
    if not meta_dir(db_path).is_dir():
        return ReplicaStatus(url, None, None, None, False,
                             f"Litestream is not replicating {db_path} (no {meta_dir(db_path).name} folder): "
                             "run mapwatch under `litestream replicate` (docs/operations.md)")
    local_txid = max((t for t, _ in local), default=None)
    folder = file_replica_dir(url)
    replica_txid = _replica_txid(folder) if folder is not None else None
    if folder is not None and replica_txid is None:
        return ReplicaStatus(url, local_txid, None, None, False, f"no replica at {folder}")
    pending: list[float] = []  # when each change not on the replica was written
    if replica_txid is not None:
        pending += [mtime for t, mtime in local if t > replica_txid]
    wal = Path(f"{db_path}-wal")
    try:
        wal_stat = wal.stat()
    except OSError:
        wal_stat = None
    newest_local = max((mtime for _, mtime in local), default=None)
    if wal_stat is not None and wal_stat.st_size > 0 and (newest_local is None or wal_stat.st_mtime > newest_local):
        pending.append(wal_stat.st_mtime)  # written after Litestream's last look
    lag = max(0.0, now - min(pending)) if pending else 0.0
    if lag > MAX_LAG:
        behind = "Litestream has not taken the newest writes from the WAL" if replica_txid is None or (
            local_txid is not None and local_txid <= replica_txid) else "the replica misses transactions"
        return ReplicaStatus(url, local_txid, replica_txid, lag, False,
                             f"{behind} for {lag:.0f} s (more than {MAX_LAG:.0f} s): is Litestream running?")
    return ReplicaStatus(url, local_txid, replica_txid, lag, True, None)
