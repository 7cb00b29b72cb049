"""The cited-by count chart: a paper's stated count over its stored snapshots, as a PNG.

Pure: points in, PNG bytes out (the same points give the same bytes, whatever was drawn
before). matplotlib's Agg backend with figures made directly (never pyplot), one drawing at
a time (matplotlib's text and font caches are shared; bot/plot.py draws under the same
lock). Used by the paper pages (feeds/pages.py) and by the bot's `/paper` card.

Drawing is the slow part of a `publish --papers all` after a change (README, "Feeds"), so
the chart is drawn on one figure kept for the process and reused under the lock: each chart
sets everything that depends on its points (line data, limits, ticks, annotation, title) and
nothing else changes between charts. Should a drawing fail, that figure is dropped and the
next chart starts from a new one.

Each PNG carries what it was drawn from (`chart_key`, in a text chunk), so a publish can
tell from the file alone that a chart is current and skip drawing it (`drawn_key`).
matplotlib is imported only when a chart is drawn.
"""

from __future__ import annotations

import io
import json
import struct
import threading
from collections.abc import Sequence
from typing import TYPE_CHECKING

from mapwatch.store.graph import CountPoint

if TYPE_CHECKING:
    import numpy as np
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.text import Annotation

LINE = "#1f77b4"
MAX_BYTES = 10 * 1024 * 1024
DRAW_LOCK = threading.Lock()
KEY_FIELD = "Description"
DEFAULT_TITLE = "Cited-by count, as the map stated it"
CHART_DPI = 100
CHART_INCHES = (6.0, 2.6)  # 600 x 260 pixels
_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def png_bytes(fig: Figure, dpi: int, key: str | None = None) -> bytes:
    """The figure as PNG bytes: no timestamp or version string (unchanged input, unchanged bytes)."""
    buf = io.BytesIO()
    metadata: dict[str, str | None] = {"Software": None}
    if key is not None:
        metadata[KEY_FIELD] = key
    fig.savefig(buf, format="png", dpi=dpi, metadata=metadata)
    data = buf.getvalue()
    if len(data) > MAX_BYTES:  # cannot happen at these sizes; a guard for the contract
        raise ValueError("picture over 10 MiB")
    return data


def encode_png(rgba: np.ndarray, key: str) -> bytes:
    """An opaque RGBA drawing as an RGB PNG with `key` in a text chunk (before the image data)
    and the chart's resolution; zlib at level 1: as many bytes as matplotlib's default level
    here, in half the time."""
    from PIL import Image, PngImagePlugin

    height, width = rgba.shape[:2]
    img = Image.frombuffer("RGBA", (width, height), rgba, "raw", "RGBA", 0, 1).convert("RGB")
    info = PngImagePlugin.PngInfo()
    info.add_text(KEY_FIELD, key)
    buf = io.BytesIO()
    img.save(buf, format="png", pnginfo=info, dpi=(CHART_DPI, CHART_DPI), compress_level=1)
    return buf.getvalue()


def chart_key(points: Sequence[CountPoint], title: str | None) -> str:
    """What a chart is drawn from, as ASCII text (PNG text chunks are Latin-1)."""
    return json.dumps({"v": 1, "title": title, "points": [[p.data_through, p.cited_by] for p in points]},
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


class _CountFigure:
    """The count chart's figure, axes, line and annotation, built once; `draw` fills them."""

    def __init__(self) -> None:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator

        self.fig = Figure(figsize=CHART_INCHES, dpi=CHART_DPI)
        self.canvas = FigureCanvasAgg(self.fig)
        self.ax: Axes = self.fig.add_subplot()
        # x in matplotlib date numbers (matplotlib.dates.date2num): no unit conversion on the axis.
        line: Line2D = self.ax.plot([], [], marker="o", color=LINE, linewidth=2)[0]
        self.line = line
        self.note: Annotation = self.ax.annotate("", (0, 0), xytext=(4, 4), textcoords="offset points",
                                                 fontsize=9)
        self.ax.set_ylabel("cited by")
        self.ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        self.ax.grid(alpha=0.3)
        # Fixed margins (room for 5-digit counts): tight_layout would double the drawing time.
        self.fig.subplots_adjust(left=0.14, right=0.92, top=0.88, bottom=0.16)

    def draw(self, points: Sequence[CountPoint], title: str | None) -> bytes:
        from datetime import date

        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter, date2num
        from matplotlib.ticker import FixedFormatter, FixedLocator

        ax = self.ax
        xs = [float(x) for x in date2num([date.fromisoformat(p.data_through) for p in points])]
        ys = [p.cited_by for p in points]
        self.line.set_data(xs, ys)
        locator = AutoDateLocator(minticks=2, maxticks=6)  # a few days apart: day ticks, no warning
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
        ax.relim()
        ax.autoscale(axis="x")  # the data's span plus the default margins, as a new plot would
        lo, hi = min(ys), max(ys)
        pad = max(1, (hi - lo) * 0.15)
        ax.set_ylim(max(0, lo - pad), hi + pad)
        # The date ticks and their labels, worked out once: a draw asks the axis for them about
        # ten times (dateutil's rrule each time), so they are handed back fixed.
        locs = [float(x) for x in ax.xaxis.get_majorticklocs()]
        formatter = ax.xaxis.get_major_formatter()
        fixed = FixedFormatter(formatter.format_ticks(locs))
        fixed.set_offset_string(formatter.get_offset())
        ax.xaxis.set_major_locator(FixedLocator(locs))
        ax.xaxis.set_major_formatter(fixed)
        self.note.xy = (xs[-1], ys[-1])
        self.note.set_text(f"{ys[-1]:,}")
        # y given: the title stays where matplotlib would put it here (nothing above the axes
        # to clear), and the draw skips the search for what it might overlap (a fifth of a chart).
        ax.set_title(title or DEFAULT_TITLE, fontsize=10, y=1.0)
        self.canvas.draw()
        import numpy as np

        return encode_png(np.asarray(self.canvas.buffer_rgba()), chart_key(points, title))


_figure: _CountFigure | None = None  # the reused figure; only touched under DRAW_LOCK


def count_chart_png(points: Sequence[CountPoint], title: str | None = None) -> bytes | None:
    """A small chart of the stated cited-by count over stored snapshots; None with fewer
    than two points (nothing to chart)."""
    global _figure
    if len(points) < 2:
        return None
    with DRAW_LOCK:
        if _figure is None:
            _figure = _CountFigure()
        try:
            return _figure.draw(points, title)
        except BaseException:
            _figure = None  # in an unknown state: the next chart builds a new figure
            raise
