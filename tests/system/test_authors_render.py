"""Authors everywhere a paper shows, self-citations marked, citing sentences in alerts: the
answers, feeds and pages with enrichment data stored (and unchanged without it)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

from lxml import etree

from mapwatch.bot.commands import run_core
from mapwatch.bot.rendering import render, render_follow
from mapwatch.bot.rendering.text import FIELD_VALUE_MAX, TOTAL_MAX, embed_size
from mapwatch.feeds.publish import publish
from mapwatch.store.questions import authors, autocomplete, queries, search
from mapwatch.store.questions.types import Byline, CitingContext
from mapwatch.store.records import AuthorRecord, Institution
from mapwatch.store.scholarly.saved import save_openalex
from mapwatch.store.subscriptions import deliveries, follows, tracking
from tests.author_helpers import HOSTILE, OTHER, REF, SELF, SURVEY, WANG, store_authors, store_context, work
from tests.bot_helpers import CHANNEL, GUILD, USER, ctx
from tests.feedcheck import ATOM, assert_valid_atom
from tests.follow_helpers import RL, grow, start_older, store_pages
from tests.htmlcheck import assert_good_page, assert_nothing_injected, parse_strict, text_of
from tests.system.test_bot_commands import assert_within_limits

ROOT = Path(__file__).resolve().parents[2]
BASE = "http://feeds.test:8080"


def ask(db, name: str, **options):
    reply, ok = run_core(db, ctx(), name, options)
    assert_within_limits(reply)
    return reply, ok


def citer(page, pid: str):
    return next(c for c in page.items if c.id == pid)


# -- the query layer ---------------------------------------------------------------------------

def test_without_authors_every_row_is_as_before(seeded) -> None:
    page = queries.citers(seeded, SURVEY, limit=100)
    assert all(c.byline is None and not c.self_citation and c.context is None for c in page.items)
    assert queries.paper_view(seeded, SURVEY).paper.byline is None
    assert "Authors" not in render.to_text(ask(seeded, "paper", paper=SURVEY)[0])


def test_citers_and_refs_carry_bylines_and_self_citation_marks(seeded, clock) -> None:
    store_authors(seeded, clock())
    page = queries.citers(seeded, SURVEY, limit=100)
    assert citer(page, SELF).self_citation and citer(page, SELF).byline is not None
    assert not citer(page, OTHER).self_citation and citer(page, OTHER).byline is not None
    assert sum(c.byline is not None for c in page.items) == 2
    ref = citer(queries.refs(seeded, SURVEY, limit=100), REF)
    assert ref.byline and ref.byline.short() == "Tom B. Brown (OpenAI)" and not ref.self_citation
    view = queries.paper_view(seeded, SURVEY)
    assert view.paper.byline and [a.name for a in view.paper.byline.authors] == ["Shuhe Wang", "Shengyu Zhang",
                                                                              "Jie Zhang"]


def test_card_names_the_authors_with_their_institutions(seeded, clock) -> None:
    store_authors(seeded, clock())
    r, ok = ask(seeded, "paper", paper=SURVEY)
    e = r.embeds[0]
    assert ok and e.fields[0].name == "Authors (3)"
    assert e.fields[0].value.splitlines() == ["• Shuhe Wang (Zhejiang University)",
                                             "• Shengyu Zhang (Zhejiang University)", "• Jie Zhang",
                                             "Published in arXiv (Cornell University)"]
    assert e.fields[1].name == "Directions"


def test_mapwatch_ask_paper_names_authors_and_institutions(seeded, clock, db_path) -> None:
    store_authors(seeded, clock())
    p = subprocess.run([sys.executable, "-m", "mapwatch", "ask", f"/paper {SURVEY}", "--db", str(db_path)],
                       capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "-- Authors (3)\n• Shuhe Wang (Zhejiang University)\n• Shengyu Zhang (Zhejiang University)" in p.stdout


def test_lists_show_bylines_and_mark_self_citations_with_names_escaped(seeded, clock) -> None:
    store_authors(seeded, clock())
    r, _ = ask(seeded, "citers", paper=SURVEY)
    desc = r.embeds[0].description
    first = next(line for line in desc.splitlines() if f"`{SELF}`" in line)
    assert first.endswith("↺ self-citation")
    assert "\n  Guibin Zhang, Shuhe Wang" in desc
    assert desc.count("self-citation") == 1
    r, _ = ask(seeded, "citers", paper=SURVEY, sort="newest", page=0)
    text = "\n".join(render.to_text(ask(seeded, "citers", paper=SURVEY, page=n)[0]) for n in range(3))
    assert "Mallory \\[click\\](https://evil.example) @\u2060everyone \\*bold\\*" in text  # literal, no ping
    assert "[click](https://evil" not in text and "@everyone" not in text


def test_byline_is_clipped_and_long_author_lists_fit_discord(seeded, clock) -> None:
    many = tuple(AuthorRecord(("N" * 150) + f" {i} `x` _y_", f"A{6000000000 + i}",
                              institutions=(Institution("I" * 200, f"I{i + 1}"),)) for i in range(100))
    save_openalex(seeded, [work(SURVEY, *many), *(work(c.id, *many) for c in seeded_citers(seeded))],
                  [SURVEY], clock())
    for name, opts in (("paper", {"paper": SURVEY}), ("citers", {"paper": SURVEY}), ("refs", {"paper": SURVEY})):
        r, ok = ask(seeded, name, **opts)
        assert ok and embed_size(r.embeds[0]) <= TOTAL_MAX
        assert all(len(f.value) <= FIELD_VALUE_MAX for f in r.embeds[0].fields)
    card = ask(seeded, "paper", paper=SURVEY)[0].embeds[0]
    assert card.fields[0].name == "Authors (100)" and "… and" in card.fields[0].value


def seeded_citers(db) -> list:
    return list(queries.citers(db, SURVEY, limit=100, authors=False).items)


# -- search, autocomplete and /author ------------------------------------------------------------

def test_search_finds_an_authors_papers_first(seeded, clock) -> None:
    store_authors(seeded, clock())
    result = search.search_papers(seeded, "shuhe  WANG")
    assert result.by_author == 2 and [p.id for p in result.items[:2]] == [SELF, SURVEY]  # newest first
    assert result.items[0].byline is not None
    r, _ = ask(seeded, "search", query="Shuhe Wang")
    assert "2 papers by an author of that name first" in r.embeds[0].description
    assert search.search_papers(seeded, "reward model").by_author == 0


def test_search_finds_a_persons_papers_by_surname_alone_or_with_an_initial(seeded, clock) -> None:
    store_authors(seeded, clock())
    save_openalex(seeded, [work(OTHER, AuthorRecord("Ingrid M. Halvorsen", "A5000000007"),
                                AuthorRecord("Xiaoya Li", "A5000000004"))], [OTHER], clock())
    for text in ("Halvorsen", "halvorsen", "I. Halvorsen", "Ingrid Halvorsen", "Halvorsen, I.", "Halvorsen, Ingrid"):
        result = search.search_papers(seeded, text)
        assert result.by_author == 1 and result.items[0].id == OTHER, text
    for text in ("K. Halvorsen", "Halvorsen, K.", "Halvorse"):
        assert search.search_papers(seeded, text).by_author == 0, text
    found = search.search_papers(seeded, "Wang")  # a surname shared: every paper of its people
    assert found.by_author == 2 and [p.id for p in found.items[:2]] == [SELF, SURVEY]
    assert search.search_papers(seeded, "zhang").by_author == 2  # Shengyu and Jie on the survey, Guibin on SELF
    assert search.search_papers(seeded, "J. Zhang").by_author == 1
    assert search.search_papers(seeded, "Tom Brown").by_author == 1  # "Tom B. Brown"
    assert search.search_papers(seeded, "LI").by_author == 0  # one word in capitals: an acronym
    r, ok = ask(seeded, "search", query="Halvorsen")
    assert ok and "1 paper by an author of that name first" in r.embeds[0].description


def test_search_with_author_matches_pages_from_the_first_page(seeded, clock) -> None:
    save_openalex(seeded, [work(OTHER, AuthorRecord("Learning"))], [OTHER], clock())
    r, ok = ask(seeded, "search", query="learning")
    assert ok and "1 paper by an author of that name first" in r.embeds[0].description
    assert r.pager and r.pager.page == 0 and r.pager.pages > 1  # not the count of author matches


def test_title_words_are_not_taken_for_surnames(seeded, clock) -> None:
    store_authors(seeded, clock())
    for text in ("reward model", "reinforcement learning", "RLHF", "large language models for reasoning"):
        assert search.search_papers(seeded, text).by_author == 0, text
    assert authors.name_parts("reward model") == ("model", "reward")  # looked up, matches no one
    assert authors.name_parts("GAN") is None and authors.name_parts("2412.10400") is None
    assert authors.name_parts("a b c d e") is None and authors.name_parts("Li") == ("Li", "")


def test_autocomplete_offers_authors_within_discords_limits(seeded, clock) -> None:
    store_authors(seeded, clock())
    found = autocomplete.autocomplete_authors(seeded, "shu")
    assert found == (autocomplete.Choice("Shuhe Wang · A5023888391", "A5023888391"),)  # once, on two papers
    assert autocomplete.autocomplete_authors(seeded, "Jie", by_name=True) == (autocomplete.Choice("Jie Zhang",
                                                                                                  "Jie Zhang"),)
    save_openalex(seeded, [work("2005.14165", *(AuthorRecord("Zed " + "z" * 190 + str(i), f"A{7000000000 + i}")
                                                for i in range(60)))], [REF], clock())
    many = autocomplete.autocomplete_authors(seeded, "zed")
    assert len(many) == 25 and all(len(c.name) <= 100 and len(c.value) <= 100 for c in many)
    assert autocomplete.autocomplete_authors(seeded, "z") == ()


def test_author_by_name_orcid_or_id_lists_papers_and_citers(seeded, clock) -> None:
    store_authors(seeded, clock())
    for ref in ("Shuhe Wang", "shuhe wang", "0000-0002-1825-0097", "https://orcid.org/0000-0002-1825-0097",
                "A5023888391", "https://openalex.org/A5023888391"):
        r, ok = ask(seeded, "author", author=ref)
        assert ok and r.embeds[0].title == "Shuhe Wang", ref
    e = r.embeds[0]
    assert "`A5023888391` · `0000-0002-1825-0097`" in e.description and "Zhejiang University" in e.description
    papers = e.fields[0].value
    assert papers.index(SELF) < papers.index(SURVEY)  # newest first
    assert e.fields[1].name == "Newest citers (10 of 30)"
    [person] = authors.find_people(seeded, "Shuhe Wang")
    view = authors.author_view(seeded, person, citers=100)
    marked = {(c.citer.id, c.cited.id) for c in view.citers if c.citer.self_citation}
    assert marked == {(SELF, SURVEY)}  # it cites the survey, sharing its author


def test_a_name_several_people_share_gets_a_choice_never_a_guess(seeded, clock) -> None:
    store_authors(seeded, clock())
    save_openalex(seeded, [work(REF, AuthorRecord("Jie Zhang", "A5999999999"))], [REF], clock())
    r, ok = ask(seeded, "author", author="Jie Zhang")
    assert ok and r.ephemeral and r.embeds[0].title == "Which author?"
    text = r.embeds[0].description
    assert "`A5999999999`" in text and "`name:Jie Zhang` (no id known)" in text
    r, _ = ask(seeded, "author", author="name:Jie Zhang")
    assert r.embeds[0].title == "Jie Zhang" and SURVEY in r.embeds[0].fields[0].value
    r, ok = ask(seeded, "author", author="Nobody Atall")
    assert not ok and r.ephemeral and "No author matches" in r.content


# -- alerts, follows, digests --------------------------------------------------------------------

NEW_SELF, NEW_OTHER = "2611.00001", "2611.00002"  # new citers of the survey


def _track_then_grow(db, clock, *, hide: bool = False, channel: int = CHANNEL):
    start_older(db, clock, drop=0)
    tracking.add_track(db, guild_id=GUILD, channel_id=channel, user_id=USER, paper_id=SURVEY, created_by=USER,
                       now=clock(), hide_self=hide)
    from tests.conftest import seed_page
    store_pages(db, [grow(seed_page(SURVEY), [(NEW_SELF, "Our Own Follow-up", 2026),
                                              (NEW_OTHER, "Someone Else's Paper", 2026)])], clock)
    save_openalex(db, [work(SURVEY, WANG), work(NEW_SELF, AuthorRecord("Guibin Zhang", "A5000000002"), WANG),
                       work(NEW_OTHER, AuthorRecord(HOSTILE, "A5000000003"))], [SURVEY], clock())


def test_alert_names_authors_marks_self_citation_and_quotes_the_citing_sentences(db, clock) -> None:
    _track_then_grow(db, clock)
    store_context(db, clock(), NEW_OTHER)
    [a] = tracking.pending_alerts(db)
    desc = render.alert(a).embeds[0].description
    assert "↺ self-citation" in next(line for line in desc.splitlines() if f"`{NEW_SELF}`" in line)
    assert "  Guibin Zhang, Shuhe Wang" in desc and "  Mallory \\[click\\]" in desc
    assert ("> “As the survey of RL-enhanced LLMs shows \\[3\\], reward models matter.”\n"
            "> “We follow the taxonomy of \\[3\\].”\n— Semantic Scholar · background · influential citation") in desc
    assert "A third sentence" not in desc  # two at most
    assert desc.count("Semantic Scholar") == 1  # none under a citer without sentences


def test_citing_sentences_are_clipped_and_alerts_fit() -> None:
    lines = render.citing_context(CitingContext(("x " * 900,), (), False))
    assert len(lines) == 2 and len(lines[0]) <= 310 and lines[1] == "— Semantic Scholar"
    assert render.citing_context(None) == [] and render.citing_context(CitingContext(())) == []


def test_self_hide_leaves_self_citations_out_of_the_alert(db, clock) -> None:
    _track_then_grow(db, clock, hide=True)
    [a] = tracking.pending_alerts(db)
    assert a.hidden == 1 and [c.id for c in a.new_citers] == [NEW_OTHER] and a.more == 0
    assert "1 self-citation left out (self:hide)." in render.alert(a).embeds[0].description
    assert not a.quiet


def test_an_alert_of_self_citations_only_is_quiet(db, clock) -> None:
    start_older(db, clock, drop=0)
    tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id=SURVEY, created_by=USER,
                       now=clock(), hide_self=True)
    from tests.conftest import seed_page
    store_pages(db, [grow(seed_page(SURVEY), [("2611.00001", "Our Own Follow-up", 2026)])], clock)
    save_openalex(db, [work(SURVEY, WANG), work("2611.00001", WANG)], [SURVEY], clock())
    [a] = tracking.pending_alerts(db)
    assert a.quiet and a.new_citers == () and a.hidden == 1
    deliveries.mark_delivered(db, deliveries.TRACKS, a.track.id, a.upto_event_id, clock(), sent=False)
    assert tracking.pending_alerts(db) == []


def test_tracking_again_with_self_show_changes_the_track(db, clock, seeded) -> None:
    t, new = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id=SURVEY,
                                created_by=USER, now=clock(), hide_self=True)
    assert new and t.hide_self
    t, changed = tracking.add_track(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, paper_id=SURVEY,
                                    created_by=USER, now=clock())
    assert changed and not t.hide_self
    r, ok = run_core(db, ctx(), "track", {"paper": SURVEY, "self": "hide"})
    assert ok and "self-citations left out" in r.content
    r, ok = run_core(db, ctx(), "track", {"paper": SURVEY, "self": "maybe"})
    assert not ok and "self is show or hide" in r.content


def test_follow_marks_self_citations_and_self_hide_leaves_out_only_self_citers(db, clock) -> None:
    start_older(db, clock)
    shown, _ = follows.add_follow(db, guild_id=GUILD, channel_id=CHANNEL, user_id=USER, direction_slug=RL,
                                  created_by=USER, now=clock())
    hidden, _ = follows.add_follow(db, guild_id=GUILD, channel_id=CHANNEL + 1, user_id=USER, direction_slug=RL,
                                   created_by=USER, now=clock(), hide_self=True)
    from tests.conftest import seed_page
    store_pages(db, [grow(seed_page(SURVEY), [("2611.00001", "Our Own Follow-up", 2026),
                                              ("2611.00002", "Someone Else's", 2026)])], clock)
    save_openalex(db, [work(SURVEY, WANG), work("2611.00001", WANG),
                       work("2611.00002", AuthorRecord("Ana Lima", "A5000000009"))], [SURVEY], clock())
    news = {n.follow.id: n for n in follows.pending_follow_alerts(db)}
    ids = {c.id: c for c in news[shown.id].citers}
    assert ids["2611.00001"].self_cites == (SURVEY,) and not ids["2611.00002"].self_citation
    text = render_follow.follow_alert(news[shown.id]).embeds[0].description
    assert "↺ self-citation" in text and "  Ana Lima" in text
    assert "2611.00001" not in {c.id for c in news[hidden.id].citers}
    assert news[hidden.id].total == news[shown.id].total - 1


# -- feeds and pages ----------------------------------------------------------------------------

def test_feed_entries_carry_their_authors_and_validate(seeded, clock, tmp_path: Path) -> None:
    store_authors(seeded, clock())
    ten_plus = tuple(AuthorRecord(f"Author {i} <b>&amp;", f"A{5100000000 + i}") for i in range(12))
    save_openalex(seeded, [work("2509.19301", *ten_plus)], ["2509.19301"], clock())
    out = tmp_path / "public"
    publish(seeded, out, BASE, papers="all")
    for rel in (f"feeds/papers/{SURVEY}.atom", f"feeds/{RL}.atom"):
        data = (out / rel).read_bytes()
        parsed = assert_valid_atom(data)
        by_id = {e.id.rsplit("/", 1)[1]: e for e in parsed.entries}
        assert [a.name for a in by_id[SELF].authors] == ["Guibin Zhang", "Shuhe Wang"]
        assert by_id[SELF].authors[1].href == "https://orcid.org/0000-0002-1825-0097"
        assert [t.term for t in by_id[SELF].tags] == ["self-citation"]
        assert by_id[OTHER].authors[0].name == HOSTILE and not by_id[OTHER].get("tags")
        assert len(by_id["2509.19301"].authors) == 10 and "and 2 more" in by_id["2509.19301"].content[0].value
        assert parsed.feed.author == "mapwatch"  # the feed's own author stays
        root = etree.fromstring(data)
        for entry in root.findall(f"{ATOM}entry"):
            for author in entry.findall(f"{ATOM}author"):  # RFC 4287 3.2: exactly one non-empty name
                assert len(author.findall(f"{ATOM}name")) == 1 and author.findtext(f"{ATOM}name").strip()
    survey_feed = assert_valid_atom((out / f"feeds/papers/{SURVEY}.atom").read_bytes())
    content = next(e for e in survey_feed.entries if e.id.endswith(SELF)).content[0].value
    assert "<p>By Guibin Zhang, Shuhe Wang.</p>" in content and "Self-citation: it shares an author with" in content


def test_pages_show_bylines_self_citations_and_the_authors_fact(seeded, clock, tmp_path: Path) -> None:
    store_authors(seeded, clock())
    out = tmp_path / "public"
    publish(seeded, out, BASE, papers="all")
    page = (out / f"papers/{SURVEY}/index.html").read_bytes()
    root = assert_good_page(page)
    assert_nothing_injected(root)
    text = text_of(root)
    assert "Shuhe Wang (Zhejiang University), Shengyu Zhang (Zhejiang University), Jie Zhang" in text
    assert "Published inarXiv (Cornell University)" in text  # <dt> then <dd>
    entry = next(li for li in root.iter("li") if li.get("data-id") == SELF)
    assert "self-citation" in text_of(entry) and "Guibin Zhang, Shuhe Wang" in text_of(entry)
    hostile = next(li for li in root.iter("li") if li.get("data-id") == OTHER)
    assert HOSTILE in text_of(hostile) and not [a for a in hostile.iter("a") if "evil" in (a.get("href") or "")]
    direction = parse_strict((out / f"directions/{RL}/index.html").read_bytes())
    assert any("self-citation" in text_of(li) for li in direction.iter("li") if li.get("data-id") == SELF)


def test_byline_short_form() -> None:
    b = Byline("x", tuple(authors.Author(n, institutions=("Google Brain",) if n == "A. Vaswani" else ())
                          for n in ("A. Vaswani", "N. Shazeer", "N. Parmar", "J. Uszkoreit")))
    assert b.short() == "A. Vaswani, N. Shazeer, N. Parmar et al. (Google Brain)"
    assert render.byline(dataclasses.replace(b, authors=())) == "" and render.byline(None) == ""
