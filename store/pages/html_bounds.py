"""Bounds on the work an HTML page costs, checked on its bytes before any tree is built.

An HTML parser's work grows with the nesting of what it parses: every start and end tag
looks through the stack of open elements, so a page of 100,000 nested `<div>`s costs
minutes (quadratic), and formatting elements left open (`<b>`, `<i>`, ...) are re-created
inside every later paragraph (a few kilobytes become millions of elements). Turning a tree
into the map's text costs time per node. So before parsing, one linear pass over the bytes
follows the HTML tokenizer (tags, quoted attributes, comments, raw text of `<script>`,
`<style>`, `<textarea>`, `<title>`..., CDATA and self-closing tags inside `<svg>`/`<math>`)
and a conservative model of the tree builder's stack of open elements, and rejects a page:

- nested deeper than MAX_HTML_DEPTH elements (the limit Blink's HTML parser puts on its
  tree), or
- with more than MAX_HTML_NODES elements and comments, counting the formatting elements
  the parser would re-create, or
- with a tag of more than MAX_HTML_ATTRIBUTES attributes (a start or an end tag, one cut off
  by the end of the page too; the <html> and <body> start tags each counted together, as
  the parser adds later ones' attributes to the first's element), or more than
  MAX_HTML_PAGE_ATTRIBUTES on the page (those copied onto re-created formatting elements
  included): the parser checks each attribute against those before it on its tag (40,000
  attributes on one element took 5 s, 80,000 took 23 s), and compares the attributes of
  formatting elements with each other (Noah's Ark). These rejections name the tag's line.

The model is built not to close an element the parser keeps open (implied end tags are
applied only where the parser surely applies them; other end tags close what they name only
when nothing the parser would stop at is in between; implied `<tbody>`, `<tr>`, `<colgroup>`
and re-created formatting elements are counted), so that the depth and count it finds are at
least those of the tree selectolax (lexbor, scripting off: `<noscript>` holds markup) builds.
tests/system/test_html_bounds.py checks that against the parser on random and repeated tag soup.
"""

from __future__ import annotations

import re

from mapwatch.store.errors import ParseError
from mapwatch.store.pages.html_attributes import MAX_HTML_ATTRIBUTES, MAX_HTML_PAGE_ATTRIBUTES
from mapwatch.store.pages.html_tree_model import HTML, MAX_HTML_DEPTH, MAX_HTML_NODES, RAW_TEXT, OpenElements, Reject

__all__ = ["MAX_HTML_ATTRIBUTES", "MAX_HTML_DEPTH", "MAX_HTML_NODES", "MAX_HTML_PAGE_ATTRIBUTES", "check_html_bounds",
           "scan_html"]

_WS = b"\t\n\f\r "
_NEXT = re.compile(rb"<(?:[A-Za-z!?]|/)")
_NAME = rb"([A-Za-z][^\t\n\f\r />]*+)"
# A tag's attributes, from after its name to its ">" (quoted values may hold ">"); the group
# is the last unquoted value, which may end in "/" (then the tag is not self-closing).
_ATTRS = (rb"((?>[\t\n\f\r /]++|[^\t\n\f\r />][^\t\n\f\r />=]*+"
          rb"(?>[\t\n\f\r ]*+=[\t\n\f\r ]*+(?>\"[^\"]*+\"|'[^']*+'|([^\t\n\f\r >]++))?)?)*+)")
_START = re.compile(rb"<" + _NAME + _ATTRS)
_END = re.compile(rb"</" + _NAME + _ATTRS)
_COMMENT_END = re.compile(rb"--!?>")
_SCRIPT_STATE = re.compile(rb"<!--|</script[\t\n\f\r />]|<script[\t\n\f\r />]|-->", re.I)



def check_html_bounds(data: bytes) -> None:
    """Raise ParseError when the HTML document `data` would be nested deeper than
    MAX_HTML_DEPTH, hold more than MAX_HTML_NODES elements and comments, or more attributes
    than MAX_HTML_ATTRIBUTES on a tag or MAX_HTML_PAGE_ATTRIBUTES in all (see the module).
    One pass, linear in its size."""
    scan_html(data)


def scan_html(data: bytes) -> OpenElements:
    """The model of `data`'s tree (its `deepest` nesting, `nodes` and `attributes`), or
    ParseError (with the line of the tag at fault for the attribute bounds, else line 0)."""
    tree = OpenElements()
    try:
        _scan(data, tree)
    except Reject as e:
        raise ParseError(str(e), 0 if e.at < 0 else data.count(b"\n", 0, e.at) + 1) from None
    return tree


