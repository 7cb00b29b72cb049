"""The cited-by count chart: a paper's stated count over its stored snapshots, as a PNG.

Pure: points in, PNG bytes out (the same points give the same bytes, in any process or
thread; nothing is kept between charts). Used by the paper pages (feeds/pages.py) and by
the bot's `/paper` card (bot/rendering/plot.py re-exports it).

Drawn with Pillow alone, not matplotlib: a `publish --papers all` after a change draws one
chart per changed paper, and matplotlib's text and tick layout cost ~30 ms of CPU a chart
where this costs a few (bench/chart_draw.py). The chart is drawn at twice its size and
halved (a 2x2 box filter), which smooths the line, the markers and the text. Dates on x
(ticks a day to years apart, at most six), the count on y (integer ticks, at most six),
a light grid, the last count written beside its point, the title above.

Each PNG carries what it was drawn from (`chart_key`, in a text chunk), so a publish can
tell from the file alone that a chart is current and skip drawing it (`drawn_key`). The
key's version changes when the drawing does, so charts drawn the old way are redrawn.
"""

from __future__ import annotations

import json
import math
import struct
import zlib
from collections.abc import Sequence
from datetime import date
from functools import cache, lru_cache

from PIL import Image, ImageDraw, ImageFont

from mapwatch.store.questions.graph import CountPoint

LINE = "#1f77b4"
KEY_FIELD = "Description"
KEY_VERSION = 2  # 1: drawn with matplotlib; 2: drawn with Pillow (this module)
DEFAULT_TITLE = "Cited-by count, as the map stated it"
CHART_DPI = 100
WIDTH, HEIGHT = 600, 260
_S = 2  # drawn at _S times the size, then reduced
# The axes' box in the final picture (room for 6-digit counts on the left, the title above).
_LEFT, _RIGHT, _TOP, _BOTTOM = 84, 552, 32, 218
_MAX_TICKS = 6
_TEXT, _SPINE, _GRID = (0, 0, 0), (0, 0, 0), (231, 231, 231)
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_DAY_STEPS = (1, 2, 3, 7, 14)
_MONTH_STEPS = (1, 2, 3, 6)
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_FIRST_DAY, _LAST_DAY = date.min.toordinal(), date.max.toordinal()

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont


def chart_key(points: Sequence[CountPoint], title: str | None) -> str:
    """What a chart is drawn from, and how, as ASCII text (PNG text chunks are Latin-1)."""
    return json.dumps({"v": KEY_VERSION, "title": title, "points": [[p.data_through, p.cited_by] for p in points]},
                      separators=(",", ":"), ensure_ascii=True)


def drawn_key(png: bytes) -> str | None:
    """The `chart_key` a PNG was drawn from, or None (not a chart of ours, or unreadable)."""
    if not png.startswith(_PNG_SIGNATURE):
        return None
    pos, field = len(_PNG_SIGNATURE), KEY_FIELD.encode() + b"\x00"
    while pos + 8 <= len(png):
        (length,), kind = struct.unpack(">I", png[pos:pos + 4]), png[pos + 4:pos + 8]
        body = png[pos + 8:pos + 8 + length]
        if kind == b"tEXt" and body.startswith(field):
            return body[len(field):].decode("latin-1")
        if kind == b"IDAT":  # text chunks written before the image data
            return None
        pos += 12 + length
    return None


def count_chart_png(points: Sequence[CountPoint], title: str | None = None) -> bytes | None:
    """A small chart of the stated cited-by count over stored snapshots, 600 x 260 pixels;
    None with fewer than two points (nothing to chart). A point whose date is not an ISO
    date is left out (drawn from stored data, a chart never raises on it)."""
    drawable = [(x, p.cited_by) for p in points if (x := _ordinal(p.data_through)) is not None]
    if len(drawable) < 2:
        return None
    xs = [x for x, _ in drawable]
    ys = [y for _, y in drawable]
    img = Image.new("RGB", (WIDTH * _S, HEIGHT * _S), "white")
    _draw(ImageDraw.Draw(img), xs, ys, title or DEFAULT_TITLE)
    return encode_png(img.reduce(_S), chart_key(points, title))


def _ordinal(iso: str) -> int | None:
    try:
        return date.fromisoformat(iso).toordinal()
    except (ValueError, TypeError):
        return None


