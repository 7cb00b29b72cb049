"""Pure building of the web pages: stored entries -> HTML bytes. No I/O, no clock of its own.

The pages are the feeds' face in a browser (docs/feeds.md, "Web pages"): the index `/`, a page per
direction at `directions/<slug>/` and a page per paper at `papers/<id>/`, each an
`index.html` in its folder, plus one stylesheet and one small script shared by all.

- Every text is escaped; every link to elsewhere goes through `external_href` (http and
  https only); links between the pages are relative, so the folder works under any address.
- The same entries give the same bytes: timestamps come from the database and "now" is
  passed in (it only moves the index's 7- and 30-day counts).
- Everything works without JavaScript; the script only adds the copy buttons and the
  index's filter-as-you-type (docs/feeds.md, "Web pages").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from html import escape
from importlib import resources

from mapwatch.feeds.build import (
    clean,
    direction_feed_path,
    newest_first,
    paper_feed_path,
    safe_http_url,
    safe_path,
    stamp,
)
from mapwatch.store.ids import paper_label
from mapwatch.store.questions.feed_queries import CountGrowth, DirectionActivity, LeadPaper, PaperFacts
from mapwatch.store.questions.types import (
    PROVENANCE_NAMES,
    CitingContext,
    Direction,
    NewCiter,
    PaperRef,
    intent_words,
)

SITE = "mapwatch"
STYLESHEET = "style.css"
SCRIPT = "site.js"
CHART = "cited-by.png"
RECENT_DAYS, MONTH_DAYS = 7, 30


def external_href(url: str | None) -> str | None:
    """The one gate for links to elsewhere: the URL if it is http(s) with a host (store/urls.py,
    the rule every output applies), else None (the text is then shown without a link)."""
    return safe_http_url(url)


def static_file(name: str) -> bytes:
    """The stylesheet or the script, shipped with the package (feeds/static/)."""
    return resources.files("mapwatch.feeds").joinpath("static", name).read_bytes()


def direction_page_path(slug: str) -> str:
    return f"directions/{slug}/index.html"


def paper_page_path(paper_id: str) -> str:
    return f"papers/{paper_id}/index.html"


def paper_chart_path(paper_id: str) -> str:
    return f"papers/{paper_id}/{CHART}"


def _t(text: str | None) -> str:
    return escape(clean(text))


def _join(base_url: str, rel: str) -> str:
    return f"{base_url.rstrip('/')}/{rel}"


def _a(url: str | None, text: str, cls: str = "") -> str:
    """A link to elsewhere, or the bare text when the URL is not http(s)."""
    label = _t(text) or "link"
    href = external_href(url)
    if href is None:
        return label
    klass = f' class="{cls}"' if cls else ""
    return f'<a{klass} href="{escape(href)}">{label}</a>'


@dataclass(frozen=True)
class _Here:
    """Where a page lies: relative links to the other pages start from it."""

    depth: int  # folders between the site's root and the page

    @property
    def root(self) -> str:
        return "../" * self.depth or "./"

    def to(self, folder: str) -> str | None:
        """A relative link to a page's folder (or a file), when its path is a safe one."""
        return f"{'../' * self.depth}{folder}" if safe_path(folder.rstrip("/")) else None

    def a(self, folder: str, text: str, cls: str = "") -> str:
        href = self.to(folder)
        if href is None:
            return _t(text)
        klass = f' class="{cls}"' if cls else ""
        return f'<a{klass} href="{escape(href)}">{_t(text) or "link"}</a>'


def _here_of(rel: str) -> _Here:
    return _Here(rel.count("/"))


def _long_date(day: date) -> str:
    return f"{day.day} {day.strftime('%B')} {day.year}"  # (the C locale's month names: English)


def _when(iso: str) -> str:
    dt = stamp(iso)
    return f'<time datetime="{escape(dt.isoformat())}">{dt.date().isoformat()} {dt.strftime("%H:%M")} UTC</time>'


