"""A person's and a team's feed and web page, built from the database when asked (docs/feeds.md,
"People and teams"): each entry a paper newly citing one of their papers,
once, with the papers of theirs it cites, newest first.

- `/feeds/authors/<id>.atom` and `/authors/<id>/`: a person by OpenAlex author id (`A…`) or ORCID,
  once a paper of the map names them, or before when a /track follows them (empty, saying when
  it fills); any other well-formed id is not found, so no one can have feeds built without bound.
- `/feeds/teams/<feed_slug>.atom` and `/teams/<feed_slug>/`: a team, by its feed slug (its slug
  and 160 random bits, store.subscriptions.teams): unique across servers, not guessable. Its page
  also shows who cites it (store/questions/team_stats.py) over the last STATS_DAYS days, counted
  from the start of a day, with that as a chart at `/teams/<feed_slug>/who-cites.png`.

Their ETag (feeds/serving/ondemand.py) is their mark: the newest event of their papers and a
fingerprint of which papers those are (a person credited with a paper, a team gaining a member);
a team's page and chart add the day (their window moves daily) and the newest enrichment change
(the citers' authors, institutions and venues).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Literal

from sqlite_utils import Database

from mapwatch.feeds import build, pages
from mapwatch.feeds.team_chart import WIDTH, count_words, has_chart, height_of, team_chart_png
from mapwatch.store.clock import utc_now
from mapwatch.store.questions import feed_queries, team_stats
from mapwatch.store.questions import teams as people

FORMAT_VERSION = 2  # 2: a team's page shows who cites it
TEAM_FEED, TEAM_PAGE, AUTHOR_FEED, AUTHOR_PAGE = "team-feed", "team-page", "author-feed", "author-page"
TEAM_CHART = "team-chart"
KINDS = (TEAM_FEED, TEAM_PAGE, TEAM_CHART, AUTHOR_FEED, AUTHOR_PAGE)
CONTENT_TYPES = {TEAM_FEED: "application/atom+xml", AUTHOR_FEED: "application/atom+xml",
                 TEAM_PAGE: "text/html; charset=utf-8", AUTHOR_PAGE: "text/html; charset=utf-8",
                 TEAM_CHART: "image/png"}
STATS_DAYS = team_stats.DEFAULT_DAYS  # the window of a team page's "Who cites it"
TEAM_CHART_FILE = "who-cites.png"
_FEED_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{0,80}$")  # store.subscriptions.teams.feed_slug: at most 73


def route(path: str) -> tuple[str, str] | None:
    """(kind, key) of a person's or team's file, from its URL path; None for any other path."""
    for prefix, feed_kind, page_kind, valid in (("teams", TEAM_FEED, TEAM_PAGE, _FEED_SLUG.match),
                                                ("authors", AUTHOR_FEED, AUTHOR_PAGE, _author_id)):
        if path.startswith(f"/feeds/{prefix}/") and path.endswith(".atom"):
            kind, key = feed_kind, path[len(f"/feeds/{prefix}/"):-len(".atom")]
        elif path.startswith(f"/{prefix}/") and path.endswith(("/", "/index.html")):
            kind, key = page_kind, path[len(f"/{prefix}/"):].removesuffix("index.html").removesuffix("/")
        elif prefix == "teams" and path.startswith("/teams/") and path.endswith(f"/{TEAM_CHART_FILE}"):
            kind, key = TEAM_CHART, path[len("/teams/"):-len(f"/{TEAM_CHART_FILE}")]
        else:
            continue
        return (kind, key) if valid(key) else None
    return None


def _author_id(key: str) -> bool:
    return bool(key) and people.key_of(key) == key


@dataclass(frozen=True)
class Subject:
    kind: Literal["team", "author"]
    key: str  # feed slug, or author key
    name: str
    papers: frozenset[str]

    @property
    def feed_path(self) -> str:
        return f"feeds/{self.kind}s/{self.key}.atom"

    @property
    def page_path(self) -> str:
        return f"{self.kind}s/{self.key}/index.html"

    @property
    def pending(self) -> bool:
        """A tracked person none of whose papers is known yet: their files answer, empty (NOT_YET)."""
        return self.kind == "author" and not self.papers


def subject(db: Database, kind: str, key: str) -> Subject | None:
    """The team or person a file is about; None: no such team, or nobody known or tracked by that
    id. Its name is as the feeds carry names (build.plain_name), on its page too; its key if
    nothing is left."""
    if kind in (TEAM_FEED, TEAM_PAGE, TEAM_CHART):
        team = people.team_by_feed(db, key)
        return Subject("team", key, build.plain_name(team.name) or key,
                       frozenset(people.team_papers(db, team))) if team else None
    person = people.person(db, key)
    if not person.papers and not people.tracked_author(db, key):
        return None  # any well-formed id would otherwise be a feed: only those someone tracks
    return Subject("author", key, build.plain_name(person.name) or key, frozenset(people.person_papers(db, key)))


def mark(db: Database, s: Subject, kind: str = "", now: datetime | None = None) -> str:
    """What the file's bytes depend on: the newest event of its papers, and which papers; for
    a team's page and chart (`kind`), also the day of `now` and the newest enrichment change."""
    which = hashlib.blake2b("\n".join(sorted(s.papers)).encode(), digest_size=4).hexdigest()
    out = f"{people.newest_event(db, set(s.papers))}-{which}"
    if kind in (TEAM_PAGE, TEAM_CHART) and now is not None:
        out += f"-{now.date().isoformat()}-a{feed_queries.last_enrichment_id(db)}"
    return out


