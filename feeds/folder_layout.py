"""What the publisher and the feed server agree on about the published folder: the name of the
generation file publish writes when it changed anything (a dot-file, never served), the paper
subtrees the server builds on demand instead of holding in memory, and a file's ETag (the hash
publish notes beside each file, so a file whose bytes come back keeps its time).

Why a module of its own: publish (feeds/publish.py, publish_writer.py) writes the folder and the
server (feeds/serving/folder_table.py) reads it; both import this, so feeds/ imports nothing of
feeds/serving/ (mapwatch/layers.py).
"""

from __future__ import annotations

import hashlib

GENERATION = ".generation"
PAPER_TREES = ("feeds/papers", "papers")


def etag_of(data: bytes) -> str:
    """The strong ETag of a file's bytes (quoted, as sent)."""
    return '"' + hashlib.blake2b(data, digest_size=12).hexdigest() + '"'
