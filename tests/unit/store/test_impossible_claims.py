"""Issue 21, items 1, 13c and 13d: what a page claims must be possible (DESIGN, "The map is untrusted").

- Dates: a "data through" or "First posted on arXiv" date before arXiv (August 1991) or after
  the reader's today plus two days rejects the page, with its line and reason, whichever way it
  is read (one process, the worker pool, fed pages, an HTTP crawl), against the injected clock.
  An impossible date already stored by an older version is quarantined on open (migration
  0013), is no reference for the stale rule, and is never drawn: charts, cards, pages and feeds
  answer on it.
- Titles: over 1,000 characters (the page's or a listed paper's) rejects the page.
- Direction slugs: a '..' segment, a percent-escape, a dot-file segment rejects the page.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest

from mapwatch.bot.commands import run_core
from mapwatch.feeds import chart
from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.ondemand import CHART, PAGE, PaperCache
from mapwatch.store.database.db import MapDatabase, open_db
from mapwatch.store.database.ingest import FedPage, ingest_fed, ingest_paths
from mapwatch.store.database.migrations import migrations
from mapwatch.store.errors import ParseError
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.page_dates import ARXIV_START, FUTURE_MARGIN
from mapwatch.store.pages.parse import MAX_TITLE_CHARS, parse_document, parse_page
from mapwatch.store.questions.graph import CountPoint, count_history
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.subscriptions.tracking import add_track
from tests.bot_helpers import ctx
from tests.conftest import FakeClock, older_snapshot, seed_page, write_page
from tests.mapsite import render_page
from tests.sourceserver import serve_map

SURVEY, OTHER = "2412.10400", "2507.04136"
SEED_TEXT = (SEEDS_DIR / f"{SURVEY}.txt").read_text(encoding="utf-8")
THROUGH_LINE, POSTED_LINE = 7, 10  # of the seed page
TODAY = date(2026, 11, 1)  # FakeClock's day
BASE = "http://feeds.example"


def with_through(day: str) -> str:
    out = SEED_TEXT.replace("(data through 14 Oct 2026)", f"(data through {day})")
    assert out != SEED_TEXT
    return out


def with_posted(day: str) -> str:
    out = SEED_TEXT.replace("First posted on arXiv 5 Dec 2024.", f"First posted on arXiv {day}.")
    assert out != SEED_TEXT
    return out


def rows(db, sql: str, *args) -> list[tuple]:
    return db.conn.execute(sql, args).fetchall()


# ---------------------------------------------------------------------------- item 1: parsing


@pytest.mark.parametrize(("day", "line", "reason"), [
    ("through 31 Dec 9999", THROUGH_LINE, "'data through' date 9999-12-31 is in the future (after 2026-11-03)"),
    ("through 1 Jan 0001", THROUGH_LINE, "'data through' date 0001-01-01 is before arXiv existed (August 1991)"),
    ("through 2026-11-04", THROUGH_LINE, "'data through' date 2026-11-04 is in the future (after 2026-11-03)"),
    ("through 31 Jul 1991", THROUGH_LINE, "'data through' date 1991-07-31 is before arXiv existed"),
    ("posted 31 Dec 9999", POSTED_LINE, "'First posted on arXiv' date 9999-12-31 is in the future"),
    ("posted 1 Jan 0001", POSTED_LINE, "'First posted on arXiv' date 0001-01-01 is before arXiv existed"),
])
def test_a_date_no_page_can_claim_rejects_the_page_with_its_line(day: str, line: int, reason: str) -> None:
    which, _, when = day.partition(" ")
    text = with_through(when) if which == "through" else with_posted(when)
    old, new = next((a, b) for a, b in zip(SEED_TEXT.split("\n"), text.split("\n"), strict=True) if a != b)
    page_html = render_page(SEED_TEXT).replace(old[2:], new[2:])  # the fact's line, without "- "
    assert new[2:] in page_html
    with pytest.raises(ParseError) as e:
        parse_page(text, today=TODAY)
    assert e.value.line == line and e.value.reason.startswith(reason)
    with pytest.raises(ParseError) as doc:  # the same through the document reader
        parse_document(text.encode(), today=TODAY)
    assert doc.value.line == line
    with pytest.raises(ParseError) as html:  # and from an HTML page (its reasons carry no line)
        parse_document(page_html.encode(), content_type="text/html", today=TODAY)
    assert html.value.reason.startswith(f"HTML page: {reason}")


def test_the_bounds_themselves_are_possible() -> None:
    latest = TODAY + FUTURE_MARGIN
    assert timedelta(days=2) == FUTURE_MARGIN and date(1991, 8, 1) == ARXIV_START
    page = parse_page(with_through(latest.isoformat()), today=TODAY)
    assert page.data_through == latest
    assert parse_page(with_posted("1 Aug 1991"), today=TODAY).first_posted == ARXIV_START
    # Today's bound is the caller's: the same page read later is fine.
    assert parse_page(with_through("2026-11-20"), today=date(2026, 11, 20)).data_through == date(2026, 11, 20)


def _folder(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{SURVEY}.txt").write_text(text, encoding="utf-8")
    (folder / f"{OTHER}.txt").write_bytes((SEEDS_DIR / f"{OTHER}.txt").read_bytes())
    return folder


@pytest.mark.parametrize("pool", [False, True])
def test_ingest_judges_dates_by_its_injected_clock_in_process_and_in_the_pool(tmp_path: Path, pool: bool) -> None:
    """20 Nov 2026 is in the past by the real date, in the future on the fake clock's 1 Nov."""
    folder = _folder(tmp_path, "map", with_through("20 Nov 2026"))
    db = open_db(tmp_path / "x.db")
    clock = FakeClock()
    report = ingest_paths(db, [folder], clock=clock, pool=pool)
    assert [(r.line, r.reason) for r in report.rejected] == [
        (THROUGH_LINE, "'data through' date 2026-11-20 is in the future (after 2026-11-03)")]
    assert report.stored == 1 and rows(db, "SELECT id FROM papers WHERE has_page = 1") == [(OTHER,)]
    assert rows(db, "SELECT line, reason FROM ingest_errors")[0][0] == THROUGH_LINE
    clock.advance(days=19)  # now the date can be true: the same file is read again and stored
    report = ingest_paths(db, [folder], clock=clock, pool=pool, force=True)
    assert not report.rejected and rows(db, "SELECT data_through FROM papers WHERE id = ?", SURVEY) == [("2026-11-20",)]


