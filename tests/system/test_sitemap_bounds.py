"""A sitemap costs bounded memory and time, whatever it holds (issue 30, item 1).

Before, only finished `<url>` and `<sitemap>` elements were freed: 12,000,000 empty `<x/>`
(48 MB, 47 KB gzipped) took 57 s and about 1 GB, 3,000,000 nested elements 860 MB. Now every
finished element is freed, and a sitemap past the protocol's 50,000 entries or the element,
entry and depth bounds is rejected, with a note in the tick's summary; the pages are crawled
as without a sitemap."""

from __future__ import annotations

import gzip
import subprocess
import sys
import time
import tracemalloc
from pathlib import Path

import pytest

from mapwatch.store.sources.sitemaps import (
    MAX_ENTRY_ELEMENTS,
    MAX_SITEMAP_DEPTH,
    MAX_SITEMAP_ELEMENTS,
    MAX_SITEMAP_ENTRIES,
    sitemap_entries,
)
from tests.mapsite import MapSite, serve_site
from tests.system.test_live_map import cli_refresh, site_texts

NS = b'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'


def url(i: int) -> bytes:
    return (b"<url><loc>https://map.test/paper/2401.%05d/</loc><lastmod>2026-01-01T00:00:00Z</lastmod>"
            b"<changefreq>daily</changefreq><priority>0.5</priority></url>" % i)


def parse_measured(data: bytes) -> tuple[str, float, int]:
    """(the outcome, seconds, peak bytes allocated while parsing) of reading `data`."""
    tracemalloc.start()
    t = time.perf_counter()
    try:
        kind, entries = sitemap_entries(data)
        outcome = f"{kind}: {len(entries)}"
    except ValueError as e:
        outcome = f"rejected: {e}"
    took = time.perf_counter() - t
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return outcome, took, peak


PEAK = """
import resource, sys, time
from mapwatch.store.sources.sitemaps import sitemap_entries
data = open(sys.argv[1], "rb").read()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t = time.perf_counter()
try:
    sitemap_entries(data)
    print("read")
except ValueError as e:
    print("rejected:", e)
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


def test_a_flood_of_other_elements_is_rejected_in_bounded_memory(tmp_path: Path) -> None:
    bomb = gzip.compress(NS + b"<x/>" * 12_000_000 + b"</urlset>", 9)
    assert len(bomb) < 100_000  # what the site sends: 47 KB
    (tmp_path / "bomb.gz").write_bytes(bomb)
    proc = subprocess.run([sys.executable, "-c", PEAK, str(tmp_path / "bomb.gz")], capture_output=True,
                          text=True, check=True, timeout=120)
    outcome, figures = proc.stdout.splitlines()
    assert outcome == f"rejected: sitemap has more than {MAX_SITEMAP_ELEMENTS:,} elements"
    took, grown_kb = figures.split()
    # Decompressed and parsed in pieces, the elements freed as they end: the process grew by
    # a few MB (before: ~1 GB, 57 s; the figures are in tests/RELIABILITY.md).
    assert int(grown_kb) < 32 * 1024, grown_kb
    assert float(took) < 30  # (fails only if it hangs)


def test_finished_elements_are_freed_whatever_their_name() -> None:
    # 900,000 elements (under the element bound) that are neither <url> nor <sitemap>, then an
    # entry: accepted, and what they cost is freed as the parse goes.
    data = NS + b"<x/>" * 300_000 + url(1) + b"</urlset>"
    outcome, _took, peak = parse_measured(data)
    assert outcome == "urlset: 1"
    assert peak < 4_000_000, peak  # (kept, they took ~25 MB)


def test_deep_nesting_is_rejected_at_the_depth_bound() -> None:
    bomb = b"<urlset>" + b"<x>" * 3_000_000 + b"</x>" * 3_000_000 + b"</urlset>"
    outcome, _took, peak = parse_measured(bomb)
    assert outcome == f"rejected: sitemap nested deeper than {MAX_SITEMAP_DEPTH} elements"
    assert peak < len(bomb) + 5_000_000, peak


def test_an_entry_full_of_elements_is_rejected() -> None:
    bomb = NS + b"<url><loc>https://map.test/paper/1/</loc>" + b"<x/>" * (MAX_ENTRY_ELEMENTS + 1) + b"</url></urlset>"
    outcome, _took, _peak = parse_measured(bomb)
    assert outcome == f"rejected: a sitemap entry holds more than {MAX_ENTRY_ELEMENTS} elements"


def test_the_protocols_50000_entries_are_read_and_one_more_is_rejected() -> None:
    full = NS + b"".join(url(i) for i in range(MAX_SITEMAP_ENTRIES)) + b"</urlset>"
    kind, entries = sitemap_entries(gzip.compress(full))
    assert (kind, len(entries), entries[-1][0]) == ("urlset", MAX_SITEMAP_ENTRIES, "https://map.test/paper/2401.49999/")
    over = full.replace(b"</urlset>", url(MAX_SITEMAP_ENTRIES) + b"</urlset>")
    with pytest.raises(ValueError, match=f"sitemap lists more than {MAX_SITEMAP_ENTRIES:,} entries"):
        sitemap_entries(over)


def test_an_overlong_loc_is_left_out() -> None:
    data = NS + b"<url><loc>https://map.test/paper/" + b"9" * 3000 + b"/</loc></url>" + url(1) + b"</urlset>"
    assert sitemap_entries(data) == ("urlset", [("https://map.test/paper/2401.00001/", "2026-01-01T00:00:00Z")])


@pytest.mark.parametrize("bomb", [b"flat", b"nested"])
def test_a_rejected_sitemap_is_reported_and_the_pages_are_still_crawled(bomb: bytes, tmp_path: Path,
                                                                        capsys: pytest.CaptureFixture[str]) -> None:
    body = (NS + b"<x/>" * 1_200_000 + b"</urlset>" if bomb == b"flat"
            else b"<urlset>" + b"<x>" * 100_000 + b"</x>" * 100_000 + b"</urlset>")
    texts = site_texts()
    with serve_site(MapSite(pages=texts, sitemap=False)) as plain:  # the same site without a sitemap
        assert cli_refresh(plain, tmp_path, db="plain.db") == 0
        without = {p for p in plain.paths_requested() if p.startswith("/paper/")}
    capsys.readouterr()
    site = MapSite(pages=texts, extra={"/sitemap-papers.xml.gz": (gzip.compress(body, 1), "application/gzip")})
    with serve_site(site) as site:
        assert cli_refresh(site, tmp_path) == 0
        requested = site.paths_requested()
    assert "/sitemap-papers.xml.gz" in requested  # the bomb was really served and read
    out = capsys.readouterr()
    reason = (f"sitemap has more than {MAX_SITEMAP_ELEMENTS:,} elements" if bomb == b"flat"
              else f"sitemap nested deeper than {MAX_SITEMAP_DEPTH} elements")
    assert f"sitemap {site.base}/sitemap-papers.xml.gz not read: {reason}" in out.out + out.err
    assert {p for p in requested if p.startswith("/paper/")} == without  # crawled as without a sitemap
    assert len(without) >= 2
