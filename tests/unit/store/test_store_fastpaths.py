"""The ingest path's fast paths give exactly what the straightforward code gives.

store.pages.parse, store.database.save and store.database.ingest take shortcuts for speed (see bench/RESULTS.md);
each is checked here against the plain definition it replaces."""

from __future__ import annotations

import dataclasses
import hashlib
import itertools
import os
from datetime import date
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import generate as gen
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import _location, ingest_paths
from mapwatch.store.database.save import SourceInfo, save_pages
from mapwatch.store.errors import ParseError
from mapwatch.store.ids import normalize_id
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.list_items import LINK_ITEM, items_at_once, items_by_line
from mapwatch.store.pages.model import ListedPaper, PaperList
from mapwatch.store.pages.page_hash import legacy_page_hash
from mapwatch.store.pages.parse import _decode, _lines, parse_page
from tests.conftest import DATA, SEED_FILES, FakeClock


def all_rows(db) -> dict[str, list]:
    out = {}
    for table in ("papers", "citations", "directions", "placements", "snapshots", "events", "sources"):
        cols = ", ".join(db[table].columns_dict)
        rows = map(repr, db.conn.execute(f"SELECT {cols} FROM {table}"))
        out[table] = list(rows) if table == "events" else sorted(rows)  # event ids and order matter
    return out


def test_legacy_page_hash_is_the_sha256_of_the_pages_repr() -> None:
    m = gen.build_map(60, seed=3)
    pages = [parse_page(f.read_bytes()) for f in [*SEED_FILES, *sorted((DATA / "pages").glob("*.txt"))]]
    pages += [gen.page(m, i, 2) for i in range(m.n)]
    pages.append(dataclasses.replace(pages[0], placements=pages[0].placements[:1], builds_on=None,
                                     title=None))  # type: ignore[arg-type]
    for p in pages:
        assert legacy_page_hash(p) == hashlib.sha256(repr(p).encode("utf-8", "surrogatepass")).hexdigest()


@pytest.mark.parametrize("line", [
    "- [A title](https://m.example/paper/2401.00001/) (2024)",
    "- [A [bracketed] title (with) parts](https://m.example/paper/2401.00001v3/)",
    "- [Title with ](inside) (x)](https://m.example/paper/hep-th/9901001/) (1999)",
    "- [T](https://m.example/abs/2401.00001?x=/paper/2402.00002/)",
    "- [T](https://m.example/paper/2401.00001#/paper/2402.00002/)",
    "- [T](https://m.example/paper/paper/2401.00001/)",
    "- [T](https://m.example/paper/2401.00001/extra/)",
    "- [T](https://m.example/paper/math.GT/0309136) (2003)",
    "- [T] (https://m.example/paper/2401.00001/)",
    "- [](https://m.example/paper/2401.00001/)",
])
def test_list_items_parse_as_the_reference_regex_says(line: str) -> None:
    page = (SEED_FILES[0].read_text(encoding="utf-8").split("## Built on by")[0]
            + f"## Built on by (most cited first, 1 of 1)\n\n{line}\n\n## Abstract (arXiv)\n\nText.\n")
    m = LINK_ITEM.match(line)
    expected_id = normalize_id(m["url"]) if m and "/paper/" in m["url"] else None
    if expected_id is None:
        with pytest.raises(Exception, match="not a paper link"):
            parse_page(page)
        return
    got = parse_page(page).built_on_by
    assert got is not None
    assert got.items == (ListedPaper(id=expected_id, title=m["title"].strip(),
                                     year=int(m["year"]) if m["year"] else None, position=1, url=m["url"]),)


