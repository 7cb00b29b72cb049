"""HTML map pages: the same `MapPage`s and rows as the pages' text, read from the site's HTML.

tests/mapsite.py renders the pages' text with a Markdown library inside two different site
templates (navigation, search form, sidebar, footer, scripts, JSON-LD all listing decoy
papers); tests/data/html/ holds golden pages (a body-only layout with `<base>`, a
windows-1252 page) beside the text they must read as.
"""

from __future__ import annotations

import dataclasses
import gzip
import re
import urllib.error
import urllib.request
from datetime import date
from pathlib import Path

import pytest

from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.errors import ParseError
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.html import html_to_page_text, is_html, paper_links, text_alternate_url
from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList
from mapwatch.store.pages.parse import MAX_PAGE_BYTES, parse_document, parse_page
from tests import pagegen
from tests.conftest import DATA, FakeClock
from tests.mapsite import (
    DECOY_DIRECTION,
    DECOY_IDS,
    HOST,
    MapSite,
    render_direction,
    render_login_wall,
    render_not_found,
    render_page,
    render_search,
    seed_texts,
    serve_site,
    texts_of,
)
from tests.seedfacts import assert_seed_facts

TEMPLATES = ("a", "b")
COMPARED_TABLES = ("papers", "citations", "directions", "placements")
SEEDS = sorted(seed_texts())


def fields(page: MapPage) -> dict[str, object]:
    return {f.name: getattr(page, f.name) for f in dataclasses.fields(page)}


def ids_in(page: MapPage) -> set[str]:
    out = {page.id}
    for lst in (page.builds_on, page.built_on_by):
        out |= {item.id for item in (lst.items if lst else ())}
    return out


def tables(db) -> dict[str, list[tuple]]:
    """The compared tables, whole rows, strings with their whitespace collapsed."""
    def norm(v: object) -> object:
        return " ".join(v.split()) if isinstance(v, str) else v
    return {t: [tuple(norm(v) for v in row)
                for row in db.conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()]
            for t in COMPARED_TABLES}


def abstracts(db) -> dict[str, str | None]:
    return dict(db.conn.execute("SELECT id, abstract FROM papers WHERE has_page = 1").fetchall())


# --- one page: HTML and text give the same MapPage -------------------------------------------

@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("paper_id", SEEDS)
def test_html_page_is_the_same_page_as_its_text(paper_id: str, template: str) -> None:
    text = seed_texts()[paper_id]
    html = render_page(text, template).encode()
    assert is_html(html)
    with pytest.raises(ParseError, match="HTML/XML document"):  # the text parser alone still refuses it
        parse_page(html)
    from_html = parse_document(html, url=f"{HOST}/paper/{paper_id}/", content_type="text/html; charset=utf-8")
    assert fields(from_html) == fields(parse_page(text))
    assert not ids_in(from_html) & DECOY_IDS
    assert all(p.url.startswith(f"{HOST}/") for p in from_html.placements)


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("paper_id", SEEDS)
def test_page_served_elsewhere_reads_with_its_own_url(paper_id: str, template: str) -> None:
    """Links resolve against the page's URL; without an HTML line (template b) the page's
    URL is its map_url, which is where template a's HTML line points too."""
    base = "http://127.0.0.1:8765"
    text = seed_texts()[paper_id].replace(HOST, base)
    url = f"{base}/paper/{paper_id}/"
    page = parse_document(render_page(seed_texts()[paper_id], template, base).encode(), url=url)
    assert fields(page) == fields(parse_page(text))
    assert page.map_url == url
    assert page.built_on_by is not None and page.built_on_by.items[0].url.startswith(f"{base}/paper/")


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_self_link_falls_back_to_the_canonical_link_then_to_nothing(template: str) -> None:
    html = render_page(seed_texts()["2412.10400"], template).encode()
    # No URL given (a saved file): the canonical link is the base and, for b, the self link.
    page = parse_document(html)
    assert page.map_url == f"{HOST}/paper/2412.10400/"
    assert page.builds_on is not None and page.builds_on.items[0].url == f"{HOST}/paper/2005.14165/"


