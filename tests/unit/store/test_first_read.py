"""What "new" means on a fresh install (docs/feeds.md, "What new means"): the citations mapwatch
finds when it first reads a paper are marked as known at that first read, the index's "new in 7
days" counts only those that appeared after, and their entries stay in the feeds, dated by the
citing paper where its date is known."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import feedparser
from sqlite_utils import Database

from mapwatch.feeds.publish import publish
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.database.rows import named_rows
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.model import ListedPaper, PaperList
from mapwatch.store.questions import queries
from tests.conftest import seed_page, write_page
from tests.older_schema import as_before
from tests.seedfacts import own_date

BASE = "http://feeds.test:8080"
RL = "lr/reinforcement-learning-for-reasoning"
SURVEY, TECHNICAL = "2412.10400", "2507.04136"  # the technical survey cites the survey and has a page


def new_in_7_days(out: Path) -> dict[str, int]:
    """Per direction page linked from the index: its "N new in 7 days"."""
    html = (out / "index.html").read_text(encoding="utf-8")
    return {slug: int(n.replace(",", "")) for slug, n in re.findall(
        r'href="directions/([^"]+)/"[^>]*>.*?<span class="n7">([\d,]+) new in 7 days', html)}


def new_citers(db, slug: str) -> int:
    """Papers citing a paper of the direction with at least one citation not known at a first read."""
    return db.conn.execute(
        "SELECT count(DISTINCT c.citing_id) FROM citations c JOIN placements pl ON pl.paper_id = c.cited_id"
        " WHERE pl.direction_slug = ? AND c.at_first_read = 0", (slug,)).fetchone()[0]


def test_the_first_run_has_nothing_new_and_later_citers_are_new(db, clock, tmp_path: Path,
                                                                  make_older_seeds) -> None:
    out = tmp_path / "site"
    ingest_paths(db, [make_older_seeds(3)], clock=clock)  # the first run: both pages read for the first time
    publish(db, out, BASE, clock=clock)
    first = new_in_7_days(out)
    assert len(first) >= 2 and set(first.values()) == {0}  # on main: 40-odd per direction, all "new"
    assert "none new since the first read" in (out / "index.html").read_text(encoding="utf-8")
    assert db.conn.execute("SELECT count(*), sum(at_first_read) FROM citations").fetchone()[0] > 50
    assert db.conn.execute("SELECT count(*) FROM citations WHERE at_first_read = 0").fetchone()[0] == 0

    # The entries are still there (a new subscriber sees the citers already known), marked as such.
    feed = feedparser.parse((out / f"feeds/{RL}.atom").read_bytes())
    assert len(feed.entries) > 40
    for e in feed.entries:
        assert "Known at the first read, on 2026-11-01" in e.content[0].value, e.id
    # The one citer whose page is stored carries its own date: first posted on arXiv 5 Jul 2025.
    technical = next(e for e in feed.entries if e.id.endswith(f"/citer/{TECHNICAL}"))
    assert technical.updated == technical.published == "2025-07-05T00:00:00+00:00"
    assert "first posted on arXiv 2025-07-05" in technical.content[0].value
    others = {e.updated for e in feed.entries if e is not technical}
    assert others == {"2026-11-01T12:00:00+00:00"}  # no date of their own is known: the first read's
    page = (out / f"directions/{RL}/index.html").read_text(encoding="utf-8")
    assert "first seen" not in page and page.count("known at first read") == len(feed.entries)

    # A day later the map lists 3 more citers of each page: those are new.
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    publish(db, out, BASE, clock=clock)
    second = new_in_7_days(out)
    assert second[RL] == new_citers(db, RL) == 6
    assert all(n == new_citers(db, slug) for slug, n in second.items())
    feed = feedparser.parse((out / f"feeds/{RL}.atom").read_bytes())
    fresh = [e for e in feed.entries if "First seen on 2026-11-02" in e.content[0].value]
    assert len(fresh) == 6 and feed.entries[:6] == fresh  # newest first
    assert {e.updated for e in fresh} == {"2026-11-02T12:00:00+00:00"}
    assert feed.feed.updated == "2026-11-02T12:00:00+00:00"
    page = (out / f"directions/{RL}/index.html").read_text(encoding="utf-8")
    assert page.count("first seen") == 6

    # Eight days on, they are no longer "in 7 days".
    clock.advance(days=8)
    publish(db, out, BASE, clock=clock)
    assert set(new_in_7_days(out).values()) == {0}


def test_a_paper_first_read_after_its_citers_brings_them_as_known(db, clock, tmp_path: Path) -> None:
    """An edge written before the cited paper's page is read (another page listed it) is known at
    its first read too; once a paper is read, a new citer's edge is new."""
    survey = seed_page(SURVEY)
    ingest_paths(db, [write_page(tmp_path / "a", survey)], clock=clock)  # the technical survey: a stub
    assert db.conn.execute("SELECT count(*), sum(at_first_read) FROM citations").fetchone() == (60, 60)
    clock.advance(hours=1)
    ingest_paths(db, [write_page(tmp_path / "b", seed_page(TECHNICAL))], clock=clock)  # its first read
    assert db.conn.execute("SELECT count(*), sum(at_first_read) FROM citations WHERE cited_id = ?",
                           (TECHNICAL,)).fetchone() == (21, 21)
    clock.advance(hours=1)
    newcomer = ListedPaper("2611.00001", "A paper posted this week", 2026, 1, "https://mlsanity.com/paper/2611.00001/")
    assert isinstance(survey.built_on_by, PaperList)
    grown = dataclasses.replace(survey, built_on_by=dataclasses.replace(
        survey.built_on_by, items=(newcomer, *survey.built_on_by.items), shown=survey.built_on_by.shown + 1,
        total=survey.built_on_by.total + 1), cited_by=(survey.cited_by or 0) + 1)
    ingest_paths(db, [write_page(tmp_path / "c", grown)], clock=clock)
    assert db.conn.execute("SELECT citing_id, at_first_read FROM citations WHERE at_first_read = 0").fetchall() == [
        ("2611.00001", 0)]


