"""The sources bench cannot rot: `python -m bench.sources --small` runs the real refresh and the
real enrichment round against the simulated map and its two sources.

Invariants of the report only (no freshness targets: those are measured by the bench): the
ground truth adds up, nothing is doubled, the sources were really asked, and with them the
unlisted citations (no page names them) reach the feeds, which the map alone cannot do."""

from __future__ import annotations

import json
from pathlib import Path

from bench import sources


def test_the_small_form_finds_the_unlisted_citations_only_with_the_sources(tmp_path: Path, capsys) -> None:
    out = tmp_path / "r.json"
    assert sources.main(["--small", "--hours", "26", "--json", str(out)]) == 0
    off, on = json.loads(out.read_text())
    assert (off["sources"], on["sources"]) == (False, True)
    assert off["feeds"]["citations"] == on["feeds"]["citations"] > 0  # the same simulated map
    assert off["unlisted"]["citations"] == on["unlisted"]["citations"] > 0
    # The map alone never finds an unlisted citation; the sources do, marked with their provenance.
    assert off["unlisted"]["found"] == 0 and off["provenance"].keys() <= {"map"}
    assert on["unlisted"]["found"] > 0 and on["provenance"].get("openalex", 0) + on["provenance"].get("s2", 0) > 0
    assert on["feeds"]["found"] > off["feeds"]["found"]
    # An unlisted citation can only come from a source: announced by it first (no snapshot).
    assert off["first_from_sources"] == {} and sum(on["first_from_sources"].values()) >= on["unlisted"]["found"]
    for r in (off, on):  # the ticks add up to the run
        assert len(r["ticks"]) == r["hours"] == 26
        assert sum(t["map"] for t in r["ticks"]) == sum(v for k, v in r["requests"].items() if k not in sources.SOURCES)
        assert sum(t["s2"] for t in r["ticks"]) == r["requests"].get("s2", 0)
        assert sum(t["stored"] for t in r["ticks"]) == r["feeds"]["found"]
    assert on["alerts"]["found"] >= off["alerts"]["found"]
    assert off["doubled_events"] == on["doubled_events"] == 0  # each citation announced once
    assert on["requests"].get("s2", 0) > 0 and on["requests"].get("openalex", 0) > 0  # really asked
    assert "s2" not in off["requests"] and "openalex" not in off["requests"]
    assert "| no-sitemap | on |" in capsys.readouterr().out
    for r in (off, on):  # the quiet tick after the run: measured apart, and nothing new to find
        q = r["quiet"]
        assert q["map"] > 0 and q["budget_share"] == round(q["map"] / sources.SMALL["budget"], 4)
        assert q["cpu_refresh_s"] > 0 and (q["s2"] > 0) == r["sources"]