@pytest.mark.parametrize("template", TEMPLATES)
def test_generated_pages_read_the_same_over_html(template: str) -> None:
    """Titles with brackets, parentheses, non-ASCII, many pages: pagegen's corpus."""
    corpus = pagegen.generate(30, seed=3)
    for page in corpus.v2:
        text = format_page(page)
        from_html = parse_document(render_page(text, template).encode(), url=f"{HOST}/paper/{page.id}/")
        assert fields(from_html) == fields(parse_page(text)), page.id


HARD_TITLES = [
    "Attention [Is] All You Need (Again)",
    "The $\\mathcal{O}(n^2)$ wall: scaling laws for $x_i$ and $y_j$",
    "a*b*c and __init__ and `code` with <script>alert(1)</script> & friends",
    "Brackets ] then [ and ] inside [1]",
    "Ünïcödé — 日本語のタイトル: ø, ß, é 🚀",
    "Spaces\u2009thin, no-break\u00a0and narrow\u202fno-break",
]


@pytest.mark.parametrize("template", TEMPLATES)
def test_hard_titles_survive_html(template: str) -> None:
    seed = parse_page(seed_texts()["2507.04136"].encode())
    assert seed.builds_on is not None
    items = tuple(dataclasses.replace(it, title=HARD_TITLES[k % len(HARD_TITLES)])
                  for k, it in enumerate(seed.builds_on.items))
    page = dataclasses.replace(seed, title=HARD_TITLES[1], builds_on=dataclasses.replace(seed.builds_on, items=items))
    text = format_page(page)
    from_text = parse_page(text.replace("\u00a0", " "))
    from_html = parse_document(render_page(text, template).encode(), url=f"{HOST}/paper/{page.id}/")
    assert fields(from_html) == fields(from_text)
    assert from_html.title == HARD_TITLES[1]
    # A no-break space reads as a space (HTML's &nbsp; between words); other spaces are kept.
    assert [it.title for it in from_html.builds_on.items[:6]] == [  # type: ignore[union-attr]
        t.replace("\u00a0", " ") for t in HARD_TITLES]


@pytest.mark.parametrize("name", ["body_fallback", "windows1252"])
def test_golden_html_pages(name: str) -> None:
    folder = DATA / "html"
    expected = parse_page((folder / f"{name}.expected.txt").read_bytes())
    got = parse_document((folder / f"{name}.html").read_bytes())
    assert fields(got) == fields(expected)
    assert not ids_in(got) & DECOY_IDS


def test_body_fallback_drops_header_nav_aside_form_footer_script() -> None:
    text = html_to_page_text((DATA / "html" / "body_fallback.html").read_bytes())
    assert text.startswith("# Reinforcement Learning Enhanced LLMs: A Survey\n")  # not the header's h1
    for decoy in DECOY_IDS:
        assert decoy not in text
    assert "Home / LLM reasoning" not in text  # before the title: breadcrumbs are not the page


# --- what the page text looks like ------------------------------------------------------------

def test_text_form_of_template_b() -> None:
    text = html_to_page_text(render_page(seed_texts()["2412.10400"], "b").encode(),
                             "http://127.0.0.1:9/paper/2412.10400/")
    lines = text.splitlines()
    assert lines[0] == "# Reinforcement Learning Enhanced LLMs: A Survey"
    assert "arXiv: https://arxiv.org/abs/2412.10400 · HTML: http://127.0.0.1:9/paper/2412.10400/" in lines
    assert ("- LLM alignment / RLHF / preference optimisation / "
            "[Reward modeling and RLHF](http://127.0.0.1:9/alignment/reward-modeling-and-rlhf/)") in lines
    assert "- [Language Models are Few-Shot Learners](http://127.0.0.1:9/paper/2005.14165/) (2020)" in lines


# --- pages that are not map pages ----------------------------------------------------------------

def _truncated_map_page() -> bytes:
    html = render_page(seed_texts()["2412.10400"], "a")
    cut = html.index("paper/2507.14111/")  # inside "Built on by", as a dropped connection leaves it
    return html[:cut].encode()


