"""The simulated month's short form (bench/month.py, issue 32 item 6): 24 hourly ticks of the real
`mapwatch run` at 1,500 pages, one process a tick on libfaketime's clock, with every fault kind
injected on a fixed seed. Asserts the invariants against the site's ground truth (nothing missing
from the feeds or the alerts, nothing lost, nothing doubled) and that each fault really happened,
counted from the logs of what received it (the site, the fake Discord, the webhook receiver, the
killed process's return code, the disk); the full disk only as root, else skipped for that reason."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from bench.month import SMALL, Config, litestream_binary, run_month

pytestmark = pytest.mark.skipif(litestream_binary() is None, reason="the litestream binary is not installed: "
                                "pip install -e '.[replicate]' (the test extra includes it)")


def test_small_month_with_faults_keeps_the_invariants(tmp_path: Path) -> None:
    pytest.importorskip("libfaketime", reason="libfaketime (the test extra) runs each tick on the simulated clock")
    cfg = Config(pages=SMALL["pages"], ticks=SMALL["ticks"], seed=1, rate=0.05, faults=True)
    r = asyncio.run(run_month(cfg, tmp_path / "month", log=lambda s: None))
    assert r["problems"] == [], r["problems"][:20]
    assert r["lost"] == 0 and r["doubled"] == 0
    assert r["feeds"]["expected"] > 100 and r["feeds"]["missing"] == 0
    assert r["alerts"]["expected"] > 10 and r["alerts"]["missing"] == 0
    assert r["restore"]["lost_by_restore"] == 0 and r["restore"]["citations_after"] > 0
    f = r["faults"]
    for kind in ("source_5xx", "source_truncated", "source_timeout", "discord_5xx", "discord_429", "gateway_drop",
                 "webhook_hang", "kill9", "restore"):
        assert f.get(kind, 0) > 0, f"the fault {kind} never happened: {f}"
    if os.geteuid() == 0:
        assert f["full_disk"] == 1 and f["full_disk_free_bytes"] < 64 * 1024, f
    else:
        assert "not root" in r["faults_skipped"]["full_disk"]
