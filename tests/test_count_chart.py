"""The cited-by count chart (feeds/chart.py) drawn on its reused figure: the same points give
the same bytes as a fresh process draws, whatever was drawn before, in any thread; the PNG
decodes at 600 x 260 and carries the key it was drawn from."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta

import pytest
from mapwatch.bot import plot
from mapwatch.feeds import chart
from mapwatch.store.graph import CountPoint
from PIL import Image


def points(n: int, start: int, step: int, first: str = "2026-03-01", days: int = 3) -> tuple[CountPoint, ...]:
    day = date.fromisoformat(first)
    return tuple(CountPoint((day + timedelta(days=days * i)).isoformat(), start + step * i) for i in range(n))


CHARTS: dict[str, tuple[tuple[CountPoint, ...], str | None]] = {
    "two": (points(2, 3, 4), None),
    "thirty": (points(30, 18_000, 211, first="2025-01-10", days=17), "2412.10400: cited by, as the map stated it"),
    "flat": (points(5, 7, 0, days=1), "2507.04136"),
}

FRESH = """
import json, sys
from mapwatch.feeds.chart import count_chart_png
from mapwatch.store.graph import CountPoint
name = sys.argv[1]
pts, title = json.loads(sys.argv[2])
sys.stdout.buffer.write(count_chart_png([CountPoint(d, c) for d, c in pts], title))
"""


def fresh_png(name: str) -> bytes:
    """The chart as a new process draws it: the first chart on a new figure."""
    pts, title = CHARTS[name]
    arg = json.dumps([[[p.data_through, p.cited_by] for p in pts], title])
    done = subprocess.run([sys.executable, "-c", FRESH, name, arg], capture_output=True, timeout=120, check=True)
    return done.stdout


@pytest.fixture(scope="module")
def reference() -> dict[str, bytes]:
    return {name: fresh_png(name) for name in CHARTS}


def draw(name: str) -> bytes:
    pts, title = CHARTS[name]
    png = chart.count_chart_png(pts, title)
    assert png is not None
    return png


def decode(png: bytes) -> Image.Image:
    img = Image.open(io.BytesIO(png))
    img.load()
    return img.convert("RGB")


def test_the_same_points_give_the_same_bytes_as_a_fresh_process_whatever_came_before(reference) -> None:
    assert len(set(reference.values())) == len(reference)  # three different charts
    for order in (["two", "thirty", "two"], ["thirty", "flat", "two", "thirty"], ["flat", "flat", "two"]):
        for name in order:
            assert draw(name) == reference[name], (order, name)


def test_the_chart_decodes_at_600_by_260_with_its_line_title_and_key(reference) -> None:
    for name, (pts, title) in CHARTS.items():
        png = draw(name)
        img = decode(png)
        assert img.size == (600, 260)
        assert chart.drawn_key(png) == chart.chart_key(pts, title)
        colours = {c for _, c in img.getcolors(1 << 20)}
        assert (0x1F, 0x77, 0xB4) in colours  # the line, in its colour
        top = img.crop((0, 0, 600, 30)).convert("L")  # the title's band (top margin 12% of 260)
        assert top.getextrema()[0] < 100
    # A different title changes the title's band only.
    pts, _ = CHARTS["two"]
    a, b = decode(chart.count_chart_png(pts, "one title") or b""), decode(chart.count_chart_png(pts, "other") or b"")
    diff = [y for y in range(260) if a.crop((0, y, 600, y + 1)).tobytes() != b.crop((0, y, 600, y + 1)).tobytes()]
    assert diff and max(diff) < 30


def test_the_bot_card_draws_the_same_chart(reference) -> None:
    pts, title = CHARTS["thirty"]
    assert plot.count_chart_png(pts, title=title) == reference["thirty"]
    assert chart.count_chart_png(pts[:1]) is None  # one point: nothing to chart


def test_charts_drawn_from_several_threads_are_each_right(reference) -> None:
    names = ["two", "thirty", "flat"] * 4
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(draw, names))
    assert got == [reference[n] for n in names]


def test_a_drawing_that_fails_leaves_the_next_chart_right(reference) -> None:
    draw("thirty")
    kept = chart._figure
    assert kept is not None
    huge = (CountPoint("2026-03-01", 1), CountPoint("2026-03-04", 10**400))  # no float holds it
    with pytest.raises(OverflowError):
        chart.count_chart_png(huge)
    assert chart._figure is None  # the figure it failed on was dropped
    assert draw("two") == reference["two"]
    assert chart._figure is not None and chart._figure is not kept
