"""The cited-by count chart (feeds/chart.py), drawn with Pillow: the same points give the same
bytes as a fresh process draws, whatever was drawn before, in any thread; the PNG decodes at
600 x 260, with its line, title and ticks where they belong, and carries the key it was drawn
from; its ticks are few, round and within the axes."""

from __future__ import annotations

import io
import itertools
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import date, timedelta

import pytest
from PIL import Image

from mapwatch.bot.rendering import plot
from mapwatch.feeds import chart
from mapwatch.store.questions.graph import CountPoint


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
from mapwatch.store.questions.graph import CountPoint
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
        img = decode(png)  # Pillow checks every chunk's CRC as it reads
        assert img.size == (600, 260)
        assert Image.open(io.BytesIO(png)).info["dpi"] == pytest.approx((100, 100), abs=0.01)
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


def test_counts_no_float_holds_are_a_clear_error_and_the_next_chart_is_right(reference) -> None:
    huge = (CountPoint("2026-03-01", 1), CountPoint("2026-03-04", 10**400))
    with pytest.raises(OverflowError):
        chart.count_chart_png(huge)
    assert draw("two") == reference["two"]


def test_a_chart_says_it_was_drawn_by_this_renderer() -> None:
    """Charts drawn by the matplotlib version (key version 1) are not taken as current."""
    pts, title = CHARTS["two"]
    key = json.loads(chart.chart_key(pts, title))
    assert key["v"] == chart.KEY_VERSION == 2
    old = json.dumps({**key, "v": 1}, separators=(",", ":"))
    assert old != chart.chart_key(pts, title)


def ink_columns(img: Image.Image, box: tuple[int, int, int, int]) -> list[int]:
    """x of the columns in `box` holding black ink (text, tick marks, the axes' frame; the blue
    line and the light grid are lighter)."""
    grey = img.crop(box).convert("L")
    return [x + box[0] for x in range(grey.width) if grey.crop((x, 0, x + 1, grey.height)).getextrema()[0] < 60]


def test_the_last_count_is_written_beside_its_point_and_the_dates_under_the_axis() -> None:
    pts = points(4, 1200, 300)  # 1,200 .. 2,100
    img = decode(chart.count_chart_png(pts, "t") or b"")
    width = chart._RIGHT - chart._LEFT
    last_x = round(chart._RIGHT - width * 0.05 / 1.1)  # the data's span plus 5% either side
    lo, hi = chart.y_limits([p.cited_by for p in pts])
    last_y = round(chart._BOTTOM - (2100 - lo) / (hi - lo) * (chart._BOTTOM - chart._TOP))
    # "2,100" above and right of the last point, running past the axes' right edge.
    note = ink_columns(img, (last_x + 3, last_y - 18, 600, last_y - 3))
    assert any(x < chart._RIGHT - 1 for x in note) and any(x > chart._RIGHT + 2 for x in note)
    # Date labels in the band under the axis, inside the picture.
    under = ink_columns(img, (0, chart._BOTTOM + 6, 600, chart._BOTTOM + 22))
    assert under and min(under) >= chart._LEFT - 40 and max(under) < 599


@pytest.mark.parametrize("span_days", [0, 1, 3, 9, 40, 100, 400, 1000, 3000, 20_000])
def test_date_ticks_are_few_round_and_inside_the_axis(span_days: int) -> None:
    first = date(2025, 7, 19).toordinal()
    lo, hi = chart.x_limits([first, first + span_days])
    days, labels, years = chart.date_ticks(lo, hi)
    assert 1 <= len(days) <= 6 and len(labels) == len(days)
    assert all(lo <= d <= hi for d in days) and days == sorted(set(days))
    steps = {b - a for a, b in itertools.pairwise(days)}
    shown = [date.fromordinal(d) for d in days]
    if span_days <= 40:  # a day to two weeks apart, labelled "Jul 19", the year under the axis
        assert len(steps) <= 1 and all(label == f"{d:%b} {d.day}" for label, d in zip(labels, shown, strict=True))
        assert years == (str(shown[0].year) if shown[0].year == shown[-1].year else f"{shown[0].year}-{shown[-1].year}")
    else:  # the first of a month or 1 January: the month's name, or the year for January
        assert all(d.day == 1 for d in shown)
        named = [str(d.year) if d.month == 1 else f"{d:%b}" for d in shown]
        assert labels == named
        assert (years == "") == any(d.month == 1 for d in shown)  # the year is written once, if no label says it


@pytest.mark.parametrize(("lo", "hi"), [(0, 2), (0, 9), (2.5, 11.5), (17_100, 25_000), (0, 10**12), (998.5, 1001.5)])
def test_count_ticks_are_few_round_integers_inside_the_axis(lo: float, hi: float) -> None:
    ticks = chart.count_ticks(lo, hi)
    assert 1 <= len(ticks) <= 6
    assert all(isinstance(t, int) and lo <= t <= hi for t in ticks)
    steps = {b - a for a, b in itertools.pairwise(ticks)}
    assert len(steps) <= 1
    for step in steps:  # 1, 2 or 5 times a power of ten
        assert int(str(step).rstrip("0") or "0") in (1, 2, 5) and all(t % step == 0 for t in ticks)
