"""The web pages in a real browser: headless Chromium against `mapwatch run` on loopback.

What a person sees: the DOM after load (entries, newest first, dates, the subscribe link),
the same with JavaScript off, and screenshots at a phone and a desktop width. Chromium
comes from Debian's `chromium` package (.ci/run installs it)."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from tests.conftest import FakeClock, older_snapshot, seed_page, write_page
from tests.htmlcheck import headings, parse_strict, text_of
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
RL = "lr/reinforcement-learning-for-reasoning"
PAGES = {"index": "/", "direction": f"/directions/{RL}/", "paper": "/papers/2412.10400/"}
TITLES = {"index": "New citing papers, per research direction", "direction": "Reinforcement learning for reasoning",
          "paper": "Reinforcement Learning Enhanced LLMs: A Survey"}
DROPPED = 5  # the older snapshot of 2412.10400 lacks its last 5 listed citers (none cites the other seed)

if not Path(CHROMIUM).exists():
    if os.environ.get("CI") == "true":
        pytest.fail("chromium is not installed (CI must install the Debian package `chromium`: see .ci/run)",
                    pytrace=False)
    pytest.skip("chromium is not installed (Debian package `chromium`)", allow_module_level=True)


class Browser:
    """One headless Chromium run per call, each with a fresh profile."""

    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.runs = 0

    def _argv(self, javascript: bool) -> list[str]:
        self.runs += 1
        profile = self.tmp / f"profile-{self.runs}"
        if not javascript:  # blocked by the profile's content settings, as a user would turn it off
            (profile / "Default").mkdir(parents=True)
            (profile / "Default" / "Preferences").write_text(
                json.dumps({"profile": {"default_content_setting_values": {"javascript": 2}}}))
        return [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--hide-scrollbars", f"--user-data-dir={profile}"]

    def dump(self, url: str, javascript: bool = True) -> str:
        run = subprocess.run([*self._argv(javascript), "--dump-dom", url], capture_output=True, text=True,
                             timeout=120)
        assert run.returncode == 0 and "</html>" in run.stdout, run.stderr[-2000:]
        return run.stdout

    def console(self, url: str) -> list[str]:
        """The page's console messages (Chromium logs them to stderr as `INFO:CONSOLE`)."""
        run = subprocess.run([*self._argv(True), "--enable-logging=stderr", "--v=0", "--dump-dom", url],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and "</html>" in run.stdout, run.stderr[-2000:]
        return [line for line in run.stderr.splitlines() if ":CONSOLE" in line]

    def screenshot(self, url: str, width: int, height: int) -> Path:
        target = self.tmp / f"shot-{self.runs + 1}.png"
        run = subprocess.run([*self._argv(True), f"--window-size={width},{height}", f"--screenshot={target}", url],
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0 and target.exists(), run.stderr[-2000:]
        return target


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Browser, set[str]]]:
    """`mapwatch run` after an older snapshot of the seeds, its source the full seeds: its first
    refresh stores the new citers. Yields the base URL, a browser, and the new citers' ids."""
    tmp = tmp_path_factory.mktemp("browser")
    db, out, older, full = tmp / "m.db", tmp / "public", tmp / "older", tmp / "full"
    write_page(older, older_snapshot(seed_page("2412.10400"), DROPPED, days=3))
    write_page(older, seed_page("2507.04136"))  # unchanged since
    # The older snapshot was stored three days ago; `run` stores the full seeds today.
    database = open_db(db)
    ingest_paths(database, [older], clock=FakeClock(datetime.now(UTC) - timedelta(days=3)))
    database.close()
    shutil.copytree(SEEDS_DIR, full)
    env = {k: v for k, v in os.environ.items() if k not in ("DISCORD_TOKEN", "MAPWATCH_BASE_URL")}
    log = tmp / "run.log"
    with log.open("w") as sink:
        proc = subprocess.Popen(
            [sys.executable, "-m", "mapwatch", "run", "--db", str(db), "--source", str(full), "--out", str(out),
             "--port", "0"], cwd=ROOT, env={**env, "MAPWATCH_REFRESH": "1h"}, stdout=sink, stderr=subprocess.STDOUT)
    try:
        def feeds_line() -> str | None:
            assert proc.poll() is None, log.read_text()
            return next((line.split(": ", 1)[1].strip().rstrip("/") for line in log.read_text().splitlines()
                         if line.startswith("Feeds: ")), None)

        base = wait_until(feeds_line, 60, what="the run to say where its feeds are", interval=0.2,
                          detail=log.read_text)
        assert base.startswith("http://127.0.0.1:")
        new = {it.id for it in seed_page("2412.10400").built_on_by.items[-DROPPED:]}
        page = f"{base}{PAGES['direction']}"

        def published() -> bool:  # the first tick runs at start
            with urllib.request.urlopen(page, timeout=10) as resp:
                html = resp.read().decode()
            return all(f'data-id="{pid}"' in html for pid in new) and answers(f"{base}/papers/2412.10400/cited-by.png")

        wait_until(published, 60, what="the first refresh to publish the new citers on the direction page",
                   interval=0.5, detail=log.read_text)
        yield base, Browser(tmp), new
    finally:
        proc.terminate()
        proc.wait(20)


