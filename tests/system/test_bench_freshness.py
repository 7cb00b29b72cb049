"""The freshness bench cannot rot: the live map's site and `python -m bench.freshness --small`.

Invariants of the report only (the ground truth adds up, delays are not negative, requests
are counted); no timing and no freshness targets: those are measured by the bench."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from datetime import timedelta
from pathlib import Path

import pytest

from bench import freshness
from bench.livemap import LIST_LIMIT, T0, VARIANTS, LiveMap
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.parse import parse_document, parse_page


def test_new_papers_cite_by_preferential_attachment_and_change_the_cited_pages() -> None:
    a, b = LiveMap(600, seed=3, rate=0.2), LiveMap(600, seed=3, rate=0.2)
    before = list(a.version)
    new = a.advance((T0 + timedelta(hours=12)).timestamp())
    assert new == b.advance((T0 + timedelta(hours=12)).timestamp())  # deterministic
    assert len(new) > 10 and a.size == 600 + len(new)
    assert all(T0.timestamp() < at <= (T0 + timedelta(hours=12)).timestamp() for _pid, at, _c in new)
    cited = {c for _pid, _at, refs in new for c in refs}
    for pid in cited:
        i = a.index[pid]
        if i < 600:
            assert a.version[i] > before[i]
    # The cut: a page cited by many lists 30 of them, most cited at T0 first, so its new citers
    # (cited by no one at T0) are not on it.
    top = max(range(600), key=lambda i: len(a.citers[i]))
    page = a.page(top)
    assert page.built_on_by is not None and page.built_on_by.shown == LIST_LIMIT < page.built_on_by.total
    new_ids = {pid for pid, _at, _c in new}
    if any(a.ids[j] in new_ids for j in a.citers[top]):
        assert not new_ids & {it.id for it in page.built_on_by.items}
    for i in (0, top, a.size - 1):  # pages in the map's format, as text and as HTML
        p = a.page(i)
        assert parse_page(format_page(p)) == p
        assert parse_document(a.html(i, "http://127.0.0.1:9"), url=f"http://127.0.0.1:9/paper/{p.id}/").id == p.id
    assert a.advance((T0 + timedelta(hours=13)).timestamp(), quiet=True) == []


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, dict[str, str]]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers or {}), timeout=30) as r:
            return r.status, r.read(), dict(r.headers)
    except urllib.error.HTTPError as e:
        return e.code, e.read(), dict(e.headers)


@pytest.mark.parametrize("variant", VARIANTS)
def test_each_site_variant_serves_what_it_says(variant: str) -> None:
    cfg = freshness.Config(pages=300, hours=1, rate=0.2)
    server = freshness.Server(cfg, variant, freshness.free_port())
    try:
        base = server.base
        status, robots, _ = _get(f"{base}/robots.txt")
        assert status == 200 and (b"Sitemap:" in robots) == variant.startswith("sitemap")
        status, _index, _ = _get(f"{base}/sitemap.xml")
        assert status == (200 if variant.startswith("sitemap") else 404)
        if status == 200:
            _, urls, _ = _get(f"{base}/sitemap-0.xml")
            assert urls.count(b"<url>") == 300
            assert (b"<lastmod>" in urls) == (variant == "sitemap-lastmod")
        new = server.call(f"advance?to={(T0 + timedelta(hours=6)).timestamp()}", "POST")["new"]
        assert new, "no paper arrived in 6 simulated hours at 20% a day"
        pid = new[-1][0]
        status, body, headers = _get(f"{base}/paper/{pid}/")
        assert status == 200 and parse_document(body, url=f"{base}/paper/{pid}/").id == pid
        assert _get(f"{base}/paper/{pid}/", {"If-None-Match": headers["ETag"]})[0] == 304
        assert _get(f"{base}/paper/{pid}/", {"If-Modified-Since": headers["Last-Modified"]})[0] == 304
        live = LiveMap(300, 1, 0.2)  # the same history: the newest paper's direction
        live.advance((T0 + timedelta(hours=6)).timestamp())
        assert live.ids[-1] == pid
        direction = "/" + live.dirs[live.main_dir[live.size - 1]].slug + "/"
        status, body, _ = _get(base + direction)
        assert status == 200 and b"/paper/" in body
        if variant == "directions-newest":  # the newest paper of its direction is listed first
            first = body.split(b'/paper/', 1)[1].split(b"/", 1)[0].decode()
            assert first == pid
        counts = server.call("counts")
        assert counts["page"] == 1 and counts["page_304"] == 2 and counts["robots"] == 1
        assert counts["new_pages_requested"] == 1
    finally:
        server.stop()


def test_small_run_reports_consistent_figures(tmp_path: Path, capsys) -> None:
    out = tmp_path / "fresh.json"
    assert freshness.main(["--small", "--crawler", "both", "--json", str(out), "--quiet",
                           "--work", str(tmp_path / "w")]) == 0
    printed = capsys.readouterr().out
    assert "| sitemap-lastmod | mapwatch |" in printed and "| sitemap-lastmod | naive |" in printed
    results = json.loads(out.read_text())["results"]
    assert [r["crawler"] for r in results] == ["mapwatch", "naive"]
    # The same site history for both crawlers (same seed).
    assert results[0]["feeds"]["citations"] == results[1]["feeds"]["citations"] > 0
    for r in results:
        ticks, feeds, alerts = r["ticks"], r["feeds"], r["alerts"]
        assert len(ticks) == r["hours"] + 1 and ticks[-1]["quiet"] and ticks[-1]["new_papers"] == 0
        assert feeds["citations"] == sum(t["new_citations"] for t in ticks)
        assert r["new_papers"] == sum(t["new_papers"] for t in ticks) > 0
        assert feeds["found"] + feeds["not_found"] == feeds["citations"]
        assert feeds["found"] > 0 and 0 <= alerts["found"] <= alerts["citations"] <= feeds["citations"]
        assert r["unlisted_citations"] <= feeds["not_found"] + feeds["found"]
        for s in (feeds, alerts, r["feeds_listed"]):
            if s["found"]:
                assert 0 <= s["p50_h"] <= s["p95_h"] <= s["max_h"] <= r["hours"] + 1
            for k in ("within_1_tick", "within_24h", "within_7d"):
                assert s[k] is None or 0 <= s[k] <= 1
        assert feeds["within_1_tick_of"] == feeds["citations"]
        assert feeds["within_24h"] is None  # 6 ticks: no citation is 24 h old yet
        for t in ticks:
            assert t["requests"] == sum(t["by_kind"].values()) > 0 and t["cpu_s"] >= 0
            assert t["by_kind"]["robots"] == 1
        assert r["requests"] == sum(t["requests"] for t in ticks[:-1])
        assert r["requests_per_citation_found"] == round(r["requests"] / feeds["found"], 1)
        assert 0 < r["new_pages_requested"] <= r["new_papers"]
        assert r["requests_quiet"] == ticks[-1]["requests"] and r["cpu_quiet_s"] == ticks[-1]["cpu_s"]


def test_scheduled_start_and_a_stale_wal_beside_a_run_database(tmp_path: Path) -> None:
    import shutil
    import sqlite3

    work, out = tmp_path / "w", tmp_path / "fresh.json"
    # A sitemap without lastmod: every page is re-checked on its own schedule.
    args = ["--small", "--variant", "sitemap", "--crawler", "mapwatch", "--quiet", "--work", str(work),
            "--json", str(out)]
    assert freshness.main(args) == 0
    plain = json.loads(out.read_text())["results"][0]
    # A run stopped early leaves its WAL beside its database: the next run's fresh copy must
    # not replay it.
    db_path = work / "sitemap-mapwatch.db"
    conn = sqlite3.connect(db_path)
    conn.execute("PRAGMA wal_autocheckpoint = 0")
    conn.execute("UPDATE papers SET title = 'left by a stopped run'")
    conn.commit()
    shutil.copyfile(f"{db_path}-wal", tmp_path / "left.wal")
    conn.close()
    shutil.copyfile(tmp_path / "left.wal", f"{db_path}-wal")
    assert freshness.main(args) == 0
    again = json.loads(out.read_text())["results"][0]
    conn = sqlite3.connect(db_path)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        assert conn.execute("SELECT count(*) FROM papers WHERE title = 'left by a stopped run'").fetchone() == (0,)
    finally:
        conn.close()
    assert again["feeds"]["citations"] == plain["feeds"]["citations"]
    # --scheduled: the pages start scheduled (due from 4.5 h on), not all due at the first tick.
    assert freshness.main([*args, "--scheduled"]) == 0
    scheduled = json.loads(out.read_text())["results"][0]
    assert scheduled["scheduled"] is True and plain["scheduled"] is False
    first, first_plain = scheduled["ticks"][0]["by_kind"], plain["ticks"][0]["by_kind"]
    assert first.get("page_304", 0) < first_plain.get("page_304", 0)
    conn = sqlite3.connect(work / "sitemap-mapwatch-scheduled.db")
    try:
        assert conn.execute("SELECT count(*) FROM sources WHERE location LIKE 'http%' AND next_check_at IS NULL"
                            ).fetchone() == (0,)
    finally:
        conn.close()


def test_a_steady_start_spreads_the_re_checks_over_their_period(tmp_path: Path) -> None:
    # --steady: a crawl that has run for weeks: re-checks fall due a few an hour (400 pages
    # over 7 days: ~2.4 an hour), not all at once as after a fresh start (every page due).
    out = tmp_path / "steady.json"
    args = ["--small", "--variant", "sitemap", "--crawler", "mapwatch", "--quiet", "--work", str(tmp_path / "w"),
            "--json", str(out)]
    assert freshness.main([*args, "--steady"]) == 0
    steady = json.loads(out.read_text())["results"][0]
    assert steady["steady"] is True
    rechecks = [t["by_kind"].get("page_304", 0) for t in steady["ticks"]]
    assert sum(rechecks) > 0 and max(rechecks) <= 20, rechecks
    assert freshness.main(args) == 0
    fresh = json.loads(out.read_text())["results"][0]
    # (the budget: 150, the small map's 60 direction pages in it, read first)
    assert max(t["by_kind"].get("page_304", 0) for t in fresh["ticks"]) >= 40
