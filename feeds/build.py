"""Pure building: stored entries -> Atom, OPML and HTML bytes. No I/O, no clock.

Every timestamp comes from the database, so rebuilding an unchanged feed gives the same
bytes (and the same ETag). Entry ids are tag URIs that never depend on the host.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import lru_cache
from html import escape, unescape
from html.entities import name2codepoint
from typing import Any  # feedgen's FeedGenerator and entries (the library has no type hints)

from mapwatch.store.ids import id_kind, is_outside_key, paper_link
from mapwatch.store.questions.feed_queries import CountGrowth
from mapwatch.store.questions.types import PROVENANCE_NAMES, Direction, NewCiter, PaperRef
from mapwatch.store.records import clean as one_line
from mapwatch.store.urls import safe_http_url as _safe_http_url

# The same few URLs are checked for every entry a feed or page lists (a citer appears in many):
# the check is pure, so its answers are kept (bounded).
safe_http_url = lru_cache(maxsize=65536)(_safe_http_url)

TAG = "tag:mapwatch,2026:"
GENERATOR = "mapwatch"
AUTHOR = {"name": "mapwatch"}
_XML_INVALID = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ud800-\udfff\ufffe\uffff]")
_SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~-]*$")


def clean(text: str | None) -> str:
    """Text that XML can carry: control characters and lone surrogates removed."""
    return _XML_INVALID.sub("", text or "")


def safe_path(rel: str) -> bool:
    """A relative path we are willing to write and serve: plain segments, no dot-files,
    no '..', no backslashes."""
    parts = rel.split("/")
    return bool(parts) and all(_SAFE_SEGMENT.match(p) for p in parts)


def direction_feed_path(slug: str) -> str:
    return f"feeds/{slug}.atom"


def paper_feed_path(paper_id: str) -> str:
    return f"feeds/papers/{paper_id}.atom"


def stamp(iso: str) -> datetime:
    dt = datetime.fromisoformat(iso)
    return dt if dt.tzinfo else dt.replace(tzinfo=UTC)


def _join(base_url: str, rel: str) -> str:
    return f"{base_url.rstrip('/')}/{rel}"


def _page_link(p: PaperRef) -> str:
    """The paper's map page, else its arXiv page: only http(s) links (store/urls.py), so a
    row stored by an older version cannot put a `javascript:` link into a feed."""
    return safe_http_url(p.url) or _arxiv_link(p)


def _arxiv_link(p: PaperRef) -> str:
    return safe_http_url(p.arxiv_url) or safe_http_url(paper_link(p.id)) or "https://arxiv.org/"


def _paper_line(p: PaperRef) -> str:
    year = f" ({p.year})" if p.year else ""
    return f'<a href="{escape(clean(_page_link(p)))}">{escape(clean(p.title))}</a>{year}'


def _new_feed(feed_id: str, title: str, subtitle: str, self_url: str, alternate: str | None) -> Any:
    from feedgen.feed import FeedGenerator

    fg = FeedGenerator()
    fg.id(feed_id)
    fg.title(clean(title))
    fg.subtitle(clean(subtitle))
    fg.author(AUTHOR)
    fg.link(href=self_url, rel="self", type="application/atom+xml")
    alternate = safe_http_url(alternate)
    if alternate:
        fg.link(href=clean(alternate), rel="alternate", type="text/html")
    fg.generator(GENERATOR)
    fg.language("en")
    return fg


ENTRY_AUTHORS_MAX = 10  # <author> elements per entry; the content names how many more there are
AUTHOR_NAME_MAX = 200  # as the records bound them (store/records.py)
SELF_CITATION = "self-citation"  # the category term of an entry whose citer shares an author with what it cites


_MARKUP = re.compile(r"<[^<>]*>")  # a tag, a Discord mention (<@&222>, <#1>, <t:1>), an <address@in.brackets>
_REFERENCE = re.compile(r"&(#?\w+)")  # what the W3C validator reads as a character reference, `;` or not


def _plain_reference(m: re.Match[str]) -> str:
    ref = m.group(1)  # one unescaping could not resolve it: "&alpha", "&222"; "AT&T" stays
    return ref if ref in name2codepoint or ref == "apos" or not ref.isalpha() else m.group(0)


def plain_name(text: str | None) -> str:
    """A person's, an institution's or a team's name as every feed carries it (entry authors,
    bylines, a person's or team's feed title): plain text, one line, at most AUTHOR_NAME_MAX
    characters, with nothing a feed reader or validator takes for markup. A name from a
    hostile or careless source loses its tags and Discord mentions (`<b>x</b>` -> "x",
    `<@&222>` -> ""), its character references even when escaped more than once
    (`&amp;lt;script&amp;gt;` -> "" once the tag they spell is gone) and any angle bracket
    left, as well as control and format characters (bidi overrides). Pure; '' when nothing
    of a name is left."""
    t = text or ""
    for _ in range(4):  # each round resolves one level of escaping
        once = unescape(t)
        if once == t:
            break
        t = once
    t = _MARKUP.sub(" ", t).replace("<", " ").replace(">", " ")
    return one_line(_REFERENCE.sub(_plain_reference, t), AUTHOR_NAME_MAX)  # controls, bidi overrides out


def _byline_html(c: NewCiter) -> str:
    """"By A, B and 3 more (Institution)." and, for a self-citation, which cited papers share an author."""
    out = ""
    b = c.byline
    shown = b.authors[:ENTRY_AUTHORS_MAX] if b else ()
    names = [n for a in shown if (n := plain_name(a.name))]
    if b and names:  # (a name all markup is left out)
        more = len(b.authors) - len(shown)
        text = ", ".join(names) + (f" and {more} more" if more else "")
        inst = plain_name(b.authors[0].institutions[0]) if b.authors[0].institutions else ""
        out += f"<p>By {escape(text)}" + (f" ({escape(inst)})" if inst else "") + ".</p>"
    if c.self_cites:
        same = [x for x in c.cites if x.id in c.self_cites]
        out += ("<p>Self-citation: it shares an author with "
                + ", ".join(_paper_line(x) for x in same) + ".</p>")
    return out


def _citer_entry(fg: Any, entry_id: str, c: NewCiter, what: str) -> None:
    fe = fg.add_entry(order="append")
    p = c.citer
    fe.id(entry_id)
    # The citing paper's authors, so feed readers show them (the feed's own author stays the
    # fallback for entries whose authors are not known).
    for a in c.byline.authors[:ENTRY_AUTHORS_MAX] if c.byline else ():
        if name := plain_name(a.name):
            fe.author({"name": name, **({"uri": f"https://orcid.org/{a.orcid}"} if a.orcid else {})})
    if c.self_cites:
        fe.category({"term": SELF_CITATION, "label": "Self-citation"})
    fe.title(clean(f"{p.title} ({p.year})" if p.year else p.title))
    when = stamp(c.dated)  # a citer known at the first read: the citing paper's date where known
    fe.updated(when)
    fe.published(when)
    # One link only: feedgen 1.0 drops rel/type on entry links, and two untyped
    # alternates would break RFC 4287. The content links the arXiv page too.
    fe.link(href=clean(_page_link(p)))
    n = len(c.cites)
    cited = "".join(f"<li>{_paper_line(x)}</li>" for x in c.cites)
    venue = c.byline.outside_venue() if c.byline else None
    where = f", in {escape(plain_name(venue))}" if venue else ""  # a citer beyond arXiv, named with its venue
    html = (f"<p>{_paper_line(p)} (<a href=\"{escape(clean(_arxiv_link(p)))}\">{id_kind(p.id)}</a>{where}) cites "
            f"{n} {'paper' if n == 1 else 'papers'} of {escape(clean(what))}:</p><ul>{cited}</ul>"
            f"{_byline_html(c)}<p>{escape(seen_line(c))}</p>")
    fe.content(html, type="html")


def seen_line(c: NewCiter) -> str:
    """When the entry's citer was seen: first seen on a day, or known at the first read (docs/feeds.md,
    "What new means"), with the day it was first posted on arXiv where known."""
    seen = stamp(c.first_seen).date().isoformat()
    if is_outside_key(c.citer.id):  # docs/enrichment.md, "Citers beyond arXiv"
        return f"First seen on {seen}, from {PROVENANCE_NAMES[c.provenance]}: not on arXiv, so not in the map."
    if c.provenance != "map":  # docs/enrichment.md, "Citations the map does not name"
        return f"First seen on {seen}, from {PROVENANCE_NAMES[c.provenance]}: no map page names this citation yet."
    if not c.at_first_read:
        return f"First seen on {seen}."
    posted = f"; first posted on arXiv {c.posted[:10]}" if c.posted else ""
    return f"Known at the first read, on {seen} (already citing it then{posted})."


def newest_first(citers: Sequence[NewCiter]) -> list[NewCiter]:
    """Entries by the instant they carry, newest first (stable: the stored order among equals)."""
    return sorted(citers, key=lambda c: c.dated, reverse=True)


def direction_feed(d: Direction, citers: Sequence[NewCiter], base_url: str) -> bytes:
    """The Atom feed of papers newly citing papers placed in direction `d`, newest first."""
    fg = _new_feed(
        f"{TAG}direction/{d.slug}",
        f"{d.name}: new citing papers",
        f"Papers newly citing a paper placed in {d.breadcrumb}.",
        _join(base_url, direction_feed_path(d.slug)),
        _join(base_url, f"directions/{d.slug}/"),  # its web page (feeds/pages.py)
    )
    citers = newest_first(citers)
    for c in citers:
        _citer_entry(fg, f"{TAG}direction/{d.slug}/citer/{c.citer.id}", c, d.name)
    fg.updated(stamp(citers[0].dated) if citers else stamp(d.since))
    atom: bytes = fg.atom_str(pretty=True)  # feedgen is untyped
    return atom


def paper_feed(p: PaperRef, since: str, citers: Sequence[NewCiter], growths: Sequence[CountGrowth],
               base_url: str) -> bytes:
    """The Atom feed of one paper's new citers, and of count growth its page does not name."""
    fg = _new_feed(
        f"{TAG}paper/{p.id}",
        f"{p.title}: new citing papers",
        f"Papers newly citing arXiv {p.id} in the citation map.",
        _join(base_url, paper_feed_path(p.id)),
        safe_http_url(p.url) or safe_http_url(p.arxiv_url),
    )
    items: list[tuple[str, int, object]] = [(c.dated, c.first_event_id, c) for c in citers]
    items += [(g.seen_at, g.event_id, g) for g in growths]
    items.sort(key=lambda t: (t[0], -t[1]), reverse=True)  # newest first; same instant: page order
    for _, _, item in items:
        if isinstance(item, NewCiter):
            _citer_entry(fg, f"{TAG}paper/{p.id}/citer/{item.citer.id}", item, p.title)
        else:
            assert isinstance(item, CountGrowth)
            _growth_entry(fg, p, item)
    fg.updated(stamp(items[0][0]) if items else stamp(since))
    atom: bytes = fg.atom_str(pretty=True)  # feedgen is untyped
    return atom


