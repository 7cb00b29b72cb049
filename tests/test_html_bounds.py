"""Bounded work per HTML page (issue 21, item 3; DESIGN section 9, "bounded nesting").

An HTML page nested deeper than 512 elements, or holding more than 60,000 elements and
comments (the formatting elements the parser re-creates included), is rejected with its
reason before any tree is built (store.pages.html_bounds), in `mapwatch ingest` and in a refresh
over HTTP, and the other pages are stored. The pre-scan's model of the tree is checked
against the parser itself (selectolax/lexbor) on random tag soup: it never finds a page
shallower than the parser builds it. The time a page costs is measured in bench/html_depth.py.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from mapwatch.store.errors import ParseError
from mapwatch.store.pages.html import paper_links
from mapwatch.store.pages.html_bounds import MAX_HTML_DEPTH, MAX_HTML_NODES, scan_html
from mapwatch.store.pages.parse import parse_document, parse_page
from tests.mapsite import HOST, render_page, seed_texts
from tests.sourceserver import serve_map

ROOT = Path(__file__).resolve().parent.parent
URL = f"{HOST}/paper/2412.10400/"
DEEP = f"HTML page nested deeper than {MAX_HTML_DEPTH} elements"
LARGE = f"HTML page with more than {MAX_HTML_NODES:,} elements and comments"


def page_with(markup: str, pid: str = "2412.10400") -> bytes:
    """The seed page as the site's HTML, `markup` inside its article."""
    html = render_page(seed_texts()[pid])
    at = html.index("</article>")
    return (html[:at] + markup + html[at:]).encode()


@pytest.mark.parametrize(("markup", "reason"), [
    ("<div>" * 100_000, DEEP),  # the page: 0.5 MB, 100,000 nested <div>s
    ("<div>" * 600 + "</div>" * 600, DEEP),
    ("<span><b>" * 300, DEEP),
    ("<table><td>" * 200, DEEP),  # each level also opens an implied <tbody> and <tr>
    ("<ul><li>" * 300, DEEP),
    ("<svg>" + "<g>" * 600, DEEP),
    ("<p>" + "".join(f"<b id={i}>" for i in range(300)) + "</p>" + "<p>x</p>" * 300, LARGE),  # re-created <b>s
    ("<br>" * 70_000, LARGE),
    ("<!---->" * 70_000, LARGE),
], ids=["100k-div", "600-div-closed", "span-b", "table-td", "ul-li", "svg-g", "formatting-recreated",
        "flat-br", "comments"])