def encode_png(img: Image.Image, key: str) -> bytes:
    """The RGB picture as a PNG with the chart's resolution and `key` in a text chunk before
    the image data (no timestamp or version string: unchanged input, unchanged bytes). Rows
    unfiltered and zlib at level 1: a third of the time Pillow's encoder takes (it tries five
    filters a row), ~10% more bytes."""
    width, height = img.size
    if img.mode != "RGB":
        raise ValueError(f"an RGB picture, not {img.mode}")
    data, stride = img.tobytes(), 3 * width
    rows = b"".join(b"\x00" + data[i:i + stride] for i in range(0, len(data), stride))  # filter 0: none
    per_metre = round(CHART_DPI / 0.0254)
    return b"".join((_PNG_SIGNATURE,
                     _chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)),  # 8-bit RGB
                     _chunk(b"pHYs", struct.pack(">IIB", per_metre, per_metre, 1)),
                     _chunk(b"tEXt", KEY_FIELD.encode("latin-1") + b"\x00" + key.encode("latin-1")),
                     _chunk(b"IDAT", zlib.compress(rows, 1)),
                     _chunk(b"IEND", b"")))


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


# ---------------------------------------------------------------- layout (pure arithmetic)


def x_limits(xs: Sequence[int]) -> tuple[float, float]:
    """The days shown: the points' span and 5% either side (a day either side of one date),
    within the days a date can be (1 Jan 1 to 31 Dec 9999: never a tick out of range)."""
    lo, hi = min(xs), max(xs)
    pad = (hi - lo) * 0.05 if hi > lo else 1.0
    return max(float(_FIRST_DAY), lo - pad), min(float(_LAST_DAY), hi + pad)


def y_limits(ys: Sequence[int]) -> tuple[float, float]:
    """The counts shown: the points' range and 15% (at least 1) either side, never below 0."""
    lo, hi = min(ys), max(ys)
    pad = max(1.0, (hi - lo) * 0.15)
    return max(0.0, lo - pad), hi + pad


def count_ticks(lo: float, hi: float) -> list[int]:
    """Integer ticks 1, 2 or 5 times a power of ten apart, at most _MAX_TICKS within [lo, hi]."""
    for power in range(0, 40):
        for unit in (1, 2, 5):
            step = unit * 10 ** power
            first = math.ceil(lo / step) * step
            if (hi - first) // step + 1 <= _MAX_TICKS:
                return list(range(first, math.floor(hi) + 1, step))
    raise OverflowError("counts too large to chart")


