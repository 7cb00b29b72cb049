"""Pure reading of HTML map pages: an HTML document -> the map's text form (no I/O).

The map's website serves each page as HTML; its text form (seeds/*.txt) is the format
`store.pages.parse.parse_page` defines. This module only turns the page's *main content* into
that text, so the text parser stays the single definition of the format (docs/pages.md,
"Page formats").

- Main content: the `<article>` holding the title (`<h1>`), else the `<main>` holding it,
  else the first `<article>`, the first `<main>`, else `<body>` without its `<header>`.
  Inside it, `nav`, `aside`, `footer`, `script`, `style`, `form`, `noscript`, `template`,
  `iframe`, `svg`, hidden elements and elements with a navigation/complementary/search/
  contentinfo role are skipped: navigation, sidebars, footers, scripts and JSON-LD never
  become papers, citations or directions. Anything before the title (breadcrumbs) is dropped.
- Elements become lines: h1 -> `# `, h2 -> `## `, h3-h6 -> `### `, li -> `- `, paragraphs and
  other blocks -> lines separated by a blank line; inline markup keeps its text.
  Links become `[text](absolute URL)`, with `\\`, `[` and `]` in their text escaped the way
  the text parser unescapes them (titles with brackets survive).
- Links are resolved (store.pages.html_links) against the document's base: `<base href>`, else the page's URL
  (http or https), else its `<link rel="canonical">`, else the map host its own absolute
  `/paper/` links name (a saved file); with none of these, relative links stay as written.
- Between the title and the first section, an anchor labelled "arXiv" or "HTML", or one
  pointing at arxiv.org, becomes the header's `arXiv: <url>` / `HTML: <url>`. When the page
  has no `HTML:` self link, its own URL is written as that link: the URL it was fetched from,
  or for a saved file its canonical link, else its `<base href>`, else the map host its
  absolute `/paper/` links name plus `/paper/<its id>/`.
- Links whose scheme is not http or https (`javascript:`, `data:`, `mailto:`, ...) are not
  links: their text is kept and their target dropped. In a paper list that leaves an item
  without a link, and the text parser rejects the page ("list item is not a paper link").
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Iterator

from selectolax.lexbor import LexborHTMLParser, LexborNode

from mapwatch.store.errors import ParseError
from mapwatch.store.ids import normalize_id
from mapwatch.store.pages.html_bounds import check_html_bounds
from mapwatch.store.pages.html_charset import decode_html
from mapwatch.store.pages.html_links import (
    LinkResolver,
    absolute_url,
    base_urls,
    declared_base,
    derived_base,
    is_web_url,
    split_url,
)

HTML_TYPES = ("text/html", "application/xhtml+xml")
TEXT_ALTERNATE_TYPES = ("text/markdown", "text/x-markdown", "text/plain")

# Elements whose whole subtree is never content.
_SKIP = frozenset({
    "nav", "aside", "footer", "script", "style", "form", "noscript", "template", "iframe",
    "svg", "button", "select", "textarea", "dialog", "object", "embed", "canvas", "head",
    "title", "meta", "link", "img", "video", "audio", "picture", "source", "input",
})
_SKIP_ROLES = frozenset({"navigation", "complementary", "search", "contentinfo", "banner", "menu",
                         "menubar", "dialog"})
_BLOCKS = frozenset({
    "p", "div", "section", "article", "main", "header", "ul", "ol", "li", "h1", "h2", "h3", "h4",
    "h5", "h6", "blockquote", "pre", "table", "thead", "tbody", "tfoot", "tr", "td", "th", "dl",
    "dt", "dd", "figure", "figcaption", "details", "summary", "hr", "address", "hgroup", "body",
    "html", "center", "fieldset", "caption", "menu",
})
_HEADINGS = {"h1": "# ", "h2": "## ", "h3": "### ", "h4": "### ", "h5": "### ", "h6": "### "}
_WS = re.compile(r"[ \t\n\r\f\xa0]+")  # HTML's whitespace, and no-break spaces (over text, not markup)
_HEADER_LABELS = {"arxiv": "arXiv", "html": "HTML"}


def is_html(data: bytes, content_type: str | None = None) -> bool:
    """An HTML document: by its content type, or by starting (after a BOM, whitespace, an XML
    declaration and comments) with `<!doctype html` or `<html`."""
    if content_type and content_type.split(";", 1)[0].strip().lower() in HTML_TYPES:
        return True
    head = data[:2048].removeprefix(codecs.BOM_UTF8).lstrip(b" \t\r\n\f").lower()
    while head.startswith((b"<!--", b"<?xml")):
        end = head.find(b"-->" if head.startswith(b"<!--") else b"?>")
        if end < 0:
            return False
        head = head[end + (3 if head.startswith(b"<!--") else 2):].lstrip(b" \t\r\n\f")
    return head.startswith((b"<!doctype html", b"<html"))


def html_to_page_text(data: bytes, url: str | None = None) -> str:
    """The page's main content in the map's text form, links resolved against `url`.
    Raises `ParseError` for an HTML page that is not a map page."""
    tree = _tree(data)
    root = _content_root(tree)
    if root is None or not (root.text(deep=True, separator=" ", strip=True)):
        raise ParseError("HTML page with an empty body")
    base, own = base_urls(tree, url)
    skip_header = root.tag == "body"
    text = _Converter(base, own).convert(root, skip_header=skip_header)
    if base is None and (derived := derived_base(text)) is not None:
        text = _Converter(derived, own or derived).convert(root, skip_header=skip_header)
    return text


def text_alternate_url(data: bytes, url: str) -> str | None:
    """The absolute href of `<link rel="alternate" type="text/markdown"|"text/plain">` in the
    document's head, if any. Never raises."""
    tree = _tree(data, strict=False)
    head = tree.head
    if head is None:
        return None
    base = declared_base(tree, url) or url
    for link in head.css("link[href]"):
        rel = (link.attributes.get("rel") or "").lower().split()
        mime = (link.attributes.get("type") or "").split(";", 1)[0].strip().lower()
        if "alternate" in rel and mime in TEXT_ALTERNATE_TYPES:
            href = absolute_url(link.attributes.get("href") or "", base)
            if href is not None:
                return href
    return None


