"""Which HTML parser reads map pages: selectolax (lexbor), lxml and justhtml, measured.

    .venv/bin/python -m bench.html_parsers [--rounds 1000]

needs `pip install -e '.[test,bench-html]'` (markdown renders the pages; lxml and justhtml are
the candidates not chosen). The two seed pages are rendered as HTML by the test site's
template "a" (tests/mapsite.py: a header with navigation, a sidebar, a footer, scripts), then
each parser, `--rounds` times over both pages: parses the document, finds the `<article>`,
and walks it depth first collecting the text and the links' hrefs (the work `store.pages.html`
does). The last line times `store.pages.html.html_to_page_text` itself (selectolax), and the whole
`parse_document` (HTML -> text -> `MapPage`) beside `parse_page` on the text. Best of 3.
CPU time (process_time) is given beside wall time: the machine is shared.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

Walk = Callable[[str], int]


def parse_selectolax(doc: str) -> object:
    from selectolax.lexbor import LexborHTMLParser

    return LexborHTMLParser(doc)


def parse_lxml(doc: str) -> object:
    import lxml.html

    return lxml.html.document_fromstring(doc)


def parse_justhtml(doc: str) -> object:
    from justhtml import JustHTML

    return JustHTML(doc, sanitize=False)


def walk_selectolax(doc: str) -> int:
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(doc)
    root = tree.css_first("article") or tree.body
    n = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_text_node:
            n += len(node.text_content or "")
            continue
        if node.tag == "a":
            n += len(node.attributes.get("href") or "")
        child = node.last_child
        while child is not None:
            stack.append(child)
            child = child.prev
    return n


def walk_lxml(doc: str) -> int:
    import lxml.html

    tree = lxml.html.document_fromstring(doc)
    found = tree.find(".//article")
    root = found if found is not None else tree.body
    n = 0
    stack = [root]
    while stack:
        el = stack.pop()
        n += len(el.text or "") + len(el.tail or "") if el is not root else len(el.text or "")
        if el.tag == "a":
            n += len(el.get("href") or "")
        stack.extend(reversed(list(el)))
    return n


def walk_justhtml(doc: str) -> int:
    from justhtml import JustHTML

    tree = JustHTML(doc, sanitize=False)  # the default sanitizer drops nav, forms, ...
    root = tree.query_one("article") or tree.query_one("body")
    n = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.name == "#text":
            n += len(node.data or "")
            continue
        if node.name == "a":
            n += len((node.attrs or {}).get("href") or "")
        stack.extend(reversed(node.children or []))
    return n


def best_of(runs: int, fn: Callable[[], object]) -> tuple[float, float]:
    best_wall = best_cpu = float("inf")
    for _ in range(runs):
        w, c = time.perf_counter(), time.process_time()
        fn()
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=1000, help="times each parser reads both pages")
    args = ap.parse_args(argv)

    from mapwatch.store.pages.html import html_to_page_text
    from mapwatch.store.pages.parse import parse_document, parse_page
    from tests.mapsite import render_page, seed_texts

    texts = list(seed_texts().values())
    docs = [render_page(t, "a") for t in texts]
    raw = [d.encode() for d in docs]
    pages = args.rounds * len(docs)
    size = sum(len(d) for d in raw) / len(raw) / 1024
    print(f"{len(docs)} seed pages as HTML (template a, {size:.1f} KiB/page) x {args.rounds} rounds = {pages:,} pages")
    candidates: dict[str, tuple[Callable[[str], object], Walk]] = {
        "selectolax (lexbor)": (parse_selectolax, walk_selectolax),
        "lxml": (parse_lxml, walk_lxml),
        "justhtml": (parse_justhtml, walk_justhtml),
    }
    for name, (parse, walk) in candidates.items():
        try:
            walk(docs[0])
        except ImportError:
            print(f"{name:22} not installed (pip install -e '.[bench-html]')")
            continue
        for label, fn in (("parse only  ", parse), ("parse + walk", walk)):
            wall, cpu = best_of(3, lambda fn=fn: [fn(d) for _ in range(args.rounds) for d in docs])
            print(f"{name:22} {label}: {wall:7.2f} s wall ({pages / wall:8,.0f} pages/s), "
                  f"{cpu:7.2f} s CPU ({1000 * cpu / pages:.3f} ms/page)")
    url = "https://mlsanity.com/paper/x/"
    for label, fn in [
        ("html_to_page_text", lambda: [html_to_page_text(d, url) for _ in range(args.rounds) for d in raw]),
        ("parse_document (HTML)", lambda: [parse_document(d, url=url) for _ in range(args.rounds) for d in raw]),
        ("parse_page (text)", lambda: [parse_page(t) for _ in range(args.rounds) for t in texts]),
    ]:
        wall, cpu = best_of(3, fn)
        print(f"{label:22} {wall:7.2f} s wall ({pages / wall:8,.0f} pages/s), "
              f"{cpu:7.2f} s CPU ({1000 * cpu / pages:.3f} ms/page)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