def date_ticks(lo: float, hi: float) -> tuple[list[int], list[str], str]:
    """Day ordinals of at most _MAX_TICKS ticks within [lo, hi], their labels, and the years
    the ticks fall in (written once, under the axis) when no label names a year."""
    first, last = date.fromordinal(math.ceil(lo)), date.fromordinal(math.floor(hi))
    for step in _DAY_STEPS:
        ticks = range(-(-math.ceil(lo) // step) * step, math.floor(hi) + 1, step)  # the multiples of step
        if len(ticks) <= _MAX_TICKS:  # counted without walking every day of a span of years
            days = list(ticks)
            return days, [_day_label(date.fromordinal(d)) for d in days], _years(days)
    for step in _MONTH_STEPS:
        months = [m for m in range(first.year * 12 + first.month - 1, last.year * 12 + last.month)
                  if m % step == 0 and date(m // 12, m % 12 + 1, 1) >= first]
        if len(months) <= _MAX_TICKS:
            starts = [date(m // 12, m % 12 + 1, 1) for m in months]
            labels = [str(d.year) if d.month == 1 else _MONTHS[d.month - 1] for d in starts]
            ordinals = [d.toordinal() for d in starts]
            return ordinals, labels, "" if any(d.month == 1 for d in starts) else _years(ordinals)
    start = first.year + (first.month > 1 or first.day > 1)  # the first 1 January shown
    step = next(u * 10 ** p for p in range(5) for u in (1, 2, 5)
                if len(range(start + -start % (u * 10 ** p), last.year + 1, u * 10 ** p)) <= _MAX_TICKS)
    years = list(range(start + -start % step, last.year + 1, step))
    return [date(y, 1, 1).toordinal() for y in years], [str(y) for y in years], ""


def _day_label(d: date) -> str:
    return f"{_MONTHS[d.month - 1]} {d.day}"


def _years(ordinals: Sequence[int]) -> str:
    first, last = date.fromordinal(min(ordinals)).year, date.fromordinal(max(ordinals)).year
    return str(first) if first == last else f"{first}-{last}"


# ---------------------------------------------------------------- drawing


@cache
def _font(points: float) -> Font:
    """Pillow's own font (FreeType) at `points` on the drawing's scale; its bitmap font where
    Pillow was built without FreeType."""
    return ImageFont.load_default(size=points * CHART_DPI / 72 * _S)


@lru_cache(maxsize=1024)
def _ink(text: str, points: float, turned: bool = False) -> Image.Image:
    """`text` rendered once as a coverage mask its box's size (tick labels, the axis label and
    most notes recur from chart to chart); `turned`: a quarter turn left."""
    font = _font(points)
    left, top, right, bottom = font.getbbox(text)
    mask = Image.new("L", (max(1, math.ceil(right - left)), max(1, math.ceil(bottom - top))), 0)
    ImageDraw.Draw(mask).text((-left, -top), text, fill=255, font=font)
    return mask.transpose(Image.Transpose.ROTATE_90) if turned else mask


def _text(draw: ImageDraw.ImageDraw, x: float, y: float, text: str, points: float, anchor: str,
          turned: bool = False, once: bool = False) -> None:
    """`text` placed by its box: anchor[0] in l/m/r (x is its left, middle, right), anchor[1]
    in t/m/b (y is its top, middle, bottom). `once`: a text that does not recur (a title),
    rendered without keeping it."""
    mask = _ink.__wrapped__(text, points, turned) if once else _ink(text, points, turned)
    dx = {"l": 0, "m": mask.width / 2, "r": mask.width}[anchor[0]]
    dy = {"t": 0, "m": mask.height / 2, "b": mask.height}[anchor[1]]
    draw.bitmap((round(x - dx), round(y - dy)), mask, fill=_TEXT)


def _draw(draw: ImageDraw.ImageDraw, xs: Sequence[int], ys: Sequence[int], title: str) -> None:
    s = _S
    left, right, top, bottom = _LEFT * s, _RIGHT * s, _TOP * s, _BOTTOM * s
    (x0, x1), (y0, y1) = x_limits(xs), y_limits(ys)

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (right - left)

    def py(y: float) -> float:
        return bottom - (float(y) - y0) / (y1 - y0) * (bottom - top)

    tick, thin = 5 * s, 1 * s
    small, ticks = 9, 10  # points: the note, and every other text
    for count in count_ticks(y0, y1):
        y = round(py(count))
        draw.line([(left, y), (right, y)], fill=_GRID, width=thin)
        draw.line([(left - tick, y), (left, y)], fill=_SPINE, width=thin)
        _text(draw, left - tick - 3 * s, y, f"{count:,}", ticks, "rm")
    days, labels, years = date_ticks(x0, x1)
    for day, label in zip(days, labels, strict=True):
        x = round(px(day))
        draw.line([(x, top), (x, bottom)], fill=_GRID, width=thin)
        draw.line([(x, bottom), (x, bottom + tick)], fill=_SPINE, width=thin)
        _text(draw, x, bottom + tick + 3 * s, label, ticks, "mt")
    if years:
        _text(draw, right, bottom + tick + 20 * s, years, ticks, "rt")
    draw.rectangle([(left, top), (right, bottom)], outline=_SPINE, width=thin)
    _text(draw, left - 62 * s, (top + bottom) / 2, "cited by", ticks, "mm", turned=True)

    line = [(px(x), py(y)) for x, y in zip(xs, ys, strict=True)]
    draw.line(line, fill=LINE, width=3 * s, joint="curve")
    r = 4 * s
    for cx, cy in line:
        draw.ellipse([(cx - r, cy - r), (cx + r, cy + r)], fill=LINE)
    last_x, last_y = line[-1]
    note = f"{ys[-1]:,}"
    if last_x + 6 * s + _ink(note, small).width <= WIDTH * s:
        _text(draw, last_x + 6 * s, last_y - 4 * s, note, small, "lb")
    else:  # no room on the right: on the left of the point
        _text(draw, last_x - 6 * s, last_y - 4 * s, note, small, "rb")
    _text(draw, (left + right) / 2, top - 6 * s, _fit(title, _font(ticks), (_RIGHT - _LEFT + 60) * s), ticks, "mb",
          once=True)


def _fit(text: str, font: Font, width: float) -> str:
    """`text`, cut with an ellipsis to fit `width`."""
    if font.getlength(text) <= width:
        return text
    while text and font.getlength(text + "\u2026") > width:
        text = text[:-1]
    return text + "\u2026"