def _page(title: str, here: _Here, body: str, *, alternates: Sequence[tuple[str, str]] = (),
          description: str = "", script: bool = True) -> bytes:
    links = "".join(f'<link rel="alternate" type="application/atom+xml" title="{_t(t)}" href="{escape(h)}">\n'
                    for t, u in alternates if (h := external_href(u)) is not None)
    desc = f'<meta name="description" content="{_t(description)}">\n' if description else ""
    js = f'<script src="{here.root if here.depth else ""}{SCRIPT}" defer></script>\n' if script else ""
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{_t(title)}</title>
{desc}<link rel="stylesheet" href="{here.root if here.depth else ""}{STYLESHEET}">
{links}{js}</head>
<body>
<header class="site"><a class="home" href="{here.root}">{SITE}</a>
<span>new citing papers, per research direction</span></header>
<main>
{body}</main>
<footer class="site"><p>Made by {SITE} from the citation map; every list here is also a feed.</p></footer>
</body>
</html>
""".encode()


def _breadcrumb(here: _Here, crumbs: Sequence[str | tuple[str, str]], current: str) -> str:
    """Links home, then each crumb (text, or (text, a page's folder) for a link), then the page."""
    items = [f'<li><a href="{here.root}">All directions</a></li>']
    for c in crumbs:
        text, folder = c if isinstance(c, tuple) else (c, None)
        if clean(text).strip():
            items.append(f"<li>{here.a(folder, text) if folder else _t(text)}</li>")
    items.append(f'<li aria-current="page">{_t(current)}</li>')
    return f'<nav class="crumbs" aria-label="Breadcrumb"><ol>{"".join(items)}</ol></nav>\n'


def _subscribe(here: _Here, feed_url: str, opml_url: str, what: str) -> str:
    value = escape(feed_url)
    feed, every = _a(feed_url, "Open the Atom feed", "feed-link"), _a(opml_url, "Every direction at once (OPML)")
    return f"""<section class="subscribe" aria-labelledby="subscribe">
<h2 id="subscribe">Subscribe</h2>
<p>Get {_t(what)} in your feed reader: an app (or website) that checks feeds like this one
and shows you each new item as it appears.</p>
<div class="copy-row">
<label for="feed-url">Feed address</label>
<input id="feed-url" class="feed-url" type="url" readonly value="{value}">
<button type="button" class="copy" data-copy="feed-url" hidden>Copy</button>
</div>
<p>{feed} · {every}</p>
</section>
"""


def _paper_link(here: _Here, p: PaperRef, has_page: Callable[[str], bool]) -> str:
    """A paper's title: to its page here when it has one, else to the map."""
    if has_page(p.id):
        return here.a(f"papers/{p.id}/", p.title or p.id)
    return _a(p.url or p.arxiv_url, p.title or p.id)


def _year(p: PaperRef) -> str:
    return f' <span class="year">({p.year})</span>' if p.year else ""


def intent_phrases(c: CitingContext) -> list[str]:
    """Semantic Scholar's intents of a citation as words, then "influential" where it says so."""
    return intent_words(c.intents, "its") + (["influential"] if c.influential else [])


def _citer_item(here: _Here, c: NewCiter, has_page: Callable[[str], bool], show_cites: bool) -> str:
    p = c.citer
    title = _a(p.url or p.arxiv_url, p.title or p.id, "title")
    arxiv = _a(p.arxiv_url, paper_label(p.id), "arxiv")
    if c.byline and (venue := c.byline.outside_venue()):
        arxiv += f' · <span class="venue">in {_t(venue)}</span>'  # a citer beyond arXiv, named with its venue
    cites = ""
    if show_cites and c.cites:
        cites = ('<p class="cites">Cites ' + ", ".join(_paper_link(here, x, has_page) + _year(x) for x in c.cites)
                 + "</p>")
    own = f' · {here.a(f"papers/{p.id}/", "its page")}' if has_page(p.id) else ""
    by = f'<p class="byline">{_t(c.byline.short())}</p>' if c.byline and c.byline.authors else ""
    mark = ""
    if c.self_cites:
        same = ", ".join(_t(x.title or x.id) for x in c.cites if x.id in c.self_cites)
        mark = (f' <span class="self-citation" title="It shares an author with {same}">self-citation</span>'
                if show_cites else ' <span class="self-citation">self-citation</span>')
    if c.at_first_read:  # not new: already there when mapwatch first read what it cites
        posted = f", posted {_t(c.posted[:10])}" if c.posted else ""
        seen = f'<span class="first-read">known at first read</span> {_when(c.first_seen)}{posted}'
    else:
        seen = f"first seen {_when(c.first_seen)}"
    if c.provenance != "map":  # no map page names it yet
        seen += f' <span class="provenance">from {_t(PROVENANCE_NAMES[c.provenance])}</span>'
    if c.context is not None and (said := intent_phrases(c.context)):  # Semantic Scholar's, on a paper's page
        seen += f' · <span class="intent" title="Semantic Scholar">{_t(" · ".join(said))}</span>'
    return (f'<li class="entry" data-id="{_t(p.id)}" data-first-seen="{escape(c.first_seen)}">'
            f'<p class="head">{title}{_year(p)}{mark}</p>{by}{cites}'
            f'<p class="meta">{arxiv}{own} · {seen}</p></li>')


def _authors(f: PaperFacts) -> str:
    """The Authors fact of a paper's page: each name with their institutions, and its venue."""
    b = f.byline
    if b is None or not b.authors:
        return ""
    names = [_t(a.name) + (f' <span class="inst">({_t("; ".join(a.institutions[:2]))})</span>'
                           if a.institutions else "") for a in b.authors]
    out = f"<dt>Authors</dt><dd>{', '.join(names)}</dd>"
    if b.venue or b.journal_ref:
        out += f"\n<dt>Published in</dt><dd>{_t(b.venue or b.journal_ref)}</dd>"
    return out


def _growth_item(p: PaperRef, g: CountGrowth) -> str:
    n = g.unlisted
    return (f'<li class="entry growth" data-first-seen="{escape(g.seen_at)}"><p class="head">Gained {n} '
            f'{"citer" if n == 1 else "citers"} not listed on the map page</p>'
            f'<p class="meta">cited by {g.old_count:,} → {g.new_count:,} papers in the map (the page lists the most '
            f"cited only) · seen {_when(g.seen_at)}</p></li>")


def _by_day(items: Sequence[tuple[str, str]], empty: str) -> str:
    """(first_seen, <li>) newest first -> a heading per day, each with its list."""
    if not items:
        return f'<p class="empty">{_t(empty)}</p>\n'
    out: list[str] = []
    day: date | None = None
    for when, li in items:
        d = stamp(when).date()
        if d != day:
            if day is not None:
                out.append("</ol>\n")
            out.append(f'<h3 class="day"><time datetime="{d.isoformat()}">{_long_date(d)}</time></h3>\n'
                       '<ol class="entries">\n')
            day = d
        out.append(li + "\n")
    out.append("</ol>\n")
    return "".join(out)


def _leaders(here: _Here, papers: Sequence[LeadPaper], has_page: Callable[[str], bool], ranked: bool) -> str:
    rows = []
    for lp in papers:
        count = f"cited by {lp.cited_by:,}" if lp.cited_by is not None else "no page in the map yet"
        rank = f'<span class="rank">#{lp.rank}</span> ' if ranked and lp.rank is not None else ""
        rows.append(f"<li>{rank}{_paper_link(here, lp.paper, has_page)}{_year(lp.paper)} "
                    f'<span class="count">{count}</span></li>')
    return '<ol class="papers">\n' + "\n".join(rows) + "\n</ol>\n"


def direction_page(d: Direction, citers: Sequence[NewCiter], most_cited: Sequence[LeadPaper],
                   by_pagerank: Sequence[LeadPaper], base_url: str, has_page: Callable[[str], bool]) -> bytes:
    """A direction's page: its newest citing papers (the entries of its feed, newest first, a
    heading per day), its most cited papers and PageRank leaders, and how to subscribe."""
    here = _here_of(direction_page_path(d.slug))
    feed = _join(base_url, direction_feed_path(d.slug))
    middle = d.breadcrumb.removeprefix(f"{d.area} / ").removesuffix(f" / {d.name}")
    crumbs = [d.area] + ([middle] if middle not in (d.breadcrumb, d.name, d.area) else [])
    n = len(citers)
    newest = _by_day([(c.dated, _citer_item(here, c, has_page, True)) for c in newest_first(citers)],
                     "No citing paper seen yet.")
    ranks = (_leaders(here, by_pagerank, has_page, True) if by_pagerank else
             '<p class="empty">Not computed yet: PageRank is computed after each refresh.</p>\n')
    body = (
        _breadcrumb(here, crumbs, d.name)
        + f"<h1>{_t(d.name)}</h1>\n"
        + f'<p class="lede">{_t(d.breadcrumb)} · {d.papers:,} {"paper" if d.papers == 1 else "papers"} placed here · '
        + (_a(d.url, "its page on the map") if external_href(d.url) else "no map page") + "</p>\n"
        + _subscribe(here, feed, _join(base_url, "feeds.opml"), f"the papers newly citing {d.name}")
        + '<section aria-labelledby="newest">\n<h2 id="newest">Newest citing papers</h2>\n'
        + f'<p class="note">The latest {n:,} {"entry" if n == 1 else "entries"} of the feed, newest first: each cites '
        + "papers placed in this direction.</p>\n" + newest + "</section>\n"
        + '<section aria-labelledby="most-cited">\n<h2 id="most-cited">Most cited papers</h2>\n'
        + _leaders(here, most_cited, has_page, False) + "</section>\n"
        + '<section aria-labelledby="pagerank">\n<h2 id="pagerank">PageRank leaders</h2>\n'
        + '<p class="note">By PageRank over the citations among this direction\'s papers.</p>\n'
        + ranks + "</section>\n")
    return _page(f"{d.name} · {SITE}", here, body, alternates=[(f"{d.name}: new citing papers", feed)],
                 description=f"Papers newly citing {d.name}, newest first.")


def paper_page(f: PaperFacts, citers: Sequence[NewCiter], growths: Sequence[CountGrowth], chart_points: int,
               base_url: str, has_page: Callable[[str], bool]) -> bytes:
    """A paper's page: its key facts with the "data through" stamp, its new citers as in its
    feed, the cited-by chart (`chart_points` >= 2: the chart file lies next to the page)."""
    p = f.paper
    here = _here_of(paper_page_path(p.id))
    feed = _join(base_url, paper_feed_path(p.id))
    facts = [f"<dt>arXiv</dt><dd>{_a(p.arxiv_url, p.id)}</dd>"]
    if authors := _authors(f):
        facts.append(authors)
    facts.append(f"<dt>On the map</dt><dd>{_a(p.url, 'its map page') if external_href(p.url) else 'no page yet'}</dd>")
    if p.year:
        facts.append(f"<dt>Year</dt><dd>{p.year}</dd>")
    if f.first_posted:
        facts.append(f"<dt>First posted</dt><dd>{_t(f.first_posted)}</dd>")
    if f.cited_by is not None:
        through = f" (data through {_t(f.data_through)})" if f.data_through else ""
        facts.append(f"<dt>Cited by</dt><dd>{f.cited_by:,} papers in the map{through}</dd>")
    elif f.data_through:
        facts.append(f"<dt>Data through</dt><dd>{_t(f.data_through)}</dd>")
    if f.refs_in_map is not None:
        of = f" of its {f.refs_total:,} references" if f.refs_total is not None else " references"
        facts.append(f"<dt>Builds on</dt><dd>{f.refs_in_map:,}{of} that are in the map</dd>")
    if f.directions:
        dirs = ", ".join(here.a(f"directions/{slug}/", name) for slug, name in f.directions)
        facts.append(f"<dt>Directions</dt><dd>{dirs}</dd>")
    items = [(c.dated, -c.first_event_id, _citer_item(here, c, has_page, False)) for c in citers]
    items += [(g.seen_at, -g.event_id, _growth_item(p, g)) for g in growths]
    items.sort(key=lambda t: (t[0], t[1]), reverse=True)  # newest first, as in its feed
    chart = ""
    if chart_points >= 2:
        chart = ('<section aria-labelledby="chart">\n<h2 id="chart">Cited-by count</h2>\n'
                 f'<p><img class="chart" src="{CHART}" width="600" height="260" alt="Chart of its cited-by count '
                 f'over {chart_points} stored snapshots of its map page"></p>\n</section>\n')
    crumbs = [(f.directions[0][1], f"directions/{f.directions[0][0]}/")] if f.directions else []
    body = (
        _breadcrumb(here, crumbs, p.id)
        + f"<h1>{_t(p.title) or _t(p.id)}</h1>\n"
        + '<section aria-labelledby="facts">\n<h2 id="facts">Key facts</h2>\n<dl class="facts">\n'
        + "\n".join(facts) + "\n</dl>\n</section>\n"
        + chart
        + _subscribe(here, feed, _join(base_url, "feeds.opml"), "the papers newly citing this one")
        + '<section aria-labelledby="newest">\n<h2 id="newest">New citing papers</h2>\n'
        + _by_day([(w, li) for w, _, li in items], "No citing paper seen yet.") + "</section>\n")
    return _page(f"{p.title or p.id} · {SITE}", here, body, alternates=[(f"{p.title}: new citing papers", feed)],
                 description=f"Papers newly citing arXiv {p.id}.")


def _feed_link(url: str, name: str) -> str:
    href = external_href(url)
    if href is None:
        return ""
    return (f'<a class="feed" href="{escape(href)}">Atom feed<span class="visually-hidden"> of {_t(name)}</span>'
            "</a>")


def activity_window(now: datetime) -> tuple[str, str]:
    """The instants the index counts from: 7 and 30 days before `now`, as stored timestamps are written."""
    return ((now - timedelta(days=RECENT_DAYS)).isoformat(timespec="seconds"),
            (now - timedelta(days=MONTH_DAYS)).isoformat(timespec="seconds"))


def index_page(dirs: Sequence[Direction], activity: dict[str, DirectionActivity], base_url: str,
               example_paper: str | None = None) -> bytes:
    """The front page: every direction grouped by area, with its new citing papers in the last
    7 and 30 days and the date of its newest, a filter box, and feed autodiscovery."""
    here = _Here(0)
    areas: dict[str, list[Direction]] = {}
    for d in dirs:
        areas.setdefault(clean(d.area).strip() or "Other", []).append(d)
    sections = []
    for area in sorted(areas, key=str.casefold):
        rows = []
        for d in areas[area]:
            act = activity.get(d.slug)
            recent, month = (act.recent, act.month) if act else (0, 0)
            day = stamp(act.newest).date().isoformat() if act and act.newest else ""
            newest = (f'newest <time datetime="{day}">{day}</time>' if day else
                      "none new since the first read" if act and act.known else "no citing paper yet")
            feed = _join(base_url, direction_feed_path(d.slug))
            words = f"{d.name} {d.breadcrumb} {d.slug}".casefold()
            rows.append(
                f'<li class="direction" data-search="{_t(words)}">{here.a(f"directions/{d.slug}/", d.name, "name")}'
                f'<span class="counts"><span class="n7">{recent:,} new in {RECENT_DAYS} days</span> · '
                f'<span class="n30">{month:,} in {MONTH_DAYS} days</span> · {newest}</span>'
                f' {_feed_link(feed, d.name)}</li>')
        sections.append(f'<section class="area">\n<h2>{_t(area)}</h2>\n<ul class="directions">\n'
                        + "\n".join(rows) + "\n</ul>\n</section>\n")
    opml_url = _join(base_url, "feeds.opml")
    paper_note = ""
    if example_paper:
        url = _join(base_url, paper_feed_path(example_paper))
        page = here.a(f"papers/{example_paper}/", f"arXiv {example_paper}")
        paper_note = (f'<p class="note">To follow one paper, open its page (e.g. {page}) or subscribe to '
                      f"<code>/feeds/papers/&lt;arXiv id&gt;.atom</code>, e.g. {_a(url, url)}.</p>\n")
    body = (
        "<h1>New citing papers, per research direction</h1>\n"
        '<p class="lede">Each direction\'s page lists the papers newly seen citing a paper placed in it, newest '
        "first; subscribe to it in your feed reader to get the next ones. \u201cNew\u201d counts the papers seen after "
        "mapwatch first read the papers they cite; those already citing them then are listed as known at first read. "
        "All directions at once: "
        f"{_a(opml_url, opml_url)} (OPML).</p>\n"
        + paper_note
        + '<form class="filter" role="search" hidden>\n<label for="filter">Filter directions</label>\n'
        '<input id="filter" type="search" autocomplete="off" placeholder="e.g. reward">\n</form>\n'
        '<p class="empty filter-none" hidden>No direction matches.</p>\n'
        + "".join(sections))
    alternates = [(d.name, _join(base_url, direction_feed_path(d.slug))) for d in dirs]
    return _page(f"{SITE} · new citing papers per research direction", here, body, alternates=alternates,
                 description="Papers newly citing each research direction of the citation map.")
