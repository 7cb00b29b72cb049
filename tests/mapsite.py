"""The map's website on loopback: map pages rendered as HTML inside a full site template.

The live map serves each page as an HTML document rendered from the page's text; this
fixture does the same with a real Markdown library (`markdown`), so the HTML reader is
tested against markup it did not write.

Pure helpers (no server):
- `render_page(text, template="a", base=HOST, offer_text=False)`: one map page as a whole
  HTML document. Template "a": `<article>`, absolute links, the `arXiv: … · HTML: …` line as
  text. Template "b": `<main>` in div soup, relative links (`../2509.02547/`, `/lr/…/`), no
  `HTML:` line, the arXiv link an anchor (`<a href="https://arxiv.org/abs/ID">arXiv</a>`).
  Both carry a header with navigation, a search form, a sidebar of "popular" papers in the
  same `[title](/paper/<id>/) (year)` shape, a footer, inline scripts and JSON-LD, all
  listing papers that are in no page (`DECOY_IDS`): a reader that takes them in fails.
- `render_direction(name, papers, template, base)`, `render_not_found()`,
  `render_login_wall()`, `render_search(results)`: the site's other pages.
- `seed_texts()`: the bundled seed pages' text by id; `texts_of(pages)`: `MapPage`s as text.

The server: `with serve_site(MapSite(pages=seed_texts(), template="b")) as site:` runs it on
127.0.0.1 (port 0) in a thread of its own; `site.base` is its root URL. It serves
- `/paper/<id>/`: the page as HTML only (never the text, unless `offer_text=True`: then the
  head declares `<link rel="alternate" type="text/markdown" href="index.md">` and
  `/paper/<id>/index.md` serves the text);
- `/robots.txt`: `User-agent: *`, one `Disallow:` per `disallow` entry, `Crawl-delay:` if
  `crawl_delay` is set, and `Sitemap: <base>/sitemap.xml` (unless `sitemap=False`);
- `/sitemap.xml`: a sitemap index pointing at the gzipped `/sitemap-papers.xml.gz`, which lists
  every page with its `lastmod` (the page's "data through" date);
- the direction pages at the direction links' paths (`/lr/reinforcement-learning-for-reasoning/`),
  listing the papers placed there as `/paper/<id>/` links;
- anything else: a 404 HTML page in the site's template.
Every answer has an ETag and honours `If-None-Match` (304). `site.requests` records each
request as (path with query, headers), `site.times` its arrival (time.monotonic()),
`site.statuses` the status answered.
`robots_status` (e.g. 404, 503) makes `/robots.txt` answer that status instead.
`site.swap(texts)` replaces every page at once (a
later snapshot; change pages only through it). Pages are rendered on first request and kept
until `swap`; `prerender()` renders them all up front (to time a crawl without the rendering).
With `host_links=True` (the default) the pages' `https://mlsanity.com` links point at the
server itself.
"""

from __future__ import annotations

import gzip
import hashlib
import html
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from email.utils import format_datetime
from urllib.parse import urlsplit

import markdown
from aiohttp import web

from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import MapPage
from mapwatch.store.pages.parse import parse_page
from tests.sourceserver import serve_in_thread

HOST = "https://mlsanity.com"
# Papers the site's chrome lists (navigation, sidebar, footer, scripts, JSON-LD) and no page does.
POPULAR = [
    ("2301.99991", "A Sidebar-Only Paper: [Popular] (This Week)", 2023),
    ("2302.99992", "Another Popular Paper Nobody Cites", 2023),
]
NAV_PAPER = ("2303.99993", "Paper of the Day", 2023)
FOOTER_PAPER = ("2304.99994", "About the Map", 2024)
SCRIPT_PAPER = ("2305.99995", "A Paper Only in a Script", 2025)
JSONLD_PAPER = ("2306.99996", "A Paper Only in JSON-LD", 2025)
HIDDEN_PAPER = ("2307.99997", "A Paper Only in Hidden Markup", 2025)
DECOY_IDS = frozenset(p[0] for p in [*POPULAR, NAV_PAPER, FOOTER_PAPER, SCRIPT_PAPER, JSONLD_PAPER,
                                     HIDDEN_PAPER])
DECOY_DIRECTION = "/decoy/sidebar-direction/"

