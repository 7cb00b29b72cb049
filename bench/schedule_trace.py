"""A trace of the crawl's schedule, tick by tick: the map's website on loopback (tests/mapsite.py,
no sitemap), read whole once, then hourly ticks on a simulated clock while new papers appear
(two every other tick, each placed in a known direction and citing three of the map's papers,
whose counts grow; their "Built on by" lists name the citer only while shorter than 30).

    .venv/bin/python -m bench.schedule_trace [PAGES] [TICKS] [BUDGET]

Prints per tick the new pages so far, how many were fetched, the requests sent, the pages
read, the new citations, the pages not due and the tick's CPU time (this process: the crawl
and the saving, the site's rendering too). bench/freshness.py is the benchmark; this shows
the schedule at work (bench/RESULTS.md, "Crawl schedule").
"""

from __future__ import annotations

import dataclasses
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path


def main(argv: list[str]) -> int:
    from mapwatch.store.database.db import open_db
    from mapwatch.store.pages.format import format_page
    from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList
    from mapwatch.store.sources.http_client import HttpOptions
    from mapwatch.store.sources.refresh import refresh
    from tests import pagegen
    from tests.conftest import FakeClock
    from tests.mapsite import MapSite, serve_site
    from tests.unit.store.test_crawl_schedule import new_paper

    defaults = [2000, 48, 500]
    n, ticks, budget = ([int(a) for a in argv[:3]] + defaults[len(argv):])[:3]
    rng = random.Random(3)
    pages: dict[str, MapPage] = {p.id: p for p in pagegen.generate(n).v1}
    texts = {pid: format_page(p) for pid, p in pages.items()}
    clock = FakeClock(datetime(2026, 9, 15, 12, tzinfo=UTC))
    db = open_db(Path(tempfile.mkdtemp()) / "trace.db")
    opts = HttpOptions(concurrency=4, timeout=5, retries=1, backoff=0.01, budget=budget)
    new_ids: list[str] = []
    total_requests = 0
    with serve_site(MapSite(pages=texts, sitemap=False)) as site:
        r = refresh(db, site.base, clock=clock, priority=sorted(texts), options=dataclasses.replace(opts, budget=10**9))
        print(f"read whole: {r.stored:,} pages stored, {r.requests:,} requests")
        for tick in range(ticks):
            clock.advance(hours=1)
            if tick % 2 == 0 and len(new_ids) < 28:
                for _ in range(2):
                    nid = f"2609.{40001 + len(new_ids)}"
                    cited = rng.sample(sorted(pages)[:200], 3)
                    paper = new_paper(nid, cited, pages[cited[0]].placements[0])
                    new_ids.append(nid)
                    texts[nid] = format_page(paper)
                    for c in cited:
                        p = pages[c]
                        lst = p.built_on_by
                        assert lst is not None
                        if lst.shown < 30:
                            items = (*lst.items, ListedPaper(id=nid, title=paper.title, year=2026,
                                                             position=len(lst.items) + 1,
                                                             url=f"https://mlsanity.com/paper/{nid}/"))
                            lst = PaperList(shown=len(items), total=lst.total + 1, items=items)
                        else:
                            lst = dataclasses.replace(lst, total=lst.total + 1)
                        pages[c] = dataclasses.replace(p, cited_by=(p.cited_by or 0) + 1, built_on_by=lst)
                        texts[c] = format_page(pages[c])
                site.swap(dict(texts))
            cpu = time.process_time()
            r = refresh(db, site.base, clock=clock, options=opts)
            cpu = time.process_time() - cpu
            total_requests += r.requests or 0
            got = db.conn.execute(
                f"SELECT count(*) FROM papers WHERE has_page = 1 AND id IN ({','.join('?' * len(new_ids))})",
                new_ids).fetchone()[0] if new_ids else 0
            print(f"tick {tick:3d}: new pages {len(new_ids):3d}, fetched {got:3d}, requests {r.requests:5,}, "
                  f"pages read {r.pages_read:5,}, new citations {r.new_citations:4,}, not due {r.not_due:6,}, "
                  f"CPU {cpu:.2f} s", flush=True)
    stored = db.conn.execute("SELECT count(*) FROM citations WHERE citing_id LIKE '2609.4%'").fetchone()[0]
    print(f"new citations stored: {stored} of {3 * len(new_ids)}; requests in {ticks} ticks: {total_requests:,}")
    db.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