def answers(url: str) -> bool:
    """True when the URL answers 200 (the paper's chart, built on demand once two snapshots are stored)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as resp:
            return resp.status == 200
    except urllib.error.HTTPError:
        return False


def entry_rows(dom: str) -> list[tuple[str, str]]:
    root = parse_strict(dom.encode())
    return [(li.get("data-id"), li.get("data-first-seen")) for li in root.iter("li")
            if "entry" in (li.get("class") or "").split() and li.get("data-id")]


def visible(el) -> bool:
    return el.get("hidden") is None


def test_direction_page_shows_the_new_citers_first_with_dates_and_the_feed(served) -> None:
    base, browser, new = served
    for javascript in (True, False):
        dom = browser.dump(f"{base}{PAGES['direction']}", javascript)
        rows = entry_rows(dom)
        assert {pid for pid, _ in rows[:DROPPED]} == new  # the 5 new citers first
        assert len(rows) == len({pid for pid, _ in rows}) > DROPPED
        stamps = [s for _, s in rows]
        assert stamps == sorted(stamps, reverse=True)
        root = parse_strict(dom.encode())
        days = [t for lvl, t in headings(root) if lvl == 3]
        # Today's (the new citers), the older snapshot's (citers known at that first read), and the
        # day 2507.04136 was posted: a citer known at the first read is dated by its own page.
        assert len(days) == 3 and len(set(days)) == 3 and days[-1] == "5 July 2025", days
        feed = f"{base}/feeds/{RL}.atom"
        assert any(a.get("href") == feed and text_of(a) == "Open the Atom feed" for a in root.iter("a"))
        field = next(i for i in root.iter("input") if i.get("id") == "feed-url")
        assert field.get("value") == feed
        button = next(b for b in root.iter("button"))
        assert visible(button) is javascript  # the copy button exists only with the script
        with urllib.request.urlopen(feed, timeout=10) as resp:
            assert resp.status == 200 and resp.headers["Content-Type"] == "application/atom+xml"


def test_paper_page_shows_facts_chart_citers_and_its_feed(served) -> None:
    base, browser, new = served
    page = seed_page("2412.10400")
    for javascript in (True, False):
        dom = browser.dump(f"{base}{PAGES['paper']}", javascript)
        root = parse_strict(dom.encode())
        assert text_of(next(root.iter("h1"))) == TITLES["paper"]
        assert f"data through {page.data_through.isoformat()}" in text_of(root)
        img = next(root.iter("img"))
        assert img.get("src") == "cited-by.png"
        rows = [pid for pid, _ in entry_rows(dom)]
        assert set(rows[:DROPPED]) == new
        assert next(i for i in root.iter("input") if i.get("id") == "feed-url").get("value") == \
            f"{base}/feeds/papers/2412.10400.atom"
    with urllib.request.urlopen(f"{base}/papers/2412.10400/cited-by.png", timeout=10) as resp:
        assert resp.headers["Content-Type"] == "image/png" and resp.read().startswith(b"\x89PNG")


def test_index_lists_every_direction_and_filters_as_you_type(served) -> None:
    base, browser, _ = served
    for javascript in (True, False):
        root = parse_strict(browser.dump(f"{base}/?q=reward", javascript).encode())
        rows = [li for li in root.iter("li") if "direction" in (li.get("class") or "").split()]
        names = {text_of(next(li.iter("a"))): visible(li) for li in rows}
        assert set(names) == {"Reinforcement learning for reasoning", "Reward modeling and RLHF"}
        form = next(root.iter("form"))
        if javascript:  # the filter is shown and applied (?q= fills it, as typing does)
            assert visible(form) and names == {"Reinforcement learning for reasoning": False,
                                               "Reward modeling and RLHF": True}
        else:  # no script: no filter, the full list
            assert not visible(form) and all(names.values())
        for li in rows:
            assert "new in 7 days" in text_of(li) and "in 30 days" in text_of(li) and "newest 20" in text_of(li)
            assert any(a.get("href", "").endswith(".atom") for a in li.iter("a"))


CSP_PROBE = """<!doctype html><html lang="en"><head><title>probe</title><style>p {color: red}</style></head>
<body><script>document.title = "ran";</script><p style="color: blue">probe</p></body></html>
"""


def test_the_pages_and_their_script_break_no_rule_of_the_content_security_policy(served) -> None:
    base, browser, _ = served
    # The check can fail: a page with an inline script and inline styles, served with the same
    # headers (a file the server looks up on disk), is reported three times.
    out = browser.tmp / "public"  # the folder `mapwatch run` publishes to
    (out / "csp-probe.html").write_text(CSP_PROBE)
    try:
        probe = browser.console(f"{base}/csp-probe.html")
    finally:
        (out / "csp-probe.html").unlink()
    assert sum("Content Security Policy" in line for line in probe) == 3, probe
    for path in [*PAGES.values(), "/?q=reward", "/papers/2507.04136/"]:
        messages = browser.console(f"{base}{path}")
        assert not [m for m in messages if "Content Security Policy" in m or "Refused" in m], (path, messages)
        with urllib.request.urlopen(f"{base}{path}", timeout=10) as resp:
            assert "default-src 'none'" in resp.headers["Content-Security-Policy"]
            assert resp.headers["X-Frame-Options"] == "DENY" and resp.headers["Referrer-Policy"] == "no-referrer"


def non_uniform(img, box: tuple[int, int, int, int]) -> int:
    """How many distinct colours the region holds (1: blank)."""
    return len(img.crop(box).getcolors(1 << 20) or [])


@pytest.mark.parametrize("size", [(390, 844), (1366, 900)], ids=["phone", "desktop"])
@pytest.mark.parametrize("name", list(PAGES))
def test_screenshots_are_not_blank_and_show_the_title(served, name: str, size: tuple[int, int]) -> None:
    from PIL import Image

    base, browser, _ = served
    width, height = size
    img = Image.open(io.BytesIO(browser.screenshot(f"{base}{PAGES[name]}", width, height).read_bytes())).convert("RGB")
    assert img.size == size
    assert non_uniform(img, (0, 0, width, height)) > 20
    # The title: dark text on the light page within the top of the first screen, in every column band
    # it spans (text wraps on a phone rather than running off the edge).
    top = img.crop((0, 0, width, height // 2))
    dark_rows = {y for y in range(top.height) for x in range(0, width, 2) if sum(top.getpixel((x, y))) < 150}
    assert len(dark_rows) > 20, "no title-sized dark text in the top half"
    right_margin = img.crop((width - 8, 0, width, height))
    assert non_uniform(right_margin, (0, 0, 8, height)) <= 3, "something runs off the right edge"
