"""A simulated month with faults (issue 32, item 6): bench/livemap.py's evolving site, crawled
hour by hour by the real `mapwatch run` (one process per tick), its alerts sent to the fake
Discord (tests/fakediscord) and to a Slack-compatible webhook receiver on loopback, with faults
injected on a fixed seed; then the invariants checked against the site's ground truth.

    python -m bench.month                         (720 ticks at 10,000 pages, with and without faults)
    python -m bench.month --pages 10000 --ticks 48
    python -m bench.month --small                 (what CI runs: 1,500 pages, 24 ticks, faults)

Method:
- The database starts as after a full crawl at T0 - 1 h (bench.freshness.build_template, then
  `schedule_as_crawled`): the site's validators on every page. TRACKED of the most cited papers
  are tracked in the fake's #alerts channel, the first WEBHOOK_TRACKED of them also through a
  Slack webhook, and FOLLOWED directions are followed in #general (all through the store's own
  subscription functions, as the commands write them).
- A tick k: the site's clock moves to T0 + k h (new papers arrive on the way), then
  `mapwatch run` starts under libfaketime (FAKETIME `@T0 + k h`: the clock starts there and runs),
  with $MAPWATCH_DISCORD_API/_GATEWAY at the fake, $MAPWATCH_SLACK_WEBHOOKS at the receiver and
  $MAPWATCH_REPLICA at a file replica (Litestream replicates beside it all month). `mapwatch run`
  has no single-tick mode: its first tick starts at once ($MAPWATCH_REFRESH 1h: the next is an
  hour away), so the tick is over when its "refresh:" (or "refresh tick failed") line is logged
  and nothing is pending (alerts, follows, webhooks) or DELIVER_WAIT seconds passed; then the
  process gets SIGTERM. After each tick the published direction feeds that changed are read
  with feedparser and the stored citations compared with those of the tick before.
- Faults (`--faults`, drawn with random.Random(seed)), each counted from the logs of what
  received it: the site's 503s, truncated bodies (Content-Length promised, half sent, the
  connection closed) and hangs past the crawler's 20 s timeout (`/_sim/faults`); the fake
  Discord's injected 500s and 429s on channel posts and gateway drops (resumes counted);
  webhook hangs past the sender's 8 s timeout (the receiver's log); kill -9 of the tick's
  process at a random moment (its return code -9); a full disk for one tick (the database on
  a tmpfs, filled with a ballast file for that tick; root only, else skipped with the reason);
  one Litestream restore onto a fresh folder mid-month, the month going on from the restored
  database.
- Invariants: every new citation a page names is in the feeds of its cited paper's
  directions, in one entry (the citer's), listed once; every new citer of a tracked paper that
  a page names is alerted once in #alerts (and once through the webhook where it has one); no
  citation stored at one tick is missing or changed at a later one; nothing posted twice.
  Delays are in ticks, from the tick at which the citer first appeared on the site.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from aiohttp import web

from bench.freshness import Config as FreshConfig
from bench.freshness import SimProcess, build_template, free_port, pct, schedule_as_crawled
from bench.livemap import DEFAULT_RATE, T0, LiveMap

ROOT = Path(__file__).resolve().parent.parent
HOUR = 3600.0
TRACKED = 12
WEBHOOK_TRACKED = 4
FOLLOWED = 3
DELIVER_WAIT = 45.0  # seconds a tick waits after its refresh for pending deliveries at most (a webhook round is 30)
SETTLE = 5.0  # ... or until what is pending has not gone down for this long (12 s on a webhook hang's tick)
DRAIN = 3  # quiet ticks after the month (no new papers, no faults) for what is still pending
TICK_LIMIT = 240.0  # seconds a tick's process may take in all before it is stopped
WEBHOOK_HOLD = 9.0  # a hung webhook answers after this: past the sender's 8 s timeout
SOURCE_HOLD = 22.0  # a hung page answers after this: past the crawler's 20 s timeout
ID = re.compile(r"(?<![\w.-])(?:[a-z][a-z-]*(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(?![\w.])")  # arXiv ids, both styles
NONCE = re.compile(r"t(\d+)e(\d+)")


@dataclass(frozen=True)
class Config:
    pages: int = 10_000
    ticks: int = 720
    seed: int = 1
    rate: float = DEFAULT_RATE
    variant: str = "sitemap-lastmod"
    faults: bool = True


@dataclass
class Plan:
    """Which faults go to which tick (drawn with random.Random(seed))."""

    source: dict[int, dict[str, float]] = field(default_factory=dict)  # tick -> /_sim/faults query
    discord: dict[int, tuple[int, int]] = field(default_factory=dict)  # tick -> (500s, 429s) armed
    gateway: set[int] = field(default_factory=set)
    webhook_hang: set[int] = field(default_factory=set)
    kill: dict[int, float] = field(default_factory=dict)  # tick -> seconds after start
    full_disk: int | None = None
    restore: int | None = None


def make_plan(cfg: Config) -> Plan:
    rng = random.Random(cfg.seed)
    n = cfg.ticks
    plan = Plan()
    if not cfg.faults or n < 8:
        return plan
    ticks = list(range(2, n + 1))
    for k in rng.sample(ticks, max(2, n // 4)):
        plan.source[k] = {"5xx": 0.05, "truncated": 0.03}
    for k in rng.sample(ticks, max(1, n // 24)):  # hangs are slow (20 s each): fewer
        plan.source.setdefault(k, {})["timeouts"] = 2
    for k in rng.sample(ticks, max(2, n // 4)):
        plan.discord[k] = (rng.randint(1, 2), rng.randint(1, 2))
    plan.gateway = set(rng.sample(ticks, max(2, n // 12)))
    plan.webhook_hang = set(rng.sample(ticks, max(2, n // 12)))
    plan.full_disk = n // 3
    plan.restore = n // 2 + 1
    quiet = [k for k in ticks if k not in (plan.full_disk, plan.restore, plan.restore - 1)]
    plan.kill = {k: rng.uniform(0.5, 6.0) for k in rng.sample(quiet, max(2, n // 12))}
    return plan


# --- the site ---------------------------------------------------------------------------------

class SiteProcess(SimProcess):
    """bench.livemap in a process of its own, answering with its own clock in `Date`."""

    def __init__(self, cfg: Config, port: int) -> None:
        super().__init__(["bench.livemap", "--pages", str(cfg.pages), "--seed", str(cfg.seed), "--variant",
                          cfg.variant, "--rate", str(cfg.rate), "--port", str(port), "--sim-date"])


# --- the webhook receiver ---------------------------------------------------------------------

class Receiver:
    """A Slack-compatible incoming-webhook receiver on loopback. `hang(n)`: the next n posts
    answer after WEBHOOK_HOLD seconds and are not taken (the sender gave up on them)."""

    def __init__(self) -> None:
        self.received: list[tuple[int, dict[str, Any]]] = []  # (tick, payload) of the accepted posts
        self.hangs_left = 0
        self.hung = 0  # posts held past the sender's timeout
        self.abandoned = 0  # of those, the sender had gone when the answer was due
        self.tick = 0
        self.port = 0
        self._runner: web.AppRunner | None = None

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/services"

    async def _hook(self, request: web.Request) -> web.Response:
        payload = await request.json()
        if self.hangs_left > 0:
            self.hangs_left -= 1
            self.hung += 1
            await asyncio.sleep(WEBHOOK_HOLD)  # the hang is the fault: past the sender's timeout
            if request.transport is None or request.transport.is_closing():
                self.abandoned += 1
            return web.Response(status=504, text="timed out")
        self.received.append((self.tick, payload))
        return web.Response(text="ok")

    async def start(self) -> None:
        app = web.Application()
        app.router.add_post("/services/{team}/{hook}/{token}", self._hook)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()


# --- the database on a small disk -------------------------------------------------------------

class Disk:
    """The database's folder: a tmpfs of its own when we are root (for the full-disk fault),
    else a plain folder (and the fault is skipped, with the reason)."""

    def __init__(self, folder: Path, size_mb: int) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.mounted = False
        self.skip_reason: str | None = None
        if os.geteuid() != 0:
            self.skip_reason = "not root: cannot mount a tmpfs for the full-disk fault"
            return
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_mb}m", "tmpfs", str(folder)],
                           capture_output=True, text=True)
        if r.returncode != 0:
            self.skip_reason = f"mount -t tmpfs failed: {r.stderr.strip()}"
            return
        self.mounted = True

    def free(self) -> int:
        st = os.statvfs(self.folder)
        return st.f_bavail * st.f_frsize

    def fill(self) -> Path:
        ballast = self.folder / "ballast"
        fd = os.open(ballast, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for size in (1 << 20, 4096, 1):  # a MiB at a time, then the last pages and bytes
                chunk = b"\0" * size
                try:
                    while True:
                        os.write(fd, chunk)
                except OSError:
                    pass
        finally:
            os.close(fd)
        return ballast

    def unmount(self) -> None:
        if self.mounted:
            subprocess.run(["umount", "-l", str(self.folder)], check=False)
            self.mounted = False


# --- Litestream -------------------------------------------------------------------------------

def litestream_binary() -> str | None:
    here = Path(sys.executable).parent / "litestream"
    return str(here) if here.is_file() else shutil.which("litestream")


class Replication:
    """`litestream replicate` with the shipped litestream.yml, the database to a file replica."""

    def __init__(self, binary: str, db: Path, replica: Path, log: Path) -> None:
        self.binary, self.db, self.replica = binary, db, replica
        self.env = {**os.environ, "MAPWATCH_DB": str(db), "MAPWATCH_REPLICA": replica.as_uri()}
        self._log = log.open("a")
        self.proc = subprocess.Popen([binary, "replicate", "-config", str(ROOT / "litestream.yml")],
                                     env=self.env, stdout=self._log, stderr=subprocess.STDOUT)

    def wait_current(self, timeout: float = 60.0) -> bool:
        """Until the replica holds every transaction Litestream took and the WAL has nothing newer."""
        from mapwatch.store.database.replica import replica_status

        end = time.monotonic() + timeout
        good = 0
        while time.monotonic() < end:
            st = replica_status(self.db, self.replica.as_uri(), time.time())
            ok = st is not None and st.replica_txid is not None and st.local_txid == st.replica_txid \
                and not st.lag_seconds
            good = good + 1 if ok else 0
            if good >= 3:
                return True
            time.sleep(0.5)  # polling Litestream's progress on disk
        return False

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._log.close()

    def restore(self, into: Path) -> float:
        t = time.perf_counter()
        subprocess.run([self.binary, "restore", "-config", str(ROOT / "litestream.yml"), "-o", str(into),
                        str(self.db)], env=self.env, check=True, capture_output=True)
        return time.perf_counter() - t


# --- reading what was published and stored ----------------------------------------------------

def stored_citations(db: Path) -> dict[tuple[str, str], str]:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        return {(a, b): t for a, b, t in conn.execute("SELECT citing_id, cited_id, first_seen FROM citations")}
    finally:
        conn.close()


def truncate_wal(db: Path) -> None:
    conn = sqlite3.connect(db, timeout=2)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    except sqlite3.Error:
        pass  # Litestream's read transaction may hold it: the WAL keeps its size
    finally:
        conn.close()


def pending_deliveries(db: Path) -> int:
    from mapwatch.store.database.db import open_db
    from mapwatch.store.subscriptions import follows, tracking, webhooks

    d = open_db(db)
    try:
        return (len(tracking.pending_alerts(d)) + len(follows.pending_follow_alerts(d))
                + len(webhooks.pending_webhooks(d)))
    finally:
        d.close()


class FeedReader:
    """The direction feeds as a reader sees them, read after each tick: per (direction slug,
    citer), the cited ids its entry listed and the tick it first listed each."""

    def __init__(self, out: Path) -> None:
        self.out = out
        self.seen_files: dict[Path, tuple[int, int]] = {}
        self.first: dict[tuple[str, str, str], int] = {}  # (slug, citer, cited) -> tick first listed
        self.doubled: list[str] = []  # an entry id twice in one feed, or a cited paper twice in one entry

    def snapshot(self) -> list[tuple[str, bytes]]:
        """The direction feeds changed since the last snapshot: (slug, bytes), read now."""
        feeds = self.out / "feeds"
        if not feeds.is_dir():
            return []
        out = []
        for path in feeds.rglob("*.atom"):
            rel = path.relative_to(feeds)
            if rel.parts[0] in ("papers", "people", "authors", "teams"):
                continue
            st = path.stat()
            key = (st.st_mtime_ns, st.st_size)
            if self.seen_files.get(path) != key:
                self.seen_files[path] = key
                out.append((str(rel.with_suffix("")), path.read_bytes()))
        return out

    def parse(self, tick: int, snapshot: list[tuple[str, bytes]]) -> None:
        """Read a snapshot's feeds as a feed reader does (feedparser): what each entry lists."""
        import feedparser

        for slug, data in snapshot:
            parsed = feedparser.parse(data)
            ids = Counter(e.get("id", "") for e in parsed.entries)
            self.doubled += [f"{slug}: entry {i} {n} times at tick {tick}" for i, n in ids.items() if n > 1]
            for e in parsed.entries:
                citer = e.get("id", "").split("/citer/", 1)[-1]
                html = "".join(c.get("value", "") for c in e.get("content", []))
                # the citer's own line links its page and its arXiv abstract; then the list of what it cites
                items = Counter(ID.findall(html.split("<ul>", 1)[-1].split("</ul>", 1)[0]))
                self.doubled += [f"{slug}: {citer} lists {x} {n} times" for x, n in items.items() if n > 1]
                for x in items:
                    if x != citer:
                        self.first.setdefault((slug, citer, x), tick)


