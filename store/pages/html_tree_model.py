"""The model html_bounds scans with: the HTML tree builder's stack of open elements, kept
conservatively (store/pages/html_bounds.py says how, and why) so that the depth and element count it
finds are at least those of the tree the parser builds; and the attributes the parser reads (on
each tag, and in all: those it copies onto re-created formatting elements included)."""

from __future__ import annotations

import re

from mapwatch.store.pages.html_attributes import (
    MAX_HTML_ATTRIBUTES,
    MAX_HTML_PAGE_ATTRIBUTES,
    attribute_names,
    count_attributes,
    tag_label,
)

MAX_HTML_DEPTH = 512  # elements open at once (Blink: kMaximumHTMLParserDOMTreeDepth)
MAX_HTML_NODES = 60_000  # elements and comments, re-created formatting elements included

_VOID = frozenset(b"area base basefont bgsound br col embed frame hr image img input keygen link meta "
                  b"param source track wbr".split())
RAW_TEXT = frozenset(b"style xmp iframe noembed noframes textarea title".split())  # to their end tag
_FORMATTING = frozenset(b"a b big code em font i nobr s small strike strong tt u".split())
_SPECIAL = frozenset(
    b"address applet area article aside base basefont bgsound blockquote body br button caption "
    b"center col colgroup dd details dialog dir div dl dt embed fieldset figcaption figure footer "
    b"form frame frameset h1 h2 h3 h4 h5 h6 head header hgroup hr html iframe img input keygen li "
    b"link listing main marquee menu meta nav noembed noframes noscript object ol p param plaintext "
    b"pre script search section select source style summary table tbody td template textarea tfoot "
    b"th thead title tr track ul wbr xmp".split())
# Elements a scope check stops at (HTML's "default scope"; foreign elements are boundaries too).
_SCOPE = frozenset(b"applet caption html table td th marquee object template select".split())
_CLOSES_P = frozenset(
    b"address article aside blockquote center details dialog dir div dl fieldset figcaption figure "
    b"footer header hgroup main menu nav ol p search section summary ul h1 h2 h3 h4 h5 h6 pre "
    b"listing form plaintext hr xmp li dd dt".split())
_HEADINGS = frozenset(b"h1 h2 h3 h4 h5 h6".split())
# End tags that close their element when it is in scope (the others: only when nothing special
# is above it); in a table, its parts too.
_BLOCK_ENDS = frozenset(
    b"address article aside blockquote button center details dialog dir div dl fieldset figcaption "
    b"figure footer header hgroup listing main menu nav ol pre search section summary ul dd dt applet "
    b"marquee object template table caption colgroup tbody thead tfoot tr td th".split())
# Start tags that leave <svg>/<math> for HTML.
_BREAKOUT = frozenset(
    b"b big blockquote body br center code dd div dl dt em embed h1 h2 h3 h4 h5 h6 head hr i img li "
    b"listing menu meta nobr ol p pre ruby s small span strong strike sub sup table tt u ul var".split())
_SVG_INTEGRATION = frozenset(b"foreignobject desc title".split())  # hold HTML again
_MATH_TEXT = frozenset(b"mi mo mn ms mtext".split())  # hold HTML again (but mglyph, malignmark)
_TABLE_SECTIONS = frozenset(b"tbody thead tfoot".split())
_TABLE_PARTS = frozenset(b"caption col colgroup tbody td tfoot th thead tr".split())  # only in a table
_IGNORED = frozenset(b"html head body frameset".split())  # in a body: never a new element
_HEAD = frozenset(b"base basefont bgsound link meta title noscript noframes style script template head html".split())
_IN_HEAD_NOSCRIPT = frozenset(b"basefont bgsound link meta noframes style".split())
# An element's kind: HTML; SVG or MathML; an SVG element holding HTML (foreignObject, desc,
# title), a MathML text element (mi, ...), an annotation-xml holding HTML.
HTML, SVG, MATH, SVG_POINT, MATH_TEXT, MATH_POINT = range(6)


_HTML_ENCODING = re.compile(rb"encoding[\t\n\f\r ]*=[\t\n\f\r ]*[\"']?(?:text/html|application/xhtml\+xml)"
                            rb"[\"'\t\n\f\r ]", re.I)


class Reject(Exception):
    """The page is out of bounds: the reason, and the byte offset of the token at fault (-1:
    the page as a whole)."""

    def __init__(self, reason: str, at: int = -1) -> None:
        super().__init__(reason)
        self.at = at


