"""The compact schema (migration 0038, issue 44) answers exactly as the version before it did.

tests/data/compact_before/ holds two databases made by the version before (the seeds, and a
generated map of 160 pages read twice), as SQL dumps, with every answer and feed byte that
version gave for them (tests/compact_answers.py). Each is migrated here and asked again; a new
database made from the same pages by this version is asked too. Both must give the same history
rows, the same answers and the same feed files, byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import compact_answers as ca


def _same(got: dict, want: dict) -> None:
    for part in ("history", "feeds", "answers"):
        assert got[part].keys() == want[part].keys(), part
        for key in want[part]:
            assert got[part][key] == want[part][key], (part, key)


@pytest.mark.parametrize("name", ca.MAPS)
def test_migrated_database_answers_as_before(tmp_path: Path, name: str) -> None:
    want = ca.expected(name)
    db = ca.load(name, tmp_path / "before.db")
    got = ca.jsonable(ca.everything(db, tmp_path / "feeds"))
    _same(got, want)


@pytest.mark.parametrize("name", ca.MAPS)
def test_new_database_answers_as_before(tmp_path: Path, name: str) -> None:
    want = ca.expected(name)
    db = ca.build(name, tmp_path)
    got = ca.jsonable(ca.everything(db, tmp_path / "feeds"))
    for part in (got, want):
        part["answers"]["stats"].pop("last_ingest_source")  # the folder the pages were read from
    _same(got, want)
