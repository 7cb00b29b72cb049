"""The layer rule, read from the files (ast, no import of the code checked): every import of the
checkout is one that mapwatch/layers.py allows, the rooms stack into floors, no circle of imports
(bench/ included), argparse only in mapwatch/cli, and each room's docstring says what
mapwatch/layers.py says it may import (docs/architecture.md, "The layers"). What needs the package
installed or a process started (`--help`'s imports, the wheel) is in tests/system/test_package.py."""

from __future__ import annotations

import ast
import functools
import os
import sys
import warnings
from collections.abc import Mapping, Set
from pathlib import Path

import networkx as nx
import pytest

from mapwatch import layers

ROOT = Path(__file__).resolve().parents[2]
# Where each dotted package's sources live: through the links in mapwatch/ (mapwatch/store ->
# ../store), the one definition of the package (pyproject.toml finds packages through them).
PACKAGE_DIRS = {"mapwatch": ROOT / "mapwatch", "mapwatch.store": ROOT / "store", "mapwatch.feeds": ROOT / "feeds",
                "mapwatch.bot": ROOT / "bot", "mapwatch.seeds": ROOT / "seeds", "bench": ROOT / "bench"}
OLD_TOP_LEVEL = {"store", "feeds", "bot", "seeds"}
PACKAGE_FOLDERS = ("mapwatch", "store", "feeds", "bot", "seeds")


def python_files(*folders: str) -> list[Path]:
    files = [p for f in folders for p in (ROOT / f).rglob("*.py")]
    assert files, folders
    return sorted(files)


def module_name(path: Path) -> str:
    """The dotted name a file installs as: store/database/db.py -> mapwatch.store.database.db."""
    for package, folder in sorted(PACKAGE_DIRS.items(), key=lambda kv: -len(str(kv[1]))):
        if path.is_relative_to(folder):
            parts = [*package.split("."), *path.relative_to(folder).with_suffix("").parts]
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    raise AssertionError(f"{path} is in no package")


def own_package(path: Path) -> str:
    name = module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


@functools.cache
def syntax_tree(path: Path) -> ast.Module:
    """A file's syntax tree, parsed once for all the tests."""
    return ast.parse(path.read_text(), str(path))


