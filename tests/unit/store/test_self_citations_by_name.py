"""A citer whose byline only names people (arXiv's) is a self-citation of a paper whose author
OpenAlex knows by id when the names are one person's, and `self:hide` leaves it out of every
delivery: a paper's track and digest, a person's track, a follow (store/questions/person_names.py
through store/questions/authors.py). Real SQLite, the seeds' pages growing new citers."""

from __future__ import annotations

from mapwatch.store.questions import teams as people
from mapwatch.store.questions.authors import self_citations
from mapwatch.store.records import ArxivRecord, AuthorRecord, OpenAlexWork
from mapwatch.store.scholarly.saved import save_arxiv, save_openalex
from mapwatch.store.subscriptions import digests, follows, tracking
from mapwatch.store.subscriptions.follows import Place
from tests.conftest import seed_page
from tests.follow_helpers import RL, SURVEY, grow, start_older, store_pages

GUILD, CHANNEL, USER = 1, 10, 100
INGRID = "A5000000101"  # OpenAlex's id of the survey's author
OWN = "2611.00001"  # arXiv names "I. Halvorsen" among its authors: Ingrid
NAMESAKE = "2611.00002"  # OpenAlex: another Ingrid Halvorsen, by her own id
INGA = "2611.00003"  # arXiv names "Inga Halvorsen": a different given name
UNKNOWN = "2611.00004"  # no source has named its authors yet
NEW = [(OWN, "Our Own Follow-up", 2026), (NAMESAKE, "A Namesake's Paper", 2026),
       (INGA, "Inga's Paper", 2026), (UNKNOWN, "A Paper Nobody Described", 2026)]


def arxiv(pid: str, *names: str) -> ArxivRecord:
    return ArxivRecord(pid, f"Paper {pid}", tuple(AuthorRecord(n) for n in names), "cs.LG", ("cs.LG",),
                       "2026-01-05T18:00:00Z", "2026-01-05T18:00:00Z", None, None, None)


def grow_with_bylines(db, clock) -> None:
    """The survey gains the four citers; the sources name the authors of three."""
    store_pages(db, [grow(seed_page(SURVEY), NEW)], clock)
    save_openalex(db, [OpenAlexWork(SURVEY, "W1", (AuthorRecord("Kim Lee", "A5000000100"),
                                                   AuthorRecord("Ingrid Halvorsen", INGRID)), None, None),
                       OpenAlexWork(NAMESAKE, "W2", (AuthorRecord("Ingrid Halvorsen", "A5000000999"),), None, None)],
                  [SURVEY, NAMESAKE], clock())
    save_arxiv(db, [arxiv(OWN, "Q. Zhou", "I. Halvorsen"), arxiv(INGA, "Inga Halvorsen")], [OWN, INGA], clock())


def test_a_names_only_byline_cites_its_own_author_known_by_id(seeded, clock) -> None:
    grow_with_bylines(seeded, clock)
    pairs = [(pid, SURVEY) for pid, _, _ in NEW]
    assert self_citations(seeded, pairs) == {(OWN, SURVEY)}


def test_self_hide_on_a_track_leaves_the_names_only_self_citation_out(db, clock) -> None:
    start_older(db, clock, drop=0)
    shown, _ = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id=SURVEY,
                                  created_by=USER, now=clock())
    hidden, _ = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL + 1, user_id=USER, paper_id=SURVEY,
                                   created_by=USER, now=clock(), hide_self=True)
    grow_with_bylines(db, clock)
    alerts = {a.track.id: a for a in tracking.pending_alerts(db)}
    marked = {c.id: c.self_citation for c in alerts[shown.id].new_citers}
    assert marked == {OWN: True, NAMESAKE: False, INGA: False, UNKNOWN: False}
    assert alerts[hidden.id].hidden == 1
    # The namesake (other id), Inga, and the citer whose authors are unknown are sent.
    assert [c.id for c in alerts[hidden.id].new_citers] == [NAMESAKE, INGA, UNKNOWN]


def test_self_hide_in_a_digest_a_person_track_and_a_follow(db, clock) -> None:
    start_older(db, clock, drop=0)
    daily, _ = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id=SURVEY,
                                  created_by=USER, now=clock(), mode="daily", hide_self=True)
    follow, _ = follows.add_follow(db, guild_id=GUILD, channel_id=CHANNEL + 1, user_id=USER, direction_slug=RL,
                                   created_by=USER, now=clock(), hide_self=True)
    after = follow.last_event_id
    grow_with_bylines(db, clock)
    digest = digests.compose_digest(db, Place(GUILD, CHANNEL, None), "daily", clock())
    [section] = [s for s in digest.sections if s.item_id == daily.id]
    assert OWN not in {c.id for c in section.citers} and section.total == 3
    news = people.news(db, people.person_papers(db, INGRID), after, 2**62, hide_self=True)
    assert news.hidden == 1 and {c.id for c in news.citers} == {NAMESAKE, INGA, UNKNOWN}
    found = follows.follow_news(db, follow)
    assert OWN not in {c.id for c in found.citers} and {NAMESAKE, INGA, UNKNOWN} <= {c.id for c in found.citers}