def alert_pairs(text: str, paper: str, citers_of: dict[str, set[str]]) -> list[str]:
    """The citers of `paper` an alert's text names (known citers only: ids in context lines are not)."""
    known = citers_of.get(paper, set())
    return sorted({x for x in ID.findall(text) if x in known})


# --- one month --------------------------------------------------------------------------------

@dataclass
class TickLog:
    tick: int
    seconds: float
    returncode: int | None
    refreshed: bool
    failed: bool
    new_papers: int
    faults: list[str]


async def run_month(cfg: Config, work: Path, log: Any = print) -> dict[str, Any]:
    """One month (cfg.ticks ticks) in `work`; returns the figures and the invariants' findings."""
    from mapwatch.store import secret_box
    from mapwatch.store.database.db import open_db
    from mapwatch.store.subscriptions import follows, tracking, webhooks
    from tests.fakediscord import FakeDiscord

    work.mkdir(parents=True, exist_ok=True)
    plan = make_plan(cfg)
    fake = FakeDiscord()
    await fake.start()
    receiver = Receiver()
    await receiver.start()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    site = SiteProcess(cfg, port)
    # The database and its WAL, with room for a month, and for Litestream's local LTX files
    # beside it: it compacts them on the wall clock (every few minutes), and ticks a few seconds
    # apart write a simulated day in a few minutes (298 MB filled at tick 62 of 720 without faults).
    size_mb = max(64, cfg.pages // 40 + 48) * 2
    disk = Disk(work / "disk", size_mb)
    replication: Replication | None = None
    out = (disk.folder if disk.mounted else work) / "out"  # the service's data volume: database and feeds
    logs = work / "logs"
    logs.mkdir(exist_ok=True)
    key = secret_box.encode_key(os.urandom(32))
    key_before = os.environ.get(secret_box.KEY_ENV)
    os.environ[secret_box.KEY_ENV] = key  # add_webhook seals with it, as the service will open with it
    t_setup = time.perf_counter()
    try:
        template = work / f"template-{cfg.pages}-{cfg.seed}-{port}.db"
        if not template.exists():
            build_template(FreshConfig(cfg.pages, cfg.ticks, 500, cfg.rate, cfg.seed, 0), base, template)
            schedule_as_crawled(template)
        db_path = disk.folder / "m.db"
        shutil.copyfile(template, db_path)
        live = LiveMap(cfg.pages, cfg.seed, cfg.rate)  # the same map: ids and directions, for the setup
        top = sorted(range(live.size), key=lambda i: (-live.init_deg[i], i))[:TRACKED]
        tracked = [live.ids[i] for i in top]
        alerts_ch, general = fake.guild.channel("alerts"), fake.channel
        followed = [d.slug for d in sorted(live.dirs, key=lambda d: -len(live.members[live.dirs.index(d)]))[:FOLLOWED]]
        db = open_db(db_path)
        setup = T0 - timedelta(hours=1)
        for pid in tracked:
            tracking.add_track(db, guild_id=fake.guild.id, channel_id=alerts_ch.id, user_id=None, paper_id=pid,
                               created_by=None, now=setup)
        for slug in followed:
            follows.add_follow(db, guild_id=fake.guild.id, channel_id=general.id, user_id=None, direction_slug=slug,
                               created_by=None, now=setup)
        for k, pid in enumerate(tracked[:WEBHOOK_TRACKED]):
            hook = webhooks.parse_url(f"{receiver.base}/T0001/B{k:04d}/Token{k}", extra_bases=(receiver.base,))
            webhooks.add_webhook(db, "paper", pid, hook, guild_id=None, created_by=None, now=setup)
        db.close()
        lt = litestream_binary()
        replica = work / "replica-1"
        if lt is not None:
            replication = Replication(lt, db_path, replica, logs / "litestream.log")
        setup_s = time.perf_counter() - t_setup
        log(f"set up in {setup_s:.1f} s: {cfg.pages:,} pages, {len(tracked)} tracked, {len(followed)} followed; "
            f"database on {'a tmpfs of ' + str(size_mb) + ' MB' if disk.mounted else 'a plain folder'}")

        import libfaketime

        _, faketime_env = libfaketime.get_reload_information()
        env_base = {**os.environ, **fake.env(), **faketime_env, "TZ": "UTC", "MAPWATCH_ALERT_INTERVAL": "1",
                    "MAPWATCH_ENRICH": "off", "MAPWATCH_REFRESH": "1h", "MAPWATCH_SLACK_WEBHOOKS": receiver.base,
                    "MAPWATCH_WEBHOOK_KEY": key, "MAPWATCH_BACKGROUND_NICE": "0", "PYTHONUNBUFFERED": "1"}
        env_base.pop("MAPWATCH_DB", None)

        truth: dict[tuple[str, str], int] = {}  # (citer, cited) -> tick it appeared at
        stored: dict[tuple[str, str], str] = stored_citations(db_path)
        initial = set(stored)
        lost: list[str] = []
        ticks: list[TickLog] = []
        faults_seen: Counter[str] = Counter()
        skipped: dict[str, str] = {}
        restored_at: dict[str, Any] = {}
        feeds = FeedReader(out)
        msg_tick: dict[int, int] = {}
        seen_msgs: set[int] = set()
        drained = 0
        parsing: asyncio.Future[None] | None = None
        for k in range(1, cfg.ticks + 1 + DRAIN):
            drain = k > cfg.ticks
            if drain and await asyncio.to_thread(pending_deliveries, db_path) == 0:
                break
            drained += drain
            now = T0 + timedelta(hours=k)
            new = site.call(f"advance?to={now.timestamp()}" + ("&quiet=1" if drain else ""), "POST")["new"]
            mirror = live.advance(now.timestamp(), quiet=drain)  # the same evolution here: the new papers' directions
            if [m[0] for m in mirror] != [x[0] for x in new]:
                raise RuntimeError(f"tick {k}: the site's new papers differ from the simulation's")
            for pid, _at, cited in new:
                for c in cited:
                    truth[(pid, c)] = k
            applied: list[str] = []
            if k in plan.source:
                q = "&".join(f"{a}={b}" for a, b in plan.source[k].items())
                site.call(f"faults?{q}&hold={SOURCE_HOLD}&seed={cfg.seed * 1000 + k}", "POST")
                applied.append("source")
            elif cfg.faults:
                site.call("faults", "POST")  # none this tick
            if k in plan.discord:
                n500, n429 = plan.discord[k]
                fake.server_error("POST /channels/*/messages", 500, times=n500)
                fake.rate_limit("POST /channels/*/messages", retry_after=0.3, times=n429)
                applied.append("discord")
            if k in plan.webhook_hang:
                receiver.hangs_left = 1
                applied.append("webhook-hang")
            receiver.tick = k
            ballast: Path | None = None
            if k == plan.full_disk:
                if disk.mounted:
                    truncate_wal(db_path)  # so that the tick's writes need new space, as a WAL that grew would
                    ballast = disk.fill()
                    applied.append("full-disk")
                else:
                    skipped["full_disk"] = disk.skip_reason or "no tmpfs"
            if k == plan.restore:
                if replication is None:
                    skipped["restore"] = "the litestream binary is not installed: pip install -e '.[replicate]'"
                else:
                    current = await asyncio.to_thread(replication.wait_current)
                    replication.stop()
                    before = stored_citations(db_path)
                    fresh = work / "restored"
                    fresh.mkdir(exist_ok=True)
                    new_db = fresh / "m.db"
                    seconds = await asyncio.to_thread(replication.restore, new_db)
                    after = stored_citations(new_db)
                    restored_at = {"tick": k, "replica_current": current, "seconds": round(seconds, 2),
                                   "citations_before": len(before), "citations_after": len(after),
                                   "lost_by_restore": len(before.keys() - after.keys())}
                    faults_seen["restore"] += 1
                    db_path = new_db
                    replication = Replication(lt or "", db_path, work / "replica-2", logs / "litestream.log")
                    applied.append("restore")
            gateway_before = fake.resumes + fake.identifies
            t = time.perf_counter()
            rc, refreshed, failed, killed_text = await one_tick(
                k, now, db_path, base, out, env_base, logs, fake, plan, pending_deliveries)
            seconds = time.perf_counter() - t
            if k in plan.kill:
                applied.append("kill")
                if rc == -signal.SIGKILL:
                    faults_seen["kill9"] += 1
            if k in plan.gateway:
                applied.append("gateway")
                if fake.resumes + fake.identifies > gateway_before + 1:
                    faults_seen["gateway_drop"] += 1
            if ballast is not None:
                faults_seen["full_disk_free_bytes"] = disk.free()
                text = (logs / f"tick-{k:04d}.log").read_text(errors="replace")
                faults_seen["full_disk_errors"] += sum(
                    1 for line in text.splitlines() if "database or disk is full" in line or "No space left" in line)
                faults_seen["full_disk"] += 1
                ballast.unlink()
            ticks.append(TickLog(k, round(seconds, 2), rc, refreshed, failed, len(new), applied + ["drain"] * drain))
            # what the tick left: stored citations (none lost), feeds, messages
            now_stored = await asyncio.to_thread(stored_citations, db_path)
            for pair, first in stored.items():
                if pair not in now_stored:
                    lost.append(f"tick {k}: {pair} (first seen {first}) is gone")
                elif now_stored[pair] != first:
                    lost.append(f"tick {k}: {pair} first seen {first}, now {now_stored[pair]}")
            stored = now_stored
            if parsing is not None:
                await parsing
            # the feeds as the tick left them, read now; parsed (slow) while the next tick runs
            parsing = asyncio.ensure_future(asyncio.to_thread(feeds.parse, k, feeds.snapshot()))
            for mid in fake.messages:
                if mid not in seen_msgs:
                    seen_msgs.add(mid)
                    msg_tick[mid] = k
            log(f"tick {k}: {len(new)} new papers, {seconds:.1f} s, rc {rc}, "
                f"{'refreshed' if refreshed else 'tick failed' if failed else 'no refresh'}"
                + (f", faults: {', '.join(applied)}" if applied else "") + (f" ({killed_text})" if killed_text else ""))
        if parsing is not None:
            await parsing
        # a last look at the logs of what received the faults
        site_faults = site.call("faults")
        faults_seen["source_5xx"] = site_faults.get("5xx", 0)
        faults_seen["source_truncated"] = site_faults.get("truncated", 0)
        faults_seen["source_timeout"] = site_faults.get("timeout_abandoned", 0)
        injected = [r for r in fake.requests if r.injected]
        faults_seen["discord_5xx"] = sum(1 for r in injected if r.status >= 500)
        faults_seen["discord_429"] = sum(1 for r in injected if r.status == 429)
        faults_seen["webhook_hang"] = receiver.abandoned
        faults_seen["discord_nonce_repeats"] = fake.nonce_repeats  # resends Discord dropped by their nonce
        unlisted = {(a, b) for a, b in site.call("unlisted")["unlisted"]}
        named = {e: k for e, k in truth.items() if e not in unlisted}
        return check(cfg, plan, live_dirs(live), named, truth, unlisted, initial, stored, lost, feeds, fake,
                     receiver, msg_tick, tracked, followed, ticks, faults_seen, skipped, restored_at, setup_s,
                     alerts_ch.id, general.id)
    finally:
        if replication is not None:
            replication.stop()
        site.stop()
        await receiver.close()
        await fake.close()
        disk.unmount()
        if key_before is None:  # the key is this run's only: the calling process gets its own back
            os.environ.pop(secret_box.KEY_ENV, None)
        else:
            os.environ[secret_box.KEY_ENV] = key_before


def live_dirs(live: LiveMap) -> dict[str, list[str]]:
    """Per paper id (the new ones too): the slugs of the directions its page places it in."""
    return {pid: [live.dirs[live.main_dir[i]].slug, *(live.dirs[d].slug for d in live.extra_dirs[i])]
            for i, pid in enumerate(live.ids)}


async def one_tick(k: int, now: datetime, db_path: Path, base: str, out: Path, env_base: dict[str, str], logs: Path,
                   fake: Any, plan: Plan, pending: Any) -> tuple[int | None, bool, bool, str]:
    """One `mapwatch run` as at `now`: until its tick's refresh is logged and its deliveries
    settle (or it is killed, as the plan says). Returns (return code, refreshed, failed, note)."""
    env = {**env_base, "FAKETIME": "@" + now.strftime("%Y-%m-%d %H:%M:%S")}
    path = logs / f"tick-{k:04d}.log"
    with path.open("w") as f:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "mapwatch", "run", "--db", str(db_path), "--out", str(out), "--port", "0",
            "--source", base, "--base-url", "http://feeds.example", cwd=ROOT, env=env, stdout=f,
            stderr=subprocess.STDOUT)
    start = time.monotonic()
    identifies = fake.identifies
    note = ""
    refreshed = failed = dropped = False
    settled_at: float | None = None
    last_left, last_change = -1, time.monotonic()
    settle = 12.0 if k in plan.webhook_hang else SETTLE
    try:
        while proc.returncode is None and time.monotonic() - start < TICK_LIMIT:
            try:
                await asyncio.wait_for(proc.wait(), 0.2)  # polling the log and the deliveries
                break
            except TimeoutError:
                pass
            elapsed = time.monotonic() - start
            if k in plan.kill and elapsed >= plan.kill[k]:
                proc.kill()
                await proc.wait()
                note = f"killed after {elapsed:.1f} s"
                break
            if k in plan.gateway and not dropped and fake.identifies > identifies:
                await fake.drop_gateway(code=None)
                dropped = True
            text = path.read_text(errors="replace")
            refreshed = refreshed or "mapwatch.scheduler: refresh: " in text
            failed = failed or "refresh tick failed" in text
            if refreshed or failed:
                if settled_at is None:
                    settled_at = time.monotonic()
                try:
                    left = await asyncio.to_thread(pending, db_path)
                except sqlite3.Error:
                    left = 1
                if left != last_left:
                    last_left, last_change = left, time.monotonic()
                if left == 0 or time.monotonic() - settled_at > DELIVER_WAIT \
                        or time.monotonic() - last_change > settle:
                    break
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), 30)
            except TimeoutError:
                proc.kill()
                await proc.wait()
                note = "did not stop on SIGTERM within 30 s: killed"
    text = path.read_text(errors="replace")
    return proc.returncode, "mapwatch.scheduler: refresh: " in text, "refresh tick failed" in text, note