_URLISH = re.compile(r"(\]\([^)\s]*\)|https?://\S+)")  # over page text, never over HTML
_HEADER = re.compile(r"^arXiv: (?P<arxiv>\S+)(?: · HTML: (?P<html>\S+))?$")
_PAPER_LINK = re.compile(r"\]\((?P<host>https?://[^/)\s]+)/paper/(?P<id>[^)\s]+?)/\)")
_OTHER_LINK = re.compile(r"\]\((?P<host>https?://[^/)\s]+)(?P<path>/[^)\s]*)\)")


def seed_texts() -> dict[str, str]:
    """The bundled seed pages' text, by paper id."""
    return {f.stem.replace("_", "/"): f.read_text(encoding="utf-8") for f in sorted(SEEDS_DIR.glob("*.txt"))}


def texts_of(pages: Iterable[MapPage]) -> dict[str, str]:
    return {p.id: format_page(p) for p in pages}


def _literal(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace("*", "\\*")
            .replace("_", "\\_").replace("`", "\\`"))


def _markdown_source(text: str) -> str:
    """The page text as Markdown that renders to what the page says: `<`, `&`, `*`, `_` and
    backticks in titles and prose, and brackets in the titles of list items, are literal
    characters on the map, not markup."""
    out = []
    for line in text.split("\n"):
        k = line.rfind("](")
        if line.startswith("- [") and k > 3:  # a list item: its title, as the text parser reads it
            out.append("- [" + _literal(line[3:k]).replace("[", "\\[").replace("]", "\\]") + "](" + line[k + 2:])
            continue
        parts = _URLISH.split(line)
        for i in range(0, len(parts), 2):
            parts[i] = _literal(parts[i])
        out.append("".join(parts))
    return "\n".join(out)


