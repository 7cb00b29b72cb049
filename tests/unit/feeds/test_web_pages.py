"""The web pages `publish` writes: valid, escaped, the same entries as the feeds, stable bytes,
rewritten only when changed, and served with directory URLs, ETags and 304s."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

import aiohttp
import feedparser
import pytest

from mapwatch.feeds import pages
from mapwatch.feeds.publish import publish
from mapwatch.feeds.serving.server import start_server
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.model import ListedPaper, PaperList
from mapwatch.store.questions import feed_queries
from mapwatch.store.questions.feed_queries import Direction
from mapwatch.store.questions.types import NewCiter, PaperRef
from tests.conftest import FakeClock, seed_page, write_page
from tests.feedcheck import snapshot
from tests.htmlcheck import assert_good_page, assert_nothing_injected, headings, html_files, parse_strict, text_of

BASE = "http://feeds.test:8080"
RL = "lr/reinforcement-learning-for-reasoning"
RL_PAGE = f"directions/{RL}/index.html"


def entries(root) -> list[dict[str, str]]:
    return [{"id": li.get("data-id"), "first_seen": li.get("data-first-seen")}
            for li in root.iter("li") if "entry" in (li.get("class") or "").split()]


def by_class(root, tag: str, cls: str) -> list:
    return [el for el in root.iter(tag) if cls in (el.get("class") or "").split()]


@pytest.fixture
def site(db, clock, tmp_path: Path) -> Path:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, clock=clock, papers="all")
    return out


def test_every_page_is_valid_html_with_headings_in_order_and_named_links(site: Path) -> None:
    files = html_files(site)
    rels = {str(f.relative_to(site)) for f in files}
    assert {"index.html", RL_PAGE, "directions/alignment/reward-modeling-and-rlhf/index.html",
            "papers/2412.10400/index.html", "papers/2507.04136/index.html"} <= rels
    # A page per paper feed, no more, no fewer.
    papers = site / "feeds/papers"
    feeds = {str(f.relative_to(papers)).removesuffix(".atom") for f in papers.rglob("*.atom")}
    assert {r.removeprefix("papers/").removesuffix("/index.html") for r in rels if r.startswith("papers/")} == feeds
    for f in files:
        root = assert_good_page(f.read_bytes(), str(f))
        assert_nothing_injected(root, str(f))
    css = (site / "style.css").read_text()
    assert "prefers-color-scheme: dark" in css and "@import" not in css and "://" not in css
    assert "url(" not in css  # no font or image from anywhere


def test_direction_page_lists_its_feed_entries_newest_first_with_a_heading_per_day(db, site: Path) -> None:
    root = parse_strict((site / RL_PAGE).read_bytes())
    feed = feedparser.parse((site / f"feeds/{RL}.atom").read_bytes())
    shown = entries(root)
    assert [e["id"] for e in shown] == [e.id.rsplit("/", 1)[1] for e in feed.entries]  # the same, same order
    assert [e["first_seen"] for e in shown] == sorted((e["first_seen"] for e in shown), reverse=True)
    levels = headings(root)
    assert levels[0] == (1, "Reinforcement learning for reasoning")
    assert (3, "1 November 2026") in levels  # the seeds were stored on the clock's first day
    assert [t for lvl, t in levels if lvl == 2] == ["Subscribe", "Newest citing papers", "Most cited papers",
                                                    "PageRank leaders"]
    survey = next(li for li in root.iter("li") if li.get("data-id") == "2509.02547")
    links = {text_of(a): a.get("href") for a in survey.iter("a")}
    assert links["The Landscape of Agentic Reinforcement Learning for LLMs: A Survey"] == \
        "https://mlsanity.com/paper/2509.02547/"
    assert links["arXiv 2509.02547"] == "https://arxiv.org/abs/2509.02547"
    assert links["Reinforcement Learning Enhanced LLMs: A Survey"] == "../../../papers/2412.10400/"  # cites both
    assert "A Technical Survey of Reinforcement Learning Techniques for Large Language Models" in links
    # Read at the seeds' first read: known then, not new (docs/feeds.md, "What new means").
    assert "(2025)" in text_of(survey) and "known at first read 2026-11-01 12:00 UTC" in text_of(survey)
    # Subscribe: a readonly field and a plain link, both the feed; OPML; autodiscovery.
    url = f"{BASE}/feeds/{RL}.atom"
    field = next(i for i in root.iter("input") if i.get("id") == "feed-url")
    assert field.get("value") == url and field.get("readonly") is not None
    assert by_class(root, "a", "feed-link")[0].get("href") == url
    assert any(a.get("href") == f"{BASE}/feeds.opml" for a in root.iter("a"))
    assert by_class(root, "button", "copy")[0].get("hidden") is not None  # shown by the script only
    alt = [lk for lk in root.iter("link") if lk.get("rel") == "alternate"]
    assert [(lk.get("type"), lk.get("href")) for lk in alt] == [("application/atom+xml", url)]
    # Most cited: the placed papers by their stated count.
    most = by_class(root, "ol", "papers")[0]
    assert [text_of(a) for a in most.iter("a")][:2] == ["Reinforcement Learning Enhanced LLMs: A Survey",
                                                        "A Technical Survey of Reinforcement Learning Techniques "
                                                        "for Large Language Models"]
    # The feed points back at the page.
    assert feed.feed.link == f"{BASE}/directions/{RL}/"


def test_pagerank_leaders_once_computed(db, clock, site: Path) -> None:
    from mapwatch.store.questions.graph import compute_direction_ranks

    assert "Not computed yet" in (site / RL_PAGE).read_text()
    compute_direction_ranks(db, clock())
    report = publish(db, site, BASE, clock=clock, full=True, papers="all")
    assert RL_PAGE in report.written
    root = parse_strict((site / RL_PAGE).read_bytes())
    ranks = by_class(root, "ol", "papers")[1]
    assert [text_of(s) for s in by_class(ranks, "span", "rank")] == ["#1", "#2"]


def test_paper_page_facts_citers_and_chart_after_two_snapshots(db, clock, tmp_path: Path, make_older_seeds) -> None:
    out = tmp_path / "public"
    ingest_paths(db, [make_older_seeds(5)], clock=clock)
    publish(db, out, BASE, clock=clock, papers="all")
    assert not (out / "papers/2412.10400/cited-by.png").exists()
    assert "Cited-by count" not in (out / "papers/2412.10400/index.html").read_text()
    clock.advance(days=2)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    report = publish(db, out, BASE, clock=clock, papers="all")
    assert {"papers/2412.10400/cited-by.png", "papers/2412.10400/index.html", RL_PAGE} <= set(report.written)
    png = (out / "papers/2412.10400/cited-by.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    root = assert_good_page((out / "papers/2412.10400/index.html").read_bytes())
    facts = {text_of(dt): text_of(dd) for dt, dd in zip(root.iter("dt"), root.iter("dd"), strict=True)}
    page = seed_page("2412.10400")
    assert facts["Cited by"] == f"{page.cited_by} papers in the map (data through {page.data_through.isoformat()})"
    assert facts["Directions"] == "Reinforcement learning for reasoning, Reward modeling and RLHF"
    assert next(root.iter("img")).get("src") == "cited-by.png"
    feed = feedparser.parse((out / "feeds/papers/2412.10400.atom").read_bytes())
    shown = [e["id"] for e in entries(root) if e["id"]]
    assert shown == [e.id.rsplit("/", 1)[1] for e in feed.entries if "/citer/" in e.id]
    new = {it.id for it in page.built_on_by.items[-5:]}
    assert set(shown[:5]) == new  # the five new citers first, under the later day
    days = [t for lvl, t in headings(root) if lvl == 3]
    # The citers known at the first read under its day, but the technical survey (its page is stored)
    # under the day it was first posted on arXiv (docs/feeds.md, "What new means").
    assert days == ["3 November 2026", "1 November 2026", "5 July 2025"]
    # The same chart again: same bytes, nothing rewritten; not even drawn when its file shows the same points.
    assert publish(db, out, BASE, clock=clock, full=True, papers="all").written == []
    chart = out / "papers/2412.10400/cited-by.png"
    mtime = chart.stat().st_mtime_ns
    moved = publish(db, out, "https://elsewhere.example", clock=clock, papers="all")
    assert moved.charts == 0 and "papers/2412.10400/index.html" in moved.written
    assert chart.stat().st_mtime_ns == mtime
    chart.write_bytes(png[:100])  # a damaged file is drawn again
    again = publish(db, out, BASE, clock=clock, full=True, papers="all")
    assert again.charts >= 1 and chart.read_bytes() == png


def test_chart_drawing_is_time_limited_and_goes_on_at_the_next_publish(db, clock, tmp_path: Path,
                                                                       make_older_seeds) -> None:
    out = tmp_path / "public"
    ingest_paths(db, [make_older_seeds(5)], clock=clock)
    clock.advance(days=2)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    charted = feed_queries.papers_with_history(db)
    assert charted == ["2412.10400", "2507.04136"]
    first = publish(db, out, BASE, clock=clock, chart_seconds=0, papers="all")  # no time for a chart: none drawn
    assert first.charts == 0 and first.charts_pending == 2
    page = out / "papers/2412.10400/index.html"
    assert "cited-by.png" not in page.read_text()  # no image that is not there
    second = publish(db, out, BASE, clock=clock, papers="all")  # nothing changed, but the charts are due
    assert second.charts == 2 and second.charts_pending == 0
    assert {f"papers/{pid}/cited-by.png" for pid in charted} | {f"papers/{pid}/index.html" for pid in charted} \
        == set(second.written)
    assert "cited-by.png" in page.read_text()
    assert publish(db, out, BASE, clock=clock, papers="all").written == []


def test_old_style_ids_keep_their_slash(db, clock, tmp_path: Path) -> None:
    page = seed_page("2412.10400")
    old = ListedPaper(id="hep-th/9901001", title="An old-style paper", year=1999,
                      position=len(page.built_on_by.items) + 1, url="https://mlsanity.com/paper/hep-th/9901001/")
    lst = page.built_on_by
    refs = PaperList(shown=1, total=1, items=(dataclasses.replace(old, position=1),))
    page = dataclasses.replace(page, builds_on=refs)
    write_page(tmp_path / "pages", page)
    ingest_paths(db, [tmp_path / "pages"], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, clock=clock, papers="all")
    assert lst.total > 0
    target = out / "papers/hep-th/9901001/index.html"
    root = assert_good_page(target.read_bytes())
    assert next(i for i in root.iter("input") if i.get("id") == "feed-url").get("value") == \
        f"{BASE}/feeds/papers/hep-th/9901001.atom"
    assert next(lk for lk in root.iter("link") if lk.get("rel") == "stylesheet").get("href") == "../../../style.css"


def test_republishing_keeps_bytes_and_rewrites_only_changed_pages(db, clock, tmp_path: Path,
                                                                   make_older_seeds) -> None:
    out = tmp_path / "public"
    ingest_paths(db, [make_older_seeds(3)], clock=clock)
    publish(db, out, BASE, clock=clock, papers="all")
    before = snapshot(out)
    assert publish(db, out, BASE, clock=clock, papers="all").written == []
    assert publish(db, out, BASE, clock=clock, full=True, papers="all").written == []  # rebuilt: the same bytes
    assert snapshot(out) == before
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    report = publish(db, out, BASE, clock=clock, papers="all")
    written = set(report.written)
    html = {w for w in written if w.endswith(".html")}
    assert {RL_PAGE, "papers/2412.10400/index.html", "papers/2507.04136/index.html", "index.html"} <= html
    untouched = {k for k, v in before.items() if k.endswith(".html")} - html
    assert untouched and all(snapshot(out)[k] == before[k] for k in untouched)  # same bytes, same mtime
    assert "style.css" not in written and "site.js" not in written
    assert not list(out.rglob(".tmp-*"))


def test_index_counts_from_the_clock_grouped_by_area(db, clock, tmp_path: Path, make_older_seeds) -> None:
    out = tmp_path / "public"
    ingest_paths(db, [make_older_seeds(3)], clock=clock)  # 2026-11-01
    clock.advance(days=10)
    ingest_paths(db, [SEEDS_DIR], clock=clock)  # 2026-11-11: the new citers
    publish(db, out, BASE, clock=clock, papers="all")
    root = assert_good_page((out / "index.html").read_bytes())
    assert [t for lvl, t in headings(root) if lvl == 2] == ["LLM alignment", "LLM reasoning"]
    rl = next(li for li in by_class(root, "li", "direction") if RL in (li.get("data-search") or ""))
    total = len(feed_queries.direction_citers(db, RL))
    new = total - len({c.citer.id for c in feed_queries.direction_citers(db, RL)
                       if c.first_seen.startswith("2026-11-01")})
    assert new == 6  # the first import's citers were known at its first read: not new in 30 days either
    assert text_of(by_class(rl, "span", "n7")[0]) == f"{new} new in 7 days"
    assert text_of(by_class(rl, "span", "n30")[0]) == f"{new} in 30 days"
    assert "newest 2026-11-11" in text_of(rl)
    assert next(a for a in rl.iter("a")).get("href") == f"directions/{RL}/"
    assert by_class(root, "form", "filter")[0].get("hidden") is not None  # the script shows it
    clock.advance(days=25)  # 36 days after the first import, 25 after the second
    report = publish(db, out, BASE, clock=clock, papers="all")
    assert report.written == ["index.html"]  # only the counts moved
    rl = next(li for li in by_class(parse_strict((out / "index.html").read_bytes()), "li", "direction")
              if RL in (li.get("data-search") or ""))
    assert text_of(by_class(rl, "span", "n7")[0]) == "0 new in 7 days"
    assert text_of(by_class(rl, "span", "n30")[0]) == f"{new} in 30 days"


HOSTILE = '<script>alert(1)</script> "><img src=x onerror=alert(2)> \x01 javascript:alert(3)'


def test_hostile_titles_names_and_urls_inject_nothing(db, clock, tmp_path: Path) -> None:
    page = seed_page("2412.10400")
    lst = page.built_on_by
    citer = ListedPaper(id="2611.99999", title=HOSTILE, year=2026, position=len(lst.items) + 1,
                        url="https://mlsanity.com/paper/2611.99999/")
    first = page.placements[0]
    name = f"Reasoning {HOSTILE}"
    placed = dataclasses.replace(first, direction=name, breadcrumb=f"{first.area} {HOSTILE} / {name}")
    page = dataclasses.replace(page, title=f"Survey {HOSTILE}", abstract=HOSTILE, direction=name,
                               placements=(placed, *page.placements[1:]),
                               built_on_by=PaperList(shown=lst.shown + 1, total=lst.total + 1,
                                                     items=(*lst.items, citer)))
    write_page(tmp_path / "pages", page)
    ingest_paths(db, [tmp_path / "pages"], clock=clock)
    # Stored links that are not http(s), as a tampered database or a future source could hold.
    db.conn.execute("UPDATE papers SET url = ' javascript:alert(4)', arxiv_url = 'java\tscript:alert(5)'"
                    " WHERE id = '2611.99999'")
    db.conn.execute("UPDATE directions SET url = 'JavaScript:alert(6)'")
    db.conn.execute("UPDATE papers SET url = 'data:text/html,<script>alert(7)</script>' WHERE id = '2412.10400'")
    db.conn.commit()
    out = tmp_path / "public"
    publish(db, out, BASE, clock=clock, papers="all")
    seen = 0
    for f in html_files(out):
        data = f.read_bytes()
        root = assert_good_page(data, str(f))
        assert_nothing_injected(root, str(f))
        assert b"<script>alert" not in data and b"<img src=x" not in data and b"\x01" not in data
        assert b"javascript:" not in data.lower().replace(b"javascript:alert(3)", b"")  # only as escaped text
        if " ".join(HOSTILE.replace("\x01", "").split()) in text_of(root):
            seen += 1
    assert seen >= 3  # the hostile text is shown, as text, on the index, direction and paper pages
    root = parse_strict((out / RL_PAGE).read_bytes())
    li = next(li for li in root.iter("li") if li.get("data-id") == "2611.99999")
    assert not [a for a in li.iter("a") if "title" in (a.get("class") or "")]  # no link rather than a bad one


@pytest.mark.parametrize(("url", "expected"), [
    ("https://arxiv.org/abs/2412.10400", "https://arxiv.org/abs/2412.10400"),
    (" http://map.example/p/1/\n", "http://map.example/p/1/"),
    ("javascript:alert(1)", None), (" JaVaScRiPt:alert(1)", None), ("java\nscript:alert(1)", None),
    ("\x00javascript:alert(1)", None), ("data:text/html,x", None), ("vbscript:x", None), ("//evil.example/", None),
    ("/relative", None), ("https:///nohost", None), ("http://[::1", None), ("", None), (None, None),
])
def test_external_href_allows_http_and_https_only(url: str | None, expected: str | None) -> None:
    assert pages.external_href(url) == expected


def test_builders_are_pure_and_stable() -> None:
    d = Direction("a/b", "B <b>", "A", "A / B <b>", "https://map.example/a/b/", 1, "2026-01-01T00:00:00+00:00")
    ref = PaperRef("2401.00001", "T", 2024, "https://map.example/paper/2401.00001/", "https://arxiv.org/abs/2401.00001")
    citers = [NewCiter(ref, "2026-01-02T03:04:05+00:00", 1, (ref,))]
    one = pages.direction_page(d, citers, (), (), BASE, lambda _: False)
    assert one == pages.direction_page(d, citers, (), (), BASE, lambda _: False)
    assert b"B &lt;b&gt;" in one and b"<b>" not in one
    assert_good_page(one)
    now = FakeClock().now
    assert pages.activity_window(now) == ((now - timedelta(days=7)).isoformat(), (now - timedelta(days=30)).isoformat())


async def test_served_pages_directory_urls_redirects_etags_and_types(site: Path) -> None:
    runner, port = await start_server(site, "127.0.0.1", 0)
    base = f"http://127.0.0.1:{port}"
    try:
        async with aiohttp.ClientSession() as s:
            for path, ctype, rel in [(f"/directions/{RL}/", "text/html", RL_PAGE),
                                     ("/papers/2412.10400/", "text/html", "papers/2412.10400/index.html"),
                                     ("/style.css", "text/css", "style.css"),
                                     ("/site.js", "text/javascript", "site.js"),
                                     ("/", "text/html", "index.html")]:
                async with s.get(base + path) as r:
                    assert r.status == 200 and r.content_type == ctype, path
                    assert await r.read() == (site / rel).read_bytes()
                    etag = r.headers["ETag"]
                async with s.get(base + path, headers={"If-None-Match": etag}) as r:
                    assert r.status == 304, path
            for path in (f"/directions/{RL}", "/papers/2412.10400"):
                async with s.get(base + path, allow_redirects=False) as r:
                    assert r.status == 301 and r.headers["Location"] == path + "/"
            for path in ("/directions", "/directions/lr", "/papers/nope", "/feeds",
                         "//evil.example", "/papers/2412.10400/index.html/"):
                async with s.get(base + path, allow_redirects=False) as r:
                    assert r.status == 404, path
    finally:
        await runner.cleanup()


def test_pages_of_a_real_database_file_reopen_the_same(db_path: Path, site: Path, clock) -> None:
    """A second process (a fresh connection) publishing the same data writes nothing."""
    other = open_db(db_path)
    try:
        assert publish(other, site, BASE, clock=clock, full=True, papers="all").written == []
    finally:
        other.close()
