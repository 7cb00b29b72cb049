"""One import package, `mapwatch`: how it installs and how it starts, checked by running it
(docs/architecture.md). The layer rule and the import circles are read from the
files by tests/unit/test_layers.py."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_a_layer_folder_refuses_its_bare_name() -> None:
    """From the repository's root, `import store` fails at once and says what to write, so one
    file never loads as two modules (store.clock beside mapwatch.store.clock)."""
    for name in ("store", "feeds", "bot"):
        r = subprocess.run([sys.executable, "-c", f"import {name}.errors"], capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
        assert r.returncode == 1, name
        assert f"ImportError: import mapwatch.{name}, not {name}" in r.stderr.splitlines()[-1]


# `mapwatch --help` imports only the command modules and what their options need: no
# sqlite_utils (it loads numpy), discord, aiohttp, networkx, matplotlib (bench/RESULTS.md, "--help").
HELP_MAY_IMPORT = {"mapwatch", "mapwatch.cli", "mapwatch.cli.options", "mapwatch.cli.store", "mapwatch.cli.feeds",
                   "mapwatch.cli.enrich", "mapwatch.cli.ask", "mapwatch.cli.run", "mapwatch.cli.sync",
                   "mapwatch.cli.graph", "mapwatch.cli.export", "mapwatch.cli.webhook",
                   "mapwatch.store", "mapwatch.feeds", "mapwatch.bot", "mapwatch.store.environment",
                   "mapwatch.store.settings_table", "mapwatch.store.errors", "mapwatch.store.settings",
                   "mapwatch.store.urls"}


def test_help_imports_no_heavy_module(tmp_path: Path) -> None:
    code = ("import json, sys\nsys.argv = ['mapwatch', '--help']\nfrom mapwatch.cli import main\n"
            "try:\n    main()\nexcept SystemExit:\n    pass\n"
            "print(json.dumps(sorted(sys.modules)), file=sys.stderr)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.stdout.startswith("usage: mapwatch "), r.stderr
    loaded = json.loads(r.stderr.splitlines()[-1])
    ours = {m for m in loaded if m.split(".")[0] == "mapwatch"}
    assert "mapwatch.cli.sync" in ours  # the walk sees the command modules
    assert ours - HELP_MAY_IMPORT == set()
    others = {m.split(".")[0] for m in loaded} - set(sys.stdlib_module_names) - {"mapwatch", "__main__"}
    others = {m for m in others if not m.startswith(("_distutils_hack", "__editable__", "_virtualenv"))}
    assert others == set()
    assert {"asyncio", "sqlite_utils", "numpy", "discord", "aiohttp"} & {m.split(".")[0] for m in loaded} == set()


def test_no_module_of_the_package_is_loaded_twice() -> None:
    """The editable install resolves mapwatch.store etc. to the repository's folders, and
    running every command module loads no top-level `store`, `feeds` or `bot`."""
    code = ("import sys, mapwatch.cli, mapwatch.store.database.db, mapwatch.feeds.publish\n"
            "import mapwatch.bot.commands as c\n"
            "mapwatch.cli.build_parser(); c.commands()\n"
            "print(mapwatch.store.database.db.__file__)\n"
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'store', 'feeds', 'bot', 'seeds'}))\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    where, loaded = r.stdout.splitlines()
    # the editable install's finder, or the checkout's mapwatch/ and its links (mapwatch/store -> ../store)
    assert Path(where).resolve() == ROOT / "store" / "database" / "db.py"
    assert loaded == "[]"


@pytest.mark.parametrize("how", ["python -m mapwatch", "mapwatch"])
def test_help_works_both_ways(how: str, tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "mapwatch"
    argv = [sys.executable, "-m", "mapwatch"] if how != "mapwatch" else [str(script)]
    if how == "mapwatch":
        assert script.exists(), "the console script is installed with the package (pip install -e .)"
    r = subprocess.run([*argv, "--help"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: mapwatch ")
    for command in ("ingest", "stats", "backup", "refresh", "publish", "serve", "ask", "run", "sync", "graph"):
        assert f"    {command} " in r.stdout, command
    bad = subprocess.run([*argv, "no-such-command"], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_a_wheel_installs_mapwatch_alone(tmp_path: Path) -> None:
    """`pip install .` puts one top-level name into site-packages: `mapwatch`, with the
    seeds, the web pages' stylesheet and script, and the schema as package data."""
    src = tmp_path / "src"
    for name in ("mapwatch", "store", "feeds", "bot", "seeds"):
        shutil.copytree(ROOT / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", str(src),
                        "-w", str(tmp_path / "dist")], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    (wheel,) = (tmp_path / "dist").glob("mapwatch-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = z.namelist()
        (top_level,) = [n for n in names if n.endswith(".dist-info/top_level.txt")]
        assert z.read(top_level).decode().split() == ["mapwatch"]
        entry_points = z.read(top_level.replace("top_level.txt", "entry_points.txt")).decode()
    assert "mapwatch = mapwatch.cli:main" in entry_points
    assert {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")} == {"mapwatch"}
    for needed in ("mapwatch/__main__.py", "mapwatch/cli/__init__.py", "mapwatch/cli/run.py",
                   "mapwatch/store/database/db.py", "mapwatch/bot/commands/papers.py",
                   "mapwatch/seeds/2412.10400.txt", "mapwatch/seeds/2507.04136.txt",
                   "mapwatch/feeds/static/style.css", "mapwatch/feeds/static/site.js",
                   "mapwatch/store/database/schema.sql"):
        assert needed in names, needed
