"""Fixtures of the store's unit tests that several files share."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.subscriptions.tracking import add_track
from tests.conftest import FakeClock

SURVEY = "2412.10400"  # the seeds' survey


@pytest.fixture
def tracked(seeded_path: Path, clock: FakeClock) -> Path:
    """The seeds with their survey tracked in a channel."""
    db = open_db(seeded_path)
    add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=SURVEY, created_by=3, now=clock())
    db.close()
    return seeded_path
