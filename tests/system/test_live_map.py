"""Following the live map: `mapwatch refresh --source http://127.0.0.1:PORT` against the map's
website on loopback (tests/mapsite.py: HTML only, robots.txt, a gzipped sitemap behind an
index, direction pages), compared with `mapwatch ingest` of the same pages' text."""

from __future__ import annotations

import dataclasses
import io
import itertools
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import feedparser
import pytest

from mapwatch.cli import main
from mapwatch.store.database.db import open_db
from mapwatch.store.pages.format import format_page
from mapwatch.store.progress import CrawlProgress, render
from mapwatch.store.sources.http_client import ACCEPT, HttpOptions, user_agent
from mapwatch.store.sources.refresh import refresh
from mapwatch.store.sources.sitemaps import newer, sitemap_entries
from tests import pagegen
from tests.conftest import FakeClock, older_snapshot, seed_page
from tests.mapsite import DECOY_DIRECTION, DECOY_IDS, HOST, MapSite, seed_texts, serve_site

TEMPLATES = ("a", "b")
COMPARED = ("papers", "citations", "directions", "placements")
# Timestamps, snapshot and event ids (the order in which pages arrive is the network's), and what
# depends on when a page was first read (two ticks are compared with one ingest).
TIMESTAMPS = {"first_seen", "updated", "seen_at", "ingested_at", "checked_at", "computed_at", "snapshot_id",
              "event_id", "at_first_read"}
SEEDS = sorted(seed_texts())


def corpus_texts(n: int = 24) -> dict[str, str]:
    return {p.id: format_page(p) for p in pagegen.generate(n).v1}


def site_texts(n: int = 24) -> dict[str, str]:
    return {**seed_texts(), **corpus_texts(n)}


def dump(db_path: Path) -> dict[str, list[tuple]]:
    """The compared tables without timestamps, strings with whitespace collapsed; abstracts."""
    conn = sqlite3.connect(db_path)
    try:
        out = {}
        for t in COMPARED:
            cols = [r[1] for r in conn.execute(f"PRAGMA table_info({t})") if r[1] not in TIMESTAMPS]
            rows = conn.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchall()
            out[t] = sorted(tuple(" ".join(v.split()) if isinstance(v, str) else v for v in r) for r in rows)
        out["abstracts"] = sorted(conn.execute("SELECT id, abstract FROM papers WHERE has_page = 1").fetchall())
        out["events"] = sorted(conn.execute(
            "SELECT kind, paper_id, coalesce(citing_id, ''), coalesce(old_count, -1), coalesce(new_count, -1)"
            " FROM events").fetchall())
        return out
    finally:
        conn.close()


def ingest_text(texts: dict[str, str], base: str, folder: Path, db: Path) -> dict[str, list[tuple]]:
    """`mapwatch ingest` of the same pages' text (their links naming the site as served)."""
    folder.mkdir(parents=True, exist_ok=True)
    for pid, text in texts.items():
        (folder / f"{pid.replace('/', '_')}.txt").write_text(text.replace(HOST, base), encoding="utf-8")
    assert main(["ingest", str(folder), "--db", str(db), "--quiet"]) == 0
    return dump(db)


def make_due(db_path: Path) -> None:
    """Every page due for a re-check now (the CLI's clock is the wall clock: a page read
    seconds ago is otherwise not due for hours; see store/sources/crawl_schedule.py)."""
    conn = sqlite3.connect(db_path)
    with conn:
        conn.execute("UPDATE sources SET next_check_at = '2000-01-01T00:00:00+00:00'")
    conn.close()


def cli_refresh(site: MapSite, tmp: Path, *extra: str, db: str = "live.db") -> int:
    return main(["refresh", "--source", site.base, "--db", str(tmp / db), "--out", str(tmp / "public"),
                 "--base-url", "http://feeds.test", *extra])


# --- the whole site, read as a user would ---------------------------------------------------------

