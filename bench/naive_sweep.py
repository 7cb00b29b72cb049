"""The baseline of bench/freshness.py: a naive round-robin sweep at the same budget.

Each tick it asks for the next `budget` pages of a fixed rotation (the map's known ids, in
id order), conditionally (the ETag it last got), 4 at a time; it reads the sitemaps robots.txt
names (ids only, no lastmod) and the paper links of the pages it reads, and adds the ids it
did not know to the end of the rotation. Pages are parsed with mapwatch's parser and stored
with `store.database.save.save_pages`, so its citations land in the same tables as a refresh's.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Iterable
from datetime import datetime
from urllib.parse import urlsplit

import aiohttp
from sqlite_utils import Database

from mapwatch.store.database.prepared import SourceInfo
from mapwatch.store.database.save import save_pages
from mapwatch.store.errors import ParseError
from mapwatch.store.ids import normalize_id
from mapwatch.store.pages.model import MapPage
from mapwatch.store.pages.parse import parse_document
from mapwatch.store.sources.sitemaps import sitemap_entries

CONCURRENCY = 4
BATCH = 500


class NaiveSweep:
    def __init__(self, base: str, ids: Iterable[str]) -> None:
        self.base = base.rstrip("/")
        self.host = urlsplit(self.base).netloc
        self.order: list[str] = sorted(ids)
        self.known = set(self.order)
        self.pos = 0
        self.etags: dict[str, str] = {}

    def learn(self, pid: str | None) -> None:
        if pid and pid not in self.known:
            self.known.add(pid)
            self.order.append(pid)

    def tick(self, db: Database, now: datetime, budget: int) -> int:
        """One sweep of `budget` pages; returns the new citations stored."""
        pages = asyncio.run(self._crawl(budget))
        new = 0
        for k in range(0, len(pages), BATCH):
            new += save_pages(db, pages[k:k + BATCH], now).new_citations
        return new

    async def _crawl(self, budget: int) -> list[tuple[MapPage, SourceInfo]]:
        out: list[tuple[MapPage, SourceInfo]] = []
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as s:
            async with s.get(f"{self.base}/robots.txt") as r:
                robots = await r.text() if r.status == 200 else ""
            for line in robots.splitlines():
                if line.lower().startswith("sitemap:"):
                    await self._sitemap(s, line.split(":", 1)[1].strip())
            n = min(budget, len(self.order))
            batch = [self.order[(self.pos + k) % len(self.order)] for k in range(n)]
            self.pos = (self.pos + n) % max(1, len(self.order))
            todo: asyncio.Queue[str] = asyncio.Queue()
            for pid in batch:
                todo.put_nowait(pid)

            async def worker() -> None:
                while not todo.empty():
                    pid = todo.get_nowait()
                    got = await self._page(s, pid)
                    if got is not None:
                        out.append(got)

            await asyncio.gather(*(worker() for _ in range(CONCURRENCY)))
        return out

    async def _sitemap(self, s: aiohttp.ClientSession, url: str) -> None:
        pending = [url]
        while pending:
            async with s.get(pending.pop(0)) as r:
                if r.status != 200:
                    continue
                kind, entries = sitemap_entries(await r.read())
            for loc, _mod in entries:
                if kind == "index":
                    pending.append(loc)
                elif urlsplit(loc).netloc == self.host:
                    self.learn(normalize_id(loc))

    async def _page(self, s: aiohttp.ClientSession, pid: str) -> tuple[MapPage, SourceInfo] | None:
        url = f"{self.base}/paper/{pid}/"
        headers = {"If-None-Match": self.etags[pid]} if pid in self.etags else {}
        async with s.get(url, headers=headers) as r:
            if r.status != 200:
                return None
            data = await r.read()
            etag, modified, ctype = r.headers.get("ETag"), r.headers.get("Last-Modified"), r.headers.get("Content-Type")
        if etag:
            self.etags[pid] = etag
        try:
            page = parse_document(data, url=url, content_type=ctype)
        except ParseError:
            return None
        for lst in (page.builds_on, page.built_on_by):
            for it in (lst.items if lst else ()):
                if urlsplit(it.url).netloc == self.host:
                    self.learn(normalize_id(it.url))
        return page, SourceInfo(url, hashlib.sha256(data).hexdigest(), size=len(data), etag=etag,
                                last_modified=modified)