def _scan(data: bytes, tree: OpenElements) -> None:
    pos = 0
    find = _NEXT.search
    while True:
        m = find(data, pos)
        if m is None:
            return  # text at the end opens nothing
        at = m.start()
        if at > pos:
            tree.offset = pos
            if tree.in_head:
                tree.head_text(not data[pos:at].strip(_WS))
            tree.text()
        tree.offset = at
        c = data[at + 1:at + 2]
        if c == b"!":
            pos = _markup_declaration(data, at, tree)
            continue
        if c == b"?":  # a bogus comment, to the first ">"
            tree.count()
            pos = _to_gt(data, at)
            continue
        if c == b"/":
            e = _END.match(data, at)
            if e is None:  # "</>" is dropped, "</ x>" is a bogus comment
                if data[at + 2:at + 3] != b">":
                    tree.count()
                pos = _to_gt(data, at)
                continue
            name = e.group(1).lower()
            if len(e.group(2)) > 1:
                tree.tag_attributes(name, e.group(2), end=True)
            if data[e.end():e.end() + 1] != b">":
                return  # a tag cut off by the end of the page is dropped (its attributes read)
            pos = e.end() + 1
            tree.end(name)
            continue
        s = _START.match(data, at)
        if s is None:  # cannot happen: _NEXT found "<" and a letter
            pos = at + 1
            continue
        end = s.end()
        name = s.group(1).lower()
        if len(s.group(2)) > 1:
            tree.tag_attributes(name, s.group(2))
        if data[end:end + 1] != b">":
            return
        unquoted = s.group(3)
        self_closing = data[end - 1:end] == b"/" and not (unquoted and s.end(3) == end)
        tree.start(name, s.group(2), self_closing)
        pos = end + 1
        if not tree.stack or tree.stack[-1] != (name, HTML):  # not an HTML element that holds text
            continue
        if name == b"plaintext":
            return
        if name == b"script" or name in RAW_TEXT:
            if name == b"script":
                at = _script_end(data, pos)
            else:
                close = re.compile(rb"</" + name + rb"[\t\n\f\r />]", re.I).search(data, pos)
                at = close.start() if close else len(data)
            e = _END.match(data, at)
            if e is not None and len(e.group(2)) > 1:
                tree.offset = at
                tree.tag_attributes(name, e.group(2), end=True)
            if e is None or data[e.end():e.end() + 1] != b">":
                return  # the text runs to the end of the page
            tree.pop()  # its end tag closes it, in the head or the body
            pos = e.end() + 1


def _to_gt(data: bytes, at: int) -> int:
    end = data.find(b">", at)
    return len(data) if end < 0 else end + 1


def _markup_declaration(data: bytes, at: int, tree: OpenElements) -> int:
    if data.startswith(b"<!--", at):
        tree.count()
        rest = at + 4
        if data.startswith(b">", rest):
            return rest + 1
        if data.startswith(b"->", rest):
            return rest + 2
        close = _COMMENT_END.search(data, rest)
        return len(data) if close is None else close.end()
    if data.startswith(b"<![CDATA[", at) and tree.stack and tree.stack[-1][1] != HTML:
        end = data.find(b"]]>", at + 9)
        tree.text()
        return len(data) if end < 0 else end + 3
    if data[at + 2:at + 9].lower() != b"doctype":
        tree.count()  # a bogus comment
    return _to_gt(data, at)


def _script_end(data: bytes, pos: int) -> int:
    """Where a script's text ends (at its "</script"), following the tokenizer's escaped and
    double-escaped states (`<!--`, and `<script>` inside it)."""
    state = 0  # 0: script data; 1: escaped (after "<!--"); 2: double escaped
    while True:
        m = _SCRIPT_STATE.search(data, pos)
        if m is None:
            return len(data)
        tok = m.group(0).lower()
        pos = m.end()
        if tok == b"<!--":
            state = state or 1
            pos = m.start() + 2  # "<!-->" ends at once: its dashes count
        elif tok == b"-->":
            state = 0
        elif tok.startswith(b"</script"):
            if state < 2:
                return m.start()
            state = 1
            pos = m.end() - 1
        elif state == 1:  # "<script" inside an escaped part
            state = 2
            pos = m.end() - 1
