"""The writes of the events stored, as rows of `event_batches`: one per run of consecutive ids
with the same `seen_at` (a write gives its events consecutive ids and one time). Not a
migration itself: 0040 fills the new table with it, 0047 fills it again before the events
lose their own time."""

from __future__ import annotations

FILL_BATCHES = """
        INSERT INTO event_batches (first_id, last_id, seen_at)
            SELECT min(id), max(id), seen_at FROM (
                SELECT id, seen_at, sum(new_run) OVER (ORDER BY id) AS run FROM (
                    SELECT id, seen_at, coalesce(seen_at != lag(seen_at) OVER (ORDER BY id), 1) AS new_run
                    FROM events))
            GROUP BY run;
"""
