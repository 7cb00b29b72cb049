"""Load on a feed server: conditional GETs (If-None-Match) over a set of feeds, as feed
readers poll. wrk (Debian package) when installed, else an aiohttp client; nginx serving
the same folder as the comparison."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import time
import urllib.request
from pathlib import Path

CONNECTIONS = 32
WRK_THREADS = 2


def sample_paths(out: Path, n: int) -> list[str]:
    """Up to n feed paths (URL paths), spread evenly over the published .atom files."""
    feeds = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.atom"))
    step = max(1, len(feeds) // n)
    return ["/" + f for f in feeds[::step][:n]]


def etags(base: str, paths: list[str]) -> list[str]:
    out = []
    for p in paths:
        with urllib.request.urlopen(base + p, timeout=10) as r:
            out.append(r.headers["ETag"])
    return out


def run(base: str, paths: list[str], seconds: float, work: Path) -> dict:
    tags = etags(base, paths)
    if shutil.which("wrk"):
        return _wrk(base, paths, tags, seconds, work)
    return asyncio.run(_aiohttp_load(base, paths, tags, seconds))


def _lua_string(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


_WRK_SCRIPT = """
local paths = {%s}
local etags = {%s}
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) n304 = 0; nother = 0; i = 0 end
function request()
  i = (i %% #paths) + 1
  return wrk.format("GET", paths[i], {["If-None-Match"] = etags[i]})
end
function response(status, headers, body)
  if status == 304 then n304 = n304 + 1 else nother = nother + 1 end
end
function done(summary, latency, requests)
  local a, b = 0, 0
  for _, t in ipairs(threads) do a = a + t:get("n304"); b = b + t:get("nother") end
  io.write(string.format("STATUS304 %%d OTHER %%d\\n", a, b))
end
"""


def _wrk(base: str, paths: list[str], tags: list[str], seconds: float, work: Path) -> dict:
    script = work / "conditional.lua"
    script.write_text(_WRK_SCRIPT % (", ".join(map(_lua_string, paths)), ", ".join(map(_lua_string, tags))))
    out = subprocess.run(
        ["wrk", f"-t{WRK_THREADS}", f"-c{CONNECTIONS}", f"-d{max(1, round(seconds))}s", "--latency",
         "-s", str(script), base + "/"],
        capture_output=True, text=True, check=True).stdout
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out)[1])  # type: ignore[index]
    pct = {m[1]: _ms(m[2]) for m in re.finditer(r"^\s+(50|75|90|99)%\s+([\d.]+\w+)", out, re.M)}
    statuses = re.search(r"STATUS304 (\d+) OTHER (\d+)", out)
    n304, other = (int(statuses[1]), int(statuses[2])) if statuses else (0, 0)
    return {"tool": "wrk", "connections": CONNECTIONS, "seconds": seconds, "requests_per_s": rps,
            "p50_ms": pct.get("50", float("nan")), "p99_ms": pct.get("99", float("nan")),
            "status_304_share": n304 / max(1, n304 + other), "raw": out}


def _ms(text: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", text)
    if not m:
        return float("nan")
    return float(m[1]) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[m[2]]


async def _aiohttp_load(base: str, paths: list[str], tags: list[str], seconds: float) -> dict:
    import aiohttp

    latencies: list[float] = []
    n304 = 0
    stop = time.perf_counter() + seconds

    async def worker(k: int, session: aiohttp.ClientSession) -> None:
        nonlocal n304
        i = k
        while time.perf_counter() < stop:
            i = (i + 1) % len(paths)
            t = time.perf_counter()
            async with session.get(base + paths[i], headers={"If-None-Match": tags[i]}) as r:
                await r.read()
                n304 += r.status == 304
            latencies.append(time.perf_counter() - t)

    started = time.perf_counter()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=CONNECTIONS)) as session:
        await asyncio.gather(*(worker(k, session) for k in range(CONNECTIONS)))
    elapsed = time.perf_counter() - started
    latencies.sort()
    return {"tool": "aiohttp client", "connections": CONNECTIONS, "seconds": seconds,
            "requests_per_s": len(latencies) / elapsed, "p50_ms": latencies[len(latencies) // 2] * 1000,
            "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
            "status_304_share": n304 / max(1, len(latencies))}


class Nginx:
    """nginx (one worker, like the one-process feed server) serving `root` on a free port."""

    def __init__(self, root: Path, workdir: Path) -> None:
        self.root, self.dir = root.resolve(), workdir.resolve()
        self.port = 0

    @staticmethod
    def available() -> bool:
        return shutil.which("nginx") is not None or Path("/usr/sbin/nginx").exists()

    def __enter__(self) -> Nginx:
        from bench.harness import free_port, wait_for_port

        self.dir.mkdir(parents=True, exist_ok=True)
        self.port = free_port()
        user = "user root;\n" if os.geteuid() == 0 else ""
        temp = " ".join(f"{k}_temp_path {self.dir}/{k};"
                        for k in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        conf = self.dir / "nginx.conf"
        conf.write_text(
            f"{user}worker_processes 1;\ndaemon off;\npid {self.dir}/nginx.pid;\nerror_log {self.dir}/error.log;\n"
            "events { worker_connections 1024; }\n"
            "http {\n  access_log off;\n"
            "  types { application/atom+xml atom; text/x-opml opml; text/html html; }\n"
            f"  {temp}\n"
            f"  server {{ listen 127.0.0.1:{self.port}; root {self.root}; etag on; }}\n}}\n")
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        self.log = (self.dir / "stderr.log").open("w")
        self.proc = subprocess.Popen([nginx, "-p", str(self.dir), "-c", str(conf), "-e", f"{self.dir}/error.log"],
                                     stdout=self.log, stderr=subprocess.STDOUT)
        wait_for_port(self.port, self.proc)
        return self

    def __exit__(self, *exc: object) -> None:
        from bench.harness import stop_process

        stop_process(self.proc)
        self.log.close()