NOT_MAP_PAGES = {
    "404.html": (render_not_found().encode(), "HTML page without an arXiv link"),
    "login.html": (render_login_wall("b").encode(), "HTML page without an arXiv link"),
    "search.html": (render_search([("2412.10400", "Reinforcement Learning Enhanced LLMs: A Survey", 2024)]).encode(),
                    "HTML page without an arXiv link"),
    "empty.html": (b"<!doctype html><html><head><title>x</title></head><body>  </body></html>",
                   "HTML page with an empty body"),
    "challenge.html": (b"<!doctype html><html><body><p>Just a moment...</p></body></html>",
                       "HTML page without a title (h1)"),
    "truncated.html": (_truncated_map_page(),
                       "HTML page: truncated: 'Built on by (most cited first, 30 of 71)' states 30 papers, "
                       "the page ends after 1"),
    "direction.html": (render_direction("Reinforcement learning for reasoning",
                                        [("2412.10400", "Reinforcement Learning Enhanced LLMs", 2024)]).encode(),
                       "HTML page without an arXiv link"),
}


@pytest.mark.parametrize("name", sorted(NOT_MAP_PAGES))
def test_html_that_is_not_a_map_page_is_rejected_precisely(name: str) -> None:
    data, reason = NOT_MAP_PAGES[name]
    with pytest.raises(ParseError) as e:
        parse_document(data, url=f"{HOST}/paper/2412.10400/")
    assert e.value.reason == reason
    assert e.value.line == 0