def delay_summary(delays: list[int]) -> dict[str, Any]:
    return {"n": len(delays), "p50": pct([float(d) for d in delays], 0.5), "p95": pct([float(d) for d in delays], 0.95),
            "max": max(delays) if delays else None}


def resent_after_kill(hook_ticks: dict[tuple[str, str], list[int]], killed: set[int]) -> set[tuple[str, str]]:
    """The webhook deliveries received twice as docs/bot.md ("Webhooks") says a kill may resend
    one: received at a tick whose process was killed (kill -9), then once more at a later tick.
    A Slack webhook takes no idempotency key, so a kill between the receiver's 2xx and the
    recorded cursor posts that one delivery again. Any other repeat is a defect."""
    return {pair for pair, at in hook_ticks.items() if len(at) == 2 and at[0] in killed and at[1] > at[0]}


def check(cfg: Config, plan: Plan, dirs_of: dict[str, list[str]], named: dict[tuple[str, str], int],
          truth: dict[tuple[str, str], int], unlisted: set[tuple[str, str]], initial: set[tuple[str, str]],
          stored: dict[tuple[str, str], str], lost: list[str], feeds: FeedReader, fake: Any, receiver: Receiver,
          msg_tick: dict[int, int], tracked: list[str], followed: list[str], ticks: list[TickLog],
          faults_seen: Counter[str], skipped: dict[str, str], restored: dict[str, Any], setup_s: float,
          alerts_channel: int, general_channel: int) -> dict[str, Any]:
    problems: list[str] = []
    # feeds: each named citation in each of its cited paper's direction feeds, in the citer's entry
    feed_delays: list[int] = []
    missing_feed = 0
    for (citer, cited), k in named.items():
        if (citer, cited) in initial:
            continue
        for slug in dirs_of.get(cited, []):
            first = feeds.first.get((slug, citer, cited))
            if first is None:
                missing_feed += 1
                if missing_feed <= 10:
                    problems.append(f"feed {slug}: {citer} -> {cited} (appeared at tick {k}) never listed")
            else:
                feed_delays.append(first - k)
    problems += feeds.doubled[:20]
    # alerts: each tracked paper's named new citer once in #alerts and once per webhook
    citers_of: dict[str, set[str]] = defaultdict(set)
    for citer, cited in truth:
        citers_of[cited].add(citer)
    channel_count: Counter[tuple[str, str]] = Counter()
    channel_first: dict[tuple[str, str], int] = {}
    follow_count: Counter[tuple[str, str]] = Counter()
    for mid, msg in fake.messages.items():
        if msg.kind != "channel" or msg.deleted or not msg.embeds:
            continue
        e = msg.embed
        text = f"{e.get('title', '')}\n{e.get('description', '')}"
        if msg.channel_id == alerts_channel and NONCE.fullmatch(str(msg.body.get("nonce") or "")):
            paper = ID.findall((e.get("footer") or {}).get("text", ""))
            if not paper:
                continue
            for c in alert_pairs(text, paper[0], citers_of):
                channel_count[(paper[0], c)] += 1
                channel_first.setdefault((paper[0], c), msg_tick.get(mid, 0))
        elif msg.channel_id == general_channel:
            slug = next((s for s in followed if (e.get("url") or "").rstrip("/").endswith(s)), "?")
            for c in set(ID.findall(e.get("description", ""))):
                follow_count[(slug, c)] += 1
    hook_ticks: defaultdict[tuple[str, str], list[int]] = defaultdict(list)  # the ticks a pair was received at
    for k, payload in receiver.received:
        texts = [b.get("text", {}).get("text", "") if b.get("type") != "context"
                 else " ".join(x.get("text", "") for x in b.get("elements", [])) for b in payload.get("blocks", [])]
        footer = [x for x in texts if "/untrack" in x]
        paper = ID.findall(footer[-1]) if footer else []
        if not paper:
            continue
        body = "\n".join(x for x in texts if "/untrack" not in x)
        for c in alert_pairs(body, paper[0], citers_of):
            hook_ticks[(paper[0], c)].append(k)
    killed = {t.tick for t in ticks if t.returncode == -signal.SIGKILL}
    resent = resent_after_kill(hook_ticks, killed)
    alert_delays: list[int] = []
    hook_delays: list[int] = []
    expected_alerts = [(cited, citer, k) for (citer, cited), k in named.items() if cited in tracked]
    missing_alerts = 0
    for cited, citer, k in expected_alerts:
        n = channel_count.get((cited, citer), 0)
        if n != 1:
            missing_alerts += n == 0
            problems.append(f"alert: {citer} -> tracked {cited} (tick {k}) posted {n} times in #alerts")
        else:
            alert_delays.append(channel_first[(cited, citer)] - k)
        if cited in tracked[:WEBHOOK_TRACKED]:
            n = len(hook_ticks.get((cited, citer), []))
            if n != 1 and (cited, citer) not in resent:
                problems.append(f"webhook: {citer} -> tracked {cited} (tick {k}) delivered {n} times")
            else:
                hook_delays.append(hook_ticks[(cited, citer)][0] - k)
    doubled = sum(n - 1 for n in channel_count.values() if n > 1) \
        + sum(len(at) - 1 for pair, at in hook_ticks.items() if len(at) > 1 and pair not in resent) \
        + sum(n - 1 for n in follow_count.values() if n > 1) + len(feeds.doubled)
    problems += [f"follow {s}: {c} posted {n} times" for (s, c), n in follow_count.items() if n > 1][:10]
    # follows: each new citer of a paper placed in a followed direction (a citation a page names), posted
    expected_follows = {(slug, citer) for (citer, cited) in named if (citer, cited) not in initial
                        for slug in dirs_of.get(cited, []) if slug in followed}
    follows_missing = len(expected_follows - follow_count.keys())
    problems += lost[:20]
    new_stored = {p for p in stored if p not in initial}
    return {
        "config": asdict(cfg), "setup_seconds": round(setup_s, 1),
        "tick_seconds": {"p50": pct([t.seconds for t in ticks], 0.5), "max": max(t.seconds for t in ticks),
                         "total": round(sum(t.seconds for t in ticks), 1)},
        "new_citations": len(truth), "named": len(named), "unlisted": len(unlisted & truth.keys()),
        "stored_new_citations": len(new_stored),
        "feeds": {"expected": sum(len(dirs_of.get(c, [])) for (a, c) in named if (a, c) not in initial),
                  "missing": missing_feed, "delay_ticks": delay_summary(feed_delays)},
        "alerts": {"expected": len(expected_alerts), "missing": missing_alerts,
                   "delay_ticks": delay_summary(alert_delays), "webhook_delay_ticks": delay_summary(hook_delays)},
        "follows": {"expected": len(expected_follows), "posted": len(follow_count), "missing": follows_missing},
        "lost": len(lost), "doubled": doubled,
        # webhook deliveries a kill -9 resent (documented at-least-once; not counted as doubled)
        "webhook_resent_after_kill": len(resent),
        "faults": dict(faults_seen), "faults_skipped": skipped, "restore": restored,
        "drain_ticks": sum(1 for t in ticks if "drain" in t.faults),
        "failed_ticks": sum(1 for t in ticks if t.failed), "ticks_refreshed": sum(1 for t in ticks if t.refreshed),
        "ticks": [asdict(t) for t in ticks],
        "problems": problems, "ok": not problems,
    }