def stats(db: Database, s: Subject, now: datetime) -> team_stats.CitedBy:
    """Who cited a team's papers in its page's window: STATS_DAYS days before the start of `now`'s day."""
    return team_stats.cited_by(db, s.papers, team_stats.since_day_start(now, STATS_DAYS))


def _what(s: Subject) -> str:
    return f"the team “{s.name}”" if s.kind == "team" else s.name


# A tracked person none of whose papers is known yet (`/track author:<id>` before the sources
# have named them): their feed and page answer, empty, and say when they fill.
NOT_YET = ("No paper of theirs is known in the map yet: this fills once an enrichment round (after each"
           " refresh) finds them named as an author of a paper in the map.")


def _about(s: Subject) -> str:
    """The feed's subtitle."""
    said = f"Papers newly citing a paper of {_what(s)} in the citation map."
    return f"{said} {NOT_YET}" if s.pending else said


def feed(db: Database, s: Subject, base_url: str, limit: int) -> bytes:
    citers = people.newest_citers(db, set(s.papers), limit)
    fg = build._new_feed(f"{build.TAG}{s.kind}/{s.key}", f"{_what(s)}: new citing papers", _about(s),
                         f"{base_url.rstrip('/')}/{s.feed_path}",
                         f"{base_url.rstrip('/')}/{s.page_path.removesuffix('index.html')}")
    citers = build.newest_first(citers)
    for c in citers:
        build._citer_entry(fg, f"{build.TAG}{s.kind}/{s.key}/citer/{c.citer.id}", c, _what(s))
    fg.updated(build.stamp(citers[0].dated) if citers else build.stamp("2026-01-01T00:00:00+00:00"))
    atom: bytes = fg.atom_str(pretty=True)  # feedgen is untyped
    return atom


def _tally_table(heading: str, what: str, entries: tuple[team_stats.Tally, ...], total: int) -> str:
    head = f"{heading} (the top {len(entries)} of {total:,})" if total > len(entries) else heading
    if not entries:
        return f'<h3>{pages._t(head)}</h3>\n<p class="empty">None known yet.</p>\n'
    rows = "".join(f'<tr><td class="rank">{n}</td><td>{pages._t(t.label)}</td>'
                   f'<td class="count">{t.papers:,}</td></tr>\n' for n, t in enumerate(entries, 1))
    return (f'<h3>{pages._t(head)}</h3>\n<table class="tally">\n<thead><tr><th scope="col">#</th>'
            f'<th scope="col">{escape(what)}</th><th scope="col">Citing papers</th></tr></thead>\n'
            f"<tbody>\n{rows}</tbody>\n</table>\n")


