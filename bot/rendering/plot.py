"""Pictures: a paper's citation neighbourhood, and a cited-by count chart.

Pure: data in (store.questions.graph dataclasses), PNG bytes out. matplotlib's Agg backend with
figures made directly (never pyplot, so no figure outlives its call); one drawing at a time in
the process (matplotlib's text and font caches are shared: the lock of feeds/team_chart.py, whose
team charts take it too). The count chart lives in feeds/chart.py (the paper pages draw it too;
Pillow alone) and is importable from here. Call these off the event loop (`asyncio.to_thread`).
Images stay far under Discord's 10 MiB.
"""

from __future__ import annotations

import io
import math
import textwrap
from collections import Counter
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from mapwatch.bot.rendering.text import one_line, plural
from mapwatch.feeds.chart import LINE
from mapwatch.feeds.chart import count_chart_png as count_chart_png  # moved there; still importable from here
from mapwatch.feeds.team_chart import MATPLOTLIB_LOCK
from mapwatch.store.questions.graph import Neighbourhood

HIGHLIGHT = "#d62728"   # the asked paper's ring (not used for any direction)
NO_DIRECTION = "#b0b0b0"
EDGE = "#8a8a8a"
# tab10 without its red, then a few more distinct colours.
PALETTE = (LINE, "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#7f7f7f", "#393b79")
MAX_LEGEND = 8
MAX_LABELS = 48
MAX_BYTES = 10 * 1024 * 1024
_LOCK = MATPLOTLIB_LOCK  # one matplotlib drawing at a time (a team's chart takes it too)


@dataclass(frozen=True)
class DrawnNode:
    id: str
    label: str          # "" when unlabelled (too many papers to label them all)
    x: float            # pixel position in the PNG, origin top-left
    y: float
    radius: float       # marker radius in pixels
    colour: str
    highlighted: bool


@dataclass(frozen=True)
class Picture:
    png: bytes
    width: int
    height: int
    highlighted: str                        # the asked paper's id
    nodes: tuple[DrawnNode, ...]
    legend: tuple[tuple[str, str], ...]     # (direction name, colour)


def _legend_label(name: str) -> str:
    """A direction name on at most two lines of 26 characters."""
    return "\n".join(textwrap.wrap(textwrap.shorten(name, 52, placeholder="…"), 26))


