"""Sitemap URLs checked against robots.txt per second (issue 21, item 5).

`python -m bench.robots_check [--urls N]`: a sitemap of N paper URLs (about 4 MB at 50,000)
is read with store.sources.sitemaps and every page queued through the crawl's own `enqueue` (the
robots.txt check with mapwatch's User-Agent, then the budget), as a tick does before its
first page request. Measured with the User-Agent computed once (now) and rebuilt from the
package metadata for every check (before the fix), in the same process.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable

from mapwatch.store.sources import http_client, http_source
from mapwatch.store.sources.http_client import HttpOptions
from mapwatch.store.sources.robots import parse_robots
from mapwatch.store.sources.sitemaps import sitemap_entries

BASE = "https://map.example"
ROBOTS = (b"User-agent: *\nDisallow: /private/\nDisallow: /paper/0000.00000/\n\n"
          b"User-agent: otherbot\nDisallow: /\n\nSitemap: https://map.example/sitemap.xml\n")


def sitemap(n: int) -> bytes:
    rows = "".join(f"<url><loc>{BASE}/paper/{2400 + i // 99999}.{i % 99999:05d}/</loc>"
                   f"<lastmod>2026-11-{1 + i % 28:02d}</lastmod></url>\n" for i in range(n))
    return f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{rows}</urlset>\n'.encode()


async def _nothing(_outcome: object) -> None:
    return None


def check_all(data: bytes, user_agent: Callable[[], str]) -> tuple[int, float]:
    """Read the sitemap and queue every page; (pages queued, seconds)."""
    started = time.perf_counter()
    crawl = http_source._Crawl(None, BASE, {}, {}, {}, HttpOptions(budget=10**9), _nothing)
    crawl.robots = parse_robots(f"{BASE}/robots.txt", ROBOTS)
    saved = http_source.user_agent
    http_source.user_agent = user_agent  # type: ignore[assignment]
    try:
        _kind, entries = sitemap_entries(data)
        for loc, _mod in entries:
            if (pid := crawl.id_of(loc)) is not None:
                crawl.enqueue(pid)
    finally:
        http_source.user_agent = saved  # type: ignore[assignment]
    return crawl.result.planned, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--urls", type=int, default=50_000)
    args = parser.parse_args()
    asyncio.set_event_loop(asyncio.new_event_loop())  # the crawl's queue wants a loop to exist
    data = sitemap(args.urls)
    print(f"sitemap: {args.urls:,} URLs, {len(data) / 1e6:.1f} MB")
    uncached = http_client.user_agent.__wrapped__  # the function before the cache: metadata per call
    for label, ua, runs in (("user agent computed once", http_client.user_agent, 3),
                            ("metadata read per check (before)", uncached, 1)):
        queued, seconds = min((check_all(data, ua) for _ in range(runs)), key=lambda r: r[1])
        print(f"{label}: {queued:,} pages queued in {seconds:.2f} s = {queued / seconds:,.0f} URLs/s "
              f"({seconds / queued * 1e3:.3f} ms a URL, best of {runs})")


if __name__ == "__main__":
    main()