def test_one_batch_stores_exactly_what_saving_page_by_page_stores(tmp_path: Path) -> None:
    m = gen.build_map(120, seed=6)
    first = [gen.page(m, i, 1) for i in range(m.n)]
    second = [gen.page(m, i, 2) for i in m.changed()]
    stub_first = dataclasses.replace(first[-1], id="2611.99999", map_url=None, first_posted=None)
    lister = dataclasses.replace(first[-2], data_through=date(2026, 12, 1), built_on_by=PaperList(3, 3, (
        ListedPaper("2611.99999", "Stub", 2026, 1, "https://m.example/paper/2611.99999/"),
        ListedPaper("2611.99998", "Other", 2026, 2, "https://m.example/paper/2611.99998/"),
        ListedPaper("2611.99999", "Stub", 2026, 3, "https://m.example/paper/2611.99999/"))))
    stale = dataclasses.replace(first[3], data_through=date(2020, 1, 1), title="stale")
    pages = [*first, lister, stub_first, *second, stale, first[5], *second[:2]]
    items = [(p, SourceInfo(f"loc-{i % 150}", f"h{i}", size=i)) for i, p in enumerate(pages)]
    clock = FakeClock()
    one_by_one, batched = open_db(tmp_path / "a.db"), open_db(tmp_path / "b.db")
    results = []
    for db, batches in ((one_by_one, [[it] for it in items]), (batched, [items[:77], items[77:]])):
        total = [0, 0, 0, 0]
        for b in batches:
            r = save_pages(db, b, clock())
            total = [total[0] + len(r.stored), total[1] + r.unchanged + r.stale, total[2] + r.new_citations,
                     total[3] + r.new_papers]
        results.append(total)
    assert results[0] == results[1]
    assert all_rows(one_by_one) == all_rows(batched)
    assert one_by_one.conn.execute("SELECT count(*) FROM events WHERE kind = 'count'").fetchone()[0] > 0


def test_locations_are_resolved_paths(tmp_path: Path) -> None:
    real = tmp_path / "real" / "sub"
    real.mkdir(parents=True)
    (real / "a.txt").write_bytes(SEED_FILES[0].read_bytes())
    os.symlink(tmp_path / "real", tmp_path / "linked")
    os.symlink(SEED_FILES[1], real / "b.txt")
    for path in [tmp_path / "linked" / "sub" / "a.txt", real / "b.txt", Path("tests/../tests/conftest.py")]:
        assert _location(path, {}) == str(path.resolve())
    db = open_db(tmp_path / "m.db")
    report = ingest_paths(db, [tmp_path / "linked"], clock=FakeClock())
    assert report.stored == 2
    assert {r[0] for r in db.conn.execute("SELECT location FROM sources")} == {
        str(real / "a.txt"), str(SEED_FILES[1].resolve())}


def test_ingest_restores_the_connection_settings_it_raises(tmp_path: Path) -> None:
    db = open_db(tmp_path / "m.db")
    before = [db.conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("cache_size", "wal_autocheckpoint")]
    ingest_paths(db, SEED_FILES, clock=FakeClock())
    after = [db.conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("cache_size", "wal_autocheckpoint")]
    assert after == before and db["papers"].count == 99


def test_a_bulk_load_stores_its_pages_unsynced_and_restores_the_settings(tmp_path: Path) -> None:
    """`PRAGMA synchronous` and `foreign_keys` are OFF while a bulk load stores its pages (docs/pages.md,
    "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]"), as before after it, Ctrl-C included; an ingest
    into a map with papers never changes them."""
    db = open_db(tmp_path / "m.db")
    seen: list[tuple] = []

    def settings(conn) -> tuple:
        return tuple(conn.execute(f"PRAGMA {p}").fetchone()[0] for p in ("synchronous", "foreign_keys"))

    def look(done: int, _total: int) -> None:
        seen.append(settings(db.conn))

    assert settings(db.conn) == (1, 1)  # NORMAL and ON, as open_db sets them
    ingest_paths(db, SEED_FILES, clock=FakeClock(), bulk=True, progress=look)
    assert seen and set(seen) == {(0, 0)}
    assert settings(db.conn) == (1, 1) and db["papers"].count == 99
    folder = tmp_path / "map"  # stubs later given pages, ~40 list items a page
    gen.write_map(gen.build_map(260, seed=9, list_items=40), folder, 1, check_every=0)
    loaded = open_db(tmp_path / "l.db")
    ingest_paths(loaded, [folder], clock=FakeClock(), bulk=True, pool=False, batch_size=50)
    assert loaded.conn.execute("SELECT count(*) FROM citations").fetchone()[0] > 1000
    assert loaded.conn.execute("PRAGMA foreign_key_check").fetchall() == []  # keys unchecked, and all sound
    seen.clear()
    ingest_paths(db, SEED_FILES, clock=FakeClock(), bulk=True, force=True, progress=look)  # not empty
    assert seen and set(seen) == {(1, 1)}

    other = open_db(tmp_path / "n.db")

    def stop(done: int, _total: int) -> None:
        if done == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        ingest_paths(other, SEED_FILES, clock=FakeClock(), bulk=True, batch_size=1, progress=stop)
    assert settings(other.conn) == (1, 1)
    assert other.conn.execute("SELECT count(*) FROM pending_builds").fetchone()[0] == 0


# ---------------------------------------------------------------------------------------
# A list read at once (store/pages/list_items.py) against the reading line by line
# ---------------------------------------------------------------------------------------

