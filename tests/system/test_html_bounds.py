"""Bounded work per HTML page (issue 21, item 3; issue 30, item 2; DESIGN section 9, "bounded nesting").

An HTML page nested deeper than 512 elements, holding more than 60,000 elements and
comments (the formatting elements the parser re-creates included), a tag of more than 64
attributes or more than 200,000 attributes in all, is rejected with its reason (and for the
attributes, the tag's line) before any tree is built (store.pages.html_bounds), in `mapwatch
ingest` and in a refresh over HTTP, and the other pages are stored. The pre-scan's model of
the tree is checked against the parser itself (selectolax/lexbor) on random tag soup: it
never finds a page shallower than the parser builds it; its count of a tag's attributes is
lexbor's. The time a page costs is measured in bench/html_depth.py.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from mapwatch.store.errors import ParseError
from mapwatch.store.pages.html import paper_links
from mapwatch.store.pages.html_attributes import count_attributes
from mapwatch.store.pages.html_bounds import (
    MAX_HTML_ATTRIBUTES,
    MAX_HTML_DEPTH,
    MAX_HTML_NODES,
    MAX_HTML_PAGE_ATTRIBUTES,
    scan_html,
)
from mapwatch.store.pages.parse import parse_document, parse_page
from tests.mapsite import HOST, render_page, seed_texts
from tests.sourceserver import serve_map

ROOT = Path(__file__).resolve().parents[2]
URL = f"{HOST}/paper/2412.10400/"
DEEP = f"HTML page nested deeper than {MAX_HTML_DEPTH} elements"
LARGE = f"HTML page with more than {MAX_HTML_NODES:,} elements and comments"
MANY = f"with more than {MAX_HTML_ATTRIBUTES} attributes"  # on one tag
ALL_ATTRIBUTES = f"HTML page with more than {MAX_HTML_PAGE_ATTRIBUTES:,} attributes"


def page_with(markup: str, pid: str = "2412.10400") -> bytes:
    """The seed page as the site's HTML, `markup` inside its article."""
    html = render_page(seed_texts()[pid])
    at = html.index("</article>")
    return (html[:at] + markup + html[at:]).encode()


