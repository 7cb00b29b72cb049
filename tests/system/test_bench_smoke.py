"""The benchmark cannot rot: the generator and `bench/run --smoke` on a small map.

No timing assertions: speed is measured by bench/run, not by tests."""

from __future__ import annotations

import json
from pathlib import Path

import aiohttp

from bench import generate as gen
from bench import main as bench_main
from bench.harness import TITLES
from bench.words import FIELD_WORDS
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.parse import parse_page


def test_generated_pages_parse_back_to_what_was_generated() -> None:
    m = gen.build_map(400, seed=2)
    pages = [gen.page(m, i, snap) for snap in (1, 2) for i in range(m.n)]
    for p in pages:
        assert parse_page(format_page(p).encode("utf-8")) == p
    first = pages[:m.n]
    assert len({p.id for p in first}) == m.n
    assert any("/" in p.id for p in first) and any("." in p.id and "/" not in p.id for p in first)
    assert any(p.built_on_by and p.built_on_by.shown == 30 < p.built_on_by.total for p in first)
    assert any(" / " in x.breadcrumb.removeprefix(x.area + " / ").removesuffix(" / " + x.direction)
               for p in first for x in p.placements)
    # first-posted dates agree with the ids (yymm)
    for p in first:
        assert p.first_posted is not None
        digits = p.id.split("/")[-1][:4]
        assert digits == f"{p.first_posted.year % 100:02d}{p.first_posted.month:02d}"