def _list_bodies(text: str) -> list[list[str]]:
    lines = _lines(_decode(text.encode("utf-8", "surrogatepass")))
    heads = [i for i, s in enumerate(lines) if s.startswith("## ")] + [len(lines)]
    return [lines[a + 1:b] for a, b in itertools.pairwise(heads) if lines[a].startswith(("## Builds", "## Built"))]


def _by_line(body: list[str]) -> list[ListedPaper] | None:
    try:
        return items_by_line(body, 0, len(body))
    except ParseError:
        return None


def test_every_list_of_the_seeds_and_a_generated_map_is_read_at_once() -> None:
    """The fast reading is the one real pages take, and it gives what the reference gives."""
    m = gen.build_map(60, seed=3)
    texts = [f.read_text(encoding="utf-8") for f in [*SEED_FILES, *sorted((DATA / "pages").glob("*.txt"))]]
    texts += [format_page(gen.page(m, i, 2)) for i in range(m.n)]
    bodies = [body for text in texts for body in _list_bodies(text)]
    assert len(bodies) > 120 and sum(map(len, bodies)) > 1_500
    for body in bodies:
        assert items_at_once(body, 0, len(body)) == items_by_line(body, 0, len(body))


# A common item's parts: (what real pages have, what they may have instead). A line takes the
# common parts and sometimes one other, so that whole bodies of common lines come often.
_PARTS: list[tuple[list[str], list[str]]] = [
    (["- ["], [" - [", "-  [", "* [", "- ", "-[", "\u00a0- ["]),
    (["A title", "T", "A [b] (c) title", "$\\alpha$: x \\[y\\]", "é 日本 🙂", " t ", "x](y) z", "t" * 1000],
     ["", " ", "\\", "\ud800", "t" * 1001, "a\\", "](https://m.example/paper/2401.00009/)"]),
    (["]("], ["] (", ")(", "]"]),
    (["https://", "http://"], ["HTTPS://", "ftp://", "https:/", "//", "javascript:"]),
    (["m.example", "m.example:8080", "a-b.c.d"],
     ["m.example:123456", "m.ex ample", "例え.jp", "", "a_b.c", "M.EXAMPLE"]),
    (["/", "/x/", "/paper/", "/a.b~c/%41/", "/" + "a" * 1950 + "/"],
     ["/ü/", "/a b/", "/abs/", "//", "/" + "a" * 2000 + "/"]),  # a URL over 2,000 characters is refused
    (["paper/"], ["", "pdf/", "Paper/", "abs/"]),
    (["2401.00001", "2401.12345", "hep-th/9901001", "math.GT/0309136", "paper/1234567"],
     ["２４０１.０００１", "2401.0001", "2401.000012", "cs/123456", "1234567", "Hep-th/9901001"]),
    (["", "v2", "v12"], ["V2", "v٣", "v", "v2v3"]),
    (["/"], ["", "/x/", "?q=/paper/2402.00002/", "#/paper/2402.00002/", ".pdf", "/paper/2402.00003/", "%20/"]),
    ([")"], [") ", "))", "", ") x"]),
    (["", " (2024)", "(1999)", "  (2003)", "\t(2024)"],
     ["\u00a0(2024)", " (２０２４)", " (202)", " (2024) x", " (12345)", " [2024]"]),
]


@st.composite
def _item_line(draw: st.DrawFn) -> str:
    parts = [draw(st.sampled_from(common)) for common, _other in _PARTS]
    other = draw(st.one_of(st.none(), st.integers(0, len(_PARTS) - 1)))
    if other is not None:
        parts[other] = draw(st.sampled_from(_PARTS[other][1]))
    return "".join(parts)


_LINE = st.one_of(_item_line(), _item_line(), _item_line(), st.sampled_from(["", "-", "- ", "Some text", "  "]))


def test_a_list_read_at_once_is_the_list_read_line_by_line() -> None:
    """Wherever the fast reading decides, it decides as the reference; and it decides often
    enough among the bodies drawn (the comparison is not empty), but not always."""
    at_once: list[bool] = []

    @settings(max_examples=1500, deadline=None, derandomize=True)
    @given(st.lists(_LINE, min_size=1, max_size=4))
    def check(body: list[str]) -> None:
        body = [s.rstrip() for s in body]  # lines as the parser splits them
        got = items_at_once(body, 0, len(body))
        at_once.append(got is not None)
        if got is not None:
            assert got == _by_line(body)

    check()
    assert 0.2 < sum(at_once) / len(at_once) < 0.8, sum(at_once) / len(at_once)
