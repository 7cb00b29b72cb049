"""`python -m tests.slowparse ARGS`: `mapwatch ARGS` whose HTML pages take as long to parse as
lexbor takes without the pre-scan, each parse's start and end written to $SLOWPARSE_MARKS.

The pre-scan (store.pages.html_bounds) rejects every page known to be slow within
milliseconds, and the slowest page it lets through parses in about a second
(bench/html_depth.py). To stop a process while a parse runs for longer (a shape the pre-scan
does not know), this switches the pre-scan off in this process only; a page with 120,000
attributes on one element then keeps a parse thread in lexbor's C code (the GIL released)
for a minute or more. Nothing else of mapwatch is changed."""

from __future__ import annotations

import os
import sys

from selectolax.lexbor import LexborHTMLParser

from mapwatch.store.pages import html


def _mark(what: str) -> None:
    with open(os.environ["SLOWPARSE_MARKS"], "a", encoding="utf-8") as fh:
        fh.write(what + "\n")


def _parser(text: str) -> LexborHTMLParser:
    _mark(f"start {len(text)}")
    tree = LexborHTMLParser(text)
    _mark(f"end {len(text)}")
    return tree


def _no_bounds(data: bytes) -> None:
    return None


# What store.pages.html calls to check a page's bounds and to build its tree.
vars(html).update(LexborHTMLParser=_parser, check_html_bounds=_no_bounds)

if __name__ == "__main__":
    from mapwatch.cli import main

    sys.exit(main())
