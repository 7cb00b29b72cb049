"""Fixtures the system tests share. (tests/conftest.py has the ones every test may use:
`seeded` is a database with the bundled seeds, `seeded_path` its file.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.system.test_cli_exits import mapwatch


@pytest.fixture(scope="module")
def ingested_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database file the real `mapwatch ingest` command filled with the bundled seeds, made
    once per test module: read it, or copy it before writing."""
    path = tmp_path_factory.mktemp("ingested") / "m.db"
    r = mapwatch("ingest", "--db", path, "--quiet")
    assert r.returncode == 0, r.stderr
    return path
