"""/related, /path, /rising, /graph, the /paper chart and /direction's PageRank: cores, `mapwatch ask`,
and /graph's picture through the real discord.py client against the fake Discord."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

from PIL import Image

from mapwatch.bot.client import MapwatchBot
from mapwatch.bot.rendering import render
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.questions import graph
from tests.fakediscord import FakeDiscord
from tests.system.test_bot_commands import ask

pytest_plugins = ["tests.fakediscord.fixtures"]




def png_size(data: bytes) -> tuple[int, int]:
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    return Image.open(io.BytesIO(data)).size


def test_related_names_the_shared_papers(seeded) -> None:
    r, ok = ask(seeded, "related", paper="https://arxiv.org/abs/2412.10400")
    text = render.to_text(r)
    assert ok and "1. “A Technical Survey of Reinforcement" in text
    assert "score 13: cited together by 2 (2509.02547, 2605.02913); 11 shared references" in text
    numbered = [line for line in text.splitlines() if line[:3] in {f"{i}. " for i in range(1, 10)}]
    assert [line[:2] for line in numbered] == [f"{i}." for i in range(1, 10)]  # one result a line
    r, ok = ask(seeded, "related", paper="2412.10400", exclude_direct="yes")
    assert ok and "(2507.04136), score" not in render.to_text(r)  # it cites 2412.10400: left out
    r, ok = ask(seeded, "related", paper="2412.10400", exclude_direct="maybe")
    assert not ok and r.ephemeral and "yes or no" in render.to_text(r)


def test_path_marks_each_step_or_says_there_is_none(seeded) -> None:
    r, ok = ask(seeded, "path", **{"from": "2005.14165", "to": "2509.02547"})
    text = render.to_text(r)
    assert ok and "1. 2005.14165 is cited by 2412.10400" in text and "2. 2412.10400 is cited by 2509.02547" in text
    r, ok = ask(seeded, "path", **{"from": "2412.10400", "to": "9999.99999"})
    assert not ok and r.ephemeral and "No paper matches" in render.to_text(r)


def test_rising_and_days_validation(db, make_older_seeds, seeds_dir, clock) -> None:
    ingest_paths(db, [make_older_seeds(2)], clock=clock)
    clock.advance(days=1)
    ingest_paths(db, [seeds_dir], clock=clock)
    from tests.bot_helpers import ctx

    c = ctx()
    c = type(c)(**{**c.__dict__, "now": clock()})
    r, ok = ask(db, "rising", c, days="30")
    text = render.to_text(r)
    assert ok and "1. “Reinforcement Learning Enhanced LLMs: A Survey” (2412.10400): +2, 69 → 71" in text
    r, ok = ask(db, "rising", c, direction="Reward modeling and RLHF")
    assert ok and "in Reward modeling and RLHF" in render.to_text(r)
    r, ok = ask(db, "rising", c, days="0")
    assert not ok and "days must be from 1 to 365" in render.to_text(r)


def test_graph_attaches_the_picture_and_paper_the_chart(db, make_older_seeds, seeds_dir, clock) -> None:
    ingest_paths(db, [make_older_seeds(2)], clock=clock)
    r, ok = ask(db, "paper", paper="2412.10400")
    assert ok and r.files == ()  # one snapshot: no chart
    clock.advance(days=1)
    ingest_paths(db, [seeds_dir], clock=clock)
    r, ok = ask(db, "paper", paper="2412.10400")
    assert ok and [f.filename for f in r.files] == ["cited-by-2412.10400.png"]
    assert png_size(r.files[0].data)[0] >= 400
    r, ok = ask(db, "graph", paper="2412.10400", depth="2")
    assert ok and [f.filename for f in r.files] == ["graph-2412.10400.png"]
    assert png_size(r.files[0].data) == (1200, 900) and len(r.files[0].data) < 10 * 1024 * 1024
    r, ok = ask(db, "graph", paper="2412.10400", depth="4")
    assert not ok and "depth must be from 1 to 3" in render.to_text(r)


def test_direction_shows_pagerank_once_computed(seeded, clock) -> None:
    r, _ = ask(seeded, "direction", direction="lr/reinforcement-learning-for-reasoning")
    assert "By PageRank" not in render.to_text(r)
    graph.compute_direction_ranks(seeded, clock())
    r, ok = ask(seeded, "direction", direction="lr/reinforcement-learning-for-reasoning")
    names = [f.name for f in r.embeds[0].fields]
    assert ok and names[:2] == ["Most cited papers", "By PageRank within the direction"]
    assert r.embeds[0].fields[1].value.startswith("1. Reinforcement Learning Enhanced LLMs: A Survey · `2412.10400`")


def test_ask_serves_the_graph_questions(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    ingest_paths(open_db(db), [SEEDS_DIR])

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "mapwatch", *args, "--db", str(db)], capture_output=True,
                              text=True, timeout=60, cwd=tmp_path)

    p = run("ask", "/path 2005.14165 2509.02547")
    assert p.returncode == 0 and "is cited by 2509.02547" in p.stdout, p.stderr
    p = run("ask", "/related 2412.10400 exclude_direct:no")
    assert p.returncode == 0 and "2507.04136" in p.stdout
    p = run("ask", "/graph 2412.10400")
    assert p.returncode == 0 and "[attachment written to ./graph-2412.10400.png," in p.stdout
    assert (tmp_path / "graph-2412.10400.png").read_bytes().startswith(b"\x89PNG")
    p = run("ask", "/rising days:7")
    assert p.returncode == 0 and "No paper gained citers in the last 7 days" in p.stdout


async def test_graph_picture_reaches_discord(fake_discord: FakeDiscord, db_path: Path, clock) -> None:
    db = open_db(db_path)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    db.close()
    bot = MapwatchBot(db_path, base_url="http://feeds.example", guild_ready_timeout=0.05, alert_interval=60)
    async with fake_discord.connected(bot):
        h = await fake_discord.slash("graph", {"paper": "2412.10400", "depth": 1})
        msg = await h.wait_message()
        assert msg.files and png_size(msg.files[0].data if hasattr(msg.files[0], "data") else msg.files[0]) == (
            1200, 900)
        h = await fake_discord.slash("path", {"from": "2005.14165", "to": "2509.02547"})
        msg = await h.wait_message()
        assert "2412.10400 is cited by 2509.02547" in (msg.embed or {}).get("description", "")
