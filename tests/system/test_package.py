"""One import package, `mapwatch`: how it installs, how it starts, and its layer rule
(docs/architecture.md, "The layers")."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[2]
# Where each dotted package's sources live: through the links in mapwatch/ (mapwatch/store ->
# ../store), the one definition of the package (pyproject.toml finds packages through them).
PACKAGE_DIRS = {"mapwatch": ROOT / "mapwatch", "mapwatch.store": ROOT / "store", "mapwatch.feeds": ROOT / "feeds",
                "mapwatch.bot": ROOT / "bot", "mapwatch.seeds": ROOT / "seeds"}
OLD_TOP_LEVEL = {"store", "feeds", "bot", "seeds"}


def python_files(*folders: str) -> list[Path]:
    files = [p for f in folders for p in (ROOT / f).rglob("*.py")]
    assert files, folders
    return sorted(files)


def module_name(path: Path) -> str:
    """The dotted name a file of the package installs as: store/database/db.py -> mapwatch.store.database.db."""
    for package, folder in sorted(PACKAGE_DIRS.items(), key=lambda kv: -len(str(kv[1]))):
        if path.is_relative_to(folder):
            parts = [*package.split("."), *path.relative_to(folder).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise AssertionError(f"{path} is in no package")


def imported_names(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file; relative imports are resolved
    against `package` (the file's own package), else kept with their leading dots."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level and package is None:  # tests' own helpers, relative to their folder
                name = "." * node.level + (node.module or "")
            elif node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
            found += [(node.lineno, f"{name}.{alias.name}") for alias in node.names]
        elif (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in
              ("import_module", "find_spec") and node.args and isinstance(node.args[0], ast.Constant)
              and isinstance(node.args[0].value, str)):
            found.append((node.lineno, node.args[0].value))
    return found


def own_package(path: Path) -> str:
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def test_nothing_imports_the_old_top_level_names() -> None:
    """With the repository on sys.path, `store` and `mapwatch.store` would load as two copies."""
    bad = []
    for path in python_files("mapwatch", "store", "feeds", "bot", "seeds", "tests", "bench"):
        in_package = any(path.is_relative_to(folder) for folder in PACKAGE_DIRS.values())
        for line, name in imported_names(path, own_package(path) if in_package else None):
            if name.split(".")[0] in OLD_TOP_LEVEL:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert bad == []


def test_a_layer_folder_refuses_its_bare_name() -> None:
    """From the repository's root, `import store` fails at once and says what to write, so one
    file never loads as two modules (store.clock beside mapwatch.store.clock)."""
    for name in ("store", "feeds", "bot"):
        r = subprocess.run([sys.executable, "-c", f"import {name}.errors"], capture_output=True, text=True,
                           timeout=60, cwd=ROOT)
        assert r.returncode == 1, name
        assert f"ImportError: import mapwatch.{name}, not {name}" in r.stderr.splitlines()[-1]


def checkout_modules() -> dict[str, Path]:
    """Every module of the package as a tool that reads files finds it: a walk of mapwatch/ that
    follows its links, with no installed package and no pyproject.toml consulted."""
    found = {}
    top = ROOT / "mapwatch"
    for folder, _, files in os.walk(top, followlinks=True):
        for file in (f for f in files if f.endswith(".py")):
            parts = ["mapwatch", *(Path(folder) / file).relative_to(top).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = Path(folder) / file
    return found


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (at the top, in functions or for type checking)."""
    modules = checkout_modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = {n for _, n in imported_names(path, package) if n in modules and n != name}
    return graph


def test_a_static_import_graph_of_the_checkout_sees_every_layer() -> None:
    graph = import_graph()
    arrows = sum(len(targets) for targets in graph.values())
    assert arrows > 600, arrows  # it was 1 when the layout lived in pyproject.toml's package-dir
    for layer in ("store", "feeds", "bot"):
        assert any(t.startswith(f"mapwatch.{layer}.") for ts in graph.values() for t in ts), layer




