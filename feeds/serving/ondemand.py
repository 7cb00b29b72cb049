"""Paper feeds and paper pages built from the database when asked (docs/feeds.md, "Paper feeds on demand").

A paper's files change only when it gains an event, its page is stored again, or its own or a
citer's authors change, so its ETag is its mark (newest event id, newest snapshot id, newest
author change, read from indexed rows) with the
format version, base URL and entry limit. A conditional GET that matches is answered 304
from that row alone; otherwise the bytes come from a small LRU bounded by bytes, or are
built (feeds/paper_files.py, the function publish writes them with) and kept there. A feed
or page asked for gzipped has the ETag's gzip variant and its gzipped bytes, kept beside the
plain ones once made (feeds/serving/encoding.py).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from mapwatch.feeds import paper_files, people_feeds
from mapwatch.feeds.build import safe_path
from mapwatch.feeds.serving.encoding import compressible, gzip_etag, gzipped, matched
from mapwatch.store.clock import Clock, utc_now
from mapwatch.store.questions import feed_queries

DEFAULT_CACHE_BYTES = 32 * 1024 * 1024
FEED, PAGE, CHART = "feed", "page", "chart"
CONTENT_TYPES = {FEED: "application/atom+xml", PAGE: "text/html; charset=utf-8", CHART: "image/png",
                 **people_feeds.CONTENT_TYPES}
_MAX_ID = 64


@dataclass(frozen=True)
class Wanted:
    """A paper file a URL path asks for; `redirect`: the path lacks the folder's slash."""

    kind: str
    paper_id: str
    redirect: bool = False


def route(path: str) -> Wanted | None:
    """`/feeds/papers/<id>.atom`, `/papers/<id>/` (or `index.html`, or no slash: a redirect),
    `/papers/<id>/cited-by.png` -> what they ask for; anything else None. Old-style ids keep
    their slash (`hep-th/9901001`). A person's and a team's feed and page too, and a team's chart
    (feeds/people_feeds.py)."""
    if (person := people_feeds.route(path)) is not None:
        return Wanted(*person)
    if path.startswith("/feeds/papers/") and path.endswith(".atom"):
        wanted = Wanted(FEED, path[len("/feeds/papers/"):-len(".atom")])
    elif path.startswith("/papers/"):
        rest = path[len("/papers/"):]
        if rest.endswith("/index.html"):
            wanted = Wanted(PAGE, rest[:-len("/index.html")])
        elif rest.endswith("/cited-by.png"):
            wanted = Wanted(CHART, rest[:-len("/cited-by.png")])
        elif rest.endswith("/"):
            wanted = Wanted(PAGE, rest[:-1])
        else:
            wanted = Wanted(PAGE, rest, redirect=True)
    else:
        return None
    pid = wanted.paper_id
    if not pid or len(pid) > _MAX_ID or pid.count("/") > 1 or not safe_path(pid):
        return None
    return wanted


@dataclass(frozen=True)
class Answer:
    status: int  # 200, 304 or 404
    etag: str = ""
    body: bytes = b""
    content_type: str = ""
    gzipped: bool = False  # the body is gzipped (Content-Encoding: gzip)


@dataclass(frozen=True)
class _Held:
    """A built file in the LRU: its ETag, its bytes, and once asked for, its bytes gzipped."""

    tag: str
    body: bytes
    gz: bytes | None = None

    @property
    def size(self) -> int:
        return len(self.body) + len(self.gz or b"")


