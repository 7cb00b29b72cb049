"""The documentation (docs/, built by MkDocs) says what the code does: its generated pages are
current (what `cog --check` checks in CI, here with the tests), and every table, column,
command, option and setting the code has is on its page."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
sys.path.insert(0, str(DOCS / "gen"))

import bot_reference  # noqa: E402  (docs/gen, the generators cog runs)
import cli_reference  # noqa: E402
import schema_reference  # noqa: E402
import settings_reference  # noqa: E402

COG_BLOCK = re.compile(r"<!-- \[\[\[cog\n(.*?)\]\]\] -->\n(.*?)<!-- \[\[\[end\]\]\] -->", re.S)


class Cog:
    """The part of cog's `cog` module the blocks use."""

    def __init__(self) -> None:
        self.text = ""

    def outl(self, s: str = "") -> None:
        self.text += s + "\n"

    def out(self, s: str) -> None:
        self.text += s


def page(name: str) -> str:
    return (DOCS / name).read_text(encoding="utf-8")


def section(text: str, heading: str) -> str:
    """From `heading` (a whole line) to the next heading of the same or a higher level."""
    level = heading.split(" ")[0]
    start = text.index(f"\n{heading}\n")
    rest = text[start + len(heading) + 2:]
    ends = [m.start() for m in re.finditer(rf"^#{{1,{len(level)}}} ", rest, re.M)]
    return rest[:ends[0]] if ends else rest


@pytest.mark.parametrize("name", ["commands.md", "database.md", "index.md", "bot.md", "configuration.md"])
def test_the_generated_pages_are_current(name: str) -> None:
    """Each cog block's output is what its code prints now (`cog -r -I docs/gen docs/*.md` to update)."""
    blocks = COG_BLOCK.findall(page(name))
    assert blocks, f"docs/{name} has no generated part"
    scope: dict[str, object] = {}
    for code, stored in blocks:
        cog = Cog()
        scope["cog"] = cog
        exec(compile(code, f"docs/{name}", "exec"), scope)
        assert stored == cog.text, f"docs/{name} is out of date: run cog -r -I docs/gen docs/{name}"


def test_every_table_and_column_is_in_the_schema_reference() -> None:
    db = schema_reference.live_schema()
    text = page("database.md")
    tables = schema_reference.documented_tables(db)
    assert {"papers", "citations", "events", "tracks", "follows", "digests"} <= set(tables)
    for table in tables:
        part = section(text, f"### `{table}`")
        for column in db[table].columns:
            assert f"\n| `{column.name}` | " in part, f"column {table}.{column.name} is not in docs/database.md"


def test_a_column_without_its_note_stops_the_generator() -> None:
    db = schema_reference.live_schema()
    db.execute("ALTER TABLE papers ADD COLUMN undocumented_column TEXT")
    with pytest.raises(schema_reference.SchemaDrift, match=r"column `papers.undocumented_column` has no entry"):
        schema_reference.check(db)


def test_a_command_without_its_note_stops_the_bot_table_generator() -> None:
    from dataclasses import replace

    from mapwatch.bot.commands import commands

    specs = commands()
    assert bot_reference.usage(specs["citers"]) == "`/citers <paper> [direction] [sort]`"
    specs["undocumented"] = replace(specs["stats"], name="undocumented")
    with pytest.raises(bot_reference.CommandDrift, match=r"command `undocumented` has no entry"):
        bot_reference.render(specs)
    del specs["undocumented"], specs["stats"]
    with pytest.raises(bot_reference.CommandDrift, match=r"describes `stats`, which is no command"):
        bot_reference.render(specs)


def test_the_module_diagram_is_current() -> None:
    """docs/modules.svg, on the Architecture page, is what docs/gen/module_diagram.py draws now."""
    import module_diagram

    assert page("modules.svg") == module_diagram.render(), "run python docs/gen/module_diagram.py"
    assert "database/" in page("modules.svg") and 'viewBox="0 0 ' in page("modules.svg")


def test_the_front_page_is_the_readme_with_the_site_links() -> None:
    import front_page

    assert front_page.convert("[Alerts](docs/bot.md#alerts) [x](bench/RESULTS.md) [`docs/`](docs/) "
                              "![p](docs/a.png) [w](https://example.org/docs/)") == \
        "[Alerts](bot.md#alerts) [x](bench-results.md) `docs/` ![p](a.png) [w](https://example.org/docs/)"


