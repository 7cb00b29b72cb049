"""The README's promises: two commands on the first screen, kept true by CI; a front page that
links to the documentation (docs/, tests/unit/test_docs.py) rather than holding it."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def first_screen_commands() -> list[str]:
    first_screen = "\n".join(README.splitlines()[:25])
    return re.findall(r"```sh\n(.+?)\n```", first_screen)


def test_first_screen_has_exactly_two_commands() -> None:
    cmds = first_screen_commands()
    assert len(cmds) == 2
    main, tests = cmds
    assert "pip install" in main and "mapwatch" in main
    assert "'.[test]'" in tests and "pytest" in tests


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert first_screen_commands()[1] in ci


def test_the_readme_is_a_front_page_whose_links_resolve() -> None:
    assert len(README.splitlines()) <= 150
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 10  # the picture and the documentation's pages
    for link in local:
        assert (ROOT / link).exists(), f"README links to {link}, which does not exist"


def test_the_readme_tour_runs(tmp_path: Path, capsys) -> None:
    """Every `mapwatch ask` line of the README's tour answers on the bundled seeds."""
    import shlex

    from mapwatch.cli import main

    db = str(tmp_path / "mapwatch.db")
    assert main(["ingest", "--quiet", "--db", db]) == 0
    examples = re.findall(r"^\.venv/bin/mapwatch (ask .+)$", README, flags=re.M)
    assert len(examples) >= 5
    for line in examples:
        assert main([*shlex.split(line), "--db", db]) == 0, (line, capsys.readouterr().out)