class PaperCache:
    """The on-demand builder with its LRU; thread-safe (the server calls it from worker
    threads, each with its own read connection). The counters say what it did."""

    def __init__(self, db_path: str | Path, base_url: str, limit: int = 100,
                 max_bytes: int = DEFAULT_CACHE_BYTES, clock: Clock = utc_now) -> None:
        self.db_path, self.max_bytes, self.clock = str(db_path), max_bytes, clock
        self.base_url, self.limit, self._settings = base_url, limit, ""
        self.settle(base_url, limit)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._lru: OrderedDict[tuple[str, str], _Held] = OrderedDict()
        self.cached_bytes = 0
        self.renders = self.hits = self.not_modified = self.missing = 0
        self.on_build: Callable[[str], None] | None = None  # told the kind of each file built (metrics)

    def settle(self, base_url: str, limit: int) -> None:
        """The address and entry limit the files are built with (known once the server is
        bound); they are part of every ETag, so a change is seen by every reader."""
        self.base_url, self.limit = base_url, limit
        self._settings = hashlib.blake2b(f"{base_url}\n{limit}".encode(), digest_size=4).hexdigest()

    def _db(self) -> Database:
        db = getattr(self._local, "db", None)
        if db is None:
            from mapwatch.store.database.db import open_db

            db = self._local.db = open_db(self.db_path, migrate=False, create=False)
        return db

    def etag(self, kind: str, paper_id: str) -> str | None:
        """The file's ETag as of now, or None when the paper has no such file."""
        if kind in people_feeds.KINDS:  # a person's or a team's (the "paper id" is its key)
            s = people_feeds.subject(self._db(), kind, paper_id)
            if s is None:
                return None
            theirs = people_feeds.mark(self._db(), s, kind, self.clock())
            return f'"s{people_feeds.FORMAT_VERSION}-{kind}-{theirs}-{self._settings}"'
        mark = feed_queries.paper_mark(self._db(), paper_id)
        if mark is None or (kind == CHART and not mark.last_snapshot_id):
            return None
        enriched = f"-a{mark.last_enrichment_id}" if mark.last_enrichment_id else ""  # authors (store/scholarly)
        return (f'"p{paper_files.FORMAT_VERSION}-{kind[0]}-{mark.last_event_id}-{mark.last_snapshot_id}'
                f'{enriched}-{self._settings}"')

    def get(self, kind: str, paper_id: str, if_none_match: str | None = None, *, gzip: bool = False) -> Answer:
        """The file as now: 404, 304 (If-None-Match names its ETag, plain or gzipped: the answer
        carries the one named), or 200 with its bytes, gzipped when `gzip` (the client takes
        gzip) and the kind is text."""
        tag = self.etag(kind, paper_id)
        if tag is None:
            with self._lock:
                self.missing += 1
            return Answer(404)
        ctype = CONTENT_TYPES[kind]
        gz = gzip and compressible(ctype)
        tags = (gzip_etag(tag), tag) if gz else (tag, gzip_etag(tag)) if compressible(ctype) else (tag,)
        if if_none_match is not None and (held_tag := matched(if_none_match, tags)) is not None:
            with self._lock:
                self.not_modified += 1
            return Answer(304, held_tag, content_type=ctype)
        key = (kind, paper_id)
        with self._lock:
            held = self._lru.get(key)
            if held is not None and held.tag == tag:
                self._lru.move_to_end(key)
                self.hits += 1
            else:
                held = None
        if held is None:
            body = self._build(kind, paper_id)
            if body is None:  # a chart of fewer than two points, or the paper went away meanwhile
                with self._lock:
                    self.missing += 1
                return Answer(404)
            with self._lock:
                self.renders += 1
            if self.on_build is not None:
                self.on_build(kind)
            held = _Held(tag, body, gzipped(body) if gz else None)
            self._keep(key, held)
        elif gz and held.gz is None:
            held = _Held(tag, held.body, gzipped(held.body))
            self._keep(key, held)
        if gz:
            assert held.gz is not None
            return Answer(200, tags[0], held.gz, ctype, gzipped=True)
        return Answer(200, tag, held.body, ctype)

    def _build(self, kind: str, paper_id: str) -> bytes | None:
        db = self._db()
        if kind in people_feeds.KINDS:
            return people_feeds.build_file(db, kind, paper_id, self.base_url, self.limit, self.clock())
        if kind == CHART:
            return paper_files.paper_chart(paper_files.chart_history(db, paper_id), paper_id)
        data = paper_files.paper_data(db, paper_id, self.limit)
        if data is None:
            return None
        if kind == FEED:
            return paper_files.paper_feed(data, self.base_url)
        history = paper_files.chart_history(db, paper_id)
        points = len(history) if len(history) >= 2 else 0
        return paper_files.paper_page(data, self.base_url, points, paper_files.FeedLookup(db))

    def _keep(self, key: tuple[str, str], held: _Held) -> None:
        if held.size > self.max_bytes // 4:  # one file never takes most of the cache
            return
        with self._lock:
            old = self._lru.pop(key, None)
            if old is not None:
                self.cached_bytes -= old.size
            self._lru[key] = held
            self.cached_bytes += held.size
            while self.cached_bytes > self.max_bytes:
                _, dropped = self._lru.popitem(last=False)
                self.cached_bytes -= dropped.size

    def __len__(self) -> int:
        return len(self._lru)

