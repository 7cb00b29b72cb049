"""The cited-by count chart: a paper's stated count over its stored snapshots, as a PNG.

Pure: points in, PNG bytes out (the same points give the same bytes). matplotlib's Agg
backend with figures made directly (never pyplot, so no figure outlives its call), one
drawing at a time (matplotlib's text and font caches are shared; bot/plot.py draws under
the same lock). Used by the paper pages (feeds/pages.py) and by the bot's `/paper` card.

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
    from matplotlib.figure import Figure

LINE = "#1f77b4"
MAX_BYTES = 10 * 1024 * 1024
DRAW_LOCK = threading.Lock()
KEY_FIELD = "Description"
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


def count_chart_png(points: Sequence[CountPoint], title: str | None = None) -> bytes | None:
    """A small chart of the stated cited-by count over stored snapshots; None with fewer
    than two points (nothing to chart)."""
    if len(points) < 2:
        return None
    from datetime import date

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    with DRAW_LOCK:
        dpi = 100
        fig = Figure(figsize=(6, 2.6), dpi=dpi)
        FigureCanvasAgg(fig)
        try:
            ax = fig.add_subplot()
            xs = [date.fromisoformat(p.data_through) for p in points]
            ys = [p.cited_by for p in points]
            ax.plot(xs, ys, marker="o", color=LINE, linewidth=2)  # type: ignore[arg-type]  # dates: matplotlib.dates
            ax.annotate(f"{ys[-1]:,}", (xs[-1], ys[-1]), xytext=(4, 4), textcoords="offset points", fontsize=9)
            ax.set_ylabel("cited by")
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_title(title or "Cited-by count, as the map stated it", fontsize=10)
            ax.grid(alpha=0.3)
            lo, hi = min(ys), max(ys)
            pad = max(1, (hi - lo) * 0.15)
            ax.set_ylim(max(0, lo - pad), hi + pad)
            locator = AutoDateLocator(minticks=2, maxticks=6)  # a few days apart: day ticks, no warning
            ax.xaxis.set_major_locator(locator)
            ax.xaxis.set_major_formatter(ConciseDateFormatter(locator))
            # Fixed margins (room for 5-digit counts): tight_layout would double the drawing time.
            fig.subplots_adjust(left=0.14, right=0.92, top=0.88, bottom=0.16)
            return png_bytes(fig, dpi, chart_key(points, title))
        finally:
            fig.clear()