def _relative_text(text: str, paper_id: str) -> str:
    """Template "b"'s links: the header line becomes an arXiv anchor without the HTML link,
    paper links `../<id>/`, other links root-relative."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = _HEADER.match(line.strip())
        if m:
            lines[i] = f"[arXiv]({m['arxiv']})"
            break
    text = "\n".join(lines)
    depth = "../" * (paper_id.count("/") + 1)
    text = _PAPER_LINK.sub(lambda m: f"]({depth}{m['id']}/)", text)
    return _OTHER_LINK.sub(lambda m: f"]({m['path']})" if "arxiv.org" not in m["host"] else m[0], text)


def _li(paper: tuple[str, str, int], href: str) -> str:
    _pid, title, year = paper
    return f'<li><a href="{html.escape(href)}">{html.escape(title)}</a> ({year})</li>'


def _chrome(template: str, base: str, title: str, content: str, *, head_extra: str = "",
            canonical: str | None = None, rel: str = "../") -> str:
    """A whole document around `content` in the site's template."""
    absolute = template == "a"

    def paper_href(pid: str) -> str:
        return f"{base}/paper/{pid}/" if absolute else f"{rel}{pid}/"

    popular = "".join(_li(p, paper_href(p[0])) for p in POPULAR)
    jsonld = json.dumps({
        "@context": "https://schema.org", "@type": "ScholarlyArticle", "name": title,
        "citation": [{"@type": "ScholarlyArticle", "url": f"{base}/paper/{JSONLD_PAPER[0]}/",
                      "name": JSONLD_PAPER[1]}],
    }).replace("</", "<\\/")
    script = ("<script>window.__STATE__ = " + json.dumps(
        {"related": f"- [{SCRIPT_PAPER[1]}]({base}/paper/{SCRIPT_PAPER[0]}/) ({SCRIPT_PAPER[2]})"})
        .replace("</", "<\\/") + ";</script>")
    canon = f'<link rel="canonical" href="{html.escape(canonical)}">' if canonical else ""
    head = (f'<meta charset="utf-8"><title>{html.escape(title)} · mlsanity</title>{canon}{head_extra}'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            "<style>body{font-family:sans-serif} .sidebar li::before{content:'★ '}</style>"
            f'<script type="application/ld+json">{jsonld}</script>')
    if absolute:
        return (
            f'<!DOCTYPE html>\n<html lang="en"><head>{head}</head>\n<body>\n'
            f'<header class="site"><a class="logo" href="{base}/">mlsanity</a>\n'
            f'<nav><ul><li><a href="{base}/">Home</a></li>'
            f'<li><a href="{base}{DECOY_DIRECTION}">A Sidebar Direction</a></li>'
            f'{_li(NAV_PAPER, paper_href(NAV_PAPER[0]))}</ul></nav>\n'
            f'<form role="search" action="{base}/search/"><input name="q" placeholder="Search 40,000 papers">'
            "<button>Search</button></form>\n</header>\n"
            f'<div class="layout">\n<article class="paper">\n'
            f'<p class="crumbs"><a href="{base}/">Home</a> / <a href="{base}/lr/">LLM reasoning</a> / paper</p>\n'
            f"{content}\n"
            f'<script type="application/ld+json">{jsonld}</script>\n'
            f"</article>\n"
            f'<aside class="sidebar"><h2>Popular this week</h2><ul>{popular}</ul></aside>\n</div>\n'
            f'<footer><p>© 2026 mlsanity · <a href="{paper_href(FOOTER_PAPER[0])}">{FOOTER_PAPER[1]}</a> '
            f"({FOOTER_PAPER[2]})</p><ul>{popular}</ul></footer>\n{script}\n</body></html>\n")
    hidden = _li(HIDDEN_PAPER, paper_href(HIDDEN_PAPER[0]))
    return (
        f"<!doctype html>\n<html><head>{head}</head>\n<body>\n<div id=\"app\">\n"
        f'<div class="topbar" role="navigation"><a href="/">mlsanity</a> '
        f'<a href="{paper_href(NAV_PAPER[0])}">{NAV_PAPER[1]}</a> ({NAV_PAPER[2]})</div>\n'
        '<div class="search"><form action="/search/"><input name="q"><button>Go</button></form></div>\n'
        '<main id="content">\n'
        f'<nav class="crumbs"><a href="/">Home</a> / <a href="{DECOY_DIRECTION}">A Sidebar Direction</a></nav>\n'
        f'<div class="paper"><div class="body">\n{content}\n</div></div>\n'
        f'<div hidden><ul>{hidden}</ul></div>\n'
        f'<noscript><ul>{popular}</ul></noscript>\n'
        f"<template><ul>{hidden}</ul></template>\n"
        f'<footer class="paper-foot"><ul>{popular}</ul></footer>\n'
        f"{script}\n</main>\n"
        f'<div class="sidebar"><div class="h">Popular</div><ul>{popular}</ul></div>\n'
        f'<div class="footer">© 2026 mlsanity · <a href="{paper_href(FOOTER_PAPER[0])}">{FOOTER_PAPER[1]}</a></div>\n'
        "</div>\n</body></html>\n")


def render_page(text: str, template: str = "a", base: str = HOST, *, offer_text: bool = False) -> str:
    """One map page's text as the site's HTML document (see the module's docstring)."""
    if template not in ("a", "b"):
        raise ValueError(f"unknown template {template!r}")
    page = parse_page(text)
    if base != HOST:
        text = text.replace(HOST, base)
    own = f"{base}/paper/{page.id}/"
    if template == "b":
        text = _relative_text(text, page.id)
    body = markdown.markdown(_markdown_source(text))
    if template == "a":
        # An aside inside the article, between the two lists: without a heading of its own,
        # a reader that kept it would add its papers to "Builds on".
        aside = (f'<aside class="related"><ul>{"".join(_li(p, f"{base}/paper/{p[0]}/") for p in POPULAR)}'
                 "</ul></aside>\n")
        at = body.find("<h2>Built on by")
        if at >= 0:
            body = body[:at] + aside + body[at:]
    extra = '<link rel="alternate" type="text/markdown" href="index.md">' if offer_text else ""
    return _chrome(template, base, page.title, body, head_extra=extra, canonical=own,
                   rel="../" * (page.id.count("/") + 1))


def render_direction(name: str, papers: list[tuple[str, str, int | None]], template: str = "a",
                     base: str = HOST) -> str:
    """A direction's page: its name and the papers placed in it, as `/paper/<id>/` links."""
    items = "".join(
        f'<li><a href="{html.escape(f"{base}/paper/{pid}/" if template == "a" else f"/paper/{pid}/")}">'
        f"{html.escape(title)}</a>{f' ({year})' if year else ''}</li>"
        for pid, title, year in papers)
    content = f"<h1>{html.escape(name)}</h1>\n<p>{len(papers)} papers placed here.</p>\n<ul>{items}</ul>"
    return _chrome(template, base, name, content, rel="/paper/")


