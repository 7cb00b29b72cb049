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


@pytest.mark.parametrize("name", ["commands.md", "database.md", "index.md", "bot.md", "configuration.md",
                                  "benchmark-summary.md", "reliability-summary.md", "architecture.md",
                                  "getting-started.md"])
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


SUMMARY_LINK = re.compile(r"\]\(([\w.-]+\.md)#([^)\s]+)\)")


def journal_anchors(repo_path: str) -> set[str]:
    """The heading ids of a journal as MkDocs renders it (python-markdown's toc, fenced code
    as superfences reads it: a `## 1. parse` line in a code block is no heading)."""
    import markdown

    md = markdown.Markdown(extensions=["toc", "tables", "pymdownx.superfences"])
    md.convert((ROOT / repo_path).read_text(encoding="utf-8"))

    def ids(tokens: list[dict]) -> set[str]:
        return {t["id"] for t in tokens} | {i for t in tokens for i in ids(t["children"])}

    return ids(md.toc_tokens)


def broken_summary_links(text: str) -> list[str]:
    """The links of a summary page whose journal has no heading with that anchor."""
    import journal_summary

    journals = {site: repo for site, repo in journal_summary.EXTERNAL.items() if repo.endswith(".md")}
    anchors = {site: journal_anchors(repo) for site, repo in journals.items()}
    return [f"{site}#{anchor}" for site, anchor in SUMMARY_LINK.findall(text)
            if site not in anchors or anchor not in anchors[site]]


@pytest.mark.parametrize("name", ["benchmark-summary.md", "reliability-summary.md"])
def test_every_summary_link_names_a_heading_of_its_journal(name: str) -> None:
    """Each row links the journal section of the run that produced its figure (the anchor MkDocs
    gives that heading, duplicates numbered as toc numbers them), and names its command."""
    [(_, text)] = COG_BLOCK.findall(page(name))  # the generated table
    rows = [line for line in text.splitlines() if line.startswith("| ") and "](" in line]
    assert len(rows) >= 20 and all(line.endswith("` |") for line in rows), f"docs/{name}: rows without a command"
    assert len(SUMMARY_LINK.findall(text)) == len(rows)
    assert broken_summary_links(text) == []


def test_a_summary_link_to_no_heading_is_reported() -> None:
    text = ("[a](bench-results.md#every-section-one-run-on-the-final-code-0617-0624-utc-commit-0021a37) "
            "[b](bench-results.md#1-parse) [c](reliability.md#3-data-safety-testssystemtest_data_safetypy) "
            "[e](reliability.md#no-such-section)")
    # `## 1. parse` of RESULTS.md is a line of a run's output, in a code block: no heading.
    assert broken_summary_links(text) == ["bench-results.md#1-parse", "reliability.md#no-such-section"]


def test_the_generator_gives_headings_the_anchors_mkdocs_gives_them() -> None:
    """Repeated headings numbered `_1`, `_2` as toc numbers them; `#` lines in code blocks, backticks,
    punctuation and non-ASCII as toc reads them."""
    import journal_summary as js
    import markdown

    heads = ["Run", "`mapwatch --help` (issue 22; 2026-12-01)", "Run", "5. query latency", "Run", "Žlutý: kůň/ü"]
    text = "# Journal\n\n" + "".join(f"{'#' * (2 + i % 2)} {h}\n\n<!-- figure: k.{i} | t | v | - -->\n\n"
                                      f"```\n## {h}\n```\n\n" for i, h in enumerate(heads))
    md = markdown.Markdown(extensions=["toc", "pymdownx.superfences"])
    md.convert(text)
    ids = [i for t in md.toc_tokens[0]["children"] for i in [t["id"], *(c["id"] for c in t["children"])]]
    assert [f.anchor for f in js.figures(text)] == ids
    assert ids[:3] == ["run", "mapwatch-help-issue-22-2026-12-01", "run_1"]


def test_the_summary_takes_the_latest_figure_of_each_key_and_its_run() -> None:
    import journal_summary as js

    journal = js.Journal("bench/RESULTS.md", newest_first=True, groups=("parse",))
    text = ("# Results\n\n## Newer run (2026-12-03)\n\n<!-- run: bench/run --only 1 -->\n"
            "<!-- figure: parse.pages | parse | 9,000 pages/s | ≥ 5,000 pages/s -->\n\n"
            "```\n## 1. parse\n```\n\n## Older run (2026-12-01)\n\n### Newer run (again)\n\n"
            "<!-- run: bench/run -->\n<!-- figure: parse.pages | parse | 8,000 pages/s | ≥ 5,000 pages/s -->\n"
            "<!-- figure: parse.cold | cold parse | 1 s | - -->\n")
    [latest, cold] = js.latest(journal, text)
    assert (latest.value, latest.command, latest.anchor, latest.run) == (
        "9,000 pages/s", "bench/run --only 1", "newer-run-2026-12-03", "Newer run (2026-12-03)")
    assert (cold.anchor, cold.run, cold.goal) == ("newer-run-again", "Newer run (2026-12-01)", "-")
    oldest_last = js.Journal("tests/RELIABILITY.md", newest_first=False, groups=("parse",))
    assert js.latest(oldest_last, text)[0].value == "8,000 pages/s"
    assert "| Parse | 9,000 pages/s | ≥ 5,000 pages/s | [Newer run (2026-12-03)]" \
        "(bench-results.md#newer-run-2026-12-03) | `bench/run --only 1` |" in js.render(journal, text)
    with pytest.raises(js.MarkerError, match="line 3: a figure marker holds KEY"):
        js.figures("# R\n\n<!-- figure: parse.pages | 9,000 pages/s -->\n")
    with pytest.raises(js.MarkerError, match=r"figure parse\.pages has no run marker"):
        js.latest(journal, "# R\n\n## Run\n\n<!-- figure: parse.pages | parse | 1 | - -->\n")
    with pytest.raises(js.MarkerError, match="group 'ingest' is not one of parse"):
        js.latest(journal, "# R\n\n## Run\n<!-- run: x -->\n<!-- figure: ingest.cold | a | 1 | - -->\n")