def test_a_page_out_of_bounds_is_rejected_with_its_reason(markup: str, reason: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_document(page_with(markup), url=URL, content_type="text/html")
    assert (e.value.reason, e.value.line) == (reason, 0)


@pytest.mark.parametrize("markup", [
    "<div><span>" * 250 + "</span></div>" * 250,  # 500 deep + html, body, article, ...: under 512
    "<p>x</p>" * 20_000,  # many elements, shallow
    "<li>x" * 5_000,  # unclosed items close each other
    "<p><b>x</p>" * 2_000,  # a <b> left open is re-created, at most 3 alike
    "<table>" + "<tr><td>x" * 5_000 + "</table>",  # unclosed cells and rows close each other
    "<script>" + "<div>" * 5_000 + "</script>",  # text, not tags
    "<textarea>" + "<div>" * 5_000 + "</textarea>",
    "<!--" + "<div>" * 5_000 + "-->",
    "<div title='" + "<div>" * 5_000 + "'></div>",
    "<svg>" + "<path d='M0 0'/>" * 5_000 + "</svg>",  # self-closing in SVG
], ids=["500-deep", "20k-paragraphs", "unclosed-li", "unclosed-b", "unclosed-cells", "script", "textarea",
        "comment", "attribute", "svg-paths"])
def test_a_page_within_bounds_is_read_as_it_is(markup: str) -> None:
    expected = parse_page(seed_texts()["2412.10400"])
    page = parse_document(page_with(markup), url=URL, content_type="text/html")
    assert (page.id, page.title, page.built_on_by) == (expected.id, expected.title, expected.built_on_by)


def test_a_direction_page_out_of_bounds_yields_no_links() -> None:
    assert paper_links(page_with("<a href='/paper/2507.04136/'>x</a>"), URL)  # within bounds: found
    assert paper_links(page_with("<a href='/paper/2507.04136/'>x</a>" + "<div>" * 100_000), URL) == []


def mapwatch(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mapwatch", *map(str, args)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)


def test_ingest_rejects_a_deep_page_and_stores_the_others(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "deep.html").write_bytes(page_with("<div>" * 100_000))
    (folder / "good.html").write_bytes(render_page(seed_texts()["2507.04136"]).encode())
    db = tmp_path / "map.db"
    r = mapwatch("ingest", folder, "--db", db)
    assert r.returncode == 1, r.stderr
    assert f"rejected: {(folder / 'deep.html').resolve()}: {DEEP}" in r.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id FROM papers WHERE has_page").fetchall() == [("2507.04136",)]


def test_refresh_rejects_a_deep_page_and_stores_the_others(tmp_path: Path) -> None:
    db = tmp_path / "map.db"
    with serve_map() as srv:
        srv.pages["2412.10400"] = page_with("<div>" * 100_000)
        srv.pages["2507.04136"] = render_page(seed_texts()["2507.04136"]).encode()
        r = mapwatch("refresh", "--db", db, "--source", srv.base, "--out", tmp_path / "public")
    assert r.returncode == 1, r.stderr
    assert f"rejected: {srv.base}/paper/2412.10400/: {DEEP}" in r.stderr
    assert "Traceback" not in r.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id FROM papers WHERE has_page").fetchall() == [("2507.04136",)]


# --- the model against the parser -----------------------------------------------------------

TAG_NAMES = ("div span p li ul ol dl dd dt table caption colgroup col tbody thead tr td th b i a font u nobr em "
         "svg math g path foreignObject desc title mi mtext mglyph annotation-xml select option optgroup "
         "textarea style script xmp iframe noscript noembed template button form h1 h2 br img input hr "
         "body html head section address marquee applet object ruby rt")
NAMES = TAG_NAMES.split()
ATTRS = ["", " /", " a=x/", " color=red", ' encoding="text/html"', ' title=">"', " x='<div>'", ' a="', " id=1"]
OTHER = ["x", " ", "<!--x-->", "<!-->", "<!--->", "<!-- --!>", "<![CDATA[<div>]]>", "<!--<script>", "-->",
         "</div", "<?x>", "</ x>", "</>", "<!doctype html>", "</script >", "<script>", "]]>"]
token = st.one_of(st.builds(lambda n, a: f"<{n}{a}>", st.sampled_from(NAMES), st.sampled_from(ATTRS)),
                  st.builds(lambda n: f"</{n}>", st.sampled_from(NAMES)), st.sampled_from(OTHER))


def parsed_shape(doc: str) -> tuple[int, int]:
    """(the deepest element, elements and comments) of the tree the parser builds."""
    tree = LexborHTMLParser(doc)
    deepest = nodes = 0
    stack = [(tree.root, 1)] if tree.root is not None else []
    while stack:
        node, depth = stack.pop()
        if node.is_element_node:
            deepest = max(deepest, depth)
        if node.is_element_node or node.tag == "_comment":
            nodes += 1
        child = node.child
        while child is not None:
            stack.append((child, depth + 1))
            child = child.next
    return deepest, nodes


@settings(max_examples=600, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(token, min_size=1, max_size=80))
def test_the_model_never_finds_a_tree_shallower_than_the_parser_builds(tokens: list[str]) -> None:
    doc = "".join(tokens)
    model = scan_html(doc.encode())
    deepest, nodes = parsed_shape(doc)
    # The model counts the elements it holds open; the tree adds <html>, <body> and a leaf.
    assert deepest <= model.deepest + 3
    assert nodes <= 2 * model.nodes + 4


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(token, min_size=2, max_size=8), st.integers(20, 120))
def test_the_model_does_not_drift_on_repeated_markup(pattern: list[str], times: int) -> None:
    """A pattern repeated: a model that lost one element per repetition would fall ever further
    behind the parser (the way a page deeper than the limit could pass)."""
    doc = "".join(pattern) * times
    try:
        model = scan_html(doc.encode())
    except ParseError:
        return  # rejected: nothing is built
    deepest, _nodes = parsed_shape(doc)
    assert deepest <= model.deepest + 3
