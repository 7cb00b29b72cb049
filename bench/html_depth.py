"""How long one hostile HTML page under the 2 MB cap costs: parsed or rejected (issue 21, item 3;
issue 30, item 2: attributes).

    .venv/bin/python -m bench.html_depth [--repeat 3]

Each shape is a whole document (the seed page 2412.10400 as HTML, the hostile markup inside
its `<article>`), sized near 0.5 MB and near 1.9 MB. For each: the seconds `parse_document`
takes (the pre-scan of store.pages.html_bounds, then, if the page passes, the tree, the text and the
parse), best of `--repeat` (wall time; CPU time beside it: the machine is shared), and what came
of it. With `--lexbor`, also the seconds selectolax alone takes to build the tree of the first
shapes (what every page cost before the pre-scan; minutes for the deepest, so off by default).
Target: every page parsed or rejected in <= 2 s.

With `--crawl N`, a crawl of N heavy pages that parse (the realistic 1.9 MB list page, served
on loopback): the longest the crawl's event loop went without running a 10 ms ticker beside
it (pages are parsed in worker threads, store.sources.http_source: the loop keeps serving).
"""

from __future__ import annotations

import argparse
import html
import time
from collections.abc import Callable

from mapwatch.store.errors import ParseError
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.parse import MAX_PAGE_BYTES, parse_document, parse_page

URL = "https://mlsanity.com/paper/2412.10400/"
MB = 1024 * 1024


def seed_html() -> tuple[str, str]:
    """(before, after): the seed 2412.10400 as an HTML page, split where hostile markup goes."""
    page = parse_page((SEEDS_DIR / "2412.10400.txt").read_bytes())
    out = ['<!doctype html><html><head><meta charset="utf-8"><title>t</title></head><body>',
           "<nav><a href='/'>home</a></nav><article>", f"<h1>{html.escape(page.title)}</h1>",
           f'<p><a href="{page.arxiv_url}">arXiv</a> · <a href="{page.map_url}">HTML</a></p>',
           "<h2>Key facts</h2><ul>", f"<li>Cited by {page.cited_by} papers in the map.</li></ul>"]
    for heading, lst in (("Builds on", page.builds_on), ("Built on by", page.built_on_by)):
        assert lst is not None
        out.append(f"<h2>{heading} (most cited first, {lst.shown} of {lst.total})</h2><ul>")
        out += [f'<li><a href="{it.url}">{html.escape(it.title)}</a> ({it.year})</li>' for it in lst.items]
        out.append("</ul>")
    return "".join(out[:-1]), "</ul></article><footer>f</footer></body></html>"  # inside the last list


