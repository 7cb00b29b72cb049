"""The feeds' index of who newly cites each direction (store/database/feed_index.py) stays equal to
the same answer computed from every event, as citers arrive and as pages move papers
between directions."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mapwatch.store.database import feed_index
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.model import Placement
from mapwatch.store.questions import feed_queries
from tests.conftest import seed_page, write_page

SURVEY = "2412.10400"


def from_every_event(db) -> set[tuple]:
    """Per (direction, citer): its first event, and 1 when every citation it stands for was known at
    the cited paper's first read (migration 0024)."""
    return set(db.conn.execute(
        "SELECT pl.direction_slug, e.citing_id, min(e.seen_at), min(e.id), min(c.at_first_read) FROM events e"
        " JOIN placements pl ON pl.paper_id = e.paper_id"
        " JOIN citations c ON c.citing_id = e.citing_id AND c.cited_id = e.paper_id"
        " WHERE e.kind = 'citation' GROUP BY 1, 2"))


def indexed(db) -> set[tuple]:
    """The index's rows; its per-day counts (migration 0011) checked against them on the way: they
    count the citers that are new, not those known at the first read."""
    days = set(db.conn.execute("SELECT * FROM feed_direction_days WHERE citers != 0"))
    assert days == set(db.conn.execute("SELECT direction_slug, substr(first_seen, 1, 10), count(*)"
                                       " FROM feed_direction_citers WHERE at_first_read = 0 GROUP BY 1, 2"))
    assert db.conn.execute("SELECT count(*) FROM feed_direction_days WHERE citers < 0").fetchone()[0] == 0
    return set(db.conn.execute("SELECT * FROM feed_direction_citers"))


def stats(db) -> set[tuple]:
    return set(db.conn.execute("SELECT * FROM feed_direction_stats"))


def stats_from_placements(db) -> set[tuple]:
    return set(db.conn.execute(
        "SELECT pl.direction_slug, count(*), min(p.first_seen) FROM placements pl"
        " JOIN papers p ON p.id = pl.paper_id GROUP BY 1"))


def test_the_index_follows_new_citers_and_papers_that_move(db, clock, tmp_path: Path, make_older_seeds) -> None:
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    feed_index.update(db)
    assert indexed(db) == from_every_event(db) and len(indexed(db)) > 50
    assert stats(db) == stats_from_placements(db)
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # 3 new citers each
    before = len(indexed(db))
    feed_index.update(db)
    assert indexed(db) == from_every_event(db) and len(indexed(db)) > before
    # The survey's page moves it to a new direction only: its citers leave the old one, join the new one.
    page = seed_page(SURVEY)
    moved = dataclasses.replace(page, placements=(Placement(
        "Testing / Moved papers", "Testing", "Moved papers", "testing/moved-papers",
        "https://mlsanity.com/testing/moved-papers/"),))
    clock.advance(days=1)
    ingest_paths(db, [write_page(tmp_path / "moved", moved)], clock=clock)
    feed_index.update(db)
    assert indexed(db) == from_every_event(db)
    assert stats(db) == stats_from_placements(db)
    assert {r[0] for r in indexed(db)} >= {"testing/moved-papers"}
    state = db.conn.execute("SELECT last_event_id, last_snapshot_id FROM feed_index_state").fetchone()
    feed_index.update(db)  # nothing new: nothing done
    assert db.conn.execute("SELECT last_event_id, last_snapshot_id FROM feed_index_state").fetchone() == state


def test_papers_that_join_and_leave_directions_keep_the_index_exact(db, clock, tmp_path: Path) -> None:
    """Pages arriving for papers first named by lists (they join their directions), pages that move
    a paper, add a second placement or drop one, all in one update: the index the update keeps
    equals the index built from every event (store/database/feed_index.py reads only what changed)."""
    import random

    from tests import pagegen

    corpus = pagegen.generate(160, seed=11)
    ingest_paths(db, pagegen.write(tmp_path / "v1", corpus.v1[:110]), clock=clock)  # 50 papers named, no page
    feed_index.update(db)
    assert indexed(db) == from_every_event(db)
    rng = random.Random(3)
    slugs = sorted({p.placements[0] for p in corpus.v1}, key=lambda pl: pl.slug)
    for rnd in range(3):
        v2 = list(corpus.v2[:130 + 10 * rnd])
        for i in rng.sample(range(len(v2)), 40):
            page, extra = v2[i], rng.choice(slugs)
            kind = rng.randrange(3)
            placements = ((extra,) if kind == 0 else (page.placements[0], extra) if kind == 1
                          else (extra, page.placements[0]))
            v2[i] = dataclasses.replace(page, placements=tuple(dict.fromkeys(placements)))
        clock.advance(days=1)
        ingest_paths(db, pagegen.write(tmp_path / f"v2-{rnd}", v2), clock=clock, force=True)
        moved = db.conn.execute("SELECT count(*) FROM placements p WHERE NOT EXISTS (SELECT 1 FROM feed_placements f"
                                " WHERE f.paper_id = p.paper_id AND f.direction_slug = p.direction_slug)").fetchone()[0]
        assert moved > 20  # papers really joined directions in this round
        feed_index.update(db)
        assert indexed(db) == from_every_event(db)
        assert stats(db) == stats_from_placements(db)
        seen = sorted({r[2] for r in indexed(db)})
        for since in ("2026-01-01T00:00:00+00:00", *seen, *(f"{t[:10]}T00:00:00+00:00" for t in seen)):
            # The index page's counts (whole days plus a part of one) equal a count of every new citer
            # since then (those known at the first read are not counted), and its newest is the newest new one.
            activity = feed_queries.direction_activity(db, since, since)
            counted = {s: a.recent for s, a in activity.items()}
            assert counted == dict(db.conn.execute("SELECT direction_slug, sum(first_seen >= ? AND at_first_read = 0)"
                                                   " FROM feed_direction_citers GROUP BY 1", (since,)))
            assert {s: a.newest for s, a in activity.items()} == dict(db.conn.execute(
                "SELECT direction_slug, max(CASE WHEN at_first_read = 0 THEN first_seen END)"
                " FROM feed_direction_citers GROUP BY 1"))