def _png(fig: Figure, dpi: int) -> bytes:
    """The figure as PNG bytes: no timestamp or version string (unchanged input, unchanged bytes)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, metadata={"Software": None})
    data = buf.getvalue()
    if len(data) > MAX_BYTES:  # cannot happen at these sizes; a guard for Discord's limit
        raise ValueError("picture over 10 MiB")
    return data


ROW = 7  # papers per row in the layered layout


def _rows(ids: list[str], sign: int) -> dict[str, tuple[float, float]]:
    """Rows of at most ROW papers, the first row 1 unit from the centre, further rows
    0.6 apart (sign +1: above, -1: below); alternate rows shifted half a slot."""
    pos: dict[str, tuple[float, float]] = {}
    for r in range(0, len(ids), ROW):
        row = ids[r:r + ROW]
        k = r // ROW
        shift = 0.5 if k % 2 else 0.0
        for i, pid in enumerate(row):
            x = (i - (len(row) - 1) / 2 + (shift if len(row) < ROW else shift / 2)) / (ROW / 2)
            pos[pid] = (x * 1.5, sign * (1 + 0.6 * k))
    return pos


def _layout(view: Neighbourhood) -> dict[str, tuple[float, float]]:
    """One step: the asked paper in the middle, its citers in rows above it and its references
    in rows below, so every arrow (citing -> cited) runs downwards. Further steps: a seeded
    force-directed layout with the asked paper fixed in the middle."""
    c = view.center.id
    weight = {n.paper.id: n.cited_by for n in view.nodes}
    if view.depth == 1 or len(view.nodes) <= 2:
        citers = {a for a, b in view.edges if b == c}
        others = [n.paper.id for n in view.nodes[1:]]
        up = sorted((i for i in others if i in citers), key=lambda i: (-weight[i], i))
        down = sorted((i for i in others if i not in citers), key=lambda i: (-weight[i], i))
        return {c: (0.0, 0.0), **_rows(up, 1), **_rows(down, -1)}
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(n.paper.id for n in view.nodes)
    g.add_edges_from(view.edges)
    raw = nx.spring_layout(g, seed=7, pos={c: (0.0, 0.0)}, fixed=[c], k=1.6 / math.sqrt(len(view.nodes)),
                           iterations=80)
    span = max((max(abs(x), abs(y)) for x, y in raw.values()), default=1.0) or 1.0
    return {p: (float(x) / span * 1.5, float(y) / span * 1.5) for p, (x, y) in raw.items()}


def draw_neighbourhood(view: Neighbourhood, *, width: int = 1200, height: int = 900, dpi: int = 100) -> Picture:
    """Draw a neighbourhood: nodes sized by citations, coloured by main direction (legend),
    arrows from citing to cited paper, the asked paper ringed in red and labelled in bold."""
    with _LOCK:
        return _draw_neighbourhood(view, width, height, dpi)


def _draw_neighbourhood(view: Neighbourhood, width: int, height: int, dpi: int) -> Picture:
    pos = _layout(view)
    counts = Counter(n.direction for n in view.nodes if n.direction)
    named = [d for d, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    colours = {d: PALETTE[i % len(PALETTE)] for i, d in enumerate(named)}
    top = max((n.cited_by for n in view.nodes), default=0) or 1
    size = {n.paper.id: 60 + 640 * math.sqrt(n.cited_by / top) for n in view.nodes}  # points^2
    size[view.center.id] = max(size[view.center.id], 400)
    labelled = {view.center.id} | {n.paper.id for n in sorted(view.nodes[1:], key=lambda n: -n.cited_by)[:MAX_LABELS]}

    fig = Figure(figsize=(width / dpi, height / dpi), dpi=dpi)
    FigureCanvasAgg(fig)
    try:
        ax = fig.add_axes((0.01, 0.02, 0.78, 0.88))
        ax.set_axis_off()
        xs = [x for x, _ in pos.values()]
        ys = [y for _, y in pos.values()]
        ax.set_xlim(min(xs) - 0.25, max(xs) + 0.25)
        ax.set_ylim(min(ys) - 0.3, max(ys) + 0.15)
        radius_pt = {p: math.sqrt(s) / 2 for p, s in size.items()}
        for a, b in view.edges:
            ax.add_patch(FancyArrowPatch(pos[a], pos[b], arrowstyle="-|>", mutation_scale=10, color=EDGE,
                                         linewidth=0.8, alpha=0.8, shrinkA=radius_pt[a] + 1,
                                         shrinkB=radius_pt[b] + 2, zorder=1))
        for n in view.nodes:
            pid = n.paper.id
            centre = pid == view.center.id
            colour = colours.get(n.direction or "", NO_DIRECTION)
            ax.scatter([pos[pid][0]], [pos[pid][1]], s=size[pid], c=colour, zorder=3 if centre else 2,
                       edgecolors=HIGHLIGHT if centre else "white", linewidths=4 if centre else 0.8,
                       gid=f"node:{pid}")
            if pid in labelled:
                text = f"{one_line(n.paper.title, 24)}\n{pid}"
                ax.annotate(text, pos[pid], xytext=(0, -(radius_pt[pid] + 3)), textcoords="offset points",
                            ha="center", va="top", fontsize=9 if centre else 7,
                            fontweight="bold" if centre else "normal", zorder=4,
                            color="#111111" if centre else "#333333",
                            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.7})
        handles = [Line2D([], [], marker="o", linestyle="", markersize=8, markerfacecolor=colours[d],
                          markeredgecolor="white", label=_legend_label(d)) for d in named[:MAX_LEGEND]]
        if len(named) > MAX_LEGEND:
            handles.append(Line2D([], [], linestyle="", label=f"+ {plural(len(named) - MAX_LEGEND, 'more direction')}"))
        if any(not n.direction for n in view.nodes):
            handles.append(Line2D([], [], marker="o", linestyle="", markersize=8, markerfacecolor=NO_DIRECTION,
                                  markeredgecolor="white", label="no page in the map yet"))
        if handles:
            fig.legend(handles=handles, loc="upper left", bbox_to_anchor=(0.79, 0.9), fontsize=8,
                       frameon=False, title="main direction", title_fontsize=9, alignment="left")
        shown = f"{plural(len(view.nodes), 'paper')}, {plural(len(view.edges), 'citation')}"
        if view.truncated:
            shown += " (most cited shown)"
        fig.suptitle(f"{one_line(view.center.title, 70)} ({view.center.id})\n"
                     f"{view.depth}-step neighbourhood: {shown}; arrows point from citing to cited paper",
                     fontsize=10)
        fig.canvas.draw()
        to_px = ax.transData.transform
        px_per_pt = dpi / 72
        nodes = []
        for n in view.nodes:
            pid = n.paper.id
            x, y = to_px(pos[pid])
            nodes.append(DrawnNode(
                id=pid, label=f"{one_line(n.paper.title, 24)}\n{pid}" if pid in labelled else "",
                x=float(x), y=float(height - y), radius=radius_pt[pid] * px_per_pt,
                colour=colours.get(n.direction or "", NO_DIRECTION), highlighted=pid == view.center.id))
        png = _png(fig, dpi)
    finally:
        fig.clear()
    legend = tuple((d, colours[d]) for d in named[:MAX_LEGEND])
    return Picture(png=png, width=width, height=height, highlighted=view.center.id, nodes=tuple(nodes),
                   legend=legend)

