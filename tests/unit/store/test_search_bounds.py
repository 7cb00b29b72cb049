"""/search's bounded ranking (store/questions/search.py): where the bounds leave nothing out it gives
exactly the unbounded bm25 order, and a word in most papers still gets a sane answer."""

from __future__ import annotations

import random

import pytest

from bench import generate as gen
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.questions import search
from mapwatch.store.questions.fts_text import fts_query
from tests.conftest import FakeClock


@pytest.fixture(scope="module")
def zipf_map(tmp_path_factory):
    """1,500 generated pages with the Zipf vocabulary: some words in most papers, most rare."""
    from mapwatch.store.database.db import open_db

    db = open_db(tmp_path_factory.mktemp("search") / "m.db")
    gen.use_vocabulary("zipf")
    try:
        m = gen.build_map(1500, seed=5)
        pages = [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)]
    finally:
        gen.use_vocabulary("small")
    clock = FakeClock()
    for i in range(0, len(pages), 500):
        save_pages(db, pages[i:i + 500], clock())
    yield db, m
    db.close()


def unbounded(db, text: str) -> list[int]:
    return [r for (r,) in db.conn.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rank",
                                          (fts_query(text),))]


def title_words(m, rng: random.Random) -> str:
    words = [w for w in m.titles[rng.randrange(m.n)].split() if w.isalpha()]
    return " ".join(rng.sample(words, min(len(words), rng.randint(1, 3))))


def test_bounded_search_gives_the_unbounded_order_where_nothing_is_left_out(zipf_map) -> None:
    db, m = zipf_map
    rng = random.Random(11)
    compared = 0
    for _ in range(150):
        text = title_words(m, rng)
        full = unbounded(db, text)
        if not full or len(full) > search.RANK_CANDIDATES:
            continue
        ranked, total = search.ranked_rowids(db, text)
        if sum(search.word_matches(db, w, 10**9) for w in text.lower().split()) > search.BM25_BUDGET:
            continue
        assert ranked == full and total == len(full), text
        compared += 1
    assert compared >= 100  # the comparison really ran, on most of the queries


