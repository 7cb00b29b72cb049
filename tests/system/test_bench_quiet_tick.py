"""The quiet-tick bench cannot rot: `python -m bench.quiet_tick` on a small map in its steady
state, the real refresh against the simulated site with nothing new on it. Behaviour only (its
CPU figures are the bench's): every quiet tick within 10% of its budget, and with a sitemap the
files of pages answer 304 once recorded, so they are not read again; a tick run in a new
process (`--new-process`) is as quiet."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import quiet_tick


@pytest.mark.parametrize("variant", ["no-sitemap", "sitemap-lastmod"])
def test_quiet_ticks_stay_within_a_tenth_of_the_budget(tmp_path: Path, variant: str) -> None:
    out = tmp_path / "q.json"
    restart = ["--new-process", "3"] if variant == "no-sitemap" else []  # tick 3 in a new process
    assert quiet_tick.main(["--pages", "1500", "--budget", "1000", "--variant", variant, "--work",
                            str(tmp_path / "w"), "--json", str(out), *restart]) == 0
    ticks = json.loads(out.read_text())["ticks"]
    assert len(ticks) == 3
    for t in ticks:
        assert 0 < t["requests"] <= 100, t  # 10% of 1,000
        assert t["requests"] == sum(t["by_kind"].values())
    if variant == "sitemap-lastmod":  # first read and recorded, then only asked for: 304
        assert ticks[0]["by_kind"]["sitemap"] == 2 and "sitemap_304" not in ticks[0]["by_kind"]
        assert all(t["by_kind"]["sitemap"] == 1 and t["by_kind"]["sitemap_304"] == 1 for t in ticks[1:])
    assert not list((tmp_path / "w").glob("quiet-*.db"))  # the run's copy is removed, the starting database kept
    assert list((tmp_path / "w").glob("template-*.db"))
