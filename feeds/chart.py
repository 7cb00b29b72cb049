"""The cited-by count chart: a paper's stated count over its stored snapshots, as a PNG.

Pure: points in, PNG bytes out (the same points give the same bytes). matplotlib's Agg
backend with figures made directly (never pyplot, so no figure outlives its call), one
drawing at a time (matplotlib's text and font caches are shared; bot/plot.py draws under
the same lock). Used by the paper pages (feeds/pages.py) and by the bot's `/paper` card.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Sequence
from datetime import date

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.dates import AutoDateLocator, ConciseDateFormatter
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from store.graph import CountPoint

LINE = "#1f77b4"
MAX_BYTES = 10 * 1024 * 1024
DRAW_LOCK = threading.Lock()
# No timestamps or version strings in the file: a chart of unchanged points keeps its bytes.
_METADATA = {"Software": None}


def png_bytes(fig: Figure, dpi: int) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata=_METADATA)
    data = buf.getvalue()
    if len(data) > MAX_BYTES:  # cannot happen at these sizes; a guard for the contract
        raise ValueError("picture over 10 MiB")
    return data


def count_chart_png(points: Sequence[CountPoint], title: str | None = None) -> bytes | None:
    """A small chart of the stated cited-by count over stored snapshots; None with fewer
    than two points (nothing to chart)."""
    if len(points) < 2:
        return None
    with DRAW_LOCK:
        dpi = 100
        fig = Figure(figsize=(6, 2.6), dpi=dpi)
        FigureCanvasAgg(fig)
        try:
            ax = fig.add_subplot()
            xs = [date.fromisoformat(p.data_through) for p in points]
            ys = [p.cited_by for p in points]
            ax.plot(xs, ys, marker="o", color=LINE, linewidth=2)
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
            return png_bytes(fig, dpi)
        finally:
            fig.clear()