def test_oversized_html_is_rejected_before_parsing() -> None:
    data = render_page(seed_texts()["2412.10400"]).encode()
    big = data.replace(b"<footer>", b"<footer>" + b"<p>x</p>" * (MAX_PAGE_BYTES // 8))
    with pytest.raises(ParseError, match="over 2 MB"):
        parse_document(big)


def test_undecodable_html_is_rejected() -> None:
    data = b"<!doctype html><html><head><meta charset='no-such-charset'></head><body>\xff\xfe<h1>x</h1></body></html>"
    with pytest.raises(ParseError, match=r"not UTF-8 text \(binary data\?\) at byte 72"):
        parse_document(data)


def test_rejected_html_pages_change_nothing_stored(db, tmp_path: Path, clock: FakeClock) -> None:
    text_dir = tmp_path / "text"
    text_dir.mkdir()
    for pid, text in seed_texts().items():
        (text_dir / f"{pid}.txt").write_text(text, encoding="utf-8")
    ingest_paths(db, [text_dir], clock=clock)
    before = tables(db)
    events = db["events"].count
    bad = tmp_path / "bad"
    bad.mkdir()
    for name, (data, _reason) in NOT_MAP_PAGES.items():
        (bad / name).write_bytes(data)
    clock.advance(hours=1)
    report = ingest_paths(db, [bad], clock=clock)
    assert report.stored == 0
    assert sorted((Path(r.location).name, r.reason) for r in report.rejected) == sorted(
        (name, reason) for name, (_data, reason) in NOT_MAP_PAGES.items())
    assert tables(db) == before and db["events"].count == events
    assert db["ingest_errors"].count == len(NOT_MAP_PAGES)


# --- folders of saved pages ---------------------------------------------------------------------

@pytest.mark.parametrize("template", [*TEMPLATES, "mixed"])
def test_folder_of_html_pages_stores_what_the_text_folder_stores(tmp_path: Path, template: str) -> None:
    from mapwatch.store.database.db import open_db

    corpus = pagegen.generate(25, seed=5)
    texts = {**seed_texts(), **texts_of(corpus.v1)}
    text_dir, html_dir = tmp_path / "text", tmp_path / "html"
    text_dir.mkdir()
    html_dir.mkdir()
    for k, (pid, text) in enumerate(sorted(texts.items())):
        (text_dir / f"{pid}.txt").write_text(text, encoding="utf-8")
        tpl = template if template != "mixed" else TEMPLATES[k % 2]
        suffix = ".htm" if k % 3 == 0 else ".html"
        (html_dir / f"{pid}{suffix}").write_text(render_page(text, tpl), encoding="utf-8")
    results = []
    for name, folder in (("text", text_dir), ("html", html_dir)):
        db = open_db(tmp_path / f"{name}.db")
        report = ingest_paths(db, [folder], clock=FakeClock())
        assert (report.stored, report.rejected) == (len(texts), [])
        results.append((tables(db), abstracts(db)))
        assert not {r[0] for r in db.conn.execute("SELECT id FROM papers")} & DECOY_IDS
        assert DECOY_DIRECTION.strip("/") not in {r[0] for r in db.conn.execute("SELECT slug FROM directions")}
        db.close()
    (text_tables, text_abstracts), (html_tables, html_abstracts) = results
    for table in COMPARED_TABLES:
        assert html_tables[table] == text_tables[table], table
    assert html_abstracts == text_abstracts


def test_seed_facts_hold_for_a_folder_of_html_pages(db, tmp_path: Path, clock: FakeClock) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    for i, (pid, text) in enumerate(sorted(seed_texts().items())):
        (folder / f"{pid}.html").write_text(render_page(text, TEMPLATES[i % 2]), encoding="utf-8")
    (folder / "README.html").write_text("<!doctype html><h1>not a page</h1>")  # README files are skipped
    report = ingest_paths(db, [folder], clock=clock)
    assert (report.pages_read, report.stored, report.rejected) == (2, 2, [])
    assert report.saved.new_citations == 111
    assert_seed_facts(db)
    # Unchanged files are not read again, as for text.
    again = ingest_paths(db, [folder], clock=clock)
    assert (again.skipped, again.stored) == (2, 0)


def test_a_txt_file_holding_html_is_still_refused_as_text(db, tmp_path: Path, clock: FakeClock) -> None:
    """Text page files are text: an HTML document saved as .txt is reported as before."""
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "2412.10400.txt").write_text(render_page(seed_texts()["2412.10400"]), encoding="utf-8")
    report = ingest_paths(db, [folder], clock=clock)
    assert report.stored == 0
    assert [(r.line, r.reason) for r in report.rejected] == [(1, "an HTML/XML document, not a map page")]


# --- hostile markup -------------------------------------------------------------------------------

def test_javascript_link_in_a_paper_list_rejects_the_page() -> None:
    html = render_page(seed_texts()["2412.10400"], "a").replace(
        'href="https://mlsanity.com/paper/2005.14165/"', 'href="javascript:fetch(\'/steal\')"', 1)
    with pytest.raises(ParseError) as e:
        parse_document(html.encode(), url=f"{HOST}/paper/2412.10400/")
    assert e.value.reason == ("HTML page: list item is not a paper link: "
                              "'- Language Models are Few-Shot Learners (2020)'")


@pytest.mark.parametrize("scheme", ["javascript:alert(1)", "JaVaScRiPt:alert(1)", " javascript:x", "data:text/html,x",
                                    "vbscript:x", "mailto:a@b.c"])
def test_non_http_links_in_prose_keep_their_text_and_lose_their_target(scheme: str) -> None:
    html = render_page(seed_texts()["2412.10400"], "a").replace(
        "<h2>Abstract (arXiv)</h2>\n<p>", f'<h2>Abstract (arXiv)</h2>\n<p><a href="{scheme}">Click</a> ', 1)
    text = html_to_page_text(html.encode(), f"{HOST}/paper/2412.10400/")
    page = parse_document(html.encode(), url=f"{HOST}/paper/2412.10400/")
    assert page.abstract is not None and page.abstract.startswith("Click ")
    assert "[Click]" not in text and scheme.strip() not in text


def test_javascript_arxiv_anchor_is_no_arxiv_link() -> None:
    html = render_page(seed_texts()["2412.10400"], "b").replace(
        'href="https://arxiv.org/abs/2412.10400"', 'href="javascript:void(0)"')
    with pytest.raises(ParseError, match=r"^HTML page without an arXiv link$"):
        parse_document(html.encode(), url=f"{HOST}/paper/2412.10400/")


def test_deeply_nested_markup_neither_crashes_nor_changes_the_page() -> None:
    text = seed_texts()["2412.10400"]
    html = render_page(text, "a")
    at = html.index('<article class="paper">') + len('<article class="paper">')
    end = html.index("</article>")
    # Up to the nesting limit (store.pages.html_bounds, 512 elements open at once) the page is read
    # as it is; deeper, it is rejected before any tree is built (issue 21, item 3).
    nested = html[:at] + "<div><span>" * 250 + html[at:end] + "</span></div>" * 250 + html[end:]
    assert fields(parse_document(nested.encode(), url=f"{HOST}/paper/2412.10400/")) == fields(parse_page(text))
    deeper = html[:at] + "<div><span>" * 5000 + html[at:end] + "</span></div>" * 5000 + html[end:]
    with pytest.raises(ParseError, match="HTML page nested deeper than 512 elements"):
        parse_document(deeper.encode(), url=f"{HOST}/paper/2412.10400/")


def test_entities_comments_and_cdata_in_content() -> None:
    text = seed_texts()["2412.10400"]
    html = render_page(text, "a").replace(
        "<h2>Key facts</h2>", "<!-- <li><a href='/paper/2301.99991/'>x</a> (2023)</li> --><h2>Key&#32;facts</h2>", 1)
    assert fields(parse_document(html.encode(), url=f"{HOST}/paper/2412.10400/")) == fields(parse_page(text))


# --- sniffing, alternates, direction pages --------------------------------------------------------

@pytest.mark.parametrize(("data", "content_type", "expected"), [
    (b"<!DOCTYPE html><html></html>", None, True),
    (b"\xef\xbb\xbf \n\t<!doctype HTML><p>x", None, True),
    (b"  <HTML lang=en><body>", None, True),
    (b"# A title\n\narXiv: https://arxiv.org/abs/2412.10400\n", None, False),
    (b"# A title", "text/html; charset=utf-8", True),
    (b"<p>fragment</p>", "application/xhtml+xml", True),
    (b"<!doctype html>", "text/plain", True),  # the bytes say HTML whatever the header says
    (b"<?xml version='1.0'?><feed/>", "application/atom+xml", False),
    (b"<?xml version='1.0' encoding='utf-8'?>\n<!DOCTYPE html PUBLIC '-//W3C//DTD XHTML 1.0//EN'>", None, True),
    (b"<!-- generated 2026-11-30 -->\n<!-- cache: hit -->\n<html>", None, True),
    (b"<!-- an unterminated comment <html>", None, False),
    (b"", None, False),
])
def test_is_html(data: bytes, content_type: str | None, expected: bool) -> None:
    assert is_html(data, content_type) is expected


def test_text_alternate_url() -> None:
    text = seed_texts()["2412.10400"]
    url = f"{HOST}/paper/2412.10400/"
    assert text_alternate_url(render_page(text, "a", offer_text=True).encode(), url) == f"{url}index.md"
    assert text_alternate_url(render_page(text, "b").encode(), url) is None
    head = (b'<!doctype html><html><head>'
            b'<link rel="alternate" type="application/atom+xml" href="/feed.atom">'
            b'<link rel="Alternate nofollow" type="text/plain; charset=utf-8" href="../2412.10400.txt">'
            b"</head><body></body></html>")
    assert text_alternate_url(head, url) == f"{HOST}/paper/2412.10400.txt"
    js = b'<!doctype html><html><head><link rel="alternate" type="text/markdown" href="javascript:x"></head></html>'
    assert text_alternate_url(js, url) is None


@pytest.mark.parametrize("template", TEMPLATES)
def test_paper_links_of_a_direction_page(template: str) -> None:
    papers = [("2412.10400", "Reinforcement Learning Enhanced LLMs: A Survey", 2024),
              ("2507.04136", "A Technical Survey", 2025), ("2412.10400", "again", 2024)]
    base = "http://127.0.0.1:9"
    html = render_direction("Reinforcement learning for reasoning", papers, template, base).encode()
    url = f"{base}/lr/reinforcement-learning-for-reasoning/"
    assert paper_links(html, url) == [f"{base}/paper/2412.10400/", f"{base}/paper/2507.04136/"]


def test_paper_links_of_a_paper_page_are_its_lists_only() -> None:
    html = render_page(seed_texts()["2412.10400"], "b").encode()
    page = parse_page(seed_texts()["2412.10400"].encode())
    links = paper_links(html, f"{HOST}/paper/2412.10400/")
    assert links == [it.url for lst in (page.builds_on, page.built_on_by) for it in lst.items]  # type: ignore[union-attr]


# --- the site fixture over HTTP ---------------------------------------------------------------------

def get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


@pytest.mark.parametrize("template", TEMPLATES)
def test_site_serves_html_pages_that_read_as_the_text(template: str) -> None:
    with serve_site(MapSite(pages=seed_texts(), template=template)) as site:
        for pid, text in seed_texts().items():
            status, headers, body = get(site.page_url(pid), {"Accept": "text/markdown, text/plain;q=0.9"})
            assert status == 200 and headers["Content-Type"] == "text/html; charset=utf-8"
            page = parse_document(body, url=site.page_url(pid), content_type=headers["Content-Type"])
            assert fields(page) == fields(parse_page(text.replace(HOST, site.base)))
            assert get(site.page_url(pid) + "index.md")[0] == 404  # the text is never offered
        assert site.paths_requested()[0] == f"/paper/{SEEDS[0]}/"
        assert site.requests[0][1]["Accept"] == "text/markdown, text/plain;q=0.9"


def test_site_robots_sitemaps_directions_etags_and_snapshots() -> None:
    site = MapSite(pages=seed_texts(), disallow=["/paper/2507.04136/"], crawl_delay=0.5, offer_text=True)
    with serve_site(site):
        status, _h, robots = get(f"{site.base}/robots.txt")
        assert status == 200 and robots.decode().splitlines() == [
            "User-agent: *", "Disallow: /paper/2507.04136/", "Crawl-delay: 0.5", f"Sitemap: {site.base}/sitemap.xml"]

        _s, _h, index = get(f"{site.base}/sitemap.xml")
        locs = re.findall(r"<loc>([^<]+)</loc>", index.decode())
        assert locs == [f"{site.base}/sitemap-papers.xml.gz"] and "<lastmod>2026-10-14</lastmod>" in index.decode()
        _s, _h, gz = get(locs[0])
        urlset = gzip.decompress(gz).decode()
        assert re.findall(r"<loc>([^<]+)</loc><lastmod>([^<]+)</lastmod>", urlset) == [
            (site.page_url(pid), "2026-10-14") for pid in SEEDS]

        status, _h, direction = get(f"{site.base}/lr/reinforcement-learning-for-reasoning/")
        assert status == 200
        assert paper_links(direction, f"{site.base}/lr/reinforcement-learning-for-reasoning/") == [
            site.page_url(pid) for pid in SEEDS]

        status, headers, body = get(site.page_url("2412.10400"))
        assert status == 200
        assert get(site.page_url("2412.10400"), {"If-None-Match": headers["ETag"]})[0] == 304
        alt = text_alternate_url(body, site.page_url("2412.10400"))
        status, headers, md = get(alt)  # type: ignore[arg-type]
        assert status == 200 and headers["Content-Type"].startswith("text/markdown")
        assert parse_page(md).map_url == site.page_url("2412.10400")

        status, _h, missing = get(f"{site.base}/paper/9999.99999/")
        assert status == 404
        with pytest.raises(ParseError, match="without an arXiv link"):
            parse_document(missing, url=f"{site.base}/paper/9999.99999/")

        # A later snapshot: the page changes (new ETag, later lastmod), the old ETag no longer matches.
        newer = parse_page(seed_texts()["2412.10400"])
        assert newer.built_on_by is not None
        extra = ListedPaper(id="2611.00001", title="A New Citer", year=2026, position=31,
                            url=f"{HOST}/paper/2611.00001/")
        newer = dataclasses.replace(newer, cited_by=72, data_through=date(2026, 11, 12),
                                    built_on_by=PaperList(shown=31, total=72, items=(*newer.built_on_by.items, extra)))
        site.swap({**seed_texts(), "2412.10400": format_page(newer)})
        status, _h2, body2 = get(site.page_url("2412.10400"), {"If-None-Match": headers.get("ETag", "")})
        assert status == 200
        got = parse_document(body2, url=site.page_url("2412.10400"))
        assert got.cited_by == 72 and got.built_on_by.items[-1].url == f"{site.base}/paper/2611.00001/"  # type: ignore[union-attr]
        urlset = gzip.decompress(get(f"{site.base}/sitemap-papers.xml.gz")[2]).decode()
        assert f"<loc>{site.page_url('2412.10400')}</loc><lastmod>2026-11-12</lastmod>" in urlset
        assert "/robots.txt" in site.paths_requested()


def test_saved_page_without_base_or_canonical_uses_the_host_its_links_name() -> None:
    text = seed_texts()["2412.10400"].replace(" · HTML: https://mlsanity.com/paper/2412.10400/", "")
    html = render_page(text, "a").replace('<link rel="canonical" href="https://mlsanity.com/paper/2412.10400/">', "")
    assert "canonical" not in html and "HTML:" not in html
    page = parse_document(html.encode(), url="file:///saved/2412.10400.html")
    assert page.map_url == f"{HOST}/paper/2412.10400/"
    assert fields(page) == fields(parse_page(seed_texts()["2412.10400"]))


def test_saved_page_with_relative_links_and_no_base_is_rejected_with_its_item() -> None:
    html = render_page(seed_texts()["2412.10400"], "b").replace(
        '<link rel="canonical" href="https://mlsanity.com/paper/2412.10400/">', "")
    with pytest.raises(ParseError) as e:
        parse_document(html.encode(), url="file:///saved/2412.10400.html")
    assert e.value.reason == ("HTML page: list item is not a paper link: "
                              "'- [Language Models are Few-Shot Learners](../2005.14165/) (2020)'")


def test_a_base_element_moves_links_but_not_the_page_itself() -> None:
    html = render_page(seed_texts()["2412.10400"], "b").replace(
        "<head>", '<head><base href="https://mirror.example/paper/2412.10400/">', 1)
    url = "http://127.0.0.1:9/paper/2412.10400/"
    page = parse_document(html.encode(), url=url)
    assert page.map_url == url  # the page's own URL, not where <base> points
    assert page.builds_on is not None and page.builds_on.items[0].url == "https://mirror.example/paper/2005.14165/"


def test_title_and_arxiv_line_inside_the_articles_own_header() -> None:
    """`<header>` inside the article holds the page's title: kept; a self link around the
    title is the title's text; the arXiv link labelled by its id."""
    text = seed_texts()["2507.04136"]
    html = render_page(text, "b")
    h1 = "<h1>A Technical Survey of Reinforcement Learning Techniques for Large Language Models</h1>"
    arxiv = '<p><a href="https://arxiv.org/abs/2507.04136">arXiv</a></p>'
    assert h1 in html and arxiv in html
    html = html.replace(h1 + "\n" + arxiv, (
        '<article><header><h1><a href="./">A Technical Survey of Reinforcement Learning Techniques for '
        'Large Language Models</a></h1><div class="meta">First posted 5 Jul 2025 · '
        '<a href="https://arxiv.org/abs/2507.04136v1">arXiv:2507.04136</a></div></header>'))
    html = html.replace("</div></div>\n<div hidden>", "</article></div></div>\n<div hidden>", 1)
    url = f"{HOST}/paper/2507.04136/"
    page = parse_document(html.encode(), url=url)
    expected = parse_page(text)
    assert fields(page) == {**fields(expected), "arxiv_url": "https://arxiv.org/abs/2507.04136v1"}
