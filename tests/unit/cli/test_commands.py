"""The command line in-process (mapwatch/cli): `main` as a user calls it, on a real database.
`mapwatch refresh` takes the tick's steps (the store's refresh, then the directions' ranks),
and an error's class chooses the exit status, with one line on stderr and no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapwatch.cli import main
from mapwatch.store.database.db import open_db
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.questions import graph


def test_refresh_ranks_the_directions_as_a_tick_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db_path = tmp_path / "m.db"
    code = main(["refresh", "--db", str(db_path), "--source", str(SEEDS_DIR), "--out", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    db = open_db(db_path)
    try:
        ranked = graph.direction_ranks(db, "lr/reinforcement-learning-for-reasoning")
        assert [p.paper.id for p in ranked.papers] == ["2412.10400", "2507.04136"]
    finally:
        db.close()


@pytest.mark.parametrize(("argv", "status", "said"), [
    (["export", "citers", "2412.99999", "--format", "csv"], 1, "2412.99999"),  # a paper the map lacks: a failure
    (["refresh", "--budget", "0", "--source", str(SEEDS_DIR), "--out", "out"], 2, "--budget must be"),  # usage
])
def test_an_errors_class_chooses_its_exit_status(seeded_path: Path, capsys: pytest.CaptureFixture[str],
                                                  argv: list[str], status: int, said: str) -> None:
    code = main([*argv, "--db", str(seeded_path)])
    err = capsys.readouterr().err
    assert code == status, err
    assert said in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
