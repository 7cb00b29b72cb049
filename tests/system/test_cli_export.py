"""`mapwatch export citers`: the citers of a paper, a team or a person as BibTeX, CSV or RIS on
standard output, read back with bibtexparser, csv and rispy; its exit statuses."""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path

import bibtexparser
import pytest
import rispy

from mapwatch.cli import main
from mapwatch.store.database.db import open_db
from mapwatch.store.database.ingest import ingest_paths
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.subscriptions import teams
from tests.author_helpers import OTHER, SELF, SURVEY, WANG, store_authors

ROOT = Path(__file__).resolve().parents[2]
TECH = "2507.04136"  # the other seed
NEW_SINCE = "2026-11-05"  # between the two ingests


@pytest.fixture
def export_db(db_path: Path, make_older_seeds, clock) -> Path:
    """The seeds as they were on 1 Nov 2026 (their last 2 citers not yet listed), then as they are
    on 11 Nov; the authors of author_helpers; team "Reading group" in servers 1 (Wang) and 2 (the
    other seed), team "Solo" in server 1 (the survey)."""
    db = open_db(db_path)
    ingest_paths(db, [make_older_seeds(2)], clock=clock)
    clock.advance(days=10)
    ingest_paths(db, [SEEDS_DIR], clock=clock)
    store_authors(db, clock())
    one, _ = teams.ensure_team(db, 1, "Reading group", 7, clock())
    teams.add_member(db, one, "author", WANG.author_id or "", WANG.name, 7, clock())
    two, _ = teams.ensure_team(db, 2, "Reading group", 8, clock())
    teams.add_member(db, two, "paper", TECH, "Tech", 8, clock())
    solo, _ = teams.ensure_team(db, 1, "Solo", 7, clock())
    teams.add_member(db, solo, "paper", SURVEY, "Survey", 7, clock())
    db.close()
    return db_path


def citers(db_path: Path, *cited: str, since: str = "") -> set[str]:
    db = open_db(db_path)
    marks = ",".join("?" * len(cited))
    found = {r for (r,) in db.conn.execute(f"SELECT DISTINCT citing_id FROM citations WHERE cited_id IN ({marks})"
                                            " AND first_seen >= ?", [*cited, since])}
    db.close()
    return found


