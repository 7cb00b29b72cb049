"""The pictures decoded as a reader sees them, the text answers, and `mapwatch graph`."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from PIL import Image

from mapwatch.bot.rendering import plot, render_graph
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.questions import citation_path, graph, related
from tests.conftest import FakeClock
from tests.graphmap import ID, build_map
from tests.system.test_cli_store import run

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"




def decode(png: bytes) -> Image.Image:
    assert png.startswith(PNG_SIGNATURE)
    assert len(png) < 10 * 1024 * 1024
    img = Image.open(io.BytesIO(png))
    img.load()
    return img.convert("RGB")


def near(rgb: tuple[int, int, int], hex_colour: str, tol: int = 40) -> bool:
    want = tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))
    return all(abs(a - b) <= tol for a, b in zip(rgb, want, strict=True))


def colours_around(img: Image.Image, x: float, y: float, r: float) -> list[tuple[int, int, int]]:
    px = img.load()
    out = []
    for dx in range(-int(r) - 3, int(r) + 4):
        for dy in range(-int(r) - 3, int(r) + 4):
            xx, yy = int(x) + dx, int(y) + dy
            if 0 <= xx < img.width and 0 <= yy < img.height:
                out.append(px[xx, yy])
    return out


def test_neighbourhood_picture_shows_the_paper_highlighted(seeded) -> None:
    view = graph.neighbourhood(seeded, "2412.10400", depth=1, max_nodes=40)
    pic = plot.draw_neighbourhood(view)
    img = decode(pic.png)
    assert img.size == (pic.width, pic.height) and 800 <= pic.width <= 1600 and 600 <= pic.height <= 1200
    [hl] = [n for n in pic.nodes if n.highlighted]
    assert hl.id == pic.highlighted == "2412.10400"
    assert "2412.10400" in hl.label and "Reinforcement Learning" in hl.label
    # The red ring is drawn where the drawing data says the paper is, and only around it.
    assert sum(near(c, plot.HIGHLIGHT) for c in colours_around(img, hl.x, hl.y, hl.radius)) > 50
    other = next(n for n in pic.nodes if n.id == "2507.04136")
    assert not any(near(c, plot.HIGHLIGHT, 25) for c in colours_around(img, other.x, other.y, other.radius))
    # Coloured by direction, with a legend; papers without a page in grey.
    assert pic.legend == (("Reinforcement learning for reasoning", plot.PALETTE[0]),)
    assert other.colour == plot.PALETTE[0]
    assert {n.colour for n in pic.nodes if n.id not in ("2412.10400", "2507.04136")} == {plot.NO_DIRECTION}
    assert len(pic.nodes) == 40 and all(n.label for n in pic.nodes)
    assert all(0 <= n.x < pic.width and 0 <= n.y < pic.height for n in pic.nodes)


def test_deeper_neighbourhood_picture_on_the_hand_built_map(db, clock: FakeClock) -> None:
    build_map(db, clock())
    pic = plot.draw_neighbourhood(graph.neighbourhood(db, ID["A"], depth=2))
    img = decode(pic.png)
    assert img.size == (1200, 900)
    [hl] = [n for n in pic.nodes if n.highlighted]
    assert hl.id == ID["A"]
    assert sum(near(c, plot.HIGHLIGHT) for c in colours_around(img, hl.x, hl.y, hl.radius)) > 50
    assert len({(round(n.x), round(n.y)) for n in pic.nodes}) == len(pic.nodes)  # no two papers on one spot


def test_count_chart_needs_two_snapshots(make_older_seeds, seeds_dir: Path, db, clock: FakeClock) -> None:
    ingest_paths(db, [make_older_seeds(4)], clock=clock)
    history = graph.count_history(db, "2412.10400")
    assert plot.count_chart_png(history) is None
    ingest_paths(db, [seeds_dir], clock=clock)
    history = graph.count_history(db, "2412.10400")
    png = plot.count_chart_png(history, title="2412.10400")
    assert png is not None
    img = decode(png)
    assert 400 <= img.width <= 900 and 150 <= img.height <= 400
    assert any(near(c, plot.PALETTE[0], 10) for _, c in img.getcolors(1 << 20))  # the line is drawn


# ---------------------------------------------------------------- text answers


def test_related_text_names_scores_and_shared_papers(seeded) -> None:
    text = render_graph.related_text(related.related(seeded, "2412.10400", limit=3))
    lines = text.splitlines()
    assert lines[0].startswith("Papers most like “Reinforcement Learning Enhanced LLMs: A Survey” (2412.10400)")
    assert lines[1].startswith("1. “A Technical Survey of Reinforcement")
    assert "(2507.04136), score 13: cited together by 2 (2509.02547, 2605.02913); 11 shared references (" in lines[1]
    assert lines[1].endswith("and 7 more); cites it")
    assert len(lines) == 4


def test_path_and_rising_and_ranks_texts(db, clock: FakeClock) -> None:
    build_map(db, clock())
    p = citation_path.citation_path(db, ID["X1"], ID["X4"])
    text = render_graph.path_text(p, ID["X1"], ID["X4"])
    assert text.splitlines()[1:] == [
        f"1. {ID['X1']} cites {ID['X2']}  (Paper X2)",
        f"2. {ID['X2']} is cited by {ID['X3']}  (Paper X3)",
        f"3. {ID['X3']} cites {ID['X4']}  (Paper X4)"]
    assert text.startswith("3 steps from “Paper X1”")
    none = render_graph.path_text(citation_path.citation_path(db, ID["A"], ID["Z"]), ID["A"], ID["Z"])
    assert none == f"No citation chain within 6 steps between {ID['A']} and {ID['Z']}."
    assert "No paper gained citers in the last 30 days" in render_graph.rising_text(graph.rising(db, clock()))
    assert "no PageRank computed yet" in render_graph.ranks_text(graph.direction_ranks(db, "core"))
    graph.compute_direction_ranks(db, clock())
    ranks = render_graph.ranks_text(graph.direction_ranks(db, "core"))
    assert ranks.splitlines()[0].startswith("Core by PageRank within the direction")
    assert ranks.splitlines()[1].startswith(f"1. “Paper E” ({ID['E']}): PageRank ")


def test_long_answers_fit_one_message() -> None:
    items = [f"{i}. " + "x" * 90 for i in range(100)]
    text = render_graph.fit("head", items)
    assert len(text) <= 2000 and text.splitlines()[-1].startswith("… and ")
    assert int(text.splitlines()[-1].split()[2]) == 100 - (len(text.splitlines()) - 2)


# ---------------------------------------------------------------- mapwatch graph


def test_cli_parser_loads_no_graph_libraries() -> None:
    code = ("import sys; from mapwatch.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('matplotlib', 'networkx', 'scipy') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "[]", r.stderr


def test_mapwatch_graph_writes_a_png(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    assert run("ingest", "--db", db).returncode == 0
    out = tmp_path / "g.png"
    r = run("graph", "https://arxiv.org/abs/2412.10400", "--depth", "1", "-o", out, "--db", db)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"Wrote {out} (1200x900")
    assert decode(out.read_bytes()).size == (1200, 900)
    assert out.stat().st_mode & 0o044 == 0o044  # readable by others, like any file the user writes
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no temp file left


def test_mapwatch_graph_errors_are_one_line(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    run("ingest", "--db", db)
    r = run("graph", "9999.99999", "-o", tmp_path / "g.png", "--db", db)
    assert r.returncode == 1 and r.stderr == "mapwatch: error: No paper matches '9999.99999'\n"
    r = run("graph", "2412.10400", "-o", tmp_path / "missing" / "g.png", "--db", db)
    assert r.returncode == 2 and "no such folder" in r.stderr and "Traceback" not in r.stderr
    r = run("graph", "2412.10400", "--depth", "5", "-o", tmp_path / "g.png", "--db", db)
    assert r.returncode == 2 and "invalid choice" in r.stderr
    assert not (tmp_path / "g.png").exists()
