"""A site cannot flood mapwatch with directions (issue 30, item 3).

Before, "Placed in" was unbounded: one 1.5 MB page made 20,002 directions, and `publish` then
wrote 40,008 files. Direction pages were also read ahead of the tracked papers and outside
`--budget`: with 1,000 direction pages the tracked paper was not fetched for ticks. Now a page
is rejected past MAX_PLACEMENTS placements (with its line), a host's pages make at most
MAX_DIRECTIONS_PER_HOST directions, and direction pages spend the budget after the tracked
papers. Real files, real SQLite, real HTTP on loopback."""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import pytest

from mapwatch.cli import main
from mapwatch.store.database.db import open_db
from mapwatch.store.database.save import MAX_DIRECTIONS_PER_HOST
from mapwatch.store.errors import ParseError
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import MapPage, Placement
from mapwatch.store.pages.parse import MAX_PLACEMENTS, parse_page
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.subscriptions.tracking import add_track, tracked_paper_ids
from tests.conftest import FakeClock
from tests.mapsite import HOST, MapSite, serve_site
from tests.unit.store.test_crawl_schedule import FAST, T0, new_paper


def placements(n: int, start: int = 0, host: str = HOST) -> tuple[Placement, ...]:
    return tuple(Placement(breadcrumb=f"Flood / Direction {i}", area="Flood", direction=f"Direction {i}",
                           slug=f"flood/d{i}", url=f"{host}/flood/d{i}/") for i in range(start, start + n))


def placed(pid: str, where: tuple[Placement, ...]) -> MapPage:
    page = new_paper(pid, [], None)
    return dataclasses.replace(page, placements=where, direction=where[0].direction, area=where[0].area)


def test_a_page_in_more_than_max_placements_directions_is_rejected_at_that_line() -> None:
    ok = format_page(placed("2609.00001", placements(MAX_PLACEMENTS)))
    assert len(parse_page(ok.encode()).placements) == MAX_PLACEMENTS
    over = format_page(placed("2609.00001", placements(MAX_PLACEMENTS + 1)))
    line = next(n for n, text in enumerate(over.splitlines(), 1) if f"Direction {MAX_PLACEMENTS}]" in text)
    with pytest.raises(ParseError) as e:
        parse_page(over.encode())
    assert (e.value.line, e.value.reason) == (line, f"placed in more than {MAX_PLACEMENTS} directions")


def test_the_flood_page_is_rejected_fast_and_the_others_are_stored(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    flood = format_page(placed("2609.00001", placements(20_002)))
    assert len(flood) > 1_200_000  # the page of the attack: 1.2-1.5 MB
    (folder / "flood.md").write_text(flood)
    (folder / "fine.md").write_text(format_page(placed("2609.00002", placements(2))))
    db = tmp_path / "m.db"
    t = time.perf_counter()
    assert main(["ingest", str(folder), "--db", str(db)]) == 1  # some page rejected
    took = time.perf_counter() - t
    err = capsys.readouterr()
    assert f"flood.md:{flood.splitlines().index('- Flood / [Direction 20](' + HOST + '/flood/d20/)') + 1}: " \
           f"placed in more than {MAX_PLACEMENTS} directions" in err.out + err.err
    conn = open_db(db).conn
    assert conn.execute("SELECT count(*) FROM directions").fetchone() == (2,)
    assert conn.execute("SELECT id FROM papers WHERE has_page = 1").fetchall() == [("2609.00002",)]
    assert took < 30, took  # (the figure is in tests/RELIABILITY.md)


def test_a_host_makes_at_most_max_directions_then_pages_with_new_ones_are_rejected(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    per_page = MAX_PLACEMENTS
    full = MAX_DIRECTIONS_PER_HOST // per_page
    for k in range(full):  # exactly the bound, 20 new directions a page
        (folder / f"p{k:04d}.md").write_text(format_page(placed(f"2609.{k:05d}", placements(per_page, k * per_page))))
    db = tmp_path / "m.db"
    assert main(["ingest", str(folder), "--db", str(db)]) == 0
    capsys.readouterr()
    more = tmp_path / "more"
    more.mkdir()
    (more / "new.md").write_text(format_page(placed("2610.00001", placements(1, MAX_DIRECTIONS_PER_HOST))))
    (more / "known.md").write_text(format_page(placed("2610.00002", placements(3, 5))))  # known directions
    other = "https://other.example"
    (more / "other.md").write_text(format_page(placed("2610.00003", placements(1, 0, host=other))))
    assert main(["ingest", str(more), "--db", str(db)]) == 1
    err = capsys.readouterr().err
    host = HOST.split("//")[1]
    assert (f"new.md: would place its paper in 1 new direction: {host} already has "
            f"{MAX_DIRECTIONS_PER_HOST:,} (at most {MAX_DIRECTIONS_PER_HOST:,} a host)") in err
    conn = open_db(db).conn
    assert conn.execute("SELECT count(*) FROM directions").fetchone() == (MAX_DIRECTIONS_PER_HOST,)
    stored = {r[0] for r in conn.execute("SELECT id FROM papers WHERE id LIKE '2610.%' AND has_page = 1")}
    # The page in known directions is stored; the page whose slug is known (flood/d0) on another host too.
    assert stored == {"2610.00002", "2610.00003"}
    assert conn.execute("SELECT reason FROM ingest_errors WHERE location LIKE '%new.md'").fetchone()[0].startswith(
        "would place its paper in 1 new direction")


def test_direction_pages_spend_the_budget_after_the_tracked_papers(db) -> None:
    # 50 pages placed in 20 directions each: the site has 1,000 direction pages, all due hourly.
    pages = {f"2601.{k:05d}": placed(f"2601.{k:05d}", placements(20, k * 20)) for k in range(50)}
    texts = {pid: format_page(p) for pid, p in pages.items()}
    tracked = "2601.00049"
    clock = FakeClock(T0)
    with serve_site(MapSite(pages=texts, sitemap=False)) as site:
        assert len(site.directions()) == 1_000
        first = refresh(db, site.base, clock=clock, priority=sorted(texts),
                        options=dataclasses.replace(FAST, budget=2_000))
        assert first.stored == 50
        add_track(db, guild_id=1, channel_id=2, user_id=None, paper_id=tracked, created_by=3, now=clock())
        for _tick in range(3):
            clock.advance(hours=1)
            site.requests.clear()
            report = refresh(db, site.base, clock=clock, priority=tracked_paper_ids(db),
                             options=dataclasses.replace(FAST, budget=30))
            asked = [p for p in site.paths_requested() if p != "/robots.txt"]
            directions = [p for p in asked if p.startswith("/flood/")]
            assert asked[0] == f"/paper/{tracked}/"  # before any direction page
            assert len(directions) >= 20  # the fault: directions due, and read
            assert len(asked) <= 30, len(asked)  # the budget held, the direction pages in it
            assert report.crawl.over_budget >= 0