def test_a_word_in_most_papers_gets_bounded_work_and_a_sane_answer(zipf_map, monkeypatch) -> None:
    db, m = zipf_map
    n_learning = len(unbounded(db, "learning"))
    assert n_learning > 0.9 * m.n  # the most frequent word is in nearly every paper
    monkeypatch.setattr(search, "RANK_CANDIDATES", 40)
    monkeypatch.setattr(search, "BM25_BUDGET", 500)  # "learning" alone is over it: no bm25
    monkeypatch.setattr(search, "SEARCH_COUNT_CAP", 1000)
    ranked, total = search.ranked_rowids(db, "learning")
    assert total == 1001  # counted up to the cap and one more: "1,000 or more"
    newest = [r for (r,) in db.conn.execute(
        "SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'learning' ORDER BY rowid DESC LIMIT 40")]
    assert sorted(ranked) == sorted(newest)  # the newest 40 matches are the candidates
    in_title = {r for (r,) in db.conn.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'title : learning'")}
    counts = dict(db.conn.execute("SELECT rowid, coalesce(cited_by, -1) FROM papers"))
    keys = [(r not in in_title, -counts[r]) for r in ranked]
    assert keys == sorted(keys) and not keys[0][0]  # titles holding it first, then the most cited
    page = search.search_papers(db, "learning", limit=10)
    assert page.total == 1000 and [p.id for p in page.items] == [
        db.conn.execute("SELECT id FROM papers WHERE rowid = ?", (r,)).fetchone()[0] for r in ranked[:10]]


def test_a_common_word_with_a_rare_one_is_ranked_by_bm25(zipf_map, monkeypatch) -> None:
    db, m = zipf_map
    rare = next(w for w in sorted(set(m.titles[7].lower().split())) if w.isalpha() and 2 <= len(unbounded(db, w)) <= 30)
    text = f"learning {rare}"
    full = unbounded(db, text)
    assert full and len(full) <= search.RANK_CANDIDATES
    assert search.ranked_rowids(db, text) == (full, len(full))
    assert search.search_papers(db, text).total == len(full)


def test_the_title_index_stays_in_step_with_papers(tmp_path) -> None:
    """papers_title_fts (migration 0008) follows every insert, title change and delete."""
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.questions import autocomplete

    folder = tmp_path / "map"
    m = gen.build_map(300, seed=9)
    gen.write_map(m, folder, 1)
    db = open_db(tmp_path / "m.db")
    clock = FakeClock()
    ingest_paths(db, [folder], clock=clock)
    gen.write_map(m, folder, 2)  # 2% of the pages change, new citers appear as stubs
    clock.advance(days=14)  # to a day snapshot 2 (data through 12 Nov) can be read on
    assert ingest_paths(db, [folder], clock=clock).stored == 6

    def check() -> None:
        db.conn.execute("INSERT INTO papers_title_fts (papers_title_fts) VALUES ('integrity-check')")
        n = db.conn.execute("SELECT count(*) FROM papers").fetchone()[0]
        assert db.conn.execute("SELECT count(*) FROM papers_title_fts").fetchone()[0] == n

    check()
    pid = "2611.99999"
    with db.atomic():
        db.conn.execute("INSERT INTO papers (id, title, has_page, first_seen, updated)"
                        " VALUES (?, 'Plain words', 0, 't', 't')", (pid,))
        db.conn.execute("UPDATE papers SET title = 'Zyxwvut quasiparticle renamed' WHERE id = ?", (pid,))
    check()
    assert [c.value for c in autocomplete.autocomplete_papers(db, "quasiparticle zyxw")] == [pid]
    with db.atomic():
        db.conn.execute("UPDATE papers SET cited_by = 3 WHERE id = ?", (pid,))  # title untouched
        db.conn.execute("DELETE FROM papers WHERE id = ?", (pid,))
    check()
    assert autocomplete.autocomplete_papers(db, "quasiparticle zyxw") == ()
    db.close()


def test_autocomplete_checks_the_prefix_on_the_titles_of_the_whole_words(zipf_map, monkeypatch) -> None:
    """"<rare word> learn" finds the titles holding both, whether the prefix is checked on
    the whole words' titles or (many of them) left to the index."""
    from mapwatch.store.questions import autocomplete

    db, m = zipf_map
    i, rare = next((i, w) for i in range(m.n) for w in m.titles[i].lower().split()
                   if w.isalpha() and 1 <= len(unbounded(db, w)) <= 5 and "learning" in m.titles[i].lower().split())
    want = {r for (r,) in db.conn.execute(
        "SELECT p.id FROM papers_title_fts t JOIN papers p ON p.rowid = t.rowid WHERE papers_title_fts MATCH ?",
        (f'"{rare}" "learn"*',))}
    assert m.ids[i] in want
    found = {c.value for c in autocomplete.autocomplete_papers(db, f"{rare} learn")}
    assert want <= found
    monkeypatch.setattr(autocomplete, "PREFIX_CANDIDATES", 0)  # as if the whole words were common
    assert want <= {c.value for c in autocomplete.autocomplete_papers(db, f"{rare} learn")}


def test_the_candidates_are_the_newest_matches_and_the_count_is_exact_up_to_the_cap(zipf_map, monkeypatch) -> None:
    """The newest matches are read in rowid ranges from the top down (store/questions/search.py): with
    small bounds, so that most queries take several ranges, they are exactly `ORDER BY rowid
    DESC LIMIT n`, and the count below them adds up to the real one (up to the cap)."""
    db, m = zipf_map
    monkeypatch.setattr(search, "RANK_CANDIDATES", 20)
    monkeypatch.setattr(search, "WORD_SAMPLE", 15)
    monkeypatch.setattr(search, "SEARCH_COUNT_CAP", 120)
    rng = random.Random(3)
    several = 0
    for _ in range(120):
        text = title_words(m, rng)
        q = fts_query(text)
        newest = [r for (r,) in db.conn.execute(
            "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? ORDER BY rowid DESC LIMIT 20", (q,))]
        n_all = db.conn.execute("SELECT count(*) FROM papers_fts WHERE papers_fts MATCH ?", (q,)).fetchone()[0]
        ranked, total = search.ranked_rowids(db, text)
        assert sorted(ranked) == sorted(newest), text
        assert total == min(n_all, 121), text
        several += n_all > 20
    assert several >= 30  # many queries had more matches than candidates


def test_common_words_only_select_when_bm25_weighs_the_rarer_ones(zipf_map, monkeypatch) -> None:
    """"learning <rare>" with "learning" over the budget: the papers holding both, ordered by
    bm25 over the rare word alone."""
    db, m = zipf_map
    monkeypatch.setattr(search, "BM25_BUDGET", 200)  # "learning" (in most papers) is over it
    rare = next(w for i in range(m.n) for w in sorted(set(m.titles[i].lower().split()))
                if w.isalpha() and len(unbounded(db, f"learning {w}")) >= 3 and len(unbounded(db, w)) <= 60)
    both = set(unbounded(db, f"learning {rare}"))
    assert len(both) <= search.RANK_CANDIDATES
    want = [r for r in unbounded(db, rare) if r in both]
    assert search.ranked_rowids(db, f"learning {rare}") == (want, len(both))
    # A word in most papers weighs nothing in bm25 (its idf is floored), so here the order
    # is the unbounded one too: only the budget said so, the meaning is kept.
    assert want == unbounded(db, f"learning {rare}")


def test_autocomplete_finds_a_word_being_typed_past_its_stem(zipf_map) -> None:
    """"<words> learni": the index stores "learning" as "learn", which "learni" does not
    start; the titles are checked word by word, so the papers are found."""
    from mapwatch.store.questions import autocomplete

    db, m = zipf_map
    i = next(i for i in range(m.n) if "learning" in m.titles[i].lower().split()
             and len([w for w in m.titles[i].split() if w.isalpha()]) >= 3)
    other = next(w for w in m.titles[i].split() if w.isalpha() and w.lower() != "learning")
    assert not db.conn.execute("SELECT 1 FROM papers_title_fts WHERE papers_title_fts MATCH ?",
                               (f'"{other}" "learni"*',)).fetchall()  # the index alone finds nothing
    found = [c.value for c in autocomplete.autocomplete_papers(db, f"{other} learni")]
    assert found and all("learni" in t.lower() for t in [m.titles[m.ids.index(f)] for f in found])
    holding = [r for (r,) in db.conn.execute(
        "SELECT p.id FROM papers_title_fts t JOIN papers p ON p.rowid = t.rowid WHERE papers_title_fts MATCH ?"
        " ORDER BY t.rowid", (f'"{other}" "learn"',))]
    assert found == [p for p in holding if "learni" in m.titles[m.ids.index(p)].lower()][:25]