def test_every_command_and_option_is_in_the_command_reference() -> None:
    from mapwatch.cli import build_parser

    text = page("commands.md")
    commands = cli_reference.subcommands(build_parser())
    assert [name for name, _, _ in commands] == ["ingest", "stats", "backup", "replica", "refresh", "publish",
                                                 "serve", "enrich", "ask", "run", "sync", "graph", "webhook"]
    nested = [(f"{name} {sub}", "###", p) for name, _, parser in commands
              if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
              for sub, _, p in cli_reference.subcommands(parser)]
    assert [name for name, _, _ in nested] == ["webhook add", "webhook list", "webhook remove", "webhook key"]
    for name, level, parser in [(name, "##", parser) for name, _, parser in commands] + nested:
        part = section(text, f"{level} `mapwatch {name}`")
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert re.search(rf"^\| `[^`]*{re.escape(option)}\b", part, re.M), f"mapwatch {name} {option}"


def test_every_setting_is_in_the_configuration_table() -> None:
    """Each environment variable the package reads has its row in docs/configuration.md."""
    from mapwatch.store.environment import NAMES

    code = "".join(p.read_text(encoding="utf-8") for folder in ("mapwatch", "store", "feeds", "bot")
                   for p in (ROOT / folder).rglob("*.py"))
    names = set(re.findall(r'"(MAPWATCH_[A-Z_]+|DISCORD_TOKEN|PORT)"', code)) | set(NAMES)
    assert {"MAPWATCH_DB", "DISCORD_TOKEN", "PORT", "MAPWATCH_REFRESH"} <= names
    table = section(page("configuration.md"), "## Configuration")
    for name in sorted(names):
        assert f"\n| `{name}` | " in table, f"{name} is not in the table of docs/configuration.md"
    assert settings_reference.render() in table  # the generated table, as cog writes it


def test_every_page_is_in_the_site_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for p in DOCS.glob("*.md"):
        assert f": {p.name}\n" in nav, f"docs/{p.name} is not in mkdocs.yml's nav"


def test_the_site_check_finds_a_script_that_came_in_through_a_page(tmp_path: Path) -> None:
    """.ci/check_site.py (run by CI on the built site) sees what broke the Reliability page: a
    code span cut by an escaped backtick let `<script>` through as a live tag. It takes the
    theme's inline scripts as the theme's on every page (their base path made alike), but not
    a page's own script that differs from them only there, nor anything loaded from another host."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("check_site", ROOT / ".ci" / "check_site.py")
    assert spec is not None and spec.loader is not None
    check_site = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check_site)
    theme = '<!DOCTYPE html><html><head><title>x</title><link rel="stylesheet" href="{0}css/theme.css"></head>' \
            '<body><p>x</p><script src="{0}js/base.js"></script><script>var base_url = "{1}";</script>' \
            '<script>__md_scope=new URL("{1}",location)</script>' \
            '<script id="__config" type="application/json">{{"base": "{1}", "search": "{0}js/search.js"}}</script>' \
            '</body></html>'
    (tmp_path / "404.html").write_text(theme.format("/", "/"))
    (tmp_path / "ok").mkdir()
    (tmp_path / "ok" / "index.html").write_text(theme.format("../", ".."))
    assert check_site.check(tmp_path) == []
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "index.html").write_text(theme.format("../", "..").replace(
        "<p>x</p>", "<p><code>* _ \\`</code><script><code>, non-ASCII</p>"))
    (tmp_path / "soup").mkdir()
    (tmp_path / "soup" / "index.html").write_text(theme.format("../", "..").replace("<p>x</p>", "<div><p>x</p>"))
    (tmp_path / "cdn").mkdir()
    (tmp_path / "cdn" / "index.html").write_text(theme.format("../", "..").replace(
        "<p>x</p>", '<p>x</p><script src="https://cdn.example/hl.js"></script>').replace(
        "</title>", '</title><link rel="stylesheet" href="//cdn.example/hl.css">'))
    (tmp_path / "mine").mkdir()  # the theme's script but for what it does: not the theme's
    (tmp_path / "mine" / "index.html").write_text(theme.format("../", "..").replace(
        '__md_scope=new URL("..",location)', '__md_scope=new URL("..",location);alert(1)'))
    problems = check_site.check(tmp_path)
    assert problems[0].startswith("bad/index.html: a <script> the theme did not put there: '<code>, non-ASCII")
    assert problems[1].startswith("cdn/index.html: a <script> the theme did not put there: 'https://cdn.example/hl.js")
    assert problems[2] == "cdn/index.html: loads a script or stylesheet from another host: https://cdn.example/hl.js"
    assert problems[3].startswith("mine/index.html: a <script> the theme did not put there: '__md_scope")
    assert problems[4].startswith("soup/index.html: not well-formed HTML5") and len(problems) == 5
    far = check_site.external(tmp_path / "cdn" / "index.html")
    assert set(far) == {"https://cdn.example/hl.js", "//cdn.example/hl.css"}