def fill(unit: str, size: int, head: str = "", tail: str = "", most: int | None = None) -> Callable[[str, str], bytes]:
    """A document of about `size` bytes: `head`, `unit` repeated (at most `most` times), `tail`
    inside the article."""
    def build(before: str, after: str) -> bytes:
        room = size - len(before) - len(after) - len(head) - len(tail)
        times = max(0, room // len(unit))
        return (before + head + unit * (times if most is None else min(most, times)) + tail + after).encode()
    return build


def names(n: int, first: int = 0, value: str = "") -> str:
    return " ".join(f"a{i}{value}" for i in range(first, first + n))


def one_tag(start: str, size: int, value: str = "", end: str = ">x") -> Callable[[str, str], bytes]:
    """A document of about `size` bytes: one tag (`start`, e.g. "<div") with as many distinct
    attributes as fit."""
    def build(before: str, after: str) -> bytes:
        room = size - len(before) - len(after) - len(start) - len(end)
        n = 0
        while room > 0:
            room -= len(f" a{n}{value}")
            n += 1
        return (before + start + " " + names(max(0, n - 1), value=value) + end + after).encode()
    return build


def tags(unit: Callable[[int], str], size: int) -> Callable[[str, str], bytes]:
    """A document of about `size` bytes: `unit(0)`, `unit(1)`, ... inside the article."""
    def build(before: str, after: str) -> bytes:
        room, out = size - len(before) - len(after), []
        while room > len(unit(len(out))):
            out.append(unit(len(out)))
            room -= len(out[-1])
        return (before + "".join(out) + after).encode()
    return build


def shapes(size: int) -> dict[str, Callable[[str, str], bytes]]:
    deep = "<div>" * 500  # just under the nesting limit
    ark = "".join(f"<b {names(63)} x={n}>" for n in range(490))  # alike formatting elements: compared
    return {
        "nested <div>, never closed": fill("<div>", size),
        "nested <div>, closed": fill("<div>", size // 2, tail="</div>" * (size // 12)),
        "nested <span><b> (formatting)": fill("<span><b>", size),
        "nested <table><td>": fill("<table><td>", size),
        "nested <svg><g>": fill("<g>", size, head="<svg>"),
        "500 deep, then </address> (scope checks)": fill("</address>", size, head=deep),
        "500 deep, then </p> (empty <p>s)": fill("</p>", size, head=deep),
        "500 deep, then text and <wbr>": fill("x<wbr>", size, head=deep),
        "400 open <b id=N> re-created per <p>": fill(
            "<p>x</p>", size, head="<p>" + "".join(f"<b id={i}>" for i in range(400)) + "</p>"),
        "misnested <b><div></b> (adoption agency)": fill("</b>x", size, head="<b>" + "<div>" * 400),
        "flat <br>": fill("<br>", size),
        "flat <i></i>": fill("<i></i>", size),
        "comments <!---->": fill("<!---->", size),
        "end tags that close nothing </x>": fill("</x>", size),
        "dropped end tags </>": fill("</>", size),
        "text only": fill("x ", size),
        "list items (a realistic page, as large as it gets)": fill(
            '<li><a href="https://mlsanity.com/paper/2412.10400/">A title of about average length</a>'
            " (2024)</li>", size),
        "one <div>, distinct attributes a0=x a1=x ...": one_tag("<div", size, "=x"),
        "one end tag </div a0 a1 ...>": one_tag("</div", size),
        "one tag cut off by the end, <div a0 a1 ...": one_tag("<div", size, end=""),
        "<body> tags of 64 distinct attributes (added to one)": tags(lambda i: f"<body {names(64, 64 * i)}>", size),
        "<i> of 64 attributes, as many as fit": fill(f"<i {names(64)}></i>", size),
        "<i> of 64 attributes, at most 3,000 (192,000)": fill(f"<i {names(64)}></i>", size, most=3_000),
        "3 open <b> of 64 attributes re-created per <p>": fill(
            "<p>x</p>", size, head=f"<p><b {names(64)}><b {names(63)} y><b {names(63)} z></p>"),
        "490 alike <b> of 64 attributes (Noah's Ark)": fill("x ", size, head=ark),
    }


def measure(doc: bytes, repeat: int) -> tuple[float, float, str]:
    best_wall = best_cpu = float("inf")
    outcome = ""
    for _ in range(repeat):
        w, c = time.perf_counter(), time.process_time()
        try:
            page = parse_document(doc, url=URL, content_type="text/html")
            outcome = f"parsed ({sum(len(lst.items) for lst in (page.builds_on, page.built_on_by) if lst)} items)"
        except ParseError as e:
            outcome = f"rejected: {e}"
        best_wall = min(best_wall, time.perf_counter() - w)
        best_cpu = min(best_cpu, time.process_time() - c)
    return best_wall, best_cpu, outcome


def crawl_stall(doc: bytes, pages: int) -> tuple[float, int]:
    """(the longest gap between ticks of a 10 ms ticker on the crawl's loop, pages parsed)."""
    import asyncio
    import threading

    from aiohttp import web

    from mapwatch.store.sources.crawl_outcomes import Fetched, Outcome
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.sources.http_source import crawl

    ids = [f"2611.{i:05d}" for i in range(pages)]
    bodies = {pid: doc.replace(b"2412.10400", pid.encode()) for pid in ids}
    served = asyncio.new_event_loop()
    ready = threading.Event()
    holder: dict[str, object] = {}

    async def page(request: web.Request) -> web.Response:
        return web.Response(body=bodies[request.match_info["id"]], content_type="text/html")

    async def start() -> None:
        app = web.Application()
        app.router.add_get("/paper/{id}/", page)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        holder["runner"] = runner
        holder["base"] = f"http://127.0.0.1:{runner.addresses[0][1]}"

    def serve() -> None:
        asyncio.set_event_loop(served)
        served.run_until_complete(start())
        ready.set()
        served.run_forever()

    threading.Thread(target=serve, daemon=True).start()
    ready.wait(10)
    parsed = 0

    async def emit(outcome: Outcome) -> None:
        nonlocal parsed
        parsed += isinstance(outcome, Fetched) and outcome.page is not None

    async def main() -> float:
        worst = 0.0
        done = False

        async def ticker() -> None:
            nonlocal worst
            last = time.perf_counter()
            while not done:
                await asyncio.sleep(0.01)
                now = time.perf_counter()
                worst = max(worst, now - last - 0.01)
                last = now

        tick = asyncio.create_task(ticker())
        await crawl(str(holder["base"]), ids, {}, emit, options=HttpOptions(budget=pages, timeout=60))
        done = True
        await tick
        return worst

    worst = asyncio.run(main())
    asyncio.run_coroutine_threadsafe(holder["runner"].cleanup(), served).result(10)  # type: ignore[attr-defined]
    served.call_soon_threadsafe(served.stop)
    return worst, parsed


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--crawl", type=int, default=0, metavar="N", help="time a crawl of N heavy pages")
    p.add_argument("--lexbor", action="store_true", help="also time selectolax alone on the nested shapes")
    a = p.parse_args()
    before, after = seed_html()
    worst = 0.0
    print(f"{'shape':52} {'size':>9} {'wall s':>7} {'cpu s':>6}  outcome")
    for size in (512 * 1024, int(1.9 * MB)):
        for name, build in shapes(size).items():
            doc = build(before, after)
            assert len(doc) <= MAX_PAGE_BYTES
            wall, cpu, outcome = measure(doc, a.repeat)
            worst = max(worst, wall)
            print(f"{name:52} {len(doc):>9,} {wall:>7.3f} {cpu:>6.3f}  {outcome}")
    print(f"worst: {worst:.3f} s (target <= 2 s): {'met' if worst <= 2 else 'NOT met'}")
    if a.crawl:
        doc = shapes(int(1.9 * MB))["list items (a realistic page, as large as it gets)"](before, after)
        stall, fetched = crawl_stall(doc, a.crawl)
        print(f"crawl of {a.crawl} pages of {len(doc):,} bytes: {fetched} parsed; "
              f"longest event-loop stall {stall * 1000:.0f} ms")
    if a.lexbor:
        from selectolax.lexbor import LexborHTMLParser

        for n in (100_000,):  # (380,000, the 1.9 MB page, runs for minutes)
            doc = "<div>" * n
            w = time.perf_counter()
            LexborHTMLParser(doc)
            print(f"selectolax alone, {n:,} nested <div> ({len(doc):,} bytes): {time.perf_counter() - w:.1f} s")


if __name__ == "__main__":
    main()