def _growth_entry(fg: Any, p: PaperRef, g: CountGrowth) -> None:
    fe = fg.add_entry(order="append")
    fe.id(f"{TAG}paper/{p.id}/count/{g.event_id}")
    n = g.unlisted
    fe.title(clean(f"{p.title}: gained {n} {'citer' if n == 1 else 'citers'} not listed on the map page"))
    when = stamp(g.seen_at)
    fe.updated(when)
    fe.published(when)
    fe.link(href=clean(_page_link(p)))
    fe.content(f"<p>{_paper_line(p)}: cited by {g.old_count} → {g.new_count} papers in the map; "
               f"{n} of the new citers are not listed on its page (it lists the most cited only).</p>",
               type="html")


def opml(dirs: Sequence[Direction], base_url: str) -> bytes:
    """OPML 2.0 listing every direction feed, for import into feed readers."""
    rows = "\n".join(
        f'    <outline type="rss" text="{escape(clean(d.name))}" title="{escape(clean(d.name))}"'
        f' xmlUrl="{escape(_join(base_url, direction_feed_path(d.slug)))}"'
        + (f' htmlUrl="{escape(clean(u))}"' if (u := safe_http_url(d.url)) else "") + "/>"
        for d in dirs)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<opml version="2.0">\n  <head>\n'
        "    <title>mapwatch: new citing papers per research direction</title>\n  </head>\n"
        f"  <body>\n{rows}\n  </body>\n</opml>\n"
    ).encode()