def imported_names(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in a file; relative imports are resolved
    against `package` (the file's own package), else kept with their leading dots."""
    found = []
    for node in ast.walk(syntax_tree(path)):
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


@functools.cache
def checkout_modules() -> dict[str, Path]:
    """Every module of the package as a tool that reads files finds it (a walk of mapwatch/ that
    follows its links, no installed package and no pyproject.toml consulted), and of bench/."""
    found = {}
    top = ROOT / "mapwatch"
    for folder, _, files in os.walk(top, followlinks=True):
        for file in (f for f in files if f.endswith(".py")):
            parts = ["mapwatch", *(Path(folder) / file).relative_to(top).with_suffix("").parts]
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = Path(folder) / file
    for path in python_files("bench"):
        found[module_name(path)] = path
    return found


@functools.cache
def import_graph() -> dict[str, frozenset[str]]:
    """module -> the modules of the package and bench/ it imports (at the top, in functions or
    for type checking); read once for all the tests."""
    modules = checkout_modules()
    graph: dict[str, frozenset[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        graph[name] = frozenset(n for _, n in imported_names(path, package) if n in modules and n != name)
    return graph


def room(module: str, modules: dict[str, Path]) -> str:
    where = layers.room_of(modules[module].resolve().relative_to(ROOT).as_posix())
    assert where, f"{module} is in no room of mapwatch/layers.py"
    return where


def test_nothing_imports_the_old_top_level_names() -> None:
    """With the repository on sys.path, `store` and `mapwatch.store` would load as two copies."""
    bad = []
    for path in python_files(*PACKAGE_FOLDERS, "tests", "bench"):
        in_package = any(path.is_relative_to(folder) for folder in PACKAGE_DIRS.values())
        for line, name in imported_names(path, own_package(path) if in_package else None):
            if name.split(".")[0] in OLD_TOP_LEVEL:
                bad.append(f"{path.relative_to(ROOT)}:{line}: {name}")
    assert bad == []


def test_a_static_import_graph_of_the_checkout_sees_every_layer() -> None:
    graph = import_graph()
    arrows = sum(len(targets) for targets in graph.values())
    assert arrows > 600, arrows  # it was 1 when the layout lived in pyproject.toml's package-dir
    for layer in ("store", "feeds", "bot"):
        assert any(t.startswith(f"mapwatch.{layer}.") for ts in graph.values() for t in ts), layer
    assert any(t.startswith("bench.") for ts in graph.values() for t in ts)


# -- circles ---------------------------------------------------------------------------------

def import_circles(graph: Mapping[str, Set[str]]) -> set[tuple[str, ...]]:
    """The strongly connected groups of more than one module (networkx's Tarjan)."""
    arrows = nx.DiGraph()
    arrows.add_nodes_from(graph)
    arrows.add_edges_from((a, b) for a, targets in graph.items() for b in targets)
    return {tuple(sorted(group)) for group in nx.strongly_connected_components(arrows)
            if len(group) > 1}


def test_the_package_and_bench_have_no_import_cycles() -> None:
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
    assert module_name(ROOT / "bench" / "main.py") == "bench.main"


# -- the rooms and their floors --------------------------------------------------------------

def test_every_module_is_in_a_room_and_every_room_holds_modules() -> None:
    modules = checkout_modules()
    rooms = {room(name, modules) for name in modules}
    assert rooms == set(layers.MAY_IMPORT)
    assert layers.room_of("store/database/migrations/m0001_initial.py") == "store/database"
    assert layers.room_of("store/errors.py") == "store/*.py"
    assert layers.room_of("bot/interactions.py") == "bot/interactions.py"
    assert layers.room_of("bot/client.py") == "bot/*.py"
    assert layers.room_of("tests/conftest.py") is None


def test_the_rooms_stack_into_floors() -> None:
    """Every room a room may import is a room, and lies on a floor below it: no arrow of the
    rule runs back up (graphlib would refuse a circle)."""
    for name, below in layers.MAY_IMPORT.items():
        assert set(below) <= set(layers.MAY_IMPORT) - {name}, name
    floor = {name: n for n, rooms in enumerate(layers.floors()) for name in rooms}
    assert set(floor) == set(layers.MAY_IMPORT)
    back = [(a, b) for a, below in layers.MAY_IMPORT.items() for b in below if floor[b] >= floor[a]]
    assert back == []
    assert floor["store/*.py"] == 0 and floor["bench"] == max(floor.values())


def forbidden_imports(folder_room: str, graph: Mapping[str, Set[str]], modules: dict[str, Path]) -> list[str]:
    return sorted(f"{a} -> {b} ({room(b, modules)})" for a, targets in graph.items()
                  if room(a, modules) == folder_room for b in targets
                  if not layers.may_import(folder_room, room(b, modules)))


@pytest.mark.parametrize("name", list(layers.MAY_IMPORT))
def test_each_room_imports_only_what_it_may(name: str) -> None:
    modules = checkout_modules()
    assert forbidden_imports(name, import_graph(), modules) == []


def test_the_rule_sees_a_forbidden_import() -> None:
    """The check catches what it is about: a page reader that opens the database, a store
    module that reaches up into the feeds."""
    modules = checkout_modules()
    graph = {"mapwatch.store.pages.parse": {"mapwatch.store.database.db", "mapwatch.store.errors"},
             "mapwatch.store.clock": {"mapwatch.feeds.build"}}
    assert forbidden_imports("store/pages", graph, modules) == [
        "mapwatch.store.pages.parse -> mapwatch.store.database.db (store/database)"]
    assert forbidden_imports("store/*.py", graph, modules) == [
        "mapwatch.store.clock -> mapwatch.feeds.build (feeds/*.py)"]


def test_the_composition_of_run_is_in_the_entry_package() -> None:
    """`mapwatch run` wires the scheduler, the feed server and the bot above the layers (issue 22)."""
    assert (ROOT / "mapwatch" / "cli" / "run.py").exists()
    assert not (ROOT / "bot" / "run.py").exists() and not (ROOT / "bot" / "cli_run.py").exists()
    names = {name for _, name in imported_names(ROOT / "mapwatch" / "service" / "run.py", "mapwatch.service")}
    assert {"mapwatch.service.services", "mapwatch.bot.supervisor"} <= names
    assert not (ROOT / "feeds" / "run.py").exists() and not (ROOT / "feeds" / "scheduler.py").exists()


# -- libraries -------------------------------------------------------------------------------

def library_importers(library: str, *folders: str) -> list[tuple[str, str]]:
    """(where, room) of every import of `library` in the folders (at the top or in a function)."""
    found = []
    for path in python_files(*folders):
        where = layers.room_of(path.relative_to(ROOT).as_posix())
        found += [(f"{path.relative_to(ROOT)}:{line}", str(where))
                  for line, name in imported_names(path, own_package(path)) if name.split(".")[0] == library]
    return found


@pytest.mark.parametrize("library", sorted(layers.LIBRARIES))
def test_a_library_only_where_it_may_be(library: str) -> None:
    """argparse only in mapwatch/cli (the layers and `run`'s composition take values, not a
    command line: issue 31), discord only where the bot meets Discord, no database in pages."""
    found = library_importers(library, *PACKAGE_FOLDERS, "bench")
    assert found, library  # the check sees the rooms that do import it
    assert [(where, r) for where, r in found if r not in layers.LIBRARIES[library]] == []


def test_the_library_check_sees_argparse(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from argparse import Namespace\n")
    assert [name for _, name in imported_names(sample, "mapwatch.store")] == ["argparse", "argparse.Namespace"]
    assert "mapwatch/cli" in layers.LIBRARIES["argparse"] and "store/*.py" not in layers.LIBRARIES["argparse"]


# -- the docs say what the rule says --------------------------------------------------------------

@pytest.mark.parametrize("name", list(layers.MAY_IMPORT))
def test_each_room_says_what_it_may_import(name: str) -> None:
    """The docstring of the room's home (its __init__, or its module) carries the rule's line,
    whitespace aside."""
    doc = " ".join(docstring(ROOT / layers.home(name)).split())
    assert layers.may_import_line(name) in doc, (
        f"{layers.home(name)}: its docstring should say {layers.may_import_line(name)!r}")


def docstring(path: Path) -> str:
    return ast.get_docstring(syntax_tree(path)) or ""


def test_only_the_rooms_homes_state_what_may_be_imported() -> None:
    """One statement per room, so no docstring elsewhere can say otherwise."""
    def states(path: Path) -> int:
        doc = " ".join(docstring(path).split())
        return doc.count(f"may import ({layers.RULE})") + doc.count("May import")

    stating = {p.relative_to(ROOT).as_posix() for p in python_files(*PACKAGE_FOLDERS, "bench") if states(p)}
    assert stating - {layers.RULE} == {layers.home(name) for name in layers.MAY_IMPORT}
    assert [layers.home(name) for name in layers.MAY_IMPORT if states(ROOT / layers.home(name)) != 1] == []


def test_the_module_diagram_draws_the_layers_in_the_rules_order() -> None:
    """docs/modules.svg stacks mapwatch/, bot/, feeds/, store/ top to bottom, each with an arrow to
    those below: no room of a layer may import a layer drawn above it."""
    sys.path.insert(0, str(ROOT / "docs" / "gen"))
    import module_diagram  # docs/gen, the generators cog runs

    drawn = [f"{folder}/" for folder, _ in module_diagram.LAYERS]
    assert drawn == list(reversed(layers.LAYERS))
    for i, upper in enumerate(drawn):
        for lower in drawn[i + 1:]:
            ups = [(a, b) for a in layers.LAYERS[lower] for b in layers.MAY_IMPORT[a] if b in layers.LAYERS[upper]]
            assert ups == [], (lower, upper)


def test_the_checkout_is_the_package() -> None:
    """mapwatch/store -> ../store (and feeds, bot, seeds): an editor or a type checker that
    reads the checkout as it stands follows `mapwatch.store.x` to store/x.py."""
    for name in ("store", "feeds", "bot", "seeds"):
        link = ROOT / "mapwatch" / name
        assert link.is_symlink() and link.resolve() == ROOT / name, name


# -- sizes: warnings, not failures ----------------------------------------------------------------

MAX_FOLDER_MODULES = 15
MAX_MODULE_LINES = 400


def test_a_folder_over_15_modules_is_a_warning() -> None:
    folders = {p.parent for p in python_files("mapwatch", "store", "feeds", "bot")}
    counts = {str(f.relative_to(ROOT)): len([p for p in f.glob("*.py") if p.name != "__init__.py"])
              for f in folders}
    assert len(counts) >= 10, counts
    for folder, n in sorted(counts.items()):
        if n > MAX_FOLDER_MODULES:  # a hint to group by topic, not a failure: circles are what fail
            warnings.warn(f"{folder} holds {n} modules (over {MAX_FOLDER_MODULES})", stacklevel=1)


def test_a_module_over_400_lines_is_a_warning() -> None:
    """Small modules with names that explain themselves: one over MAX_MODULE_LINES is reported,
    not refused (cutting a module in halves to fit a cap is how circles were made)."""
    lines = {str(p.relative_to(ROOT)): len(p.read_text().splitlines())
             for p in python_files("store", "feeds", "bot", "mapwatch")}
    assert len(lines) > 40, "the walk finds the package's modules"
    for name, n in sorted(lines.items()):
        if n > MAX_MODULE_LINES:
            warnings.warn(f"{name}: {n} lines (over {MAX_MODULE_LINES})", stacklevel=1)