def mapwatch_export(db_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real command, as a user runs it."""
    return subprocess.run([sys.executable, "-m", "mapwatch", "export", "citers", *args, "--db", str(db_path)],
                          capture_output=True, text=True, encoding="utf-8", timeout=60, cwd=ROOT)


def export(capsys: pytest.CaptureFixture[str], db_path: Path, *args: str) -> tuple[int, str, str]:
    """The same command in this process (faster): exit status, standard output and error."""
    try:
        code = main(["export", "citers", *args, "--db", str(db_path)])
    except SystemExit as e:  # argparse's usage errors
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


def csv_ids(text: str) -> list[str]:
    return [r["arxiv_id"] for r in csv.DictReader(io.StringIO(text, newline=""))]


def test_each_format_parses_with_one_record_per_citer(export_db: Path) -> None:
    expected = citers(export_db, SURVEY)
    assert len(expected) > 20 and {SELF, OTHER} <= expected

    p = mapwatch_export(export_db, SURVEY, "--format", "bibtex")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    library = bibtexparser.parse_string(p.stdout)
    assert library.failed_blocks == [] and len(library.entries) == len(expected)
    assert len({e.key for e in library.entries}) == len(expected)  # unique keys
    by_id = {e.fields_dict["eprint"].value: e.fields_dict for e in library.entries}
    assert set(by_id) == expected
    assert all(f["archivePrefix"].value == "arXiv" and f["url"].value.startswith("https://arxiv.org/abs/")
               and f["title"].value and f["mapwatch-provenance"].value == "map" for f in by_id.values())
    assert by_id[SELF]["mapwatch-self-citation"].value == "true"
    assert by_id[SELF]["author"].value == "Guibin Zhang and Shuhe Wang"
    assert "self-citation" in by_id[SELF]["note"].value
    assert by_id[OTHER]["mapwatch-self-citation"].value == "false"
    assert by_id[OTHER]["mapwatch-first-seen"].value.startswith("2026-11-")

    p = mapwatch_export(export_db, SURVEY, "--format", "csv")
    assert p.returncode == 0, p.stderr
    rows = {r["arxiv_id"]: r for r in csv.DictReader(io.StringIO(p.stdout, newline=""))}
    assert len(rows) == len(csv_ids(p.stdout)) == len(expected) and set(rows) == expected
    assert rows[SELF]["self_citation"] == "true" and rows[OTHER]["self_citation"] == "false"
    assert rows[SELF]["authors"] == "Guibin Zhang; Shuhe Wang" and rows[SELF]["cites"] == SURVEY
    assert all(r["provenance"] == "map" and r["first_seen"] and r["title"] for r in rows.values())

    p = mapwatch_export(export_db, SURVEY, "--format", "ris")
    assert p.returncode == 0, p.stderr
    refs = rispy.loads(p.stdout)
    assert len(refs) == len(expected)
    by_an = {r["accession_number"]: r for r in refs}
    assert set(by_an) == {f"arXiv:{c}" for c in expected}
    assert "mapwatch-self-citation: true" in by_an[f"arXiv:{SELF}"]["notes"]
    assert by_an[f"arXiv:{SELF}"]["keywords"] == ["self-citation"]
    assert "mapwatch-self-citation: false" in by_an[f"arXiv:{OTHER}"]["notes"]
    assert all(r["title"] and r["urls"] for r in refs)


def test_an_unknown_paper_is_one_line_and_exit_1(export_db: Path) -> None:
    p = mapwatch_export(export_db, "9999.99999", "--format", "bibtex")
    assert p.returncode == 1 and p.stdout == ""
    assert p.stderr.count("\n") == 1 and "9999.99999" in p.stderr, p.stderr


def test_since_keeps_the_citations_first_seen_from_that_day(export_db: Path, capsys) -> None:
    newer = citers(export_db, SURVEY, since=NEW_SINCE)
    assert 0 < len(newer) < len(citers(export_db, SURVEY))
    code, out, _ = export(capsys, export_db, SURVEY, "--format", "csv", "--since", NEW_SINCE)
    assert code == 0 and set(csv_ids(out)) == newer and len(csv_ids(out)) == len(newer)
    rows = list(csv.DictReader(io.StringIO(out, newline="")))
    assert all(r["first_seen"] >= NEW_SINCE for r in rows)
    code, out, _ = export(capsys, export_db, SURVEY, "--format", "csv", "--since", "2026-11-01")
    assert code == 0 and set(csv_ids(out)) == citers(export_db, SURVEY)
    code, out, _ = export(capsys, export_db, SURVEY, "--format", "bibtex", "--since", "2027-01-01")
    assert code == 0 and out == ""  # nothing since: an empty file


@pytest.mark.parametrize("args, says", [
    ((), "give PAPER, or --team NAME, or --author ID"),
    ((SURVEY, "--team", "solo"), "give PAPER, or --team NAME, or --author ID"),
    (("--team", "solo", "--author", "A5023888391"), "not allowed with argument"),
    ((SURVEY, "--guild", "1"), "--guild goes with --team"),
    ((SURVEY, "--since", "2026-1-5"), "argument --since: must be a date as YYYY-MM-DD"),
    ((SURVEY, "--format", "bib"), "invalid choice"),
])
def test_usage_errors_exit_2(export_db: Path, capsys, args: tuple[str, ...], says: str) -> None:
    full = [*args] if "--format" in args else [*args, "--format", "csv"]
    code, out, err = export(capsys, export_db, *full)
    assert code == 2 and out == "" and says in err and err.startswith("usage: mapwatch export citers"), err


def test_a_team_or_a_person_exports_the_citers_of_all_their_papers(export_db: Path, capsys) -> None:
    code, out, _ = export(capsys, export_db, "--team", "solo", "--format", "csv")
    assert code == 0 and set(csv_ids(out)) == citers(export_db, SURVEY)
    # the slug "reading-group" is a team in two servers: which one is for --guild to say
    code, out, err = export(capsys, export_db, "--team", "reading-group", "--format", "csv")
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "2 servers" in err and "(server ids 1, 2)" in err and "--guild ID" in err, err
    code, out, _ = export(capsys, export_db, "--team", "Reading group", "--guild", "2", "--format", "csv")
    assert code == 0 and set(csv_ids(out)) == citers(export_db, TECH)
    code, out, err = export(capsys, export_db, "--team", "nobody", "--format", "csv")
    assert code == 1 and out == "" and err.count("\n") == 1 and "no team 'nobody'" in err
    # a person: their papers are the survey and the self-citing paper (Shuhe Wang wrote both)
    for who in (WANG.author_id or "", WANG.orcid or "", "Shuhe Wang"):
        code, out, _ = export(capsys, export_db, "--author", who, "--format", "csv")
        rows = {r["arxiv_id"]: r for r in csv.DictReader(io.StringIO(out, newline=""))}
        assert code == 0 and set(rows) == citers(export_db, SURVEY, SELF), who
    assert rows[SELF]["self_citation"] == "true" and rows[SELF]["cites"] == SURVEY
    code, out, err = export(capsys, export_db, "--author", "Nobody Known", "--format", "csv")
    assert code == 1 and out == "" and err.count("\n") == 1 and "Nobody Known" in err
