"""/author's view of a person on more papers than the card shows: the newest papers, the
totals and the newest citers are those of all their papers, the cited paper named even when
it is not among the papers shown (author_view reads only the rows the card shows)."""

from __future__ import annotations

import re
from datetime import UTC, datetime

import pytest

from bench import generate as gen
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.questions import authors
from mapwatch.store.records import AuthorRecord
from mapwatch.store.scholarly.saved import save_openalex
from tests.author_helpers import work
from tests.seedfacts import own_date

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
KEY = "A5100000001"


def prolific(db) -> list[str]:
    """A map of 400 papers, 58 of them by Ada Prolific (KEY), 3 by another Ada Prolific; their ids."""
    m = gen.build_map(400, seed=6)
    save_pages(db, [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)], NOW)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers ORDER BY id")]
    mine = ids[::7]  # 58 papers, the oldest cited the most
    person, namesake = AuthorRecord("Ada Prolific", KEY), AuthorRecord("Ada Prolific", "A5100000002")
    save_openalex(db, [work(pid, person) if pid in mine else work(pid, namesake) if i in (1, 2, 3)
                       else work(pid, AuthorRecord("Someone Else", f"A6{i}")) for i, pid in enumerate(ids)], ids, NOW)
    return mine


def test_a_prolific_persons_view_matches_the_whole_lists(db) -> None:
    mine = prolific(db)
    # Some citations seen later, into papers far from the newest ten.
    later = db.conn.execute(f"SELECT citing_id, cited_id FROM citations WHERE cited_id IN ({','.join('?' * 10)})"
                            " ORDER BY citing_id LIMIT 5", mine[:10]).fetchall()
    for k, (citing, cited) in enumerate(later):
        db.conn.execute("UPDATE citation_edges SET first_seen_unix = unixepoch(?)"
                        " WHERE citing_key = (SELECT key FROM paper_keys WHERE id = ?)"
                        " AND cited_key = (SELECT key FROM paper_keys WHERE id = ?)",
                        (f"2026-11-2{k}T00:00:00+00:00", citing, cited))
    [who] = authors.find_people(db, KEY)
    view = authors.author_view(db, who, papers=10, citers=8)

    posted = {pid: own_date(pid, fp, year) for pid, fp, year in db.conn.execute(
        "SELECT id, first_posted, year FROM papers")}
    newest_papers = sorted(mine, key=lambda p: (posted[p], p), reverse=True)[:10]
    assert [p.id for p in view.papers] == newest_papers and view.total_papers == len(mine)
    every = db.conn.execute(f"SELECT citing_id, cited_id, first_seen FROM citations"
                            f" WHERE cited_id IN ({','.join('?' * len(mine))})", mine).fetchall()
    assert view.total_citers == len(every) > 8
    # The newest first seen first; those seen at once by the citer's own date, the newest first.
    want = sorted(every, key=lambda c: c[1])
    want = sorted(want, key=lambda c: (c[2], posted[c[0]], c[0]), reverse=True)[:8]
    assert [(c.citer.id, c.cited.id, c.citer.first_seen) for c in view.citers] == want
    assert {c.cited.id for c in view.citers} - set(newest_papers)  # cited papers beyond the ten shown
    assert all(c.cited.byline and c.cited.byline.authors[0].author_id == KEY for c in view.citers)
    assert all(c.citer.byline for c in view.citers)


def test_a_count_that_stopped_is_never_stated_as_the_whole(db, monkeypatch: pytest.MonkeyPatch) -> None:
    """/author reads at most SCAN_MAX (5,000) of a person's papers: a person on more is "5,000+
    papers", "at least 5,000", never "5000 papers" (here the cap set to 40, Ada on 58 papers)."""
    from mapwatch.bot.commands import run_core
    from tests.bot_helpers import ctx

    prolific(db)
    monkeypatch.setattr(authors, "SCAN_MAX", 40)
    [who] = authors.find_people(db, KEY)
    assert (who.papers, who.papers_capped) == (40, True)
    view = authors.author_view(db, who)
    assert view.capped and view.total_papers == 40
    [card] = run_core(db, ctx(), "author", {"author": KEY})[0].embeds
    assert "Named on at least 40 papers of the map (counted up to there); at least " in card.description, card
    assert "Named on 40 papers" not in card.description
    papers, citers = card.fields
    assert papers.name == "Papers, newest first (10 of 40+)" and re.search(r"\n… and at least \d+ more$", papers.value)
    assert citers.name == f"Newest citers (10 of {view.total_citers:,}+)", citers.name
    # a name two people bear: the choice counts each on their own, the prolific one "40+"
    choice = run_core(db, ctx(), "author", {"author": "ada prolific"})[0].embeds[0].description
    assert f"`{KEY}` · 40+ papers" in choice and "`A5100000002` · 3 papers" in choice, choice
    # below the cap, the exact counts as before
    monkeypatch.setattr(authors, "SCAN_MAX", 5000)
    [card] = run_core(db, ctx(), "author", {"author": KEY})[0].embeds
    assert "Named on 58 papers of the map; " in card.description and card.fields[0].name.endswith("(10 of 58)")
    choice = run_core(db, ctx(), "author", {"author": "Ada Prolific"})[0].embeds[0].description
    assert f"`{KEY}` · 58 papers" in choice and "`A5100000002` · 3 papers" in choice, choice


def test_a_persons_papers_are_read_from_the_index_alone(db) -> None:
    """0044_people: by OpenAlex id or ORCID, author_view's first query (the person's paper ids)
    finds the person in an index of `people`, then their papers in `paper_people_person`,
    both covering: no table row is read, none is scanned. (The DISTINCT's b-tree is of the
    ids read, which LIMIT stops: a person with two rows in `people` may name a paper twice.)"""
    prolific(db)
    for key in (KEY, "0000-0002-1825-0097"):
        where, params = authors._person_where(key)
        plan = [r[3] for r in db.conn.execute(
            f"EXPLAIN QUERY PLAN SELECT DISTINCT pa.paper_id FROM paper_authors pa WHERE {where} LIMIT ?",
            [*params, authors.SCAN_MAX])]
        index = "people_author_id" if key == KEY else "people_orcid"
        assert plan[:2] == [f"SEARCH p USING COVERING INDEX {index} ({where.split('.')[1].split(' ')[0]}=?)",
                            "SEARCH pp USING COVERING INDEX paper_people_person (person=?)"], (key, plan)
        assert plan[2:] == ["USE TEMP B-TREE FOR DISTINCT"], (key, plan)
