"""The published folder held in memory for the feed server: each file's bytes, ETag and
Last-Modified (and, for the text types, its bytes gzipped: feeds/serving/encoding.py), keyed by
the URL path that asks for it, so answering a request reads no disk and calls no `stat` (docs/feeds.md,
"mapwatch serve [--db FILE] [--out DIR] [--host HOST] [--port PORT] [--base-url URL]").

`publish` ends by writing a generation file (`.generation`, a dot-file, never served) when
it changed anything; the server checks it at most once a second and reloads the table when
it changed (`mapwatch run` publishes in the same process and reloads at once). The paper
subtrees (`feeds/papers/`, `papers/`) are left out except the files publish lists in the
generation file (tracked papers): the other papers are built on demand (feeds/serving/ondemand.py).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path

from mapwatch.feeds.build import safe_path
from mapwatch.feeds.folder_layout import GENERATION, PAPER_TREES, etag_of
from mapwatch.feeds.serving.encoding import VARY, compressible, gzip_etag, gzipped

INDEX = "index.html"
CONTENT_TYPES = {
    ".atom": "application/atom+xml",
    ".opml": "text/x-opml; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".png": "image/png",
    ".svg": "image/svg+xml",
}
# Sent with every answer (docs/feeds.md, "Web pages": security headers). The pages load only their own
# style.css, site.js and images (no inline script or style, nothing from elsewhere); nothing may
# frame them; no Referer goes to the map or arXiv; no answer is content-sniffed, 404s included.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Content-Security-Policy": CSP,
                    "X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer"}


@dataclass(frozen=True)
class Served:
    """A file as served: its bytes and validators, or a redirect to the folder's slash form;
    for the types gzipped (feeds/serving/encoding.py), its gzipped bytes and their headers too."""

    body: bytes
    etag: str
    last_modified: str  # an HTTP date
    mtime: int  # whole seconds, for If-Modified-Since
    content_type: str
    redirect: str | None = None
    headers: dict[str, str] = field(default_factory=dict)  # of a 304; a 200 adds Content-Type
    gzip: bytes | None = None  # the body gzipped (None: a type never gzipped)
    gzip_headers: dict[str, str] = field(default_factory=dict)  # of its 304; a 200 adds the two Content- headers


def served(data: bytes, mtime: int, content_type: str) -> Served:
    tag, modified = etag_of(data), formatdate(mtime, usegmt=True)
    headers = {"ETag": tag, "Last-Modified": modified, "Cache-Control": "no-cache", **SECURITY_HEADERS}
    if not compressible(content_type):
        return Served(data, tag, modified, mtime, content_type, headers=headers)
    headers.update(VARY)
    return Served(data, tag, modified, mtime, content_type, headers=headers, gzip=gzipped(data),
                  gzip_headers={**headers, "ETag": gzip_etag(tag)})


def resolve(root: Path, request_path: str) -> tuple[Path, str] | None:
    """The file under `root` that `request_path` names and its content type, or None: only plain segments, only
    the served suffixes, and the resolved file (symlinks followed) must lie inside root. A folder's path
    ending in `/` names its `index.html` (the web pages: docs/feeds.md, "Web pages")."""
    rel = request_path.lstrip("/")
    if not rel or rel.endswith("/"):
        rel += INDEX
    if "\x00" in rel or "\\" in rel or not safe_path(rel):
        return None
    if Path(rel).suffix not in CONTENT_TYPES:
        return None
    real_root = root.resolve()
    try:
        target = (real_root / rel).resolve(strict=True)
    except (OSError, RuntimeError):
        return None
    if not target.is_relative_to(real_root) or not target.is_file():
        return None
    return target, CONTENT_TYPES[Path(rel).suffix]


class FolderTable:
    """URL path -> Served, for every file of the folder outside the paper subtrees, plus the
    paper files the generation file lists. Swapped whole on reload, so readers never lock."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.files: dict[str, Served] = {}
        self.marker: tuple[int, int, int] | None = None
        self.loads = 0

    def marker_now(self) -> tuple[int, int, int] | None:
        try:
            st = (self.root / GENERATION).stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size, st.st_ino

    def stale(self) -> bool:
        """True when publish marked a new generation since the last load (one stat)."""
        return self.marker_now() != self.marker

    def load(self) -> None:
        marker = self.marker_now()
        files: dict[str, Served] = {}
        for rel in [*self._walk(), *self._listed_papers()]:
            found = resolve(self.root, "/" + rel)
            if found is None:
                continue
            target, ctype = found
            try:
                data, mtime = target.read_bytes(), int(target.stat().st_mtime)
            except OSError:
                continue
            file = served(data, mtime, ctype)
            files["/" + rel] = file
            if rel == INDEX or rel.endswith("/" + INDEX):
                folder = "/" + rel.removesuffix(INDEX)
                files[folder] = file
                if folder != "/":
                    files[folder.rstrip("/")] = Served(b"", "", "", 0, "", redirect=folder)
        self.files, self.marker = files, marker
        self.loads += 1

    def _walk(self) -> list[str]:
        rels = []
        for dirpath, dirnames, filenames in os.walk(self.root):
            here = Path(dirpath).relative_to(self.root).as_posix()
            here = "" if here == "." else here + "/"
            dirnames[:] = [d for d in dirnames if not d.startswith(".") and f"{here}{d}" not in PAPER_TREES]
            rels += [f"{here}{f}" for f in filenames if not f.startswith(".")]
        return rels

    def _listed_papers(self) -> list[str]:
        try:
            listed = json.loads((self.root / GENERATION).read_text(encoding="utf-8")).get("papers", [])
        except (OSError, ValueError, AttributeError):
            return []
        return [p for p in listed if isinstance(p, str) and safe_path(p)]