class OpenElements:
    """The conservative model of the parser's stack of open elements (see the module)."""

    def __init__(self) -> None:
        self.stack: list[tuple[bytes, int]] = []  # (name, namespace)
        self.at: dict[bytes, list[int]] = {}  # name (foreign names prefixed "|") -> positions
        self.special: list[int] = []  # positions of special elements (and foreign ones)
        self.scope: list[int] = []  # positions of scope boundaries (and foreign elements)
        self.html: list[int] = []  # positions of HTML elements
        self.dangling: list[bytes] = []  # formatting elements popped without their end tag (name + attributes)
        self.keys: list[bytes] = []  # per stack entry: a formatting element's name + attributes, else b""
        self.nodes = 0
        self.deepest = 0
        self.in_head = True  # before the body: a <noscript> there closes at the first body tag
        self.head_noscript = False
        self.offset = 0  # where the token being read starts (html_bounds sets it): a rejection's place
        self.attributes = 0  # on the page: in tags, and copied onto re-created formatting elements
        self.merged: dict[bytes, int] = {}  # attributes of every <html> (and <body>) start tag
        self.key_attributes: dict[bytes, int] = {}  # formatting element key -> its attributes

    @property
    def foreign(self) -> bool:
        """Tokens go to the foreign-content rules (the current node is in <svg>/<math>)."""
        return bool(self.stack) and self.stack[-1][1] in (SVG, MATH)

    # --- the stack ---------------------------------------------------------------------

    def push(self, name: bytes, ns: int, key: bytes = b"") -> None:
        if len(self.stack) + 2 >= MAX_HTML_DEPTH:  # + the document's <html> and <body>
            raise Reject(f"HTML page nested deeper than {MAX_HTML_DEPTH} elements")
        self.count()
        pos = len(self.stack)
        self.stack.append((name, ns))
        self.keys.append(key)
        self.deepest = max(self.deepest, pos + 1)
        self.at.setdefault(name if ns == HTML else b"|" + name, []).append(pos)
        if ns != HTML or name in _SPECIAL:
            self.special.append(pos)
        if ns != HTML or name in _SCOPE:
            self.scope.append(pos)
        else:
            self.html.append(pos)
        if ns == HTML and name in _HEADINGS:
            self.at.setdefault(b"<h>", []).append(pos)

    def pop(self) -> None:
        name, ns = self.stack.pop()
        key = self.keys.pop()
        pos = len(self.stack)
        self.at[name if ns == HTML else b"|" + name].pop()
        for lst in (self.special, self.scope, self.html):
            if lst and lst[-1] == pos:
                lst.pop()
        if ns == HTML and name in _HEADINGS:
            self.at[b"<h>"].pop()
        if key:
            self.dangle(key)

    def dangle(self, key: bytes) -> None:
        """A formatting element left open: re-created by the next text (at most 3 alike)."""
        if self.dangling.count(key) >= 3:
            self.dangling.remove(key)
        self.dangling.append(key)

    def pop_to(self, pos: int) -> None:
        """Pop the element at `pos` and everything above it."""
        while len(self.stack) > pos:
            self.pop()

    def pop_foreign(self) -> None:
        """Pop SVG and MathML elements down to an HTML element or an integration point."""
        while self.stack and self.stack[-1][1] in (SVG, MATH):
            self.pop()

    def top(self, key: bytes) -> int:
        lst = self.at.get(key)
        return lst[-1] if lst else -1

    @staticmethod
    def last(lst: list[int]) -> int:
        return lst[-1] if lst else -1

    def in_scope(self, key: bytes, extra: tuple[bytes, ...] = ()) -> int:
        """The position of the topmost `key` if no scope boundary (nor an `extra` element) is
        above it, else -1."""
        pos = self.top(key)
        if pos < 0 or self.last(self.scope) > pos:
            return -1
        if any(self.top(name) > pos for name in extra):
            return -1
        return pos

    def count(self, n: int = 1) -> None:
        self.nodes += n
        if self.nodes > MAX_HTML_NODES:
            raise Reject(f"HTML page with more than {MAX_HTML_NODES:,} elements and comments")

    # --- attributes ----------------------------------------------------------------------

    def tag_attributes(self, name: bytes, attrs: bytes, end: bool = False) -> None:
        """A start or end tag's attributes (the tokenizer reads an end tag's too), at most
        MAX_HTML_ATTRIBUTES: the parser checks each new one against those before it, so one
        element's cost grows with their square. The attributes of later <html> and <body>
        start tags are added to the first's element: theirs are counted together."""
        n = count_attributes(attrs)
        if not n:
            return
        on_element = n
        if not end and name in (b"html", b"body"):
            self.merged[name] = on_element = self.merged.get(name, 0) + n
        if on_element > MAX_HTML_ATTRIBUTES:
            together = " (its start tags together)" if on_element > n else ""
            raise Reject(f"HTML {tag_label(name, end)} with more than {MAX_HTML_ATTRIBUTES} attributes{together}",
                         self.offset)
        self.add_attributes(n)

    def add_attributes(self, n: int) -> None:
        self.attributes += n
        if self.attributes > MAX_HTML_PAGE_ATTRIBUTES:
            raise Reject(f"HTML page with more than {MAX_HTML_PAGE_ATTRIBUTES:,} attributes", self.offset)

    def copied(self, key: bytes, times: int = 1) -> None:
        """A formatting element (`key`: its name and attributes) copied `times` times by the
        parser, its attributes with it."""
        n = self.key_attributes.get(key)
        if n is None:
            n = self.key_attributes[key] = count_attributes(key.partition(b" ")[2])
        if n:
            self.add_attributes(n * times)

    # --- what the tokens do --------------------------------------------------------------

    def head_text(self, blank: bool) -> None:
        if not blank:
            self.leave_head()

    def leave_head(self) -> None:
        """The body starts: a <noscript> in the head is closed."""
        if self.head_noscript:
            self.head_noscript = False
            if self.stack and self.stack[-1] == (b"noscript", HTML):
                self.pop()
        self.in_head = False

    def text(self) -> None:
        """Text (or a start tag) re-creates the formatting elements left open."""
        if self.dangling and not self.foreign:
            keys, self.dangling = self.dangling, []
            for key in keys:
                self.push(key.split(b" ", 1)[0], HTML, key)
                self.copied(key)

    def start(self, name: bytes, attrs: bytes, self_closing: bool) -> None:
        if self.in_head:
            if self.head_noscript and name not in _IN_HEAD_NOSCRIPT:
                self.leave_head()  # closes the <noscript>
                self.in_head = True
                if name in (b"noscript", b"head"):
                    return
            if name not in _HEAD:
                self.leave_head()
            elif name == b"noscript":
                self.head_noscript = True
        kind = self.stack[-1][1] if self.stack else HTML
        if kind == MATH_TEXT and name in (b"mglyph", b"malignmark"):
            self._foreign(name, attrs, MATH, self_closing)
            return
        if kind in (SVG, MATH):
            if name in _BREAKOUT or (name == b"font" and attribute_names(attrs) & {b"color", b"face", b"size"}):
                self.pop_foreign()  # back to HTML
            else:  # an <svg> inside <math> is a MathML element (but in annotation-xml)
                annotation = kind == MATH and name == b"svg" and self.stack[-1][0] == b"annotation-xml"
                self._foreign(name, attrs, SVG if annotation else kind, self_closing)
                return
        if name in _IGNORED or (name in _TABLE_PARTS and self.top(b"table") < 0):
            return
        if name in (b"svg", b"math"):
            self.text()
            self._foreign(name, attrs, SVG if name == b"svg" else MATH, self_closing)
            return
        if name in (b"li", b"dd", b"dt"):
            self._close_item(name)
        if name in _CLOSES_P and (p := self.in_scope(b"p", (b"button",))) >= 0:
            self.pop_to(p)
        if name in _HEADINGS:
            if self.stack and self.stack[-1][0] in _HEADINGS and self.stack[-1][1] == HTML:
                self.pop()
        elif name in (b"td", b"th", b"tr") or name in _TABLE_SECTIONS:
            self._close_cells(name)
            self._implied_rows(name)
        elif name in (b"col", b"colgroup") and self.stack and self.stack[-1] == (b"table", HTML):
            if name == b"col":
                self.push(b"colgroup", HTML)  # a <col> right in a table gets its <colgroup>
        elif name not in _CLOSES_P:
            if name in (b"option", b"optgroup") and self.stack and self.stack[-1] == (b"option", HTML):
                self.pop()
            self.text()  # a start tag in body re-creates the formatting elements left open
        if name in _VOID:
            self.count()
            return
        self.push(name, HTML, name + b" " + attrs if name in _FORMATTING else b"")

    def _foreign(self, name: bytes, attrs: bytes, ns: int, self_closing: bool) -> None:
        """An SVG or MathML element, in namespace `ns`."""
        if self_closing:
            self.count()
            return
        if ns == SVG and name in _SVG_INTEGRATION:
            ns = SVG_POINT
        elif ns == MATH and name in _MATH_TEXT:
            ns = MATH_TEXT
        elif ns == MATH and name == b"annotation-xml" and _HTML_ENCODING.search(attrs + b" "):
            ns = MATH_POINT
        self.push(name, ns)

    def _close_item(self, name: bytes) -> None:
        """<li> closes an open <li> (<dd>/<dt> a <dd> or <dt>) when nothing special but
        <address>, <div> or <p> is above it."""
        names = (b"li",) if name == b"li" else (b"dd", b"dt")
        pos = max(self.top(n) for n in names)
        if pos < 0:
            return
        for i in range(len(self.stack) - 1, pos, -1):
            above, ns = self.stack[i]
            if ns != HTML or (above in _SPECIAL and above not in (b"address", b"div", b"p")):
                return
        self.pop_to(pos)

    def _close_cells(self, name: bytes) -> None:
        """Inside a table, a new cell closes the open cell; a row, the cell and the row; a
        section, the cell, the row and the section."""
        closing = [b"td", b"th"]
        if name not in (b"td", b"th"):
            closing.append(b"tr")
        if name in _TABLE_SECTIONS:
            closing += sorted(_TABLE_SECTIONS)
        for what in closing:
            table = self.top(b"table")
            pos = self.top(what)
            if table >= 0 and pos > table and self.last(self.scope) <= pos:
                self.pop_to(pos)

    def _implied_rows(self, name: bytes) -> None:
        """A row outside a table section gets a <tbody>; a cell outside a row, a <tr> (and a
        <tbody>): counted whenever the table has none open."""
        table = self.top(b"table")
        if name in _TABLE_SECTIONS or table < 0:
            return
        if max(self.top(section) for section in _TABLE_SECTIONS) < table:
            self.push(b"tbody", HTML)
        if name != b"tr" and self.top(b"tr") < table:
            self.push(b"tr", HTML)

    def end(self, name: bytes) -> None:
        if self.in_head:
            if self.head_noscript:
                if name == b"noscript":
                    self.leave_head()  # closes the <noscript>
                    self.in_head = True
                    return
                if name != b"br":
                    return
            if name in (b"br", b"body", b"html"):
                self.leave_head()
            elif name != b"template":
                return  # other end tags in the head are dropped
        if self.stack and self.stack[-1][1] != HTML:  # the rules for foreign content
            if name in (b"br", b"p"):
                self.pop_foreign()
            else:
                pos = self.top(b"|" + name)
                if pos > self.last(self.html):
                    self.pop_to(pos)
                    return
        if name in _IGNORED or (name in _TABLE_PARTS and self.top(name) < self.top(b"table")):
            return
        if name == b"br":  # read as <br>
            self.text()
            self.count()
            return
        if name == b"p":
            pos = self.in_scope(b"p", (b"button",))
            if pos < 0:
                self.count()  # an empty <p> is created
            else:
                self.pop_to(pos)
            return
        if name == b"form":
            if self.stack and self.stack[-1] == (b"form", HTML):
                self.pop()
            return
        if name in _HEADINGS:
            pos = self.in_scope(b"<h>")
        elif name == b"li":
            pos = self.in_scope(name, (b"ol", b"ul"))
        elif name in _BLOCK_ENDS:
            pos = self.in_scope(name)
        else:  # formatting and any other element: only when nothing special is above it
            pos = self.top(name)
            if pos >= 0 and self.last(self.special) > pos:
                if name in _FORMATTING:
                    self.count(8)  # the adoption agency re-parents it into clones
                    self.copied(self.keys[pos], 8)
                return
            if pos < 0 and name in _FORMATTING:  # a formatting element left open: its end tag drops it
                for i in range(len(self.dangling) - 1, -1, -1):
                    if self.dangling[i].split(b" ", 1)[0] == name:
                        del self.dangling[i]
                        break
                return
        if pos >= 0:
            if name in _FORMATTING:
                self.keys[pos] = b""  # closed by its own end tag: not left open
            self.pop_to(pos)
