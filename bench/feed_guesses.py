"""How fast one client can guess team feed addresses (tests/RELIABILITY.md, section 20, item 5).

`python -m bench.feed_guesses [--seconds 10] [--connections 8]` stores the seeds and one team
in a new database, starts `mapwatch serve` on loopback (in a process of its own, as deployed,
with the environment's $MAPWATCH_NOT_FOUND_BURST), and has one client (127.0.0.1, `connections`
keep-alive connections) ask for random addresses of the team's form as fast as the server
answers, for `seconds`. It prints how many guesses a second were checked (answered 404 or
200) and how many refused (429), whether the team's real feed and a direction's feed still
answer that client and another one (127.0.0.2), and what the rate means: the mean time to find
one team's address, half its address space over the rate.

Loopback only; the loop stops by itself after `seconds`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import secrets
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import aiohttp

RL = "lr/reinforcement-learning-for-reasoning"


def make_site(folder: Path) -> str:
    """The seeds and one team ("Lab", one paper) in `folder`/m.db; its feed slug."""
    from mapwatch.store.database.db import open_db
    from mapwatch.store.database.ingest import ingest_paths
    from mapwatch.store.pages.files import SEEDS_DIR
    from mapwatch.store.subscriptions import teams
    from tests.conftest import FakeClock

    db = open_db(folder / "m.db")
    try:
        ingest_paths(db, [SEEDS_DIR], clock=FakeClock())
        team, _ = teams.ensure_team(db, 7, "Lab", 1, FakeClock()())
        teams.add_member(db, team, "paper", "2412.10400", "The survey", 1, FakeClock()())
        return team.feed_slug
    finally:
        db.close()


def guessed(slug: str) -> str:
    """A random address of the team's form (the same length of random suffix)."""
    prefix, suffix = slug.rsplit("-", 1)
    alphabet = "0123456789abcdef" if re.fullmatch(r"[0-9a-f]{8}", suffix) else "abcdefghijklmnopqrstuvwxyz234567"
    return f"/feeds/teams/{prefix}-{''.join(secrets.choice(alphabet) for _ in suffix)}.atom"


async def wait_ready(base: str, deadline: float) -> None:
    async with aiohttp.ClientSession() as s:
        while time.monotonic() < deadline:
            try:
                async with s.get(base + "/") as r:
                    if r.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise SystemExit("the server did not start")


async def status_from(address: str, url: str) -> int:
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(local_addr=(address, 0))) as s, \
            s.get(url) as r:
        return r.status


async def guess(base: str, slug: str, seconds: float, connections: int) -> dict[str, Any]:
    seen: Counter[int] = Counter()
    stop = time.monotonic() + seconds
    connector = aiohttp.TCPConnector(local_addr=("127.0.0.1", 0), limit=connections)
    async with aiohttp.ClientSession(connector=connector) as s:
        async def one() -> None:
            while time.monotonic() < stop:
                async with s.get(base + guessed(slug)) as r:
                    await r.read()
                    seen[r.status] += 1

        started = time.monotonic()
        await asyncio.gather(*(one() for _ in range(connections)))
        took = time.monotonic() - started
    checked = seen[404] + seen[200]
    return {"seconds": round(took, 2), "statuses": dict(sorted(seen.items())), "checked": checked,
            "checked_per_s": round(checked / took, 1), "refused_per_s": round(seen[429] / took, 1)}


def mean_days_to_find(slug: str, per_second: float) -> float:
    suffix = slug.rsplit("-", 1)[1]
    bits = 4 * len(suffix) if re.fullmatch(r"[0-9a-f]{8}", suffix) else 5 * len(suffix)
    return float("inf") if per_second <= 0 else 2 ** (bits - 1) / per_second / 86_400


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--connections", type=int, default=8)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        slug = make_site(folder)
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            port = sock.getsockname()[1]
        server = subprocess.Popen([sys.executable, "-m", "mapwatch", "serve", "--db", str(folder / "m.db"),
                                   "--out", str(folder / "public"), "--host", "127.0.0.1", "--port", str(port)],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ))
        base = f"http://127.0.0.1:{port}"
        try:
            asyncio.run(wait_ready(base, time.monotonic() + 60))
            result = asyncio.run(guess(base, slug, args.seconds, args.connections))
            after = {f"{who} {what}": asyncio.run(status_from(address, base + path))
                     for who, address in (("same client", "127.0.0.1"), ("other client", "127.0.0.2"))
                     for what, path in (("team feed", f"/feeds/teams/{slug}.atom"), ("direction feed",
                                                                                    f"/feeds/{RL}.atom"))}
        finally:
            server.terminate()
            server.wait(timeout=30)
    result["after the guessing"] = after
    result["suffix"] = slug.rsplit("-", 1)[1]
    result["mean_days_to_find_one_team"] = f"{mean_days_to_find(slug, result['checked_per_s']):.3g}"
    result["connections"] = args.connections
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