@pytest.mark.parametrize("template", TEMPLATES)
def test_refresh_of_the_html_site_stores_what_ingest_of_the_text_stores(template: str, tmp_path: Path,
                                                                          capsys) -> None:
    texts = site_texts()
    with serve_site(MapSite(pages=texts, template=template)) as site:
        assert cli_refresh(site, tmp_path) == 0
        printed = capsys.readouterr().out
        expected = ingest_text(texts, site.base, tmp_path / "text", tmp_path / "text.db")
        got = dump(tmp_path / "live.db")
        for table in [*COMPARED, "abstracts", "events"]:
            assert got[table] == expected[table], table
        assert f"{len(texts)} stored" in printed and "0 rejected" in printed and "0 failed" in printed
        paths = site.paths_requested()
        # robots.txt once, first; the sitemap index and its gzipped sitemap; every page once.
        assert paths[0] == "/robots.txt" and paths.count("/robots.txt") == 1
        assert paths.count("/sitemap.xml") == 1 and paths.count("/sitemap-papers.xml.gz") == 1
        assert all(paths.count(f"/paper/{pid}/") == 1 for pid in texts)
        assert all(h["Accept"] == ACCEPT and h["User-Agent"] == user_agent() for _p, h in site.requests)
        # Navigation, sidebars, footers, scripts and JSON-LD: never papers, citations, directions
        # or requests.
        assert not any(f"/paper/{d}/" in p for d in DECOY_IDS for p in paths)
        assert DECOY_DIRECTION not in paths
    conn = sqlite3.connect(tmp_path / "live.db")
    ids = {r[0] for r in conn.execute("SELECT id FROM papers")}
    cited = {x for r in conn.execute("SELECT citing_id, cited_id FROM citations") for x in r}
    slugs = {r[0] for r in conn.execute("SELECT slug FROM directions")}
    assert not (ids | cited) & DECOY_IDS and DECOY_DIRECTION.strip("/") not in slugs
    assert len(ids) > len(texts)  # listed papers without pages are stubs, as in ingest


def test_direction_pages_find_a_newly_placed_paper_no_page_cites(tmp_path: Path) -> None:
    seed = seed_page("2412.10400")
    newcomer = dataclasses.replace(seed, id="2611.00042", title="A Newly Placed Paper",
                                   arxiv_url="https://arxiv.org/abs/2611.00042",
                                   map_url=f"{HOST}/paper/2611.00042/", builds_on=None, built_on_by=None,
                                   cited_by=0, refs_in_map=0)
    texts = {**seed_texts(), newcomer.id: format_page(newcomer)}
    assert not any("2611.00042" in t for pid, t in texts.items() if pid != newcomer.id)
    # No sitemap: the newcomer is only on its direction's page.
    with serve_site(MapSite(pages=texts, template="b", sitemap=False)) as site:
        assert cli_refresh(site, tmp_path) == 0
        direction = "/" + seed.placements[0].slug + "/"
        paths = site.paths_requested()
        assert direction in paths and "/paper/2611.00042/" in paths
        assert paths.index(direction) < paths.index("/paper/2611.00042/")
        expected = ingest_text(texts, site.base, tmp_path / "text", tmp_path / "text.db")
    got = dump(tmp_path / "live.db")
    for table in [*COMPARED, "abstracts"]:
        assert got[table] == expected[table], table  # the direction page's links made no citation
    conn = sqlite3.connect(tmp_path / "live.db")
    assert conn.execute("SELECT has_page FROM papers WHERE id = '2611.00042'").fetchone() == (1,)
    assert conn.execute("SELECT count(*) FROM citations WHERE '2611.00042' IN (citing_id, cited_id)"
                        ).fetchone() == (0,)