def import_circles(graph: dict[str, set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected groups of more than one module (networkx's Tarjan)."""
    arrows = nx.DiGraph()
    arrows.add_nodes_from(graph)
    arrows.add_edges_from((a, b) for a, targets in graph.items() for b in targets)
    return {tuple(sorted(group)) for group in nx.strongly_connected_components(arrows)
            if len(group) > 1}


def test_the_package_has_no_import_cycles() -> None:
    """No circle of imports, counting those inside functions and under TYPE_CHECKING: each
    module can be read, tested and moved with only what it imports below it."""
    assert import_circles(import_graph()) == set()


def test_the_circle_check_sees_a_circle() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": set()}
    assert import_circles(graph) == {("a", "b", "c")}


def test_the_checks_see_imports(tmp_path: Path) -> None:
    """The walk above finds what it looks for, relative imports included."""
    names = {name for _, name in imported_names(ROOT / "mapwatch" / "cli" / "__init__.py", "mapwatch.cli")}
    assert "mapwatch.store.errors" in names
    sample = tmp_path / "sample.py"
    sample.write_text("from ..feeds import publish\nfrom . import commands\nimport store.errors\n"
                      "importlib.import_module('bot.cli')\n")
    assert [name for _, name in imported_names(sample, "mapwatch.bot")] == [
        "mapwatch.feeds", "mapwatch.feeds.publish", "mapwatch.bot", "mapwatch.bot.commands", "store.errors", "bot.cli"]
    assert module_name(ROOT / "bot" / "commands" / "papers.py") == "mapwatch.bot.commands.papers"
    assert module_name(ROOT / "store" / "__init__.py") == "mapwatch.store"


# The layer rule: store <- feeds <- bot, and the entry package above them all: every module of
# mapwatch/ (the commands in mapwatch/cli/, and `run`'s composition of the layers) is out of the
# layers' reach.
ENTRY = tuple(sorted([*(f"mapwatch.{p.stem}" for p in (ROOT / "mapwatch").glob("*.py") if p.stem != "__init__"),
                      *(f"mapwatch.{p.parent.name}" for p in (ROOT / "mapwatch").glob("*/__init__.py")
                        if not p.parent.is_symlink())]))
FORBIDDEN = {
    "store": ("mapwatch.feeds", "mapwatch.bot", *ENTRY),
    "feeds": ("mapwatch.bot", *ENTRY),
    "bot": ENTRY,
}


def test_the_composition_of_run_is_in_the_entry_package() -> None:
    """`mapwatch run` wires the scheduler, the feed server and the bot above the layers (issue 22)."""
    assert {"mapwatch.cli", "mapwatch.service"} <= set(ENTRY)
    assert (ROOT / "mapwatch" / "cli" / "run.py").exists()
    assert not (ROOT / "bot" / "run.py").exists() and not (ROOT / "bot" / "cli_run.py").exists()
    names = {name for _, name in imported_names(ROOT / "mapwatch" / "service" / "run.py", "mapwatch.service")}
    assert {"mapwatch.service.services", "mapwatch.bot.supervisor"} <= names
    assert not (ROOT / "feeds" / "run.py").exists() and not (ROOT / "feeds" / "scheduler.py").exists()


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_layer_rule(layer: str) -> None:
    bad = []
    for path in python_files(layer):
        for line, name in imported_names(path, own_package(path)):
            if any(name == f or name.startswith(f + ".") for f in FORBIDDEN[layer]):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert bad == []


def argparse_importers(*folders: str) -> list[str]:
    """Every module of the folders that imports argparse (ast: at the top or in a function)."""
    return [f"{path.relative_to(ROOT)}:{line}" for path in python_files(*folders)
            for line, name in imported_names(path, own_package(path)) if name.split(".")[0] == "argparse"]


def test_only_the_cli_package_parses_a_command_line() -> None:
    """argparse only in mapwatch/cli/: the layers and `run`'s composition take values, not a
    command line (issue 31)."""
    cli = ROOT / "mapwatch" / "cli"
    outside = [where for where in argparse_importers("mapwatch", "store", "feeds", "bot", "seeds")
               if not (ROOT / where.partition(":")[0]).is_relative_to(cli)]
    assert outside == []
    assert argparse_importers("mapwatch/cli")  # the check sees the package that does parse


def test_the_argparse_check_sees_argparse(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from argparse import Namespace\n")
    assert [name for _, name in imported_names(sample, "mapwatch.store")] == ["argparse", "argparse.Namespace"]


# The layer rule inside store/ and bot/: each subpackage's __init__ docstring says what it may
# import; these are the imports it must not make (docs/architecture.md, "The layers").
STORE_SUBPACKAGES = ("pages", "sources", "database", "questions", "subscriptions", "scholarly")
BOT_SUBPACKAGES = ("rendering", "sending")
SUB_FORBIDDEN = {
    # reading pages is pure: nothing of the database, nor of fetching, questions, subscriptions
    "store/pages": ("mapwatch.store.database", "mapwatch.store.sources", "mapwatch.store.questions",
                    "mapwatch.store.subscriptions", "sqlite3", "sqlite_utils"),
    "store/database": ("mapwatch.store.questions", "mapwatch.store.subscriptions"),
    # questions import nothing of sources
    "store/questions": ("mapwatch.store.sources", "mapwatch.store.subscriptions"),
    "store/subscriptions": ("mapwatch.store.sources",),
    "store/sources": ("mapwatch.cli",),  # as every layer (ENTRY); no command line: argparse only in mapwatch/cli
    # the scholarly sources' records and their storage: nothing of the map's crawl or the bot's subscriptions
    "store/scholarly": ("mapwatch.store.sources", "mapwatch.store.subscriptions"),
    # rendering is pure: no discord, no sending
    "bot/rendering": ("discord", "mapwatch.bot.sending", "mapwatch.bot.client", "mapwatch.bot.interactions",
                      "mapwatch.bot.run", "mapwatch.store.database", "mapwatch.store.sources"),
    "bot/sending": ("mapwatch.bot.client", "mapwatch.bot.run"),
}
# The store's top-level modules (errors, clock, ids, ...) sit below every subpackage.
STORE_TOP_FORBIDDEN = tuple(f"mapwatch.store.{s}" for s in STORE_SUBPACKAGES)


@pytest.mark.parametrize("folder", sorted(SUB_FORBIDDEN))
def test_subpackage_layer_rule(folder: str) -> None:
    bad = []
    for path in python_files(folder):
        for line, name in imported_names(path, own_package(path)):
            if any(name == f or name.startswith(f + ".") for f in SUB_FORBIDDEN[folder]):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert bad == []


def test_the_store_top_imports_no_subpackage() -> None:
    bad = []
    for path in sorted((ROOT / "store").glob("*.py")):
        for line, name in imported_names(path, own_package(path)):
            if any(name == f or name.startswith(f + ".") for f in STORE_TOP_FORBIDDEN):
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert bad == []


def test_the_subpackage_rules_see_a_forbidden_import(tmp_path: Path) -> None:
    """The rule above catches what it is about: a page reader that opens the database."""
    sample = tmp_path / "sample.py"
    sample.write_text("from ..database import db\nfrom mapwatch.store.sources.files import page_files\n")
    names = [name for _, name in imported_names(sample, "mapwatch.store.pages")]
    assert [n for n in names if any(n.startswith(f) for f in SUB_FORBIDDEN["store/pages"])] == [
        "mapwatch.store.database", "mapwatch.store.database.db", "mapwatch.store.sources.files",
        "mapwatch.store.sources.files.page_files"]


MAX_FOLDER_MODULES = 15


def test_a_folder_over_15_modules_is_a_warning() -> None:
    folders = {p.parent for p in python_files("mapwatch", "store", "feeds", "bot")}
    counts = {str(f.relative_to(ROOT)): len([p for p in f.glob("*.py") if p.name != "__init__.py"])
              for f in folders}
    assert len(counts) >= 10, counts
    for folder, n in sorted(counts.items()):
        if n > MAX_FOLDER_MODULES:  # a hint to group by topic, not a failure: circles are what fail
            warnings.warn(f"{folder} holds {n} modules (over {MAX_FOLDER_MODULES})", stacklevel=1)


@pytest.mark.parametrize("sub", [f"store/{s}" for s in STORE_SUBPACKAGES] + [f"bot/{s}" for s in BOT_SUBPACKAGES])
def test_each_subpackage_documents_its_job(sub: str) -> None:
    """Its __init__ docstring says what it holds and what it may import."""
    doc = ast.get_docstring(ast.parse((ROOT / sub / "__init__.py").read_text()))
    assert doc and "May import" in doc and len(doc) > 120, sub
    assert sub in SUB_FORBIDDEN


def test_the_checkout_is_the_package() -> None:
    """mapwatch/store -> ../store (and feeds, bot, seeds): an editor or a type checker that
    reads the checkout as it stands follows `mapwatch.store.x` to store/x.py."""
    for name in ("store", "feeds", "bot", "seeds"):
        link = ROOT / "mapwatch" / name
        assert link.is_symlink() and link.resolve() == ROOT / name, name


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


MAX_MODULE_LINES = 400


def module_lines() -> dict[str, int]:
    return {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
            for p in python_files("store", "feeds", "bot", "mapwatch")}


def test_a_module_over_400_lines_is_a_warning() -> None:
    """Small modules with names that explain themselves: one over MAX_MODULE_LINES is reported,
    not refused (cutting a module in halves to fit a cap is how circles were made)."""
    lines = module_lines()
    assert len(lines) > 40, "the walk finds the package's modules"
    for name, n in sorted(lines.items()):
        if n > MAX_MODULE_LINES:
            warnings.warn(f"{name}: {n} lines (over {MAX_MODULE_LINES})", stacklevel=1)
