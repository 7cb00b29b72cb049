"""Replacing a file atomically: write a temporary file beside it, then rename it over.

Readers see the old file or the new one, never a part; a failure leaves the old file as
it was and no temporary file behind. Temporary files are dot-files named `.tmp-*`, which
the feed server never serves (docs/feeds.md,
"mapwatch serve [--db FILE] [--out DIR] [--host HOST] [--port PORT] [--base-url URL]").
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def not_replaceable(path: Path) -> str | None:
    """Why `path` must not be replaced by a file, or None for a regular file or a new path.
    Renaming a file over a device, a FIFO or a socket destroys it (`/dev/full` would become
    a file), and over a folder it fails; a parent that is not a folder cannot hold it."""
    if not path.exists():
        if path.is_symlink():
            return f"{path}: a broken symbolic link; give a regular file or a new path"
        parent = path.parent
        while not parent.exists() and parent != parent.parent:
            parent = parent.parent
        return None if parent.is_dir() else f"{path}: {parent} is not a folder"
    if path.is_file():
        return None
    kind = ("a folder" if path.is_dir() else "a FIFO" if path.is_fifo() else
            "a device" if path.is_char_device() or path.is_block_device() else
            "a socket" if path.is_socket() else "not a regular file")
    return f"{path}: {kind}; only a regular file is replaced, or a new one written"


@contextmanager
def replacing(path: Path, *, mode: int | None = None) -> Iterator[Path]:
    """A temporary file beside `path` for the block to fill; renamed over `path` when the
    block ends without error, removed otherwise. `mode`: its permissions (None keeps the
    private 0600 a temporary file is made with)."""
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _open_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def write_atomic(path: Path, data: bytes, *, mode: int | None = None) -> None:
    """Replace `path` with `data` atomically (flushed to disk first). `mode`: its
    permissions; by default those a plain open() would give it (0666 less the umask)."""
    with replacing(path, mode=_open_mode() if mode is None else mode) as tmp, tmp.open("wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
