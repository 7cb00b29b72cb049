"""The read side the bot uses, on the seeds."""

from __future__ import annotations

import pytest

from mapwatch.store.errors import BadOption, DirectionNotFound, PaperNotFound
from mapwatch.store.questions import autocomplete, queries, search

RL = "lr/reinforcement-learning-for-reasoning"


@pytest.mark.parametrize("ref", ["2412.10400", "2412.10400v3", "arXiv:2412.10400",
                                 "https://arxiv.org/abs/2412.10400v2", "https://mlsanity.com/paper/2412.10400/",
                                 "Reinforcement Learning Enhanced LLMs: A Survey",
                                 "  reinforcement learning enhanced llms:   a survey ",
                                 "Reinforcement Learning Enhanced LLMs"])
def test_resolve_paper_by_id_url_or_title(seeded, ref: str) -> None:
    assert queries.resolve_paper(seeded, ref).id == "2412.10400"


def test_unknown_paper_suggests_closest_titles(seeded) -> None:
    with pytest.raises(PaperNotFound) as e:
        queries.resolve_paper(seeded, "survey of reinforcement learning things")
    assert e.value.suggestions and all("(" in s for s in e.value.suggestions)
    with pytest.raises(PaperNotFound):
        queries.resolve_paper(seeded, "9999.99999")


def test_paper_view_counts_and_lists(seeded) -> None:
    v = queries.paper_view(seeded, "2412.10400")
    assert (v.paper.cited_by, v.refs_in_map, v.refs_total) == (71, 78, 110)
    assert v.citers_stored == 30 and v.refs_stored == 30
    assert [d.slug for d in v.directions] == [RL, "alignment/reward-modeling-and-rlhf"]
    # The only citer with a stated count comes first; then the page's order.
    assert v.top_citers[0].id == "2507.04136"
    assert v.top_refs[0].title == "Language Models are Few-Shot Learners"
    assert len(v.snapshots) == 1 and v.abstract


def test_citers_paging_sort_and_direction(seeded) -> None:
    first = queries.citers(seeded, "2412.10400", limit=10)
    second = queries.citers(seeded, "2412.10400", offset=10, limit=10)
    assert first.total == 30 and len(first.items) == len(second.items) == 10
    assert not {p.id for p in first.items} & {p.id for p in second.items}
    every = queries.citers(seeded, "2412.10400", limit=100)
    assert len({p.id for p in every.items}) == 30
    newest = queries.citers(seeded, "2412.10400", sort="newest", limit=100)
    assert {p.id for p in newest.items} == {p.id for p in every.items}
    only = queries.citers(seeded, "2412.10400", direction=RL, limit=100)
    assert [p.id for p in only.items] == ["2507.04136"] and only.total == 1
    with pytest.raises(BadOption):
        queries.citers(seeded, "2412.10400", sort="random")


def test_newest_sort_follows_first_seen(seeded, make_older_seeds, clock) -> None:
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths

    db = open_db(":memory:")
    ingest_paths(db, [make_older_seeds(2)], clock=clock)
    clock.advance(days=30)
    from mapwatch.store.pages.files import SEEDS_DIR
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    newest = queries.citers(db, "2507.04136", sort="newest", limit=2).items
    assert all(p.first_seen == newest[0].first_seen for p in newest)
    assert newest[0].first_seen > queries.citers(db, "2507.04136", sort="newest", offset=5, limit=1).items[0].first_seen


def test_refs_and_search(seeded) -> None:
    r = queries.refs(seeded, "2507.04136", limit=5)
    assert r.total == 31 and len(r.items) == 5  # 30 listed + 2412.10400 lists it as a citer
    hits = search.search_papers(seeded, "reward model")
    assert hits.total >= 3 and any(p.id == "2305.18290" for p in hits.items)


@pytest.mark.parametrize("text", ['"', "a OR b NOT c", "title:foo", "NEAR(a b)", "x*", "^start",
                                  "'; DROP TABLE papers; --", "(((", "reward" * 1000, "AND", "-- /* */",
                                  "\x00\x01 reward \x7f", "強化学習 🤖 reward", "x " * 3000])
def test_search_never_breaks_on_fts_syntax(seeded, text: str) -> None:
    try:
        page = search.search_papers(seeded, text)
    except BadOption:
        return
    assert page.total >= 0
    assert seeded["papers"].count == 99


def test_autocomplete_limits_and_matches(seeded) -> None:
    for text in ["", "2", "24", "2412.1", "Rein", "reinforcement learn", "a", "x" * 6000, '"*(', "@everyone"]:
        choices = autocomplete.autocomplete_papers(seeded, text)
        assert len(choices) <= 25
        assert all(1 <= len(c.name) <= 100 and 1 <= len(c.value) <= 100 for c in choices)
    assert autocomplete.autocomplete_papers(seeded, "2412.104")[0].value == "2412.10400"
    assert "2412.10400" in [c.value for c in autocomplete.autocomplete_papers(seeded, "Reinforcement Learning Enh")]
    assert "2412.10400" in [c.value for c in autocomplete.autocomplete_papers(seeded, "enhanced llms surv")]
    assert len(autocomplete.autocomplete_papers(seeded, "")) == 2  # papers with a stated count, most cited first
    dirs = autocomplete.autocomplete_directions(seeded, "rew")
    assert [c.value for c in dirs] == ["alignment/reward-modeling-and-rlhf"]
    assert len(autocomplete.autocomplete_directions(seeded, "")) == 2


def test_directions(seeded) -> None:
    assert queries.resolve_direction(seeded, RL).slug == RL
    assert queries.resolve_direction(seeded, f"https://mlsanity.com/{RL}/").slug == RL
    assert queries.resolve_direction(seeded, "reinforcement learning FOR reasoning").slug == RL
    with pytest.raises(DirectionNotFound):
        queries.resolve_direction(seeded, "quantum gravity")
    v = queries.direction_view(seeded, RL)
    assert v.direction.papers == 2 and [p.id for p in v.top_papers] == ["2412.10400", "2507.04136"]
    assert v.newest_citers
    areas = queries.directions_by_area(seeded)
    assert [a.area for a in areas] == ["LLM alignment", "LLM reasoning"]
    assert all(d.papers == 2 for a in areas for d in a.directions)


def test_search_over_many_matches_is_capped_and_says_so(db) -> None:
    from mapwatch.bot.commands import run_core
    from tests.bot_helpers import ctx

    with db.atomic():
        db.conn.executemany("INSERT INTO papers (id, title, has_page, first_seen, updated) VALUES (?, ?, 0, 't', 't')",
                            [(f"2101.{i:05d}", f"Common words paper {i}")
                             for i in range(search.SEARCH_COUNT_CAP + 50)])
    page = search.search_papers(db, "common words")
    assert page.total == search.SEARCH_COUNT_CAP and len(page.items) == 10
    reply, ok = run_core(db, ctx(), "search", {"query": "common words"})
    assert ok and "2,000 or more papers match" in reply.embeds[0].description


def test_autocomplete_expands_only_prefixes_of_three_letters_or_more(seeded) -> None:
    assert queries.fts_query("enhanced llms surv", prefix_last=True) == '"enhanced" "llms" "surv"*'
    # A last word of one or two letters is still being typed: it is left out, not expanded.
    assert queries.fts_query("enhanced llms s", prefix_last=True) == '"enhanced" "llms"'
    assert queries.fts_query("ab", prefix_last=True) == '"ab"'
    assert "2412.10400" in [c.value for c in autocomplete.autocomplete_papers(seeded, "enhanced llms s")]
