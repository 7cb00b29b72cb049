"""Who cites a team, as a picture: its top institutions, people and venues
(store/questions/team_stats.py), one panel of bars each, as a PNG.

Pure: a CitedBy in, PNG bytes out (the same counts give the same bytes). Drawn with
matplotlib's Agg backend on figures made directly (never pyplot), one drawing at a time in the
process (`MATPLOTLIB_LOCK`, which bot/rendering/plot.py's pictures take too: matplotlib's text
and font caches are shared). Used by a team's web page (feeds/people_feeds.py) and by the bot's
`/team stats`, which calls it off the event loop like every core.
"""

from __future__ import annotations

import io
import textwrap
import threading

from mapwatch.feeds.chart import LINE
from mapwatch.store.questions.team_stats import CitedBy, Tally

MATPLOTLIB_LOCK = threading.Lock()  # one matplotlib drawing at a time, in any thread
WIDTH, DPI = 900, 100
BAR = LINE  # the count chart's colour
LABEL_MAX = 42  # characters of a bar's label


def has_chart(stats: CitedBy) -> bool:
    """Whether there is anything to draw: some list has an entry."""
    return any(entries for _, entries, _ in stats.lists)


# The layout in pixels: the title, then per list its heading, a row per bar, a gap.
_TITLE, _HEADING, _ROW, _GAP, _LEFT, _RIGHT = 64, 26, 24, 18, 330, 40


def _rows(entries: tuple[Tally, ...]) -> int:
    return max(1, len(entries))


def height_of(stats: CitedBy) -> int:
    """The picture's height in pixels: a title, then each list as tall as its bars."""
    return _TITLE + sum(_HEADING + _ROW * _rows(entries) + _GAP for _, entries, _ in stats.lists)


def count_words(n: int, word: str) -> str:
    """"1 citing paper", "1,204 citing papers"."""
    return f"{n:,} {word}{'' if n == 1 else 's'}"


def _label(t: Tally) -> str:
    """A bar's label: one line, clipped; "$" kept literal (matplotlib would read mathtext)."""
    return textwrap.shorten(" ".join(t.label.split()), LABEL_MAX, placeholder="…").replace("$", r"\$")


def team_chart_png(stats: CitedBy, team_name: str) -> bytes | None:
    """The three lists as bars (distinct citing papers each), WIDTH pixels wide; None when every
    list is empty (nothing to draw)."""
    if not has_chart(stats):
        return None
    with MATPLOTLIB_LOCK:
        return _draw(stats, team_name)


def _draw(stats: CitedBy, team_name: str) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    height = height_of(stats)
    fig = Figure(figsize=(WIDTH / DPI, height / DPI), dpi=DPI)
    FigureCanvasAgg(fig)
    try:
        top = _TITLE  # pixels from the top of the picture
        for heading, entries, total in stats.lists:
            shown = f"{heading} (top {len(entries)} of {total:,})" if total > len(entries) else heading
            fig.text(8 / WIDTH, 1 - (top + _HEADING - 8) / height, shown, fontsize=10, fontweight="bold")
            rows = _rows(entries)
            ax = fig.add_axes((_LEFT / WIDTH, 1 - (top + _HEADING + rows * _ROW) / height,
                               (WIDTH - _LEFT - _RIGHT) / WIDTH, rows * _ROW / height))
            top += _HEADING + rows * _ROW + _GAP
            ax.set_axis_off()
            if not entries:
                ax.text(0, 0.5, "none known yet", fontsize=9, color="#555555", va="center", transform=ax.transAxes)
                continue
            ys = list(range(len(entries)))[::-1]  # the first at the top
            counts = [t.papers for t in entries]
            ax.barh(ys, counts, color=BAR, height=0.7)
            ax.set_ylim(-0.5, len(entries) - 0.5)
            ax.set_xlim(0, max(counts) * 1.1)
            for y, t in zip(ys, entries, strict=True):
                ax.text(-max(counts) * 0.01, y, _label(t), ha="right", va="center", fontsize=8)
                ax.text(t.papers, y, f" {t.papers:,}", va="center", fontsize=8)
        title = textwrap.shorten(" ".join(team_name.split()), 60, placeholder="…").replace("$", r"\$")
        counted = (f"{count_words(stats.counted, 'citing paper')} counted; "
                   f"{count_words(stats.self_citing, 'self-citation')} apart; "
                   f"authors not known yet for {stats.authors_unknown:,}")
        fig.suptitle(f"Who cites {title}: papers first seen citing it since {stats.since[:10]}\n{counted}",
                     fontsize=10, y=1 - 10 / height, va="top")
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None})
        return buf.getvalue()
    finally:
        fig.clear()