SMALL = {"pages": 1_500, "ticks": 24}


def summary_line(r: dict[str, Any]) -> str:
    f, a = r["feeds"]["delay_ticks"], r["alerts"]["delay_ticks"]
    faults = "on" if r["config"]["faults"] else "off"
    return (f"{r['config']['pages']:,} pages, {len(r['ticks'])} ticks, faults {faults}: "
            f"{r['new_citations']:,} new citations ({r['unlisted']:,} unlisted), feeds {r['feeds']['expected']:,} "
            f"expected, {r['feeds']['missing']:,} missing, delay p50/p95/max {f['p50']}/{f['p95']}/{f['max']} ticks; "
            f"alerts {r['alerts']['expected']:,} expected, {r['alerts']['missing']:,} missing, delay p50/p95/max "
            f"{a['p50']}/{a['p95']}/{a['max']}; lost {r['lost']}, doubled {r['doubled']} (webhook deliveries a kill "
            f"resent: {r['webhook_resent_after_kill']}); faults {r['faults']}"
            + (f"; skipped {r['faults_skipped']}" if r["faults_skipped"] else "")
            + f"; tick {r['tick_seconds']['p50']} s p50, {r['tick_seconds']['total']} s in all")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.month", description=__doc__.split("\n\n")[0])
    p.add_argument("--pages", type=int, default=None)
    p.add_argument("--ticks", type=int, default=None, help="simulated hours (default 720: 30 days)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--rate", type=float, default=None,
                   help=f"new papers per day, share of the map (default {DEFAULT_RATE}; --small 0.05)")
    p.add_argument("--faults", choices=("on", "off", "both"), default=None,
                   help="inject the faults (default: both, one month each; --small: on)")
    p.add_argument("--small", action="store_true", help=f"the short form CI runs: {SMALL}, faults on")
    p.add_argument("--work", type=Path, default=None, help="folder for the run (default: a temporary one)")
    p.add_argument("--json", type=Path, default=None, help="write the results here")
    a = p.parse_args(argv)
    pages = a.pages or (SMALL["pages"] if a.small else 10_000)
    ticks = a.ticks or (SMALL["ticks"] if a.small else 720)
    rate = a.rate if a.rate is not None else (0.05 if a.small else DEFAULT_RATE)
    which = a.faults or ("on" if a.small else "both")
    modes = [True, False] if which == "both" else [which == "on"]
    tmp = tempfile.TemporaryDirectory(prefix="mapwatch-month-") if a.work is None else None
    work = Path(tmp.name) if tmp is not None else a.work

    def log(s: str) -> None:
        print(f"{datetime.now(UTC):%H:%M:%S} {s}", file=sys.stderr, flush=True)

    results = []
    try:
        for faults in modes:
            cfg = Config(pages=pages, ticks=ticks, seed=a.seed, rate=rate, faults=faults)
            r = asyncio.run(run_month(cfg, work / ("faults" if faults else "clean"), log))
            results.append(r)
            if a.json:
                a.json.write_text(json.dumps(results, indent=1) + "\n")
            print(summary_line(r), flush=True)
            for line in r["problems"][:30]:
                print("  PROBLEM:", line, flush=True)
    finally:
        if tmp is not None:
            tmp.cleanup()
    return 0 if all(r["ok"] for r in results) else 1


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    raise SystemExit(main())
