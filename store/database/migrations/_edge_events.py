"""Filling citations.event_id from the events of an edge, a range of citers a transaction: the
resumable step of migration 0038 (store/database/migrations/m0038_compact_edges.py). Not a
migration itself."""

from __future__ import annotations

import logging

from sqlite_utils import Database

from mapwatch.store.database.rows import scalar

CITERS_A_STEP = 20_000  # citers whose citations one transaction fills (~360,000 citations at 1M)
LOUD_FROM = 1_000_000  # citations to fill from which each step logs its progress

log = logging.getLogger(__name__)


def fill_event_ids(db: Database, step: int | None = None) -> int:
    """Set each citation's event_id where it is NULL to the id of its edge's first citation
    event, found through events_citing_edge (a count event has no citing_id, so every event
    found by citer is a citation event), `step` citers (CITERS_A_STEP) in key order a transaction. A process
    killed in between leaves the ranges before filled; run again, it skips them (their rows are
    no longer NULL) and goes on. Does nothing once events_citing_edge is gone (the migration's
    last step). Returns the citations given an id."""
    conn = db.conn
    step = step or CITERS_A_STEP
    if not scalar(conn, "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = 'events_citing_edge'"):
        return 0
    left = scalar(conn, "SELECT count(*) FROM citations WHERE event_id IS NULL")
    done, low = 0, ""
    while left:
        high = scalar(conn, "SELECT max(citing_id) FROM (SELECT DISTINCT citing_id FROM citations"
                            " WHERE citing_id > ? ORDER BY citing_id LIMIT ?)", (low, step))
        if high is None:
            break
        with db.atomic():
            done += conn.execute(
                "UPDATE citations SET event_id = (SELECT min(e.id) FROM events e INDEXED BY events_citing_edge"
                " WHERE e.citing_id = citations.citing_id AND e.paper_id = citations.cited_id)"
                " WHERE citing_id > ? AND citing_id <= ? AND event_id IS NULL", (low, high)).rowcount
        if left >= LOUD_FROM:
            log.warning("mapwatch: migration 0038: citations given their event's id: %s of %s",
                        f"{done:,}", f"{left:,}")
        low = high
    return done
