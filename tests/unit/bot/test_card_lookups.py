"""The /paper card reads its paper's row once (issue 43, item 1): counted with SQLite's own
statement trace on the real database, for an id, a URL and a title (a title is resolved
first: two reads), and the card's chart is drawn from the snapshots its view read."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from mapwatch.bot.commands.papers import paper_core
from mapwatch.bot.rendering.replies import Ctx
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.conftest import older_snapshot, seed_page
from tests.follow_helpers import store_pages

SURVEY = "2412.10400"
CTX = Ctx(1, 2, 3, datetime(2026, 12, 6, tzinfo=UTC), base_url="http://feeds.example")


def _paper_reads(db, typed: str) -> tuple[int, int, object]:
    """(reads of the survey's `papers` row, reads of its snapshots) while /paper answers `typed`."""
    said: list[str] = []
    db.conn.set_trace_callback(said.append)
    try:
        reply = paper_core(db, CTX, paper=typed)
    finally:
        db.conn.set_trace_callback(None)
    rows = [s for s in said if re.search(rf"FROM papers p WHERE p\.id = '{re.escape(SURVEY)}'", s)]
    snaps = [s for s in said if re.search(rf"FROM snapshots WHERE paper_id = '{re.escape(SURVEY)}'", s)]
    return len(rows), len(snaps), reply


def test_the_card_reads_its_paper_once(db, clock) -> None:
    store_pages(db, [older_snapshot(seed_page(SURVEY), 3)], clock)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # two snapshots: the card has a chart
    for typed in (SURVEY, f"https://arxiv.org/abs/{SURVEY}v2"):
        rows, snaps, reply = _paper_reads(db, typed)
        assert (rows, snaps) == (1, 1), typed
        assert [f.filename for f in reply.files] == [f"cited-by-{SURVEY}.png"]
    rows, snaps, _ = _paper_reads(db, "Reinforcement Learning Enhanced LLMs: A Survey")
    assert (rows, snaps) == (1, 1)  # the title is matched on `title`, then the card reads the row once
