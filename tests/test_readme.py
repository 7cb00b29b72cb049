"""The README's promises: two commands on the first screen, kept true by CI."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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


def test_every_table_is_documented() -> None:
    from mapwatch.store.db import open_db

    db = open_db(":memory:")
    tables = {t for t in db.table_names() if not t.startswith(("_", "papers_fts_", "papers_title_fts_", "sqlite_"))}
    for table in tables:
        assert f"`{table}`" in README, f"table {table} is not in the README"
        for col in db[table].columns_dict if table != "papers_fts" else ():
            assert f"`{col}`" in README, f"column {table}.{col} is not in the README"