def test_a_later_snapshot_gives_exactly_its_new_citers_as_events_and_feed_entries(tmp_path: Path,
                                                                                    capsys) -> None:
    older = {pid: format_page(older_snapshot(seed_page(pid), 3)) for pid in SEEDS}
    with serve_site(MapSite(pages=older, template="b")) as site:
        assert cli_refresh(site, tmp_path) == 0
        slug = seed_page(SEEDS[0]).placements[0].slug
        feed = tmp_path / "public" / "feeds" / f"{slug}.atom"
        before = {e.id for e in feedparser.parse(feed.read_bytes()).entries}
        conn = sqlite3.connect(tmp_path / "live.db")
        last = conn.execute("SELECT max(id) FROM events").fetchone()[0]
        site.swap(seed_texts())
        capsys.readouterr()
        make_due(tmp_path / "live.db")
        assert cli_refresh(site, tmp_path) == 0
        assert "2 stored" in capsys.readouterr().out
    new = {(r[0], r[1]) for r in conn.execute(
        "SELECT citing_id, paper_id FROM events WHERE kind = 'citation' AND id > ?", (last,))}
    dropped = {(it.id, pid) for pid in SEEDS for it in seed_page(pid).built_on_by.items[-3:]}
    assert new == dropped
    after = {e.id for e in feedparser.parse(feed.read_bytes()).entries}
    placed = {r[0] for r in conn.execute("SELECT paper_id FROM placements WHERE direction_slug = ?", (slug,))}
    expected = {f"tag:mapwatch,2026:direction/{slug}/citer/{c}" for c, p in dropped if p in placed} - before
    assert expected and after - before == expected


# --- robots.txt -------------------------------------------------------------------------------------

def test_a_page_disallowed_by_robots_txt_is_never_requested(tmp_path: Path, capsys) -> None:
    with serve_site(MapSite(pages=site_texts(), disallow=["/paper/2507.04136/"])) as site:
        assert cli_refresh(site, tmp_path) == 0  # skipped is not failed
        out, err = capsys.readouterr()
        assert "/paper/2507.04136/" not in site.paths_requested()
        assert "1 skipped by robots.txt" in out and "0 failed" in out
        assert err.count("skipped by robots.txt: ") == 1 and f"{site.base}/paper/2507.04136/" in err
        assert "/paper/2412.10400/" in site.paths_requested()
        assert cli_refresh(site, tmp_path) == 0  # reported again, once, on the next tick
        assert capsys.readouterr().err.count("skipped by robots.txt: ") == 1
        assert "/paper/2507.04136/" not in site.paths_requested()
    conn = sqlite3.connect(tmp_path / "live.db")
    assert conn.execute("SELECT has_page FROM papers WHERE id = '2507.04136'").fetchone() == (0,)


def test_crawl_delay_spaces_the_requests_and_absurd_delays_are_capped(db, clock: FakeClock) -> None:
    # 0.4 s: urllib.robotparser reads whole seconds; the delay is rounded up, to 1 s.
    with serve_site(MapSite(pages=seed_texts(), crawl_delay=0.4)) as site:
        report = refresh(db, site.base, clock=clock, options=HttpOptions(budget=2, backoff=0.01))
        assert report.pages_read == 2
        times = site.times[1:]  # after robots.txt: the sitemaps, 2 pages, their directions
        assert site.paths_requested()[1:3] == ["/sitemap.xml", "/sitemap-papers.xml.gz"] and len(times) >= 4
        gaps = [b - a for a, b in itertools.pairwise(times)]
        assert min(gaps) >= 1.0 - 0.02, gaps
    with serve_site(MapSite(pages=seed_texts(), crawl_delay=3600)) as site:
        report = refresh(db, site.base, clock=clock,
                         options=HttpOptions(budget=2, max_crawl_delay=0.05, backoff=0.01))
        assert report.notes == ["robots.txt asks for a Crawl-delay of 3600 s; 0.05 s used"]
        assert report.pages_read == 2
    assert HttpOptions().max_crawl_delay == 60


