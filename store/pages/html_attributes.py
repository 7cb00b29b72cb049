"""The attributes of an HTML tag, counted as the tokenizer splits them (for store/pages/
html_bounds.py and its tree model: lexbor checks each new attribute of an element against those
before it, so one element's cost grows with their square)."""

from __future__ import annotations

import re

# Attributes: on one element (or end tag), and on the page (end tags' and copies' included).
MAX_HTML_ATTRIBUTES = 64
MAX_HTML_PAGE_ATTRIBUTES = 200_000

_ATTR_NAMES = re.compile(
    rb"[\t\n\f\r /]++|([^\t\n\f\r />][^\t\n\f\r />=]*+)"
    rb"(?>[\t\n\f\r ]*+=[\t\n\f\r ]*+(?>\"[^\"]*+\"|'[^']*+'|[^\t\n\f\r >]++)?)?")

# One attribute as the tokenizer splits them (its name, its value if any, the separators after it):
# the grammar of html_bounds' attribute strings, so matches follow each other without a gap.
_ATTRIBUTE = re.compile(
    rb"[^\t\n\f\r />][^\t\n\f\r />=]*+(?>[\t\n\f\r ]*+=[\t\n\f\r ]*+(?>\"[^\"]*+\"|'[^']*+'|[^\t\n\f\r >]++)?)?"
    rb"[\t\n\f\r /]*+")
_PLAIN_NAME = re.compile(rb"[a-z][a-z0-9-]{0,31}")  # a tag name a message may quote


def count_attributes(attrs: bytes, most: int = MAX_HTML_ATTRIBUTES) -> int:
    """The attributes in a tag's attribute string (html_bounds' group), as the tokenizer splits
    them (duplicates included), counted up to `most + 1` at most. A name takes a byte and is
    preceded by one (a separator, or a value's closing quote): a string holds at most half its
    length in attributes, so a short one is counted at once, a long one only as far as needed."""
    if len(attrs) < 2:
        return 0
    if len(attrs) <= 2 * (most + 1):
        return len(_ATTRIBUTE.findall(attrs))
    n = 0
    for _ in _ATTRIBUTE.finditer(attrs):
        n += 1
        if n > most:
            break
    return n


def tag_label(name: bytes, end: bool = False) -> str:
    """How a message names a tag: `<div>`, `</div>`, or only "element" for a name it should not
    quote (long, or not plain ASCII)."""
    if not _PLAIN_NAME.fullmatch(name):
        return "end tag" if end else "element"
    return f"end tag </{name.decode()}>" if end else f"element <{name.decode()}>"


def attribute_names(attrs: bytes) -> set[bytes]:
    """The names of a tag's attributes, in lower case."""
    names = set()
    pos = 0
    while pos < len(attrs):
        m = _ATTR_NAMES.match(attrs, pos)
        if m is None or m.end() == pos:
            break
        if m.group(1):
            names.add(m.group(1).lower())
        pos = m.end()
    return names