def paper_links(data: bytes, url: str) -> list[str]:
    """Absolute URLs of the `/paper/<id>/` links in the main content of any HTML page (a
    direction page's papers: pages to fetch, never citations), in order, without repeats.
    Never raises."""
    tree = _tree(data, strict=False)
    root = _content_root(tree)
    if root is None:
        return []
    base = declared_base(tree, url) or url
    out: dict[str, None] = {}
    resolve = LinkResolver(base)
    for kind, node in _events(root, skip_header=root.tag == "body"):
        if kind is _ENTER and node.tag == "a":
            href = resolve(node.attributes.get("href") or "")
            parts = split_url(href) if href else None
            if href and parts is not None and "/paper/" in parts.path and normalize_id(href):
                out.setdefault(href)
    return list(out)


# --- the document ---------------------------------------------------------------------------

def _tree(data: bytes, *, strict: bool = True) -> LexborHTMLParser:
    """The parsed document, once its bounds are checked (store.pages.html_bounds: nesting, size).
    Not strict: undecodable bytes become U+FFFD instead of a `ParseError`, and a document
    out of bounds is an empty one (for the helpers that only look for links)."""
    try:
        text = decode_html(data)
    except ParseError:
        if strict:
            raise
        text = data.decode("utf-8", errors="replace")
    try:
        check_html_bounds(text.encode("utf-8", "surrogatepass"))
    except ParseError:
        if strict:
            raise
        text = ""
    return LexborHTMLParser(text)


def _skipped(node: LexborNode) -> bool:
    if node.tag in _SKIP:
        return True
    attrs = node.attributes
    if not attrs:
        return False
    if "hidden" in attrs or (attrs.get("aria-hidden") or "").lower() == "true":
        return True
    return (attrs.get("role") or "").lower() in _SKIP_ROLES


def _inside_skipped(node: LexborNode) -> bool:
    parent = node.parent
    while parent is not None and parent.tag not in ("body", "html"):
        if _skipped(parent):
            return True
        parent = parent.parent
    return False


def _content_root(tree: LexborHTMLParser) -> LexborNode | None:
    """`<article>`, else `<main>`, else `<body>` (see the module's docstring)."""
    articles = [n for n in tree.css("article") if not _skipped(n) and not _inside_skipped(n)]
    mains = [n for n in tree.css("main, [role=main]") if not _skipped(n) and not _inside_skipped(n)]
    for candidates in (articles, mains):
        for node in candidates:
            if node.css_first("h1") is not None:
                return node
    for candidates in (articles, mains):
        if candidates:
            return candidates[0]
    return tree.body


_ENTER, _EXIT, _TEXT = object(), object(), object()


def _events(root: LexborNode, *, skip_header: bool) -> Iterator[tuple[object, LexborNode]]:
    """Enter/exit/text events of the content below `root`, skipped subtrees left out.
    Iterative, so deeply nested markup cannot exhaust the stack."""
    stack: list[tuple[bool, LexborNode]] = [(False, root)]
    while stack:
        leaving, node = stack.pop()
        if leaving:
            yield _EXIT, node
            continue
        if node.is_text_node:
            yield _TEXT, node
            continue
        if not node.is_element_node or _skipped(node) or (skip_header and node.tag == "header"):
            continue
        yield _ENTER, node
        stack.append((True, node))
        children = []
        child = node.first_child
        while child is not None:
            children.append(child)
            child = child.next
        stack.extend((False, c) for c in reversed(children))