def test_fed_pages_are_judged_by_the_injected_clock(tmp_path: Path) -> None:
    db = open_db(tmp_path / "x.db")
    fed = [FedPage("gen/1", 1, 1, with_through("20 Nov 2026").encode())]
    report = ingest_fed(db, fed, "gen", clock=FakeClock())
    assert [r.line for r in report.rejected] == [THROUGH_LINE] and report.stored == 0


def test_an_http_refresh_judges_dates_by_its_injected_clock(tmp_path: Path) -> None:
    db = open_db(tmp_path / "x.db")
    future = dataclasses.replace(seed_page(SURVEY), data_through=date(2026, 11, 20))
    with serve_map() as srv:
        srv.put(future)
        srv.put(seed_page(OTHER))
        report = refresh(db, srv.base, clock=FakeClock(), options=HttpOptions(timeout=2, retries=0))
    assert report.stored == 1 and [r.line for r in report.rejected] == [THROUGH_LINE]
    assert "2026-11-20 is in the future" in report.rejected[0].reason
    assert rows(db, "SELECT id FROM papers WHERE has_page = 1") == [(OTHER,)]


def test_a_page_from_the_future_no_longer_freezes_its_paper(tmp_path: Path) -> None:
    """The bug: the 9999 page was stored and every later genuine page was "older than stored"."""
    db = open_db(tmp_path / "x.db")
    clock = FakeClock()
    report = ingest_paths(db, [_folder(tmp_path, "bad", with_through("31 Dec 9999"))], clock=clock)
    assert len(report.rejected) == 1 and report.rejected[0].line == THROUGH_LINE
    assert rows(db, "SELECT id FROM papers WHERE has_page = 1") == [(OTHER,)]
    report = ingest_paths(db, [_folder(tmp_path, "good", SEED_TEXT)], clock=clock)
    assert report.saved.stale == 0 and SURVEY in report.saved.stored
    assert rows(db, "SELECT data_through FROM papers WHERE id = ?", SURVEY) == [("2026-10-14",)]


# ---------------------------------------------------------------------------- item 1: stored data

POISON = (("9999-12-31", 90), ("0001-01-01", 3), ("2026-13-45", 7), ("soon", 8))


def poison(db, pid: str = SURVEY) -> None:
    """What an older version left: snapshots and a paper row dated where no page can be, written
    straight into SQLite."""
    for through, count in POISON:
        db.conn.execute(
            "INSERT INTO snapshots (paper_id, data_through, cited_by, content_hash, source, ingested_at)"
            " VALUES (?, ?, ?, ?, 'old-version', '2026-11-01T12:00:00+00:00')", (pid, through, count, f"h{count}"))
    db.conn.execute("UPDATE papers SET data_through = '9999-12-31', first_posted = '0001-01-01' WHERE id = ?", (pid,))
    db.conn.commit()


