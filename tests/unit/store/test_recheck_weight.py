"""The re-checks' total weight (store/sources/plan_counts.py, `total_weight`) is kept in the
database (migration 0042): a tick, a new process's first among them, reads it instead of
summing every page's weight, until WEIGHT_KEPT has passed on the tick clock; then it is summed
and kept again."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from mapwatch.store.sources import plan_counts
from mapwatch.store.sources.crawl_schedule import DEFAULT_WEIGHT

T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _pages(db, weights: list[float | None]) -> None:
    with db.atomic():
        db.conn.executemany(
            "INSERT OR REPLACE INTO sources (location, paper_id, checked_at, recheck_weight) VALUES (?, ?, ?, ?)",
            [(f"https://m.example/paper/2601.{k:05d}/", f"2601.{k:05d}", T0.isoformat(), w)
             for k, w in enumerate(weights)])


def test_a_tick_reads_the_kept_sum_until_it_is_due_again(db) -> None:
    _pages(db, [2.0, 3.0, None])
    assert plan_counts.total_weight(db, T0) == 5.0 + DEFAULT_WEIGHT
    assert db.conn.execute("SELECT total, summed_at FROM recheck_weight").fetchall() == [
        (5.0 + DEFAULT_WEIGHT, T0.isoformat())]

    _pages(db, [10.0, 3.0, None])  # the pages' weights move at their re-checks
    later = T0 + plan_counts.WEIGHT_KEPT - timedelta(seconds=1)
    assert plan_counts.total_weight(db, later) == 5.0 + DEFAULT_WEIGHT  # read, not summed
    due = T0 + plan_counts.WEIGHT_KEPT
    assert plan_counts.total_weight(db, due) == 13.0 + DEFAULT_WEIGHT  # summed again, and kept
    assert db.conn.execute("SELECT total, summed_at FROM recheck_weight").fetchall() == [
        (13.0 + DEFAULT_WEIGHT, due.isoformat())]


def test_a_clock_set_back_sums_again(db) -> None:
    _pages(db, [1.0])
    assert plan_counts.total_weight(db, T0) == 1.0
    _pages(db, [4.0])
    assert plan_counts.total_weight(db, T0 - timedelta(hours=1)) == 4.0