@pytest.mark.parametrize(("markup", "reason"), [
    ("<div>" * 100_000, DEEP),  # the issue's page: 0.5 MB, 100,000 nested <div>s
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


def names(n: int, first: int = 0, value: str = "") -> str:
    """`n` attributes, `a<first>` on, each with `value` (e.g. "=x")."""
    return " ".join(f"a{i}{value}" for i in range(first, first + n))


@pytest.mark.parametrize(("markup", "reason"), [
    ("<div " + names(65) + ">x</div>", f"HTML element <div> {MANY}"),
    ("<div " + names(40, value="='x y'") + "/" + names(25, 40, value='=""') + ">x</div>", f"HTML element <div> {MANY}"),
    ("<div " + "a " * 65 + ">x</div>", f"HTML element <div> {MANY}"),  # the same name: each one read, then dropped
    ("<div>x</div " + names(65) + ">", f"HTML end tag </div> {MANY}"),  # end tags' attributes are read too
    ("<textarea>x</textarea " + names(65) + ">", f"HTML end tag </textarea> {MANY}"),
    ("<svg><g " + names(65) + "/></svg>", f"HTML element <g> {MANY}"),
    ("<ye\x1bs " + names(65) + ">", f"HTML element {MANY}"),  # a name not fit to quote
    ("<body " + names(40) + "><body " + names(40, 40) + ">", f"HTML element <body> {MANY} (its start tags together)"),
    ("<html " + names(40) + "><html " + names(40, 40) + ">", f"HTML element <html> {MANY} (its start tags together)"),
    (("<i " + names(64) + "></i>") * 3_200, ALL_ATTRIBUTES),  # 204,800
    ("<p><b " + names(64) + "></p>" + "<p>x</p>" * 3_200, ALL_ATTRIBUTES),  # the <b> re-created in each <p>
], ids=["65", "65-mixed", "65-alike", "end-tag", "raw-text-end-tag", "svg", "odd-name", "two-bodies", "two-htmls",
        "page-total", "re-created"])
def test_too_many_attributes_reject_the_page_with_the_tags_line(markup: str, reason: str) -> None:
    page = page_with(markup)
    with pytest.raises(ParseError) as e:
        parse_document(page, url=URL, content_type="text/html")
    assert (e.value.reason, e.value.line) == (reason, page.count(b"\n", 0, page.index(markup[:20].encode())) + 1)


def test_the_issues_80000_attributes_are_rejected_at_once() -> None:
    """Issue 30: 40,000 attributes on one element took 3.95 s to parse and 80,000 took 121 s
    (5 s and 23 s here before the bound): now rejected by the pre-scan in milliseconds."""
    for n in (40_000, 80_000):
        page = page_with("<div " + names(n, value="=x") + ">x</div>")
        started = time.perf_counter()
        with pytest.raises(ParseError, match=MANY):
            parse_document(page, url=URL, content_type="text/html")
        assert time.perf_counter() - started < 1.0


def test_a_tag_cut_off_by_the_end_of_the_page_is_counted_too() -> None:
    """The parser reads a tag's attributes before it finds the page ends inside it (160,000 took 4.4 s)."""
    page = page_with("") + b"\n<div " + names(65).encode()
    with pytest.raises(ParseError) as e:
        parse_document(page, url=URL, content_type="text/html")
    assert (e.value.reason, e.value.line) == (f"HTML element <div> {MANY}", page.count(b"\n") + 1)
    page = page_with("") + b"\n</div " + names(65).encode()
    with pytest.raises(ParseError, match=f"HTML end tag </div> {MANY}"):
        parse_document(page, url=URL, content_type="text/html")


@pytest.mark.parametrize("markup", [
    "<div " + names(64, value="=x") + ">x</div>",
    "<body " + names(32) + "><body " + names(32, 32) + ">",
    ("<i " + names(64) + "></i>") * 3_000,  # 192,000 attributes (and the page's own)
    "".join(f"<b {names(63)} x={n}>" for n in range(490)),  # 490 alike formatting elements (Noah's Ark)
    "<p><b " + names(64) + "></p>" + "<p>x</p>" * 2_500,
], ids=["64", "two-bodies-64", "192k", "noahs-ark", "re-created"])
def test_a_page_with_attributes_within_bounds_is_read_as_it_is(markup: str) -> None:
    expected = parse_page(seed_texts()["2412.10400"])
    page = parse_document(page_with(markup), url=URL, content_type="text/html")
    assert (page.id, page.title, page.built_on_by) == (expected.id, expected.title, expected.built_on_by)


SEPARATORS = st.sampled_from([" ", "  ", "\n", "\t", "\f", "\r\n", "/", " / "])
VALUES = st.sampled_from(["", "=v{i}", "= v{i}", " =v{i}", " = v{i}", '="a{i} b{i}>c{i}"', "='a{i}\"b{i}'", '=""', "=",
                          "= ", "=a{i}'b", "=<{i}", "=={i}", "=x{i}/", "=v{i}>"])
NAME_ENDS = st.sampled_from(["", "'", '"', "<", "!", "-x", ":y", "="])


@st.composite
def attribute_strings(draw: st.DrawFn) -> str:
    """Attribute strings of distinct names (n0, n1, ...: whatever the tokenizer reads as a name
    is distinct), with every separator, value and stray character the tokenizer knows."""
    out: list[str] = []
    for i in range(draw(st.integers(0, 12))):
        quoted = out and out[-1].endswith(("'", '"'))
        out.append("" if quoted and draw(st.booleans()) else draw(SEPARATORS))  # no space after a quote
        out.append(draw(st.sampled_from(["", "", "=", "'", "<"])) + f"n{i}" + draw(NAME_ENDS) +
                   draw(VALUES).format(i=i))
    return "".join(out) + draw(st.sampled_from(["", " ", "/", " /"]))


@settings(max_examples=1_000, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(attribute_strings())
def test_the_model_counts_the_attributes_the_parser_reads(attrs: str) -> None:
    doc = f"<body><div {attrs}>x</div>".encode()
    tag = scan_html_attributes(doc)
    node = LexborHTMLParser(doc.decode()).css_first("div")
    if node is None:  # a quote never closed: the tag runs to the end of the page, is dropped
        assert "'" in attrs or '"' in attrs
        return
    assert count_attributes(tag, most=10_000) == len(node.attributes), (doc, node.attributes)


def scan_html_attributes(doc: bytes) -> bytes:
    """The attribute string the pre-scan reads for the `<div>` of `doc`."""
    from mapwatch.store.pages.html_bounds import _START

    m = _START.match(doc, doc.index(b"<div"))
    assert m is not None
    return m.group(2)


def test_a_direction_page_out_of_bounds_yields_no_links() -> None:
    assert paper_links(page_with("<a href='/paper/2507.04136/'>x</a>"), URL)  # within bounds: found
    assert paper_links(page_with("<a href='/paper/2507.04136/'>x</a>" + "<div>" * 100_000), URL) == []


def mapwatch(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mapwatch", *map(str, args)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)


# The pages of issues 21 and 30 (0.5 MB and 0.7 MB): their markup, and where and why they are rejected.
HOSTILE = {
    "deep": ("<div>" * 100_000, f": {DEEP}"),
    "attributes": ("<div " + " ".join(f"a{i}=x" for i in range(80_000)) + ">x</div>",
                   f":{{line}}: HTML element <div> {MANY}"),
}


def rejection(page: bytes, markup: str, what: str) -> str:
    """The reason `mapwatch` gives for `page`, after its file or URL."""
    return what.format(line=page.count(b"\n", 0, page.index(markup.encode())) + 1)


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_ingest_rejects_a_hostile_page_and_stores_the_others(tmp_path: Path, hostile: str) -> None:
    markup, what = HOSTILE[hostile]
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "bad.html").write_bytes(page := page_with(markup))
    (folder / "good.html").write_bytes(render_page(seed_texts()["2507.04136"]).encode())
    db = tmp_path / "map.db"
    r = mapwatch("ingest", folder, "--db", db)
    assert r.returncode == 1, r.stderr
    assert f"rejected: {(folder / 'bad.html').resolve()}{rejection(page, markup, what)}" in r.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT id FROM papers WHERE has_page").fetchall() == [("2507.04136",)]


@pytest.mark.parametrize("hostile", sorted(HOSTILE))
def test_refresh_rejects_a_hostile_page_and_stores_the_others(tmp_path: Path, hostile: str) -> None:
    markup, what = HOSTILE[hostile]
    db = tmp_path / "map.db"
    with serve_map() as srv:
        srv.pages["2412.10400"] = page = page_with(markup)
        srv.pages["2507.04136"] = render_page(seed_texts()["2507.04136"]).encode()
        r = mapwatch("refresh", "--db", db, "--source", srv.base, "--out", tmp_path / "public")
    assert r.returncode == 1, r.stderr
    assert f"rejected: {srv.base}/paper/2412.10400/{rejection(page, markup, what)}" in r.stderr
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