def test_a_database_frozen_by_a_9999_snapshot_heals_on_open(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = MapDatabase(sqlite3.connect(path), execute_plugins=False)
    migrations.apply(old)
    ingest_paths(old, [SEEDS_DIR], clock=FakeClock())
    poison(old)
    # The older version's state: migration 0013 never ran (its table and its record absent).
    old.conn.executescript("DROP TABLE quarantined_dates;"
                           " DELETE FROM _sqlite_migrations WHERE name = '0013_quarantine_impossible_dates';")
    old.close()

    db = open_db(path)  # migration 0013
    quarantined = rows(db, "SELECT table_name, row_key, column_name, value, reason FROM quarantined_dates"
                           " ORDER BY table_name, column_name, value")
    assert quarantined[:2] == [("papers", SURVEY, "data_through", "9999-12-31", "in the future"),
                               ("papers", SURVEY, "first_posted", "0001-01-01", "before arXiv existed")]
    assert sorted((v, r) for t, _, _, v, r in quarantined if t == "snapshots") == [
        ("0001-01-01", "before arXiv existed"), ("2026-13-45", "in the future"), ("9999-12-31", "in the future"),
        ("soon", "not a date")]
    # Nothing deleted: the snapshots are kept, their dates moved out of the comparison.
    assert rows(db, "SELECT count(*) FROM snapshots WHERE source = 'old-version' AND data_through IS NULL") == [(4,)]
    assert rows(db, "SELECT data_through FROM papers WHERE id = ?", SURVEY) == [(None,)]

    clock = FakeClock()
    clock.advance(days=14)
    newer = dataclasses.replace(seed_page(SURVEY), cited_by=75, data_through=date(2026, 11, 12))
    report = ingest_paths(db, [write_page(tmp_path / "next", newer)], clock=clock)
    assert report.stored == 1 and report.saved.stale == 0
    assert rows(db, "SELECT data_through, cited_by FROM papers WHERE id = ?", SURVEY) == [("2026-11-12", 75)]


def test_the_stale_rule_ignores_an_impossible_stored_date(seeded, clock, tmp_path: Path) -> None:
    """Even when one is written after the migration ran (straight into SQLite)."""
    seeded.conn.execute("UPDATE papers SET data_through = '9999-12-31' WHERE id = ?", (SURVEY,))
    seeded.conn.commit()
    clock.advance(days=14)
    newer = dataclasses.replace(seed_page(SURVEY), cited_by=75, data_through=date(2026, 11, 12))
    report = ingest_paths(seeded, [write_page(tmp_path / "next", newer)], clock=clock)
    assert report.saved.stale == 0 and report.stored == 1
    # A genuine later date still makes an older page stale.
    older = older_snapshot(seed_page(SURVEY), 3)
    report = ingest_paths(seeded, [write_page(tmp_path / "older", older)], clock=clock)
    assert report.saved.stale == 1 and report.stored == 0


@pytest.fixture
def poisoned(db, clock, make_older_seeds):
    """Two genuine snapshots of each seed (14 Sep and 14 Oct), then the impossible ones."""
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    poison(db)
    return db


GENUINE = [CountPoint("2026-09-14", 68), CountPoint("2026-10-14", 71)]


def drawn_points(png: bytes) -> list[list]:
    key = chart.drawn_key(png)
    assert key is not None
    return re.findall(r'\["([^"]+)",(\d+)\]', key)  # type: ignore[return-value]


def test_the_chart_skips_impossible_points_and_never_raises(poisoned) -> None:
    assert count_history(poisoned, SURVEY, today=TODAY) == tuple(GENUINE)
    # Given every stored point as it is, the chart itself draws what it can: no ValueError.
    every = [CountPoint(t, c) for t, c in rows(poisoned, "SELECT data_through, cited_by FROM snapshots"
                                                         " WHERE paper_id = ? ORDER BY id", SURVEY)]
    png = chart.count_chart_png(every)
    assert png is not None and png.startswith(b"\x89PNG")
    for edge in ([CountPoint("9999-12-31", 1), CountPoint("9999-12-30", 2)],
                 [CountPoint("0001-01-01", 1), CountPoint("0001-01-02", 2)],
                 [CountPoint("0001-01-01", 1), CountPoint("9999-12-31", 2)]):
        assert chart.count_chart_png(edge) is not None
    assert chart.count_chart_png([CountPoint("soon", 1), CountPoint("2026-10-14", 2)]) is None  # one point left


def test_the_paper_card_answers_with_its_chart(poisoned) -> None:
    reply, ok = run_core(poisoned, ctx(), "paper", {"paper": SURVEY})
    assert ok and reply.embeds and len(reply.files) == 1
    assert drawn_points(reply.files[0].data) == [("2026-09-14", "68"), ("2026-10-14", "71")]
    assert "31 Dec 9999" in reply.embeds[0].description  # the stored fact is shown as it is, not drawn


def test_the_paper_page_and_chart_are_served(poisoned, db_path: Path) -> None:
    cache = PaperCache(db_path, BASE)
    page, png = cache.get(PAGE, SURVEY), cache.get(CHART, SURVEY)
    assert page.status == 200 and b"9999-12-31" in page.body and b"over 2 stored snapshots" in page.body
    assert png.status == 200 and drawn_points(png.body) == [("2026-09-14", "68"), ("2026-10-14", "71")]


def test_publish_papers_all_and_a_ticks_publish_succeed(poisoned, clock, tmp_path: Path) -> None:
    out = tmp_path / "public"
    report = publish(poisoned, out, BASE, clock=clock, papers="all")
    assert report.charts >= 2
    assert drawn_points((out / f"papers/{SURVEY}/cited-by.png").read_bytes()) == [("2026-09-14", "68"),
                                                                                 ("2026-10-14", "71")]
    assert (out / f"feeds/papers/{SURVEY}.atom").is_file() and (out / f"papers/{SURVEY}/index.html").is_file()
    add_track(poisoned, guild_id=1, channel_id=2, user_id=None, paper_id=SURVEY, created_by=3, now=clock())
    tick = tmp_path / "tick"
    publish(poisoned, tick, BASE, clock=clock)  # as each tick of `mapwatch run` does: tracked papers
    assert drawn_points((tick / f"papers/{SURVEY}/cited-by.png").read_bytes())[-1] == ("2026-10-14", "71")


# ---------------------------------------------------------------------------- item 13c: titles


def test_a_title_over_the_bound_rejects_the_page() -> None:
    ok = "T" * MAX_TITLE_CHARS
    lines = SEED_TEXT.split("\n")
    assert parse_page("\n".join([f"# {ok}", *lines[1:]]), today=TODAY).title == ok
    with pytest.raises(ParseError) as e:
        parse_page("\n".join([f"# {ok}x", *lines[1:]]), today=TODAY)
    assert (e.value.line, e.value.reason) == (1, "title over 1,000 characters (1,001)")
    item = next(i for i, s in enumerate(lines) if s.startswith("- ["))
    long_item = re.sub(r"^- \[[^\]]*\]", f"- [{'L' * 5000}]", lines[item])
    with pytest.raises(ParseError) as e:
        parse_page("\n".join([*lines[:item], long_item, *lines[item + 1:]]), today=TODAY)
    assert (e.value.line, e.value.reason) == (item + 1, "list item's title over 1,000 characters (5,000)")


# ---------------------------------------------------------------------------- item 13d: direction slugs


@pytest.mark.parametrize(("path", "reason"), [
    ("lr/../../etc", "has a '..' segment"),
    ("..", "has a '..' segment"),
    ("lr/..%2f..%2fsecret", "has a segment starting with '.'"),
    ("lr/x%2f..%2fsecret", "has a percent-escape (such as %2f)"),
    ("lr%2F..%2Fx", "has a percent-escape (such as %2f)"),
    (".hidden/dir", "has a segment starting with '.'"),
    ("lr/.config", "has a segment starting with '.'"),
    ("lr//double", "has an empty segment"),
    ("lr/a+b", "has a character other than letters, digits and . _ ~ -"),
])
def test_an_unsafe_direction_slug_rejects_the_page(tmp_path: Path, path: str, reason: str) -> None:
    link = "https://mlsanity.com/alignment/reward-modeling-and-rlhf/"
    text = SEED_TEXT.replace(link, f"https://mlsanity.com/{path}/")
    line = SEED_TEXT.split("\n").index(next(s for s in SEED_TEXT.split("\n") if link in s)) + 1
    with pytest.raises(ParseError) as e:
        parse_page(text, today=TODAY)
    assert e.value.line == line and e.value.reason == f"direction link's path {path!r} {reason}"
    db = open_db(tmp_path / "x.db")
    report = ingest_paths(db, [_folder(tmp_path, "map", text)], clock=FakeClock(datetime(2026, 11, 1, tzinfo=UTC)))
    assert [r.line for r in report.rejected] == [line]
    assert all(".." not in s and "%" not in s for (s,) in rows(db, "SELECT slug FROM directions"))