def test_robots_txt_missing_allows_all_and_robots_txt_down_skips_the_host(tmp_path: Path, capsys) -> None:
    with serve_site(MapSite(pages=seed_texts(), robots_status=404)) as site:
        assert cli_refresh(site, tmp_path) == 0
        assert "2 stored" in capsys.readouterr().out
        assert "/sitemap.xml" not in site.paths_requested()  # no robots.txt, no Sitemap: line
    with serve_site(MapSite(pages=seed_texts(), robots_status=503)) as site:
        assert cli_refresh(site, tmp_path, "--budget", "5", db="down.db") == 1
        out, err = capsys.readouterr()
        assert set(site.paths_requested()) == {"/robots.txt"}  # retried, nothing else asked for
        assert "0 stored" in out and "2 failed (stored data kept)" in out
        assert f"not requested: {site.base}/robots.txt unreadable (HTTP 503 (after 4 attempts))" in err
    conn = sqlite3.connect(tmp_path / "down.db")
    assert conn.execute("SELECT count(*) FROM sources WHERE checked_at IS NOT NULL").fetchone() == (0,)


# --- sitemaps, text alternates ---------------------------------------------------------------------

def test_sitemap_lastmod_puts_changed_pages_first(db, tmp_path: Path) -> None:
    corpus = pagegen.generate(20)
    texts = {p.id: format_page(p) for p in corpus.v1}
    # The day before v2's date (1 Oct): its lastmod is newer than the first check, and a page
    # can be dated a day ahead of its reader (store/pages/page_dates.py).
    clock = FakeClock(datetime(2026, 9, 30, 12, tzinfo=UTC))
    with serve_site(MapSite(pages=texts)) as site:
        first = refresh(db, site.base, clock=clock)
        assert first.stored == 20
        clock.advance(hours=1)
        changed = corpus.v2[-1]  # last in id order: the least recently checked tie goes first otherwise
        assert changed.data_through > clock().date()
        site.swap({**texts, changed.id: format_page(changed)})
        site.requests.clear()
        report = refresh(db, site.base, clock=clock,  # one page besides the direction pages
                             options=HttpOptions(budget=1 + len(site.directions())))
        pages = [p for p in site.paths_requested() if p.startswith("/paper/")]
        assert pages == [f"/paper/{changed.id}/"] and report.stored == 1
    assert newer("2026-10-01", "2026-09-15T12:00:00+00:00") and not newer("2026-09-15", "2026-09-15T12:00:00+00:00")
    assert newer("2026-09-15T13:00:00Z", "2026-09-15T12:00:00+00:00") and newer(None, None)
    assert not newer(None, "2026-09-15T12:00:00+00:00") and not newer("yesterday", "2026-09-15T12:00:00+00:00")


def test_sitemap_reader_rejects_what_is_not_a_sitemap() -> None:
    import gzip

    kind, entries = sitemap_entries(gzip.compress(
        b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc> http://h/paper/1/ </loc>'
        b"</url></urlset>"))
    assert (kind, entries) == ("urlset", [("http://h/paper/1/", None)])
    for bad in (b"<html><body>not here</body></html>", b"<urlset><url><loc>x</loc>", b""):
        with pytest.raises(ValueError, match="not a sitemap"):
            sitemap_entries(bad)


