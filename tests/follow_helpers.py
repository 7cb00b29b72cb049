"""Scenario helpers for follows and digests: the seeds' pages as they grow new citers."""

from __future__ import annotations

import dataclasses
import hashlib
from datetime import timedelta
from pathlib import Path

from mapwatch.bot.client import MapwatchBot
from mapwatch.store.database.db import open_db
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import ListedPaper, MapPage
from tests.conftest import FakeClock, older_snapshot, seed_page

RL = "lr/reinforcement-learning-for-reasoning"
RLHF = "alignment/reward-modeling-and-rlhf"
SURVEY = "2412.10400"  # in both directions
TECH = "2507.04136"  # in both directions


def store_pages(db, pages: list[MapPage], clock: FakeClock) -> None:
    """Save pages the way an ingest does (one transaction), then move the clock on."""
    batch = []
    for page in pages:
        text = format_page(page)
        batch.append((page, SourceInfo(f"test:{page.id}", hashlib.sha256(text.encode()).hexdigest())))
    save_pages(db, batch, clock())
    clock.advance(hours=1)


def make_bot(db_path: Path, clock: FakeClock) -> MapwatchBot:
    """The bot, its deliveries driven by the test (no background poller to race them)."""
    return MapwatchBot(db_path, base_url="http://feeds.example", clock=clock, poll=False,
                       guild_ready_timeout=0.05)


def refresh(db_path: Path, clock: FakeClock, pages: list[MapPage]) -> None:
    """A refresh from another process: its own connection to the same file."""
    db = open_db(db_path)
    store_pages(db, pages, clock)
    db.close()


def start_older(db, clock: FakeClock, drop: int = 3) -> None:
    """Both seeds as they looked before their last `drop` listed citers."""
    store_pages(db, [older_snapshot(seed_page(SURVEY), drop), older_snapshot(seed_page(TECH), drop)], clock)


def grow(page: MapPage, citers: list[tuple[str, str, int]], days: int = 1) -> MapPage:
    """A newer version of `page` that also lists `citers` (id, title, year) as citing it."""
    assert page.built_on_by is not None and page.data_through is not None
    items = list(page.built_on_by.items)
    for pid, title, year in citers:
        items.append(ListedPaper(pid, title, year, len(items) + 1, f"https://mlsanity.com/paper/{pid}/"))
    lst = dataclasses.replace(page.built_on_by, items=tuple(items), shown=len(items),
                              total=page.built_on_by.total + len(citers))
    return dataclasses.replace(page, built_on_by=lst, cited_by=(page.cited_by or 0) + len(citers),
                               data_through=page.data_through + timedelta(days=days))

