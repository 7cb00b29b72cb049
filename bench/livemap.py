"""A live map that evolves over simulated time, served over loopback HTTP (issue 24's
freshness bench; the harness is bench/freshness.py).

The map starts as bench/generate.py's synthetic map (snapshot 1, same seed: same pages),
every page at version 0 changed at T0 - 1 day (`--initial-age`). Time is simulated: nothing sleeps; the
harness moves the site's clock with `advance`. New papers arrive as a Poisson process at
`rate` (a share of the map per simulated day); each cites k existing papers (k lognormal,
median 14, at most 250) drawn by preferential attachment (a paper once, plus once per
citation it has), so the cited papers' pages change: their count grows, their "data
through" date moves to the day of the change, and their "Built on by" list, cut to 30 "most
cited first", usually does not name the new citer (the order is by the citers' citation
counts at T0, new papers count 0, so a page's order never changes without a new version).
A new paper's own "Builds on" is cut to 30 the same way, so some of its references are on
neither page: the citation exists but no page lists it.

What the server answers (site variants: VARIANTS):
- `/paper/<id>/`: the page as HTML (bench.generate.html_page), `ETag` per page version and
  `Last-Modified` the time of its last change; `If-None-Match` (or, without it,
  `If-Modified-Since`) answers 304;
- `/robots.txt`: `User-agent: *`, `Disallow: /search/`, and `Sitemap: <base>/sitemap.xml`
  in the sitemap variants;
- `/sitemap.xml` (variants "sitemap-lastmod", "sitemap"): an index of `/sitemap-<k>.xml`,
  50,000 pages each, with each page's `lastmod` (its last change, a W3C date-time) in
  "sitemap-lastmod" and without it in "sitemap"; each file with an `ETag` of its bytes (as a
  static file server gives it: `If-None-Match` answers 304 while it is unchanged); 404 in the
  others;
- direction pages at the directions' paths (`/lr/<slug>/`): the first DIRECTION_LIST papers
  placed there, most cited first, or newest first in "directions-newest";
- anything else: 404.
Control (not counted as requests): `POST /_sim/advance?to=<epoch s>[&quiet=1]` moves the
clock, returns the new papers as JSON; `GET /_sim/counts?reset=1` the requests by kind;
`GET /_sim/unlisted` the new citations no page lists now; `POST /_sim/faults?5xx=S&truncated=S&timeouts=N
&hold=H&seed=K` makes a share S of the next page and direction requests answer 503 or a body cut short
(its Content-Length promised, half sent, the connection closed), and the next N hang H seconds before
answering (bench/month.py); `GET /_sim/faults` the faults injected so far, by kind (`timeout_abandoned`:
hangs whose client had gone when the answer was due). With `--sim-date` every answer's `Date` is the
site's clock, not the machine's.

    python -m bench.livemap --pages N [--seed S] [--variant V] [--rate R]   (prints "PORT <n>")
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import email.utils
import hashlib
import html
import math
import random
import sys
from array import array
from collections import Counter
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta

from aiohttp import web

from bench import generate as gen
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList, Placement

T0 = datetime(2026, 11, 20, 0, 0, tzinfo=UTC)
VARIANTS = ("sitemap-lastmod", "sitemap", "no-sitemap", "directions-newest")
DIRECTION_LIST = 100  # papers a direction page lists
SITEMAP_CHUNK = 50_000
DEFAULT_RATE = 0.003  # new papers per simulated day, as a share of the map
REFS_MEDIAN = 14
LIST_LIMIT = gen.LIST_LIMIT


def http_date(ts: float) -> str:
    return email.utils.formatdate(ts, usegmt=True)


def w3c(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds")


class LiveMap:
    """The site's state: pure, no HTTP (the server and the harness build the same one)."""

    def __init__(self, pages: int, seed: int = 1, rate: float = DEFAULT_RATE, initial_age: float = 1.0) -> None:
        m = gen.build_map(pages, seed)
        n = m.n
        self.seed, self.rate, self.n0 = seed, rate, n
        self.dirs = m.dirs
        self.ids: list[str] = m.ids[:n]
        self.index = {pid: i for i, pid in enumerate(self.ids)}
        self.titles: list[str] = m.titles[:n]
        self.posted: list[date] = m.posted[:n]
        self.main_dir = m.main_dir
        self.extra_dirs = m.extra_dirs
        self.refs: list[array] = m.refs
        self.refs_total = m.refs_total
        self.citers: list[list[int]] = m.citers
        self.init_deg = array("i", (len(c) for c in m.citers))  # the lists' order: counts at T0
        start = (T0 - timedelta(days=initial_age)).timestamp()
        self.version = array("i", bytes(4 * n))
        self.changed_at = array("d", [start]) * n
        self.pool = array("i", range(n))
        for r in m.refs:
            self.pool.extend(r)
        self.members: list[list[int]] = [[] for _ in m.dirs]
        for i in range(n):
            self.members[m.main_dir[i]].append(i)
            for d in m.extra_dirs[i]:
                self.members[d].append(i)
        self.rng = random.Random(seed * 7_919 + 24)
        self.now = T0.timestamp()
        self.month_seq: Counter[str] = Counter()
        self.generation = 0  # bumped by every change (caches of lists and sitemaps)

    @property
    def size(self) -> int:
        return len(self.ids)

    # --- evolution ----------------------------------------------------------------------

    def advance(self, to: float, quiet: bool = False) -> list[tuple[str, float, list[str]]]:
        """Move the clock to `to` (epoch seconds); new papers arrive on the way unless `quiet`.
        Returns [(new paper id, arrival time, ids it cites)]."""
        out: list[tuple[str, float, list[str]]] = []
        t = self.now
        while not quiet:
            per_second = self.rate * self.size / 86_400
            t += self.rng.expovariate(per_second)
            if t > to:
                break
            out.append(self.add_paper(t))
        self.now = max(self.now, to)
        return out

    def add_paper(self, t: float) -> tuple[str, float, list[str]]:
        rng = self.rng
        i = self.size
        day = datetime.fromtimestamp(t, UTC).date()
        month = f"{day.year % 100:02d}{day.month:02d}"
        self.month_seq[month] += 1
        pid = f"{month}.{50_000 + self.month_seq[month]:05d}"
        want = min(int(rng.lognormvariate(math.log(REFS_MEDIAN), 0.8)), 250, i)
        chosen: dict[int, None] = {}
        tries = 0
        while len(chosen) < want and tries < want * 4:
            tries += 1
            chosen[self.pool[int(rng.random() * len(self.pool))]] = None
        refs = array("i", chosen)
        self.ids.append(pid)
        self.index[pid] = i
        self.titles.append(gen._title(rng))
        self.posted.append(day)
        d = self.main_dir[int(rng.random() * i)] if i else 0
        self.main_dir.append(d)
        self.extra_dirs.append(())
        self.refs.append(refs)
        self.refs_total.append(len(refs) + rng.randint(0, 12))
        self.citers.append([])
        self.init_deg.append(0)
        self.version.append(1)
        self.changed_at.append(t)
        self.members[d].append(i)
        for j in refs:
            self.citers[j].append(i)
            self.version[j] += 1
            self.changed_at[j] = t
            self.pool.append(j)
        self.pool.append(i)
        self.generation += 1
        return pid, t, [self.ids[j] for j in refs]

    # --- what pages say -----------------------------------------------------------------

    def _order(self, items: list[int] | array) -> list[int]:
        deg = self.init_deg
        return sorted(items, key=lambda j: (-deg[j], j))

    def listed_refs(self, i: int) -> list[int]:
        return self._order(self.refs[i])[:LIST_LIMIT]

    def listed_citers(self, i: int) -> list[int]:
        return self._order(self.citers[i])[:LIST_LIMIT]

    def _listed(self, j: int, position: int) -> ListedPaper:
        pid = self.ids[j]
        return ListedPaper(id=pid, title=self.titles[j], year=self.posted[j].year, position=position,
                           url=f"{gen.HOST}/paper/{pid}/")

    def page(self, i: int) -> MapPage:
        pid = self.ids[i]
        d = self.dirs[self.main_dir[i]]
        placements = tuple(
            Placement(breadcrumb=x.breadcrumb, area=x.area, direction=x.name, slug=x.slug, url=x.url)
            for x in (d, *(self.dirs[k] for k in self.extra_dirs[i])))
        refs, citers = self.refs[i], self.citers[i]
        builds_on = built_on_by = None
        if refs:
            builds_on = PaperList(shown=min(LIST_LIMIT, len(refs)), total=len(refs), items=tuple(
                self._listed(j, k + 1) for k, j in enumerate(self.listed_refs(i))))
        if citers:
            built_on_by = PaperList(shown=min(LIST_LIMIT, len(citers)), total=len(citers), items=tuple(
                self._listed(j, k + 1) for k, j in enumerate(self.listed_citers(i))))
        through = datetime.fromtimestamp(self.changed_at[i], UTC).date()
        return MapPage(
            id=pid, title=self.titles[i], arxiv_url=f"https://arxiv.org/abs/{pid}",
            map_url=f"{gen.HOST}/paper/{pid}/", cited_by=len(citers), data_through=through,
            direction=d.name, direction_count=d.in_area, area=d.area, refs_in_map=len(refs),
            refs_total=max(len(refs), self.refs_total[i]), first_posted=self.posted[i],
            placements=placements, builds_on=builds_on, built_on_by=built_on_by,
            abstract=gen._abstract(self.seed, i))

    def text(self, i: int, base: str = gen.HOST) -> str:
        text = format_page(self.page(i))
        return text if base == gen.HOST else text.replace(gen.HOST, base)

    def html(self, i: int, base: str) -> bytes:
        return gen.html_page(self.text(i, base), self.titles[i]).encode()

    def etag(self, i: int) -> str:
        return f'"{i:x}-{self.version[i]}"'

    def last_modified(self, i: int) -> str:
        return http_date(self.changed_at[i])

    def direction_papers(self, d: int, newest: bool) -> list[int]:
        members = self.members[d]
        if newest:
            return sorted(members, key=lambda j: (self.posted[j], j), reverse=True)[:DIRECTION_LIST]
        cit = self.citers
        return sorted(members, key=lambda j: (-len(cit[j]), j))[:DIRECTION_LIST]

    def unlisted(self) -> list[tuple[str, str]]:
        """New citations (citer arrived after T0) that no page lists now."""
        out = []
        for i in range(self.n0, self.size):
            shown = set(self.listed_refs(i))
            for j in self.refs[i]:
                if j not in shown and i not in self.listed_citers(j):
                    out.append((self.ids[i], self.ids[j]))
        return out