def test_every_command_and_option_is_in_the_command_reference() -> None:
    from mapwatch.cli import build_parser

    text = page("commands.md")
    commands = cli_reference.subcommands(build_parser())
    assert [name for name, _, _ in commands] == ["ingest", "stats", "backup", "replica", "compact", "refresh",
                                                 "publish", "serve", "enrich", "ask", "run", "sync", "graph", "export",
                                                 "webhook"]
    nested = [(f"{name} {sub}", "###", p) for name, _, parser in commands
              if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions)
              for sub, _, p in cli_reference.subcommands(parser)]
    assert [name for name, _, _ in nested] == ["export citers", "webhook add", "webhook list", "webhook remove",
                                               "webhook key"]
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


# The set-up (README's first screen) makes .venv without activating it: a command the docs show
# runs from it, `.venv/bin/mapwatch`, unless a line of the page activated it before.
SHELL_FENCES = ("sh", "bash", "shell", "console")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)
VENV_TOOLS = ("mapwatch", "pip3?", "mkdocs", "cog", "python3?", "litestream", "sqlite-utils", "pytest", "ruff", "mypy")
BARE = re.compile(r"(?:^|&&|\|\||[;|(]|\bexec\s+|-exec\s+\")\s*(?:[A-Z_][A-Z0-9_]*=\S*\s+)*"
                  rf"(?P<tool>{'|'.join(VENV_TOOLS)})(?=[\s\"]|$)(?P<rest>.*)")
ACTIVATE = re.compile(r"(?:^|[\s;&])(?:\.|source)\s+\.venv/bin/activate\b")


def shell_lines(text: str) -> list[tuple[int, str]]:
    """(line number, command) of each command in the page's shell code blocks: every line of a
    `sh` block, the `$ ` lines of a `console` block (output left out), continuations joined,
    comments left out."""
    out = []
    for m in FENCE.finditer(text):
        if m.group("lang") not in SHELL_FENCES:
            continue
        first = text[:m.start("body")].count("\n") + 1
        console = m.group("lang") == "console"
        joined, start, going = "", 0, False
        for n, line in enumerate(m.group("body").splitlines(), first):
            line = line.strip()
            if not going:
                if console and not line.startswith("$ "):
                    continue
                joined, start = line.removeprefix("$ "), n
            else:
                joined += " " + line
            going = joined.endswith("\\")
            joined = joined.removesuffix("\\").rstrip()
            if not going:
                out.append((start, re.sub(r"(?:^|\s)#.*$", "", joined)))
    return out


def bare_commands(text: str) -> list[str]:
    """The commands of a page's shell blocks that run a tool of the venv other than from .venv/bin/
    (`python3 -m venv` makes it), before any line that activates it."""
    found = []
    for n, line in shell_lines(text):
        if ACTIVATE.search(line):
            break
        for m in BARE.finditer(line):
            if not (m.group("tool") == "python3" and m.group("rest").lstrip().startswith("-m venv")):
                found.append(f"line {n}: {line}")
    return found


@pytest.mark.parametrize("name", ["README.md", *sorted(p.name for p in DOCS.glob("*.md"))])
def test_every_shell_command_runs_from_the_venv(name: str) -> None:
    text = (ROOT / name if name == "README.md" else DOCS / name).read_text(encoding="utf-8")
    assert bare_commands(text) == [], f"{name}: run these from the venv (.venv/bin/...)"


def test_the_venv_check_finds_a_bare_command() -> None:
    page = ("```sh\npython3 -m venv .venv && .venv/bin/pip install -e .\n```\n\n"
            "```sh\nmapwatch run   # `mapwatch ask` in a comment is prose\n"
            ".venv/bin/pip install -e '.[docs]' && mkdocs serve\n```\n\n"
            "```console\n$ MAPWATCH_REFRESH=1h \\\n  mapwatch run &\nmapwatch: stopped\n"
            '$ exec .venv/bin/litestream replicate -exec "mapwatch run"\n```\n\n'
            "```text\nmapwatch ingest [PATH ...]\n```\n\n"
            "```sh\n. .venv/bin/activate\nmapwatch run\n```\n")
    assert [line.split(":")[0] for line in bare_commands(page)] == ["line 6", "line 7", "line 11", "line 14"]
    assert bare_commands(page.replace("mapwatch run   #", ".venv/bin/mapwatch run   #")) != bare_commands(page)
