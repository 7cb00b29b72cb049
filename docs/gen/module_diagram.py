"""The picture of the layers and their modules on docs/architecture.md (docs/modules.svg),
drawn from the folders themselves: each layer a box, its subpackages inside it with their
module counts, its own modules named below them, an arrow where a layer may import another.
An SVG with a viewBox, so it scales to the page's width. tests/unit/test_docs.py checks that the
checked-in file is what this draws now (`python docs/gen/module_diagram.py` to redraw)."""

from __future__ import annotations

import itertools
import textwrap
from html import escape
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SVG = ROOT / "docs" / "modules.svg"

# folder, what the layer is; top to bottom, each may import only the ones below it
LAYERS = [
    ("mapwatch", "the mapwatch command: parsers, exit statuses, --db, signals (above the layers)"),
    ("bot", "the Discord bot: commands, rendering, delivery (ask, run, sync, graph)"),
    ("feeds", "Atom/OPML feeds, web pages, the HTTP server, the scheduler (refresh, publish, serve)"),
    ("store", "SQLite: ingest, crawl, parse, save, queries, schema (ingest, stats, backup, compact)"),
]
WIDTH, PAD, BOX_W, BOX_H, LINE = 800, 16, 110, 40, 16


def modules(folder: Path) -> list[str]:
    return sorted(p.stem for p in folder.glob("*.py") if p.stem not in ("__init__", "__main__"))


def subpackages(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink() and (p / "__init__.py").exists())


def render() -> str:
    parts, y, boxes = [], PAD, []
    for name, what in LAYERS:
        folder = ROOT / name
        subs = subpackages(folder)
        names = textwrap.wrap(" ".join(m + ".py" for m in modules(folder)), 104)
        rows = -(-len(subs) // 6)
        height = 52 + rows * (BOX_H + 8) + len(names) * LINE + 8
        x0 = PAD + 40
        parts.append(f'<rect x="{x0}" y="{y}" width="{WIDTH - x0 - PAD}" height="{height}" rx="6" class="layer"/>')
        parts.append(f'<text x="{x0 + 12}" y="{y + 22}" class="name">{name}/</text>')
        parts.append(f'<text x="{x0 + 12 + 11 * (len(name) + 1) + 12}" y="{y + 22}" class="what">{escape(what)}</text>')
        sy = y + 36
        for i, sub in enumerate(subs):
            bx, by = x0 + 12 + (i % 6) * (BOX_W + 8), sy + (i // 6) * (BOX_H + 8)
            parts.append(f'<rect x="{bx}" y="{by}" width="{BOX_W}" height="{BOX_H}" rx="4" class="sub"/>')
            parts.append(f'<text x="{bx + 8}" y="{by + 17}" class="subname">{sub.name}/</text>')
            parts.append(f'<text x="{bx + 8}" y="{by + 33}" class="small">{len(modules(sub))} modules</text>')
        ty = sy + rows * (BOX_H + 8) + 12
        for line in names:
            parts.append(f'<text x="{x0 + 12}" y="{ty}" class="small">{escape(line)}</text>')
            ty += LINE
        boxes.append((y, height))
        y += height + 28
    # may import: each layer the ones below it (an arrow to the next, and one on the left to the rest)
    for (top, h), (below, _) in itertools.pairwise(boxes):
        parts.append(f'<line x1="{WIDTH // 2}" y1="{top + h}" x2="{WIDTH // 2}" y2="{below - 2}" class="arrow"/>')
    for i, (top, h) in enumerate(boxes[:-2]):
        for j, (below, bh) in enumerate(boxes[i + 2:]):
            x = PAD + 8 + 12 * i
            parts.append(f'<polyline points="{PAD + 40},{top + h / 2} {x},{top + h / 2} {x},{below + bh / 2 - 6 * j} '
                         f'{PAD + 38},{below + bh / 2 - 6 * j}" class="arrow side"/>')
    height = y - 28 + PAD
    style = ("text{font-family:system-ui,sans-serif;fill:#222}.name{font-weight:bold;font-size:16px}"
             ".what{font-size:13px}.subname{font-weight:bold;font-size:13px}.small{font-size:11.5px;fill:#444}"
             ".layer{fill:#f4f6fb;stroke:#4051b5;stroke-width:1.5}.sub{fill:#fff;stroke:#8e99d6}"
             ".arrow{stroke:#4051b5;stroke-width:1.5;fill:none;marker-end:url(#head)}")
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {WIDTH} {height}" width="100%" '
            f'role="img" aria-label="The layers of mapwatch and their modules">\n'
            f'<title>The layers of mapwatch and their modules; each may import only those below it</title>\n'
            f'<defs><marker id="head" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
            f'orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#4051b5"/></marker></defs>\n'
            f'<style>{style}</style>\n' + "\n".join(parts) + "\n</svg>\n")


if __name__ == "__main__":
    SVG.write_text(render(), encoding="utf-8")