def render_not_found(template: str = "a", base: str = HOST) -> str:
    return _chrome(template, base, "Not found",
                   "<h1>Page not found</h1>\n<p>No paper here. Try the search.</p>")


def render_login_wall(template: str = "a", base: str = HOST) -> str:
    return _chrome(template, base, "Sign in",
                   "<h1>Sign in to continue</h1>\n<p>This page is for members.</p>"
                   '<p><a href="/login/">Sign in</a></p>')


def render_search(results: list[tuple[str, str, int]], template: str = "a", base: str = HOST) -> str:
    items = "".join(_li(p, f"{base}/paper/{p[0]}/") for p in results)
    return _chrome(template, base, "Search",
                   f"<h1>Search results</h1>\n<h2>Papers ({len(results)})</h2>\n<ul>{items}</ul>")


@dataclass
class MapSite:
    """The site's state; see the module's docstring."""

    pages: dict[str, str] = field(default_factory=dict)  # paper id -> page text
    template: str = "a"
    host_links: bool = True
    offer_text: bool = False
    disallow: list[str] = field(default_factory=list)
    crawl_delay: float | None = None
    sitemap: bool = True
    robots_status: int = 200  # another status: /robots.txt answers it (404: none; 503: down)
    lastmod: dict[str, str] = field(default_factory=dict)  # paper id -> the sitemap's lastmod (default: its date)
    # the site's clock, for the Date header of its answers (None: aiohttp's, the real time)
    date: Callable[[], datetime] | None = None
    extra: dict[str, tuple[bytes, str]] = field(default_factory=dict)  # path -> (body, type) served as is, first
    requests: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    times: list[float] = field(default_factory=list)  # time.monotonic() of each request, as `requests`
    statuses: list[int] = field(default_factory=list)  # the status of each answer, as `requests`
    base: str = ""
    # Caches of what the pages served now say, each beside the `pages` dict it was made from.
    _directions: tuple[dict, dict[str, tuple[str, list[tuple[str, str, int | None]]]]] | None = None
    _lastmod: tuple[dict, dict[str, str]] | None = None
    _rendered: tuple[dict, dict[str, bytes]] | None = None

    def swap(self, pages: dict[str, str]) -> None:
        """Serve a later snapshot: every page replaced at once."""
        self.pages = dict(pages)

    def prerender(self) -> None:
        """Render every page now (pages are rendered once, on first request, and kept until
        `swap`): for timing a crawl without the rendering. Needs the server's `base`."""
        for pid in self.pages:
            self.render(pid)

    def render(self, paper_id: str) -> bytes | None:
        """The HTML the site serves for a page (None: no such page)."""
        pages = self.pages
        if self._rendered is None or self._rendered[0] is not pages:
            self._rendered = (pages, {})
        cache = self._rendered[1]
        body = cache.get(paper_id)
        if body is None:
            text = pages.get(paper_id)
            if text is None:
                return None
            body = cache[paper_id] = render_page(text, self.template, self._base(),
                                                 offer_text=self.offer_text).encode()
        return body

    def paths_requested(self) -> list[str]:
        return [path for path, _ in self.requests]

    def page_url(self, paper_id: str) -> str:
        return f"{self.base}/paper/{paper_id}/"

    def _base(self) -> str:
        return self.base if self.host_links else HOST

    def directions(self) -> dict[str, tuple[str, list[tuple[str, str, int | None]]]]:
        """Direction path -> (name, papers placed there), from the pages served now."""
        pages = self.pages
        if self._directions is not None and self._directions[0] is pages:
            return self._directions[1]
        out: dict[str, tuple[str, list[tuple[str, str, int | None]]]] = {}
        for text in pages.values():
            page = parse_page(text)
            year = page.first_posted.year if page.first_posted else None
            for placement in page.placements:
                path = urlsplit(placement.url).path
                out.setdefault(path, (placement.direction, []))[1].append((page.id, page.title, year))
        self._directions = (pages, out)
        return out

    def _respond(self, request: web.Request, body: bytes, content_type: str, status: int = 200,
                 charset: str | None = "utf-8") -> web.Response:
        etag = '"' + hashlib.sha256(body).hexdigest()[:16] + '"'
        headers = {"ETag": etag}
        if self.date is not None:
            headers["Date"] = format_datetime(self.date(), usegmt=True)
        if status == 200 and request.headers.get("If-None-Match") == etag:
            return web.Response(status=304, headers=headers)
        return web.Response(body=body, status=status, content_type=content_type, charset=charset,
                            headers=headers)

    async def handle(self, request: web.Request) -> web.StreamResponse:
        self.requests.append((request.path_qs, dict(request.headers)))
        self.times.append(time.monotonic())
        resp = await self._answer(request)
        self.statuses.append(resp.status)
        return resp

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        path = request.path
        base = self._base()
        if path in self.extra:
            body, content_type = self.extra[path]
            return self._respond(request, body, content_type, charset=None)
        if path == "/robots.txt" and self.robots_status != 200:
            return web.Response(status=self.robots_status, text="robots.txt unavailable")
        if path == "/robots.txt":
            lines = ["User-agent: *", *(f"Disallow: {d}" for d in self.disallow)]
            if self.crawl_delay is not None:
                lines.append(f"Crawl-delay: {self.crawl_delay:g}")
            if self.sitemap:
                lines.append(f"Sitemap: {self.base}/sitemap.xml")
            return self._respond(request, ("\n".join(lines) + "\n").encode(), "text/plain")
        if path == "/sitemap.xml":
            return self._respond(request, self._sitemap_index().encode(), "application/xml")
        if path == "/sitemap-papers.xml.gz":
            return self._respond(request, gzip.compress(self._sitemap().encode(), mtime=0),
                                 "application/gzip", charset=None)
        if path.startswith("/paper/") and path.endswith("/index.md") and self.offer_text:
            text = self.pages.get(path[len("/paper/"):-len("/index.md")])
            if text is not None:
                if self.host_links:
                    text = text.replace(HOST, self.base)
                return self._respond(request, text.encode(), "text/markdown")
        if path.startswith("/paper/") and path.endswith("/"):
            body = self.render(path[len("/paper/"):-1])
            if body is not None:
                return self._respond(request, body, "text/html")
        direction = self.directions().get(path)
        if direction is not None:
            name, papers = direction
            return self._respond(request, render_direction(name, papers, self.template, base).encode(),
                                 "text/html")
        return self._respond(request, render_not_found(self.template, base).encode(), "text/html", status=404)

    def _lastmods(self) -> dict[str, str]:
        """Paper id -> the page's "data through" date (ISO), for the sitemap's lastmod."""
        pages = self.pages
        if self._lastmod is not None and self._lastmod[0] is pages:
            return self._lastmod[1]
        out = {}
        for pid, text in pages.items():
            through = parse_page(text).data_through
            out[pid] = through.isoformat() if through else "2026-01-01"
        self._lastmod = (pages, out)
        return out

    def sitemap_lastmods(self) -> dict[str, str]:
        """What the sitemap says of each page: `lastmod` where given, else its date."""
        return {pid: self.lastmod.get(pid, mod) for pid, mod in self._lastmods().items()}

    def _sitemap_index(self) -> str:
        newest = max(self.sitemap_lastmods().values(), default="2026-01-01")
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                '<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n'
                f"<sitemap><loc>{self.base}/sitemap-papers.xml.gz</loc><lastmod>{newest}</lastmod></sitemap>\n"
                "</sitemapindex>\n")

    def _sitemap(self) -> str:
        urls = "".join(f"<url><loc>{html.escape(self.page_url(pid))}</loc><lastmod>{mod}</lastmod></url>\n"
                       for pid, mod in self.sitemap_lastmods().items())
        return ('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n{urls}</urlset>\n')


@contextmanager
def serve_site(site: MapSite | None = None) -> Iterator[MapSite]:
    """Run the site on loopback in a thread of its own (tests/sourceserver.py's
    `serve_in_thread`), so the synchronous `refresh` can talk to it."""
    site = site or MapSite(pages=seed_texts())
    with serve_in_thread(lambda app: app.router.add_get("/{path:.*}", site.handle)) as base:
        site.base = base
        yield site