def test_the_migration_marks_what_an_older_database_stored(db_path: Path, clock, tmp_path: Path,
                                                           make_older_seeds) -> None:
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    written = set(db.conn.execute("SELECT citing_id, cited_id, at_first_read FROM citations"))
    publish(db, tmp_path / "site", BASE, clock=clock)
    db.close()
    # The database as 0023 left it: no column, no record of 0024 (the citations a table: 0047, 0048 run again).
    older = Database(db_path)
    as_before(older)
    conn = older.conn
    conn.execute("ALTER TABLE citations DROP COLUMN at_first_read")
    conn.execute("ALTER TABLE feed_direction_citers DROP COLUMN at_first_read")
    conn.execute("DELETE FROM _sqlite_migrations WHERE name = '0024_first_read'")
    conn.commit()
    conn.close()
    db = open_db(db_path)
    assert set(db.conn.execute("SELECT citing_id, cited_id, at_first_read FROM citations")) == written
    assert sum(flag == 0 for *_, flag in written) == 6  # the 3 new citers of each page
    out = tmp_path / "after"
    publish(db, out, BASE, clock=clock)  # the index, rebuilt whole, counts the new ones only
    assert new_in_7_days(out)[RL] == 6
    db.close()


def test_newest_first_after_the_first_read_is_by_the_citers_own_dates(db, clock, make_older_seeds) -> None:
    """Every citer a first read finds is first seen at one instant: `sort:newest` orders them by
    their own date (the month of their arXiv id, else the day first posted, else the year), the
    newest first, and a citer seen later still comes before them all."""
    ingest_paths(db, [make_older_seeds(3)], clock=clock)

    def newest(paper: str) -> list[str]:
        return [c.id for c in queries.citers(db, paper, sort="newest", limit=100, authors=False).items]

    def by_own_date(ids: list[str]) -> list[str]:
        rows = {r["id"]: own_date(r["id"], r["first_posted"], r["year"]) for r in named_rows(
            db, f"SELECT id, first_posted, year FROM papers WHERE id IN ({','.join('?' * len(ids))})", ids)}
        return sorted(ids, key=lambda pid: (rows[pid], pid), reverse=True)

    first = newest(SURVEY)
    assert len(first) > 20 and first == by_own_date(first)  # on main: the order the page listed them
    assert first[:3] == ["2605.02913", "2512.04535", "2511.09148"]  # May 2026, then December 2025
    # The same order, page by page.
    paged = [c.id for n in range(0, len(first), 10)
             for c in queries.citers(db, SURVEY, sort="newest", offset=n, limit=10, authors=False).items]
    assert paged == first

    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    later = newest(SURVEY)
    fresh = [pid for pid in later if pid not in first]
    assert len(fresh) == 3 and later[:3] == by_own_date(fresh) and later[3:] == first
