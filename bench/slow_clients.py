"""Unfinished requests against the feed server (issue 21, item 4).

`python -m bench.slow_clients [--connections 20000] [--cap N] [--header-timeout S]`:
`mapwatch run` (no Discord token, the seeds, refresh every hour) on loopback; flood processes
open `--connections` connections that each send half a request line and never finish it; a
probe process asks `/healthz` every 20 ms (a new connection each time) from before the flood
until every flooding connection is closed. Prints the probe's latency (p50, p99, max, failures)
and when the server closed the flooding connections (seconds after each opened). The server
keeps its descriptor limit (RLIMIT_NOFILE of this shell); `--cap` sets
$MAPWATCH_MAX_CONNECTIONS (default: the server's own, 4096).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pct(values: list[float], p: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def flood(port: int, n: int, wait: float) -> dict[str, object]:
    opened: list[float] = []
    closed_after: list[float] = []
    failed = 0
    writers = []

    async def watch(reader: asyncio.StreamReader, t0: float) -> None:
        with contextlib.suppress(ConnectionError):
            await reader.read()
        closed_after.append(time.monotonic() - t0)

    tasks = []
    for _ in range(n):
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 10)
            writer.write(b"GET /healthz HT")
        except (OSError, TimeoutError):
            failed += 1
            continue
        t0 = time.monotonic()
        opened.append(t0)
        writers.append(writer)
        tasks.append(asyncio.create_task(watch(reader, t0)))
    _done, pending = await asyncio.wait(tasks, timeout=wait) if tasks else (set(), set())
    for w in writers:
        w.close()
    return {"opened": len(opened), "failed": failed, "still_open": len(pending),
            "open_seconds": (opened[-1] - opened[0]) if opened else 0.0, "closed_after": closed_after}


def probe(port: int, seconds: float) -> dict[str, object]:
    latencies: list[float] = []
    failures = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = time.monotonic()
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as resp:
                resp.read()
                ok = resp.status == 200
        except OSError:
            ok = False
        if ok:
            latencies.append((time.monotonic() - t0) * 1000)
        else:
            failures += 1
        time.sleep(0.02)
    return {"latencies_ms": latencies, "failures": failures}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=20_000)
    parser.add_argument("--flooders", type=int, default=2, help="processes sharing the connections")
    parser.add_argument("--cap", type=int, default=None, help="$MAPWATCH_MAX_CONNECTIONS for the server")
    parser.add_argument("--header-timeout", type=float, default=None, help="$MAPWATCH_HEADER_TIMEOUT")
    parser.add_argument("--wait", type=float, default=60.0, help="seconds a flooder waits for its closes")
    parser.add_argument("--role", choices=("flood", "probe"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--seconds", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "flood":
        print(json.dumps(asyncio.run(flood(args.port, args.connections, args.wait))))
        return
    if args.role == "probe":
        print(json.dumps(probe(args.port, args.seconds)))
        return

    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    (ROOT / "bench" / "out").mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="slow-clients-", dir=ROOT / "bench" / "out"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DISCORD_TOKEN", "MAPWATCH_BASE_URL", "PORT")}
    env["MAPWATCH_REFRESH"] = "1h"
    if args.cap is not None:
        env["MAPWATCH_MAX_CONNECTIONS"] = str(args.cap)
    if args.header_timeout is not None:
        env["MAPWATCH_HEADER_TIMEOUT"] = str(args.header_timeout)
    log = tmp / "run.log"
    with log.open("w") as sink:
        server = subprocess.Popen([sys.executable, "-m", "mapwatch", "run", "--db", str(tmp / "m.db"),
                                   "--out", str(tmp / "public"), "--port", str(port)], cwd=ROOT, env=env,
                                  stdout=sink, stderr=subprocess.STDOUT)
    try:
        while "Feeds: " not in log.read_text():
            assert server.poll() is None, log.read_text()
            time.sleep(0.2)
        time.sleep(3)  # the first tick
        me = [sys.executable, "-m", "bench.slow_clients", "--port", str(port)]
        seconds = args.wait + 20
        prober = subprocess.Popen([*me, "--role", "probe", "--seconds", str(seconds)], cwd=ROOT,
                                  stdout=subprocess.PIPE, text=True)
        time.sleep(2)  # the probe alone first
        started = time.monotonic()
        per = args.connections // args.flooders
        flooders = [subprocess.Popen([*me, "--role", "flood", "--connections", str(per), "--wait", str(args.wait)],
                                     cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(args.flooders)]
        floods = [json.loads(f.communicate()[0]) for f in flooders]
        flood_seconds = time.monotonic() - started
        probed = json.loads(prober.communicate()[0])
        alive = server.poll() is None
    finally:
        server.terminate()
        server.wait(30)
    closed = [c for f in floods for c in f["closed_after"]]
    lat = probed["latencies_ms"]
    print(f"server: mapwatch run, RLIMIT_NOFILE {hard:,}, cap {args.cap or 'default'}, "
          f"header timeout {args.header_timeout or 'default'} s; alive after: {alive}")
    print(f"flood: {sum(f['opened'] for f in floods):,} unfinished connections opened "
          f"({sum(f['failed'] for f in floods):,} could not connect) in "
          f"{max(f['open_seconds'] for f in floods):.1f} s by {args.flooders} processes; "
          f"whole run {flood_seconds:.0f} s")
    print(f"closed by the server: {len(closed):,}, still open after {args.wait:g} s: "
          f"{sum(f['still_open'] for f in floods):,}; closed after (s): min {min(closed, default=0):.2f}, "
          f"p50 {pct(closed, 50):.2f}, p99 {pct(closed, 99):.2f}, max {max(closed, default=0):.2f}")
    print(f"/healthz: {len(lat):,} answered 200, {probed['failures']} failed; latency ms p50 {pct(lat, 50):.1f}, "
          f"p99 {pct(lat, 99):.1f}, max {max(lat, default=0):.1f}")
    text = log.read_text()
    print(f"server log: {len(text):,} bytes, {text.count(chr(10))} lines, {text.count('Traceback')} tracebacks")
    for line in text.splitlines():
        if "descriptor" in line:
            print("  " + line[:300])


if __name__ == "__main__":
    main()