def test_a_declared_text_alternate_is_remembered_and_read_next_tick(tmp_path: Path) -> None:
    older = {pid: format_page(older_snapshot(seed_page(pid), 3)) for pid in SEEDS}
    with serve_site(MapSite(pages=older, offer_text=True)) as site:
        assert cli_refresh(site, tmp_path) == 0
        assert all(f"/paper/{pid}/" in site.paths_requested() for pid in SEEDS)
        conn = sqlite3.connect(tmp_path / "live.db")
        assert dict(conn.execute("SELECT location, text_url FROM sources WHERE text_url IS NOT NULL")) == {
            site.page_url(pid): site.page_url(pid) + "index.md" for pid in SEEDS}
        site.swap(seed_texts())
        site.requests.clear()
        make_due(tmp_path / "live.db")
        assert cli_refresh(site, tmp_path) == 0  # a new process: the alternate was stored
        paths = site.paths_requested()
        assert all(f"/paper/{pid}/index.md" in paths and f"/paper/{pid}/" not in paths for pid in SEEDS)
    expected = ingest_text(seed_texts(), site.base, tmp_path / "text", tmp_path / "text.db")
    got = dump(tmp_path / "live.db")
    for table in COMPARED:
        assert got[table] == expected[table], table


# --- saving as it goes, progress --------------------------------------------------------------------

def test_pages_are_saved_batch_by_batch_while_the_crawl_runs(db, clock: FakeClock) -> None:
    texts = corpus_texts(40)
    seen: list[tuple[int, int, int]] = []

    def progress(done: int, total: int) -> None:
        stored = db.conn.execute("SELECT count(*) FROM snapshots").fetchone()[0]
        seen.append((done, total, stored))

    with serve_site(MapSite(pages=texts)) as site:
        report = refresh(db, site.base, clock=clock, progress=progress, batch_size=5)
    assert report.stored == 40
    # Pages were in the database before the crawl ended, a batch at a time.
    assert any(0 < stored < 40 for _d, _t, stored in seen)
    assert all(stored <= done for done, _t, stored in seen)
    assert [d for d, _t, _s in seen] == list(range(1, len(seen) + 1)) and seen[-1][1] == seen[-1][0]
    assert db.conn.execute("SELECT count(*) FROM sources WHERE checked_at IS NOT NULL").fetchone()[0] == len(seen)


def test_progress_line_on_a_terminal_only() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    t = [0.0]
    tty, pipe = Tty(), io.StringIO()
    bar = CrawlProgress(tty, min_total=10, every=0.5, now=lambda: t[0])
    quiet = CrawlProgress(pipe, min_total=10)
    for done in range(1, 401):
        t[0] = done / 100
        bar(done, 400)
        quiet(done, 400)
    bar.close()
    assert pipe.getvalue() == ""
    lines = tty.getvalue().split("\r")
    assert 5 < len(lines) < 20 and lines[-1].endswith("\n")
    assert lines[-1].startswith("[#########################] 400/400 pages, 100.3 pages/s, 0 left")
    assert render(250, 1000, 10.0) == "[######                   ] 250/1,000 pages, 25.0 pages/s, 750 left (~30 s)"


def test_the_database_knows_where_to_read_a_page_from_after_a_restart(db_path: Path) -> None:
    db = open_db(db_path)
    cols = {r[1] for r in db.conn.execute("PRAGMA table_info(sources)")}
    db.close()
    assert "text_url" in cols


def test_the_report_lists_a_bounded_number_of_rejections_and_counts_them_all(db, clock: FakeClock,
                                                                              tmp_path: Path) -> None:
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.sources.refresh import MAX_LISTED
    from tests.sourceserver import serve_map

    pages = pagegen.generate(MAX_LISTED + 30).v1
    ingest_paths(db, pagegen.write(tmp_path / "v1", pages), clock=clock)
    with serve_map() as srv:
        for p in pages:
            srv.script[p.id] = ["html"]  # a "Just a moment..." page: rejected
        report = refresh(db, srv.base, clock=clock, options=HttpOptions(budget=1000), batch_size=40)
    assert report.rejected_count == report.rejected_total == len(pages)
    assert len(report.rejected) == MAX_LISTED
    assert f"{len(pages)} rejected" in report.summary()
    assert db.conn.execute("SELECT count(*) FROM ingest_errors").fetchone()[0] == len(pages)
    assert db.conn.execute("SELECT rejected FROM ingests ORDER BY id DESC LIMIT 1").fetchone()[0] == len(pages)
