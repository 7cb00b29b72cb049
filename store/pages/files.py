"""Retrieving pages from files and folders: bytes plus validators, no parsing."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from mapwatch.store.errors import FetchError

PAGE_SUFFIXES = (".txt", ".md", ".html", ".htm")
TEXT_SUFFIXES = (".txt", ".md")  # read as text only (docs/pages.md, "Page formats")
HTML_SUFFIXES = (".html", ".htm")  # read as HTML documents
# The bundled seed pages, installed as package data of mapwatch.seeds.
SEEDS_DIR = Path(str(resources.files("mapwatch.seeds")))


@dataclass(frozen=True)
class FilePage:
    location: str  # absolute path
    data: bytes
    sha256: str
    size: int
    mtime_ns: int


def page_files(paths: Iterable[str | Path]) -> Iterator[Path]:
    """Every page file named by `paths`: files as given, folders searched recursively
    for *.txt, *.md, *.html and *.htm (README files excepted), in sorted order. Raises
    FetchError for a path that does not exist."""
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                if (f.is_file() and f.suffix.lower() in PAGE_SUFFIXES
                        and not f.name.lower().startswith("readme")):
                    yield f
        elif path.is_file():
            yield path
        else:
            raise FetchError(f"{raw}: no such file or folder")


def stat_key(path: Path) -> tuple[int, int]:
    st = path.stat()
    return st.st_size, st.st_mtime_ns