def who_cites(st: team_stats.CitedBy, team_name: str) -> str:
    """A team page's section: who cited it in the window, its top lists as tables, the chart."""
    since = pages._long_date(datetime.fromisoformat(st.since).date())
    newest = f" The newest {st.examined:,} of them are counted." if st.examined < st.citing else ""
    intro = (f'<p class="note">Papers first seen citing the team\'s papers since {since} (the last {STATS_DAYS}'
             f" days): {st.citing:,}, citing {st.cited:,} of its {count_words(st.papers, 'paper')}.{newest}"
             f" Counted apart, in no list: {count_words(st.self_citing, 'self-citation')} (citing papers sharing"
             f" an author with every team paper they cite). Of the other {st.counted:,}, authors not known yet:"
             f" {st.authors_unknown:,}; no venue known: {st.no_venue:,}. Each count is of distinct citing"
             " papers.</p>\n")
    chart = ""
    if has_chart(st):
        chart = (f'<p><img class="chart" src="{TEAM_CHART_FILE}" width="{WIDTH}" height="{height_of(st)}"'
                 f' alt="Bar charts of the institutions, people and venues citing {pages._t(team_name)} most,'
                 f' by citing papers"></p>\n')
    tables = "".join(_tally_table(heading, what, entries, total) for (heading, entries, total), what
                     in zip(st.lists, ("Institution", "Person", "Venue"), strict=True))
    return ('<section aria-labelledby="who-cites">\n<h2 id="who-cites">Who cites it</h2>\n' + intro + chart
            + tables + "</section>\n")


def page(db: Database, s: Subject, base_url: str, limit: int, now: datetime | None = None) -> bytes:
    """Their page: how to subscribe, their papers in the map, the newest citing papers by day;
    a team's (given `now`), who cites it."""
    from mapwatch.feeds.paper_files import FeedLookup

    here = pages._here_of(s.page_path)
    lookup = FeedLookup(db)
    citers = people.newest_citers(db, set(s.papers), limit)
    lookup.prime({p.id for c in citers for p in (c.citer, *c.cites)})
    feed_url = f"{base_url.rstrip('/')}/{s.feed_path}"
    refs = sorted(people._refs(db, s.papers).values(), key=lambda p: (p.title or "").casefold())
    listed = "".join(f"<li>{pages._paper_link(here, p, lookup)}{pages._year(p)}</li>\n" for p in refs[:200])
    newest = pages._by_day([(c.dated, pages._citer_item(here, c, lookup, True)) for c in build.newest_first(citers)],
                           "No citing paper seen yet.")
    body = (pages._breadcrumb(here, [], s.name)
            + f"<h1>{pages._t(s.name)}</h1>\n"
            + f'<p class="lede">{"A team" if s.kind == "team" else "An author"} · {len(s.papers):,} '
            + f'{"paper" if len(s.papers) == 1 else "papers"} in the map</p>\n'
            + (f"<p>{pages._t(NOT_YET)}</p>\n" if s.pending else "")
            + pages._subscribe(here, feed_url, f"{base_url.rstrip('/')}/feeds.opml",
                               f"the papers newly citing {_what(s)}")
            + '<section aria-labelledby="newest">\n<h2 id="newest">Newest citing papers</h2>\n' + newest
            + "</section>\n"
            + (who_cites(stats(db, s, now), s.name) if s.kind == "team" and now is not None else "")
            + f'<section aria-labelledby="papers">\n<h2 id="papers">Papers</h2>\n<ol class="papers">\n{listed}'
            + "</ol>\n</section>\n")
    return pages._page(f"{s.name} · {pages.SITE}", here, body,
                       alternates=[(f"{_what(s)}: new citing papers", feed_url)],
                       description=f"Papers newly citing {_what(s)}, newest first.")


def build_file(db: Database, kind: str, key: str, base_url: str, limit: int,
               now: datetime | None = None) -> bytes | None:
    """A person's or a team's file as of `now` (default: the time now); None: no such file."""
    s = subject(db, kind, key)
    if s is None:
        return None
    now = now or utc_now()
    if kind == TEAM_CHART:  # None (a 404) when nothing is counted: the page then shows no chart
        return team_chart_png(stats(db, s, now), s.name)
    return feed(db, s, base_url, limit) if kind in (TEAM_FEED, AUTHOR_FEED) else page(db, s, base_url, limit, now)
