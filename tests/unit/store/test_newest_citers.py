"""`/citers sort:newest` and /author's newest citers and papers sort without reading each
paper's row (store/questions/paper_rows.py, `newest_first_by_id`): the order must still be
the newest first seen first, those seen at once by the citer's own date (tests/seedfacts.py,
`own_date`), then its id, on a map with new- and old-style ids, citers known from lists alone
(a year, no day) and citers with no date at all."""

from __future__ import annotations

from datetime import UTC, datetime

from bench import generate as gen
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.questions import authors, queries
from mapwatch.store.records import AuthorRecord
from mapwatch.store.scholarly.saved import save_openalex
from tests.author_helpers import work
from tests.seedfacts import own_date

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def _map(db) -> dict[str, str]:
    """A generated map, some citations seen later and some old-style citers without a date;
    each paper's own date."""
    m = gen.build_map(1000, seed=8)
    save_pages(db, [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)], NOW)
    later = db.conn.execute("SELECT citing_id, cited_id FROM citations ORDER BY citing_id DESC LIMIT 40").fetchall()
    for k, (citing, cited) in enumerate(later):
        db.conn.execute("UPDATE citation_edges SET first_seen_unix = unixepoch(?)"
                        " WHERE citing_key = (SELECT key FROM paper_keys WHERE id = ?)"
                        " AND cited_key = (SELECT key FROM paper_keys WHERE id = ?)",
                        (f"2026-11-2{k % 3 + 1}T00:00:00+00:00", citing, cited))
    db.conn.execute("UPDATE papers SET first_posted = NULL, year = NULL WHERE id IN"
                    " (SELECT DISTINCT citing_id FROM citations WHERE citing_id GLOB '*/*' ORDER BY citing_id LIMIT 5)")
    db.conn.execute("UPDATE papers SET first_posted = NULL WHERE id IN (SELECT DISTINCT citing_id FROM citations"
                    " WHERE citing_id GLOB '*/*' ORDER BY citing_id LIMIT 5 OFFSET 5)")  # a year alone
    db.conn.commit()
    return {pid: own_date(pid, fp, year) for pid, fp, year in db.conn.execute(
        "SELECT id, first_posted, year FROM papers")}


def _newest(rows: list[tuple[str, str]], posted: dict[str, str]) -> list[str]:
    """(citing id, first seen) newest first: first seen, then the citer's own date, then its id."""
    return [c for c, _seen in sorted(rows, key=lambda r: (r[1], posted[r[0]], r[0]), reverse=True)]


def test_every_papers_newest_citers_page_by_page(db) -> None:
    posted = _map(db)
    old_style_citers = undated_citers = year_only = dated_later = 0
    cited = [r[0] for r in db.conn.execute(
        "SELECT cited_id FROM citations GROUP BY cited_id HAVING count(*) >= 2 ORDER BY count(*) DESC, cited_id")]
    assert len(cited) > 50
    for pid in cited:
        rows = db.conn.execute("SELECT citing_id, first_seen FROM citations WHERE cited_id = ?", (pid,)).fetchall()
        want = _newest(rows, posted)
        got = [c.id for c in queries.citers(db, pid, sort="newest", limit=100, authors=False).items]
        assert got == want[:100], pid
        old_style_citers += sum("/" in c for c in want)
        undated_citers += sum(posted[c] == "" for c in want)
        year_only += sum(len(posted[c]) == 4 for c in want)
        dated_later += sum(seen != NOW.isoformat() for _c, seen in rows)
        if pid in cited[:60] or any("/" in c for c in want):  # page by page: the most cited, the old-style
            paged = [c.id for n in range(0, min(len(want), 30), 7)
                     for c in queries.citers(db, pid, sort="newest", offset=n, limit=7, authors=False).items]
            assert paged == want[:len(paged)] and len(paged) >= min(len(want), 30)
    # Both ways to a citer's date (its id, its row), no date at all, and both kinds of first seen.
    assert old_style_citers >= 40 and undated_citers >= 5 and year_only >= 5 and dated_later > 20


def test_newest_citers_within_a_direction(db) -> None:
    posted = _map(db)
    pid, slug = db.conn.execute(
        "SELECT c.cited_id, pl.direction_slug FROM citations c JOIN placements pl ON pl.paper_id = c.citing_id"
        " GROUP BY c.cited_id, pl.direction_slug ORDER BY count(*) DESC LIMIT 1").fetchone()
    rows = db.conn.execute(
        "SELECT citing_id, first_seen FROM citations c WHERE cited_id = ? AND EXISTS (SELECT 1 FROM placements pl"
        " WHERE pl.paper_id = c.citing_id AND pl.direction_slug = ?)", (pid, slug)).fetchall()
    assert len(rows) >= 3
    got = [c.id for c in queries.citers(db, pid, sort="newest", direction=slug, limit=100, authors=False).items]
    assert got == _newest(rows, posted)


def test_a_persons_newest_citers_across_their_papers(db) -> None:
    posted = _map(db)
    ids = [r[0] for r in db.conn.execute("SELECT id FROM papers WHERE has_page = 1 ORDER BY id")]
    mine = sorted({*ids[::5], *(i for i in ids if "/" in i)})
    late = next(i for i in mine if "/" in i and posted[i])  # an old-style paper dated the newest
    db.conn.execute("UPDATE papers SET first_posted = '2026-11-01' WHERE id = ?", (late,))
    db.conn.commit()
    posted[late] = "2026-11-01"
    person = AuthorRecord("Ada Newest", "A5100000009")
    save_openalex(db, [work(pid, person if pid in mine else AuthorRecord("Someone Else", f"A6{i}"))
                       for i, pid in enumerate(ids)], ids, NOW)
    [who] = authors.find_people(db, "A5100000009")
    view = authors.author_view(db, who, papers=30, citers=12)
    newest_papers = sorted(mine, key=lambda p: (posted[p], p), reverse=True)[:30]
    assert [p.id for p in view.papers] == newest_papers and newest_papers[0] == late
    assert any(posted[p] == "" for p in mine) and any(len(posted[p]) == 4 for p in mine)
    every = db.conn.execute(f"SELECT citing_id, first_seen, cited_id FROM citations"
                            f" WHERE cited_id IN ({','.join('?' * len(mine))})", mine).fetchall()
    want = sorted(every, key=lambda c: c[2])  # the cited paper's id last, ascending
    want = sorted(want, key=lambda c: (c[1], posted[c[0]], c[0]), reverse=True)[:12]
    assert [(c.citer.id, c.cited.id) for c in view.citers] == [(c[0], c[2]) for c in want]
