"""Shared fixtures: real SQLite files under tmp_path, the bundled seeds, page variants."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterator
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import MapPage
from mapwatch.store.pages.parse import parse_page

DATA = Path(__file__).parent / "data"
SEED_FILES = sorted(SEEDS_DIR.glob("*.txt"))


class FakeClock:
    """An injectable clock: starts at a fixed instant and moves only when told."""

    def __init__(self, start: datetime = datetime(2026, 11, 1, 12, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "mapwatch.db"


@pytest.fixture
def seeded_path(db_path: Path, clock) -> Path:
    """A database file holding the bundled seeds."""
    from mapwatch.store.database.ingest import ingest_paths

    db = open_db(db_path)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    db.close()
    return db_path


@pytest.fixture
def db(db_path: Path) -> Iterator:
    database = open_db(db_path)
    yield database
    database.close()


@pytest.fixture
def seeds_dir(tmp_path: Path) -> Path:
    """A writable copy of the bundled seeds."""
    target = tmp_path / "seeds"
    shutil.copytree(SEEDS_DIR, target)
    return target


def seed_page(paper_id: str) -> MapPage:
    return parse_page((SEEDS_DIR / f"{paper_id}.txt").read_bytes())


def older_snapshot(page: MapPage, drop_citers: int, days: int = 30) -> MapPage:
    """The same page as it looked `days` earlier, before its last `drop_citers` listed citers."""
    assert page.built_on_by is not None and page.data_through is not None
    items = page.built_on_by.items
    kept = tuple(dataclasses.replace(it, position=i + 1) for i, it in enumerate(items[:len(items) - drop_citers]))
    lst = dataclasses.replace(page.built_on_by, items=kept, shown=len(kept),
                              total=page.built_on_by.total - drop_citers)
    return dataclasses.replace(page, built_on_by=lst, cited_by=(page.cited_by or 0) - drop_citers,
                               data_through=page.data_through - timedelta(days=days))


def write_page(folder: Path, page: MapPage, name: str | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / (name or f"{page.id.replace('/', '_')}.txt")
    path.write_text(format_page(page), encoding="utf-8")
    return path


@pytest.fixture
def make_older_seeds(tmp_path: Path) -> Callable[[int], Path]:
    """A folder with both seeds as they looked before their last n listed citers."""
    def make(n: int) -> Path:
        folder = tmp_path / f"older-{n}"
        for f in SEED_FILES:
            write_page(folder, older_snapshot(parse_page(f.read_bytes()), n))
        return folder
    return make


@pytest.fixture
def seeded(db, clock):
    """The database with both bundled seeds ingested."""
    from mapwatch.store.database.ingest import ingest_paths

    ingest_paths(db, [SEEDS_DIR], clock=clock)
    return db


__all__ = ["DATA", "SEED_FILES", "FakeClock", "date", "older_snapshot", "seed_page", "write_page"]


@pytest.fixture(autouse=True)
def _no_enrichment(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests reach no scholarly source: enrichment is off (here and in the processes they start)
    unless a test points it at the loopback fakes (tests/scholarly_fakes.py) and turns it on."""
    monkeypatch.setenv("MAPWATCH_ENRICH", "off")
    for name in ("MAPWATCH_ARXIV_API", "MAPWATCH_OPENALEX_API", "MAPWATCH_S2_API"):
        monkeypatch.setenv(name, "http://127.0.0.1:9/unreachable")
    monkeypatch.delenv("MAPWATCH_S2_KEY", raising=False)