def _collapse(text: str) -> str:
    return _WS.sub(" ", text).strip()


def _escape(text: str) -> str:
    """Escape what the text parser unescapes in titles and link text."""
    return text.replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")


class _Converter:
    """One walk of the main content, writing the text form's lines."""

    def __init__(self, base: str | None, own: str | None) -> None:
        self.base = base
        self.own = own  # the page's own URL: its self link when it has no "HTML:" line
        self.resolve = LinkResolver(base)
        self.lines: list[str] = []
        self.buf: list[str] = []
        self.prefix = ""
        self.title_at: int | None = None  # index of the "# " line
        self.in_header = False  # between the title and the first section
        self.heading: str | None = None  # tag of the heading being written
        self.links: list[tuple[int, str | None]] = []  # open anchors: (buffer position, href)

    def convert(self, root: LexborNode, *, skip_header: bool) -> str:
        for kind, node in _events(root, skip_header=skip_header):
            if kind is _TEXT:
                self.buf.append(node.text_content or "")
            elif kind is _ENTER:
                self._enter(node)
            else:
                self._exit(node)
        self._flush()
        if self.title_at is None:
            raise ParseError("HTML page without a title (h1)")
        lines = self.lines[self.title_at:]
        header_end = next((i for i, s in enumerate(lines) if s.startswith("## ")), len(lines))
        header = lines[1:header_end]
        if not any(_arxiv_label(s) for s in header):
            raise ParseError("HTML page without an arXiv link")
        if self.own and not any("HTML:" in s for s in header) and is_web_url(self.own):
            # The page's own URL is its self link (docs/pages.md, "Page formats").
            k = next(i for i, s in enumerate(header) if _arxiv_label(s))
            header[k] = f"{header[k]} · HTML: {self.own}"
        return "\n".join([lines[0], *header, *lines[header_end:]]).rstrip("\n") + "\n"

    def _flush(self) -> None:
        if not self.buf:
            return
        text = "".join(self.buf)
        self.buf.clear()
        text = _collapse(text) if not text.isspace() else ""
        if text:
            if self.prefix == "# ":
                text = _escape(text)
                if self.title_at is None:
                    self.title_at = len(self.lines)
                    self.in_header = True
            self.lines.append(self.prefix + text)
            self.prefix = ""

    def _blank(self) -> None:
        if self.lines and self.lines[-1]:
            self.lines.append("")

    def _enter(self, node: LexborNode) -> None:
        tag = node.tag
        if tag == "a":
            href = self.resolve(node.attributes.get("href") or "")
            self.links.append((len(self.buf), None if self.heading else href))
        elif tag == "br":
            if self.prefix or self.heading:
                self.buf.append(" ")
            else:
                self._flush()
        elif tag in _HEADINGS:
            self._flush()
            self.prefix = ""
            self._blank()
            if tag == "h1" and self.title_at is None:
                self.prefix = "# "
            else:
                self.prefix = "## " if tag in ("h1", "h2") else "### "
                if self.prefix == "## ":
                    self.in_header = False
            self.heading = tag
        elif tag == "li":
            self._flush()
            self.prefix = "- "
        elif tag in _BLOCKS:
            self._flush()

    def _exit(self, node: LexborNode) -> None:
        tag = node.tag
        if tag == "a":
            if not self.links:
                return
            start, href = self.links.pop()
            if href is None:
                return
            text = _collapse("".join(self.buf[start:]))
            del self.buf[start:]
            self.buf.append(self._link(text, href, start))
        elif tag in _HEADINGS and self.heading == tag:
            self._flush()
            self.prefix = ""
            self.heading = None
            self._blank()
        elif tag == "li":
            self._flush()
            self.prefix = ""
        elif tag in _BLOCKS:
            self._flush()
            if tag not in ("div", "section", "article", "main", "header", "body", "html", "tr", "td", "th"):
                self._blank()

    def _link(self, text: str, href: str, start: int) -> str:
        if self.in_header:
            label = _HEADER_LABELS.get(text.rstrip(":").strip().lower())
            before = _collapse("".join(self.buf[:start]))
            if before.endswith(("arXiv:", "HTML:")):
                return f" {href} "
            if label:
                return f" {label}: {href} "
            parts = split_url(href)
            if parts is not None and parts.netloc.lower().endswith("arxiv.org") and normalize_id(href):
                return f" arXiv: {href} "
            if text == href:
                return f" {href} "
        if not text:
            return ""
        return f"[{_escape(text)}]({href})"


def _arxiv_label(line: str) -> bool:
    """A header line with `arXiv: <url or id>` naming an arXiv id."""
    at = line.find("arXiv:")
    while at >= 0:
        rest = line[at + 6:].split()
        if rest and normalize_id(rest[0]):
            return True
        at = line.find("arXiv:", at + 6)
    return False
