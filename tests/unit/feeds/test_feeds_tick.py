"""A tick's publish, after pages that add citers, bring new papers and move papers between
directions, writes the same bytes as a cold publish of the same database into an empty folder
with the feed index rebuilt from every event (store/database/feed_index.py reads only what changed)."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path

import pytest

from mapwatch.feeds.publish import publish
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.subscriptions.tracking import add_track
from tests import pagegen
from tests.feedcheck import snapshot

BASE = "http://feeds.test:8080"
# every chart drawn in each publish (the 5 s limit leaves some for the next: docs/feeds.md, "Feeds and web pages")
UNTIMED = 3600.0


def same_years(pages: list) -> list:
    """Lists that state each paper's year as its own page does: a citer's details corrected on
    its own page show in a feed at that feed's next change (docs/feeds.md, "Feeds and web pages"), the one documented
    way a tick's files may differ from a cold publish's."""
    def fix(lst):
        return dataclasses.replace(lst, items=tuple(dataclasses.replace(it, year=2026) for it in lst.items))
    return [dataclasses.replace(p, builds_on=fix(p.builds_on), built_on_by=fix(p.built_on_by)) for p in pages]


@pytest.mark.parametrize("papers", ["tracked", "all"])
def test_ticks_equal_a_cold_publish_byte_for_byte(db, clock, tmp_path: Path, papers: str) -> None:
    corpus = pagegen.generate(100, seed=5)
    corpus = pagegen.Corpus(same_years(corpus.v1), same_years(corpus.v2))
    ingest_paths(db, pagegen.write(tmp_path / "v1", corpus.v1[:70]), clock=clock)  # 30 papers only named
    for pid in ("2601.00003", "2601.00078"):  # one with a page, one named only (for now)
        add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=pid, created_by=3, now=clock())
    tick = tmp_path / "tick"
    publish(db, tick, BASE, clock=clock, papers=papers, chart_seconds=UNTIMED)
    rng = random.Random(8)
    slugs = sorted({p.placements[0] for p in corpus.v1}, key=lambda pl: pl.slug)
    written = []
    for rnd in range(2):
        v2 = list(corpus.v2[:85])  # 15 new pages, then the same pages placed otherwise
        for i in rng.sample(range(len(v2)), 25):  # moved, placed twice, or in another order
            extra = rng.choice(slugs)
            both = (v2[i].placements[0], extra) if rng.random() < 0.5 else (extra,)
            v2[i] = dataclasses.replace(v2[i], placements=tuple(dict.fromkeys(both)))
        clock.advance(days=1)
        ingest_paths(db, pagegen.write(tmp_path / f"v2-{rnd}", v2), clock=clock, force=True)
        report = publish(db, tick, BASE, clock=clock, papers=papers, chart_seconds=UNTIMED)
        assert report.incremental
        written.append(report.written)
    assert "feeds/papers/2601.00078.atom" in written[0]  # the tracked paper's page arrived
    assert all(sum(w.startswith("directions/") for w in ws) > 3 for ws in written)
    with db.atomic():
        db.conn.execute("DELETE FROM feed_index_state")  # the next publish rebuilds the index whole
    cold = tmp_path / "cold"
    assert not publish(db, cold, BASE, clock=clock, papers=papers, chart_seconds=UNTIMED).incremental
    got, want = snapshot(tick), snapshot(cold)
    assert sorted(got) == sorted(want) and len(want) > 20
    assert [k for k in want if got[k][0] != want[k][0]] == []