# --- the server ------------------------------------------------------------------------

class Site:
    def __init__(self, live: LiveMap, variant: str, sim_date: bool = False) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r} (one of {', '.join(VARIANTS)})")
        self.live, self.variant = live, variant
        self.counts: Counter[str] = Counter()
        self.new_requested: set[int] = set()  # new papers whose page was asked for
        self.dir_paths = {f"/{d.slug}/": k for k, d in enumerate(live.dirs)}
        self._cache: dict[str, tuple[int, bytes, str]] = {}  # path -> (generation, body, etag)
        self.sim_date = sim_date
        self.fault_share = {"5xx": 0.0, "truncated": 0.0}
        self.timeouts_left, self.hold = 0, 25.0
        self.fault_rng = random.Random(live.seed)
        self.faulted: Counter[str] = Counter()  # faults injected, by kind

    @property
    def sitemap(self) -> bool:
        return self.variant.startswith("sitemap")

    def _cached(self, request: web.Request, key: str, make: Callable[[], bytes],
                content_type: str = "text/html; charset=utf-8") -> web.Response:
        hit = self._cache.get(key)
        if hit is None or hit[0] != self.live.generation:
            body = make()
            hit = (self.live.generation, body, '"' + hashlib.sha256(body).hexdigest()[:16] + '"')
            self._cache[key] = hit
        _gen, body, etag = hit
        if request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers={"ETag": etag})
        return web.Response(body=body, headers={"ETag": etag, "Content-Type": content_type})

    async def handle(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        live = self.live
        base = f"http://{request.host}"
        if path.startswith("/_sim/"):
            return self.control(request)
        if path.startswith("/paper/") or path in self.dir_paths:
            fault = await self._fault(request)
            if fault is not None:
                return fault
        if path == "/robots.txt":
            self.counts["robots"] += 1
            text = "User-agent: *\nDisallow: /search/\n" + (f"Sitemap: {base}/sitemap.xml\n" if self.sitemap else "")
            return web.Response(text=text, content_type="text/plain")
        if path.startswith("/paper/") and path.endswith("/"):
            i = live.index.get(path[len("/paper/"):-1])
            if i is None:
                self.counts["missing"] += 1
                raise web.HTTPNotFound(text="no such page\n")
            if i >= live.n0:
                self.new_requested.add(i)
            etag = live.etag(i)
            inm, ims = request.headers.get("If-None-Match"), request.headers.get("If-Modified-Since")
            if (inm == etag) if inm is not None else (ims is not None and ims == live.last_modified(i)):
                self.counts["page_304"] += 1
                return web.Response(status=304, headers={"ETag": etag})
            self.counts["page"] += 1
            return web.Response(body=live.html(i, base), headers={
                "ETag": etag, "Last-Modified": live.last_modified(i), "Content-Type": "text/html; charset=utf-8"})
        if path in self.dir_paths:
            k = self.dir_paths[path]
            resp = self._cached(request, path, lambda: self._direction(k, base))
            self.counts["direction_304" if resp.status == 304 else "direction"] += 1
            return resp
        if self.sitemap and path == "/sitemap.xml":
            self.counts["sitemap"] += 1
            chunks = (live.size + SITEMAP_CHUNK - 1) // SITEMAP_CHUNK
            items = "".join(f"<sitemap><loc>{base}/sitemap-{k}.xml</loc></sitemap>\n" for k in range(chunks))
            return web.Response(text='<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns='
                                     f'"http://www.sitemaps.org/schemas/sitemap/0.9">\n{items}</sitemapindex>\n',
                                content_type="application/xml")
        if self.sitemap and path.startswith("/sitemap-") and path.endswith(".xml"):
            self.counts["sitemap"] += 1
            try:
                k = int(path[len("/sitemap-"):-len(".xml")])
            except ValueError:
                raise web.HTTPNotFound() from None
            lo, hi = k * SITEMAP_CHUNK, min(live.size, (k + 1) * SITEMAP_CHUNK)
            if lo >= hi:
                raise web.HTTPNotFound()
            lastmod = self.variant == "sitemap-lastmod"

            def urlset() -> bytes:
                urls = "".join(
                    f"<url><loc>{base}/paper/{live.ids[i]}/</loc>"
                    + (f"<lastmod>{w3c(live.changed_at[i])}</lastmod>" if lastmod else "") + "</url>\n"
                    for i in range(lo, hi))
                return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org'
                        f'/schemas/sitemap/0.9">\n{urls}</urlset>\n').encode()

            # An ETag of its bytes, as a static file server gives: unchanged files answer 304.
            resp = self._cached(request, path, urlset, "application/xml")
            if resp.status == 304:
                self.counts["sitemap"] -= 1
                self.counts["sitemap_304"] += 1
            return resp
        self.counts["other"] += 1
        raise web.HTTPNotFound(text="not found\n")

    def _direction(self, k: int, base: str) -> bytes:
        live = self.live
        d = live.dirs[k]
        papers = live.direction_papers(k, newest=self.variant == "directions-newest")
        items = "".join(f'<li><a href="{base}/paper/{live.ids[j]}/">{html.escape(live.titles[j])}</a>'
                        f" ({live.posted[j].year})</li>" for j in papers)
        return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>{html.escape(d.name)}</title></head>"
                f"<body><article><h1>{html.escape(d.name)}</h1><p>{len(live.members[k])} papers placed here.</p>"
                f"<ul>{items}</ul></article></body></html>\n").encode()

    async def _fault(self, request: web.Request) -> web.StreamResponse | None:
        """An injected fault for this request (POST /_sim/faults), or None to answer it."""
        if self.timeouts_left > 0:
            self.timeouts_left -= 1
            self.faulted["timeout"] += 1
            await asyncio.sleep(self.hold)  # the hang is the fault: the client's timeout must pass first
            if request.transport is None or request.transport.is_closing():
                self.faulted["timeout_abandoned"] += 1
            return None
        r = self.fault_rng.random()
        if r < self.fault_share["5xx"]:
            self.faulted["5xx"] += 1
            return web.Response(status=503, text="injected fault\n")
        if r < self.fault_share["5xx"] + self.fault_share["truncated"]:
            body = b"<!DOCTYPE html>\n<html><body><article>" + b"x" * 4096 + b"</article></body></html>\n"
            resp = web.StreamResponse(headers={"Content-Type": "text/html; charset=utf-8"})
            resp.content_length = len(body)
            await resp.prepare(request)
            await resp.write(body[:len(body) // 2])
            if request.transport is not None:
                request.transport.close()
            self.faulted["truncated"] += 1
            return resp
        return None

    def control(self, request: web.Request) -> web.Response:
        live = self.live
        what = request.path[len("/_sim/"):]
        if what == "faults":
            if request.method == "POST":
                q = request.query
                for kind in self.fault_share:
                    self.fault_share[kind] = float(q.get(kind, 0.0))
                self.timeouts_left = int(q.get("timeouts", 0))
                self.hold = float(q.get("hold", self.hold))
                if "seed" in q:
                    self.fault_rng.seed(int(q["seed"]))
            return web.json_response(dict(self.faulted))
        if what == "advance":
            new = live.advance(float(request.query["to"]), quiet=request.query.get("quiet") == "1")
            return web.json_response({"new": new, "size": live.size})
        if what == "counts":
            out = dict(self.counts)
            out["new_pages_requested"] = len(self.new_requested)
            if request.query.get("reset") == "1":
                self.counts.clear()
            return web.json_response(out)
        if what == "unlisted":
            return web.json_response({"unlisted": live.unlisted()})
        raise web.HTTPNotFound()


def serve(live: LiveMap, variant: str, port: int = 0, site: Site | None = None) -> None:
    """Serve `site` (default: the live map's) on loopback until killed; prints "PORT <n>"."""
    import asyncio

    site = site or Site(live, variant)

    async def run() -> None:
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", site.handle)
        if site.sim_date:
            async def dated(_request: web.Request, response: web.StreamResponse) -> None:
                response.headers["Date"] = http_date(site.live.now)

            app.on_response_prepare.append(dated)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        tcp = web.TCPSite(runner, "127.0.0.1", port)
        await tcp.start()
        bound = tcp._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        print(f"PORT {bound}", flush=True)
        await asyncio.Event().wait()

    asyncio.run(run())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.livemap", description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, required=True)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--variant", choices=VARIANTS, default=VARIANTS[0])
    p.add_argument("--rate", type=float, default=DEFAULT_RATE)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--sim-date", action="store_true", help="answer with the site's clock in `Date`")
    p.add_argument("--initial-age", type=float, default=1.0,
                   help="days before T0 the initial map's pages last changed (their Last-Modified and lastmod)")
    a = p.parse_args(argv)
    live = LiveMap(a.pages, a.seed, a.rate, a.initial_age)
    with contextlib.suppress(KeyboardInterrupt):
        serve(live, a.variant, a.port, Site(live, a.variant, a.sim_date))
    return 0


if __name__ == "__main__":
    sys.exit(main())
