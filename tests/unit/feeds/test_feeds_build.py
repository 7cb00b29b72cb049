"""Building and publishing feeds: valid Atom, stable bytes, permanent ids, the first import."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import feedparser

from mapwatch.feeds import build
from mapwatch.feeds.publish import publish
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.questions import feed_queries, types
from tests.conftest import older_snapshot, seed_page, write_page
from tests.feedcheck import assert_valid_atom, feed_files, snapshot

BASE = "http://feeds.test:8080"
RL = "lr/reinforcement-learning-for-reasoning"


def test_first_import_fills_every_feed_and_each_is_valid_atom(db, clock, tmp_path: Path) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    out = tmp_path / "public"
    report = publish(db, out, BASE, papers="all")
    assert report.skipped == []
    files = feed_files(out)
    assert {str(f.relative_to(out)) for f in files} >= {
        f"feeds/{RL}.atom", "feeds/alignment/reward-modeling-and-rlhf.atom",
        "feeds/papers/2412.10400.atom", "feeds/papers/2507.04136.atom"}
    for f in files:
        rel = str(f.relative_to(out))
        assert_valid_atom(f.read_bytes(), f"{BASE}/{rel}")

    rl = feedparser.parse((out / f"feeds/{RL}.atom").read_bytes())
    # Every listed citer of the two seeds (both are placed in this direction) is an entry.
    citers = {it.id for pid in ("2412.10400", "2507.04136") for it in seed_page(pid).built_on_by.items}
    assert {e.id.rsplit("/", 1)[1] for e in rl.entries} == citers
    assert rl.feed.title == "Reinforcement learning for reasoning: new citing papers"
    first = next(e for e in rl.entries if e.id.endswith("/citer/2509.02547"))
    assert first.id == f"tag:mapwatch,2026:direction/{RL}/citer/2509.02547"
    assert first.link == "https://mlsanity.com/paper/2509.02547/"
    assert "https://arxiv.org/abs/2509.02547" in first.content[0].value
    assert "2412.10400" in first.content[0].value and "2507.04136" in first.content[0].value
    assert first.updated == "2026-11-01T12:00:00+00:00"


def test_republishing_unchanged_data_keeps_bytes_and_mtimes(db, clock, tmp_path: Path) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, papers="all")
    before = snapshot(out)
    clock.advance(days=3)
    report = publish(db, out, BASE, papers="all")
    assert report.written == [] and report.unchanged == len(before)
    assert snapshot(out) == before
    assert not [p for p in out.rglob(".tmp-*")]


def test_new_citer_is_newest_entry_and_old_ids_stay(db, clock, tmp_path: Path) -> None:
    page = seed_page("2507.04136")
    older = tmp_path / "older"
    write_page(older, older_snapshot(page, 2))
    ingest_paths(db, [older], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, papers="all")
    old = feedparser.parse((out / "feeds/papers/2507.04136.atom").read_bytes())

    clock.advance(days=2)
    newer = tmp_path / "newer"
    write_page(newer, page)
    ingest_paths(db, [newer], clock=clock)
    report = publish(db, out, BASE, papers="all")
    assert "feeds/papers/2507.04136.atom" in report.written
    new = feedparser.parse((out / "feeds/papers/2507.04136.atom").read_bytes())
    gained = {it.id for it in page.built_on_by.items[-2:]}
    assert [e.id.rsplit("/", 1)[1] for e in new.entries[:2]] == [it.id for it in page.built_on_by.items[-2:]]
    assert {e.id for e in new.entries} == {e.id for e in old.entries} | {
        f"tag:mapwatch,2026:paper/2507.04136/citer/{pid}" for pid in gained}
    assert new.feed.updated == "2026-11-03T12:00:00+00:00"
    assert old.feed.updated == "2026-11-01T12:00:00+00:00"


def test_paper_feed_says_when_count_grew_beyond_the_listed_citers(db, clock, tmp_path: Path) -> None:
    page = seed_page("2412.10400")  # lists 30 of 71 citers
    ingest_paths(db, [SEEDS_DIR / "2412.10400.txt"], clock=clock)
    clock.advance(days=1)
    grown = dataclasses.replace(page, cited_by=page.cited_by + 4,
                                built_on_by=dataclasses.replace(page.built_on_by, total=page.built_on_by.total + 4),
                                data_through=page.data_through.replace(day=20))
    ingest_paths(db, [write_page(tmp_path / "grown", grown)], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, papers="all")
    parsed = assert_valid_atom((out / "feeds/papers/2412.10400.atom").read_bytes())
    top = parsed.entries[0]
    assert "gained 4 citers not listed on the map page" in top.title
    assert top.id.startswith("tag:mapwatch,2026:paper/2412.10400/count/")
    assert "71 → 75" in top.content[0].value


def test_limit_keeps_the_newest_entries(db, clock, tmp_path: Path) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, limit=5, papers="all")
    parsed = assert_valid_atom((out / f"feeds/{RL}.atom").read_bytes())
    assert len(parsed.entries) == 5


def test_control_characters_and_markup_in_titles_stay_valid() -> None:
    d = feed_queries.Direction("a/b", "Dir <x> & \x01y", "Area", "Area / Dir", None, 1, "2026-01-01T00:00:00+00:00")
    p = types.PaperRef("2601.00001", "Bad \x0b title <b>\x00 & ünïcode $\\alpha$", 2026,
                   "https://map.test/paper/2601.00001/", "https://arxiv.org/abs/2601.00001")
    c = types.NewCiter(p, "2026-02-01T00:00:00+00:00", 1, (p,))
    parsed = assert_valid_atom(build.direction_feed(d, [c], BASE))
    assert parsed.entries[0].title == "Bad  title <b> & ünïcode $\\alpha$ (2026)"
    assert parsed.feed.title == "Dir <x> & y: new citing papers"


def test_names_reach_the_feeds_as_plain_text() -> None:
    cases = {
        "<b>x</b>": "x", "<@&222>": "", "&lt;script&gt;": "", "&amp;lt;i&amp;gt;Trudy": "Trudy",
        "Ann <ann@example.org>": "Ann", "Bob & <Co> \"quoted\"": 'Bob & "quoted"', "AT&T Labs": "AT&T Labs",
        "Zed &alpha &222": "Zed alpha 222", "  Jo \u202e\x01 Smith ": "Jo Smith", "Zoë Ünicode": "Zoë Ünicode",
        "<<b>>x > y": "x y", "": "",
    }
    assert {t: build.plain_name(t) for t in cases} == cases
    assert len(build.plain_name("N" * 500)) == build.AUTHOR_NAME_MAX
    p = types.PaperRef("2601.00001", "A citer", 2026, "https://map.test/paper/2601.00001/", None)
    who = types.Byline("2601.00001", (types.Author("<@&222>"), types.Author("<b>Eve</b>", None, None, ("<i>Lab</i>",))))
    c = types.NewCiter(p, "2026-02-01T00:00:00+00:00", 1, (p,), byline=who)
    d = feed_queries.Direction("a/b", "Dir", "Area", "Area / Dir", None, 1, "2026-01-01T00:00:00+00:00")
    parsed = assert_valid_atom(build.direction_feed(d, [c], BASE))
    assert [a.name for a in parsed.entries[0].authors] == ["Eve"]  # nothing left of the mention: no <author>
    assert "<p>By Eve.</p>" in parsed.entries[0].content[0].value


def test_empty_feed_uses_a_stored_timestamp() -> None:
    d = feed_queries.Direction("a/b", "Dir", "Area", "Area / Dir", None, 0, "2026-03-04T05:06:07+00:00")
    data = build.direction_feed(d, [], BASE)
    parsed = assert_valid_atom(data)
    assert parsed.feed.updated == "2026-03-04T05:06:07+00:00"
    assert build.direction_feed(d, [], BASE) == data


def test_unsafe_direction_slug_is_never_written(db, clock, tmp_path: Path) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    db.conn.execute("INSERT INTO directions (slug, name, area, breadcrumb) VALUES ('../../escape', 'E', 'A', 'A / E')")
    db.conn.commit()
    out = tmp_path / "site" / "public"
    report = publish(db, out, BASE, papers="all")
    assert report.skipped == ["feeds/../../escape.atom"]
    assert not (tmp_path / "escape.atom").exists() and not (tmp_path / "site" / "escape.atom").exists()
    assert "escape" not in (out / "feeds.opml").read_text()


def test_opml_and_index_list_every_direction_feed(db, clock, tmp_path: Path) -> None:
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, papers="all")
    from lxml import etree

    opml = etree.fromstring((out / "feeds.opml").read_bytes())
    assert opml.get("version") == "2.0"
    urls = sorted(o.get("xmlUrl") for o in opml.iter("outline"))
    assert urls == [f"{BASE}/feeds/alignment/reward-modeling-and-rlhf.atom", f"{BASE}/feeds/{RL}.atom"]
    html = (out / "index.html").read_text()
    for url in urls:
        assert '<link rel="alternate" type="application/atom+xml" title=' in html and f'href="{url}"' in html
    assert f"{BASE}/feeds.opml" in html


def test_incremental_publish_matches_a_full_rebuild(db, clock, tmp_path: Path, make_older_seeds) -> None:
    ingest_paths(db, [make_older_seeds(4)], clock=clock)
    inc, full = tmp_path / "inc", tmp_path / "full"
    first = publish(db, inc, BASE, clock=clock, papers="all")
    assert not first.incremental
    clock.advance(days=1)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    again = publish(db, inc, BASE, clock=clock, papers="all")
    assert again.incremental
    # Only the feeds of papers that gained citers (the seeds, and papers the re-stored pages cite), the
    # direction feeds, the OPML and index are candidates; the rest were not even rebuilt.
    assert set(again.written) >= {"feeds/papers/2412.10400.atom", "feeds/papers/2507.04136.atom", f"feeds/{RL}.atom"}
    publish(db, full, BASE, clock=clock, papers="all")
    assert {k: v[0] for k, v in snapshot(inc).items()} == {k: v[0] for k, v in snapshot(full).items()}
    # A deleted feed file comes back; another base URL rebuilds everything.
    (inc / "feeds/papers/2507.04136.atom").unlink()
    assert publish(db, inc, BASE, clock=clock, papers="all").written == ["feeds/papers/2507.04136.atom"]
    moved = publish(db, inc, "https://elsewhere.example", clock=clock, papers="all")
    # Every feed, the OPML and every page name the base URL; the stylesheet, script and charts do not.
    pages = list(inc.rglob("*.html"))
    assert not moved.incremental and len(moved.written) == len(feed_files(inc)) + 1 + len(pages)
    assert "style.css" not in moved.written and not [w for w in moved.written if w.endswith(".png")]


def test_an_idle_publish_does_not_rebuild_direction_feeds(db, clock, tmp_path: Path, seeds_dir: Path) -> None:
    ingest_paths(db, [seeds_dir], clock=clock)
    out = tmp_path / "public"
    publish(db, out, BASE, clock=clock, papers="all")
    feed = out / f"feeds/{RL}.atom"
    original = feed.read_bytes()
    feed.write_bytes(original.replace(b"new citing papers", b"EDITED BY HAND", 1))
    clock.advance(hours=1)
    idle = publish(db, out, BASE, clock=clock, papers="all")  # nothing stored since: nothing to rebuild
    assert idle.written == [] and b"EDITED BY HAND" in feed.read_bytes()
    assert idle.unchanged == idle.total
    assert f"feeds/{RL}.atom" in publish(db, out, BASE, clock=clock, full=True, papers="all").written
    assert feed.read_bytes() == original