def test_generator_is_deterministic_and_snapshot_2_changes_two_percent(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    one = gen.generate(500, a, seed=4)
    gen.generate(500, b, seed=4)
    files = sorted(p.relative_to(a) for p in a.rglob("*.txt"))
    assert len(files) == 500 == one["papers"]
    assert all((a / f).read_bytes() == (b / f).read_bytes() for f in files)
    two = gen.generate(500, a, seed=4, snapshot=2)
    assert two["files_written"] == two["changed_pages"] == 10
    assert two["new_citations"] >= 10
    changed = [f for f in files if (a / f).read_bytes() != (b / f).read_bytes()]
    assert len(changed) == 10
    for f in changed:
        old, new = parse_page((b / f).read_bytes()), parse_page((a / f).read_bytes())
        assert new.data_through > old.data_through and new.cited_by > old.cited_by


async def test_the_map_is_served_with_validators_and_304(tmp_path: Path) -> None:
    gen.generate(50, tmp_path, seed=5)
    some = next(tmp_path.rglob("*.txt"))
    pid = gen._id_from_path(some)
    runner, base = await gen.start_server(tmp_path)
    try:
        async with aiohttp.ClientSession() as s:
            async with s.get(f"{base}/paper/{pid}/") as r:
                assert r.status == 200 and await r.read() == some.read_bytes()
                etag, modified = r.headers["ETag"], r.headers["Last-Modified"]
            async with s.get(f"{base}/paper/{pid}/", headers={"If-None-Match": etag}) as r:
                assert r.status == 304
            async with s.get(f"{base}/paper/{pid}/", headers={"If-Modified-Since": modified}) as r:
                assert r.status == 304
            async with s.get(f"{base}/paper/0000.00000/") as r:
                assert r.status == 404
            async with s.get(f"{base}/ids.txt") as r:
                assert pid in (await r.text()).split()
    finally:
        await runner.cleanup()


def test_bench_run_smoke_prints_every_section(tmp_path: Path, capsys) -> None:
    assert bench_main.main(["--smoke", "--papers", "200", "--load-seconds", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for n, title in TITLES.items():
        assert f"## {n}. {title}" in out
    assert "## targets" in out
    results = json.loads((tmp_path / "results.json").read_text())
    fig = results["figures"]
    assert fig["cold_ingest"]["stored"] == 200 and fig["cold_ingest"]["rejected"] == 0
    assert fig["floor"]["citations"] == fig["cold_ingest"]["new_citations"] > 0
    assert fig["reingest"]["skipped"] == 200 and fig["reingest"]["stored"] == 0
    assert fig["reingest_force"]["unchanged"] == 200
    assert fig["refresh_folder"]["stored"] == fig["refresh_folder"]["changed_pages"] == 4
    assert fig["refresh_folder"]["new_citations"] > 0
    http = fig["refresh_http"]
    assert http["stored"] == 4 and http["not_modified"] == 196 and http["new_events"] > 0
    assert fig["refresh_http_first"]["pages_read"] == 200 and fig["refresh_http_first"]["stored"] == 0
    assert fig["publish_incremental"]["incremental"] and fig["publish_incremental"]["written"] > 0
    assert fig["publish_cold"]["written"] > fig["publish_incremental"]["written"]
    assert fig["publish_cold"]["pages"] > 200 and fig["publish_incremental"]["charts"] > 0  # the web pages too
    assert 0 < fig["publish_cold"]["page_seconds"] < fig["publish_cold"]["seconds"]
    for server in fig["feed_server"].values():
        assert server["requests_per_s"] > 0 and server["status_304_share"] == 1.0
    if "queries" in fig:  # the bot's commands are in this checkout
        q = fig["queries"]
        assert q["idle"]["/paper"]["n"] > 0 and q["idle"]["/search"]["n"] > 0
        assert q["refresh"]["stored"] == 4
    if "alert" in fig:
        assert fig["alert"]["alert_title"] and fig["alert"]["seconds"] > 0
    assert {t["name"] for t in results["targets"]} >= {"parse >= 5,000 pages/s", "cold ingest <= 1.5x floor"}
    assert fig["fair_floor"]["citations"] == fig["fair_cold_ingest"]["new_citations"] > 0
    assert fig["huge"][0]["cold"]["stored"] == 200 == fig["huge"][0]["reingest"]["skipped"]
    assert not any(p.name != "run" and p.name != "results.json" for p in tmp_path.iterdir())


def test_the_bench_html_site_serves_pages_that_read_as_their_text() -> None:
    from mapwatch.store.pages.parse import parse_document

    m = gen.build_map(300, seed=3)
    for i in range(m.n):
        p = gen.page(m, i)
        body = gen.html_page(format_page(p)).encode()
        assert body.startswith(b"<!DOCTYPE html>") and b"2301.99991" in body  # the chrome lists a decoy
        assert parse_document(body, url=p.map_url, content_type="text/html") == p


def test_the_fair_floor_and_the_huge_section_at_a_few_thousand_pages(tmp_path: Path, capsys) -> None:
    """Sections 8 and 9 as CI runs them: above the pool's threshold, so the parse workers run."""
    from mapwatch.store.database.ingest_pool import POOL_THRESHOLD

    n = POOL_THRESHOLD + 100
    assert bench_main.main(["--only", "8,9", "--papers", str(n), "--huge", str(n), "--repeat", "1",
                            "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "## 8. cold ingest vs the fair floor" in out and "## 9. huge map, fed from the generator" in out
    fig = json.loads((tmp_path / "results.json").read_text())["figures"]
    floor, cold = fig["fair_floor"], fig["fair_cold_ingest"]
    assert floor["pages"] == cold["stored"] == n and floor["citations"] == cold["new_citations"] > 0
    assert 30 <= floor["list_items"] / n <= 50  # ~40 list items per page
    assert cold["workers_cpu_seconds"] > 0  # the pool parsed
    (huge,) = fig["huge"]
    assert huge["cold"]["stored"] == n and huge["cold"]["rejected"] == 0 and huge["cold"]["workers_cpu_seconds"] > 0
    assert huge["reingest"]["skipped"] == n and huge["reingest"]["stored"] == 0
    assert huge["reingest_over_cold"] < 0.5 and huge["cold"]["db_bytes"] > 0
    assert huge["queries"]["idle"] and huge["queries"]["refresh"]["stored"] > 0
    assert huge["publish_first"]["seconds"] is not None and huge["publish_first"]["status"] == 0
    assert not list(tmp_path.rglob("*.pages"))  # the packed map is removed after its point


def test_query_bench_measures_every_command_idle_and_while_a_refresh_writes(tmp_path: Path) -> None:
    """bench/queries.py's function on a 300-page map with the Zipf vocabulary (bench/vocab.py):
    every command runs, idle and while another process ingests the 2% changed pages."""
    import resource

    from bench import queries as bench_queries
    from bench import vocab
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths

    folder, db_path = tmp_path / "map", tmp_path / "m.db"
    gen.use_vocabulary("zipf")
    try:
        m = gen.build_map(300, seed=6)
        gen.write_map(m, folder, 1)
        db = open_db(db_path)
        ingest_paths(db, [folder], clock=lambda: bench_queries.NOW)
        db.close()
        gen.write_map(m, folder, 2)
    finally:
        gen.use_vocabulary("small")
    made_up = set(vocab.zipf().ranked) - set(FIELD_WORDS)
    assert sum(bool(made_up & set(t.lower().split())) for t in m.titles) > len(m.titles) // 2
    res = bench_queries.measure_commands(str(db_path), during=str(folder), calls=6)
    assert res["words"] == "zipf" and res["missing"] == []
    names = {"/paper", "/citers", "/citers newest", "/search", "autocomplete", "/related", "/path"}
    assert set(res["idle"]) == names and set(res["during_refresh"]) == names
    assert all(s["n"] == 6 and 0 < s["p50_ms"] <= s["p99_ms"] and 0 <= s["cpu_p50_ms"] <= s["cpu_p99_ms"]
               for s in res["idle"].values())
    assert res["refresh"]["exit"] == 0 and res["refresh"]["stored"] == 6  # 2% of 300 pages changed
    assert sum(s["n"] for s in res["during_refresh"].values()) >= len(names)
    assert 0 < res["self_peak_rss_kib"] <= resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def test_zipf_vocabulary_is_deterministic_and_skewed() -> None:
    from bench import vocab

    a, b = vocab.zipf(), vocab.zipf()
    assert a == b and len(set(a.ranked)) == vocab.DEFAULT_SIZE
    field = tuple(dict.fromkeys(FIELD_WORDS))
    assert a.ranked[:len(field)] == field  # the field words are the most frequent
    import random

    drawn = a.words(random.Random(3), 20_000)
    assert drawn == a.words(random.Random(3), 20_000)
    top = drawn.count(a.ranked[0])
    assert top > 20_000 * 0.08 and top > 20 * max(1, drawn.count(a.ranked[999]))
    assert len(set(drawn)) > 2_000  # thousands of distinct words, not 180


def test_path_search_bench_compares_the_current_search_with_a_revision(tmp_path: Path, capsys) -> None:
    """bench.path_search answers the same pairs with today's /path and with git HEAD's, and
    says how each search ended (the same ends: both versions find the same paths)."""
    from datetime import UTC, datetime

    from bench import path_search
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.save import SourceInfo, save_pages

    m = gen.build_map(300, seed=6, list_items=12)
    db = open_db(tmp_path / "m.db")
    save_pages(db, [(p, SourceInfo(f"mem:{p.id}", p.id)) for p in gen.iter_pages(m)], datetime.now(UTC))
    db.close()
    assert path_search.main([str(tmp_path / "m.db"), "--pairs", "30", "--ref", "HEAD", "--rounds", "1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    current, head = (next(x for x in lines if x.strip().startswith(f"{name}:")) for name in ("current", "HEAD"))
    ends = [x.split(" | ")[1] for x in (current, head)]
    assert ends[0] == ends[1]
    assert sum(int(part.rsplit(" ", 1)[1]) for part in ends[0].split(", ")) == 30
    assert "steps" in ends[0] and lines[-1].startswith("HEAD / current")


def test_ranks_bench_compares_the_update_with_the_whole_computation(tmp_path: Path, capsys) -> None:
    from bench import ranks

    argv = ["--pages", "800", "--ticks", "2", "--new", "5", "--work", str(tmp_path), "--push-from", "20"]
    assert ranks.main(argv) == 0
    out = capsys.readouterr()
    assert "whole / update" in out.out and out.err.count("equal to whole: True") == 2
    assert out.err.count("pushed against whole") == 2 and " 0 directions pushed" not in out.err


def test_authors_bench_times_paper_and_author_with_authors_stored(tmp_path: Path, capsys) -> None:
    """bench/authors.py at 300 pages: the map, authors for every paper by save_openalex, then
    /paper before and after and /author; a second run reuses the kept map."""
    from bench import authors as bench_authors

    base = tmp_path / "map.db"
    argv = ["--papers", "300", "--calls", "20", "--base", str(base), "--work", str(tmp_path / "w")]
    assert bench_authors.main(argv) == 0
    out = capsys.readouterr().out
    assert "/author, random people" in out and "bytes a paper" in out
    r = json.loads(out.splitlines()[-1])
    a = r["authors"]
    assert a["papers"] == 300 and a["batches"] == 6 and a["people"] == 100
    assert 300 <= a["author_slots"] <= 15 * 300 and r["bytes_per_paper"] > 0
    for key in ("paper_without_authors", "paper_with_authors", "author_random"):
        s = r[key]
        assert s["n"] == 20 and 0 < s["p50_ms"] <= s["p95_ms"] <= s["p99_ms"] <= s["max_ms"]
    assert r["author_prolific"]["n"] == bench_authors.PROLIFIC and r["most_papers"] > 1
    assert base.exists() and bench_authors.main(argv) == 0
    again = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert again["map"]["reused"] == str(base) and again["authors"]["author_slots"] == a["author_slots"]
    for key in ("search_name", "search_surname"):
        assert again[key]["n"] == 20
    # --measure: the commands alone, twice each, on the database the run left
    assert bench_authors.main(["--measure", str(tmp_path / "w" / "authors-300.db"), "--calls", "20"]) == 0
    measured = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert measured["papers"] == 300 and not measured["cold"]
    for _label, key in bench_authors.COMMANDS:
        for part in ("first", "again"):
            s = measured[key][part]
            assert s["n"] >= 1 and 0 < s["p50_ms"] <= s["p99_ms"] <= s["max_ms"]


def test_authors_bench_orcids_are_valid() -> None:
    from bench.authors import orcid_for
    from mapwatch.store.person_ids import orcid

    assert all(orcid(orcid_for(k)) == orcid_for(k) for k in range(2_000))


def test_alert_authors_bench_names_the_authors_only_with_the_sources_up(tmp_path: Path) -> None:
    """bench/alert_authors.py --small: a tick storing 120 new citers of a tracked paper, its alert
    posted to the fake Discord with the sources up (at arXiv's real 3 s), down (503) and off."""
    from bench import alert_authors

    out = tmp_path / "r.json"
    assert alert_authors.main(["--small", "--work", str(tmp_path / "w"), "--json", str(out)]) == 0
    up, down, off = json.loads(out.read_text())["runs"]
    assert (up["run"], down["run"], off["run"]) == alert_authors.RUNS
    n = alert_authors.SMALL["citers"]
    for r in (up, down, off):
        assert r["alert"]["title"].endswith(f": {n} new citers") and r["alert"]["shown"] > 0
        assert 0 < r["seconds_refresh_to_alert"] < r["seconds_tick_to_alert"]
    assert up["alert"]["with_authors"] == up["alert"]["with_s2"] == up["alert"]["shown"]
    assert up["stored"] == {"authors": n, "s2_sentences": n}
    assert up["requests"] == {"arxiv": 2, "openalex": 3, "s2": 1}  # 100 ids, 50 DOIs a request
    first, second = up["arxiv_starts"]
    assert second - first >= 2.9  # arXiv's published rate, kept by mapwatch's client
    assert up["seconds_before_alerts"] >= 2.9 and up["seconds_refresh_to_alert"] > up["seconds_before_alerts"]
    assert down["alert"]["with_authors"] == down["alert"]["with_s2"] == 0
    assert down["stored"] == {"authors": 0, "s2_sentences": 0}
    assert down["requests"] == {"arxiv": 1, "openalex": 1, "s2": 1}  # one 503 each, then left for the round
    assert sum("gave nothing (HTTP 503)" in line for line in down["log"]) == 3
    assert off["seconds_before_alerts"] is None and off["requests"] == {"arxiv": 0, "openalex": 0, "s2": 0}
    assert off["alert"]["with_authors"] == 0 and off["stored"]["authors"] == 0


def test_migrate_bench_times_the_migrations_a_database_lacks(tmp_path: Path, capsys) -> None:
    from sqlite_utils import Database

    from bench import migrate
    from mapwatch.store.database.migrations import migrations

    older = tmp_path / "older.db"
    db = Database(older)
    migrations.apply(db, stop_before="0043_rank_order")
    db.close()
    assert migrate.main([str(older), "--time-only", "--keep"]) == 0
    run = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert run["seconds"] > 0 and run["cpu_seconds"] > 0 and run["peak_mib"] > 0
    migrated = Database(tmp_path / "older-migrated.db")
    assert "0043_rank_order" in {r["name"] for r in migrated["_sqlite_migrations"].rows}
    assert "0043_rank_order" not in {r["name"] for r in Database(older)["_sqlite_migrations"].rows}


def test_page_cache_bench_counts_fewer_reads_with_a_larger_cache(tmp_path: Path) -> None:
    """bench/page_cache.py on a 300-page map at 1 and at 16 MiB: each command's reads a call
    and CPU; the larger cache holds this map whole, so no command reads more with it."""
    import re
    import subprocess
    import sys

    from bench import queries as bench_queries
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths

    folder, db_path = tmp_path / "map", tmp_path / "m.db"
    gen.write_map(gen.build_map(300, seed=6), folder, 1)
    db = open_db(db_path)
    ingest_paths(db, [folder], clock=lambda: bench_queries.NOW)
    db.close()
    reads = {}
    for mib in (1, 16):
        r = subprocess.run([sys.executable, "-m", "bench.page_cache", str(db_path), "--mib", str(mib)],
                           capture_output=True, text=True, timeout=300, cwd=Path(__file__).resolve().parents[2])
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith(f"page cache {mib} MiB | "), r.stdout
        reads[mib] = {name: int(n) for name, n in re.findall(r"(/[a-z ]+|autocomplete): (\d+) reads", r.stdout)}
        assert set(reads[mib]) == {"/paper", "/citers", "/citers newest", "/search", "autocomplete"}, r.stdout
    assert all(reads[16][name] <= reads[1][name] for name in reads[1]), reads
    assert sum(reads[16].values()) < sum(reads[1].values()), reads
