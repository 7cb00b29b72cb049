"""A page is the page of one paper (issue 21, items 6 and 8; DESIGN section 9, "identity" and
"links"): the id it was fetched for, the id of its arXiv link and the id of its own `HTML:` link
agree, or it is rejected with its reason and nothing is stored; an arXiv link that names no
paper is not stored, the paper's arXiv link is derived from its id instead.

Through the real `mapwatch refresh` against a map on loopback, and the real `mapwatch ingest`."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from mapwatch.store.errors import ParseError
from mapwatch.store.ids import arxiv_link_id
from mapwatch.store.pages.files import SEEDS_DIR
from mapwatch.store.pages.parse import parse_page
from tests.sourceserver import serve_map

ROOT = Path(__file__).resolve().parents[2]
SEED = (SEEDS_DIR / "2412.10400.txt").read_text(encoding="utf-8")
OTHER = (SEEDS_DIR / "2507.04136.txt").read_text(encoding="utf-8")
LINKS = "arXiv: https://arxiv.org/abs/2412.10400 · HTML: https://mlsanity.com/paper/2412.10400/"


def mapwatch(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "mapwatch", *map(str, args)], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True,
                          timeout=120)


def with_links(arxiv: str, html: str) -> str:
    assert LINKS in SEED
    return SEED.replace(LINKS, f"arXiv: {arxiv} · HTML: {html}")


def rows(db: Path, sql: str) -> list[tuple]:
    with sqlite3.connect(db) as conn:
        return conn.execute(sql).fetchall()


def test_refresh_rejects_a_page_that_is_another_papers(tmp_path: Path) -> None:
    db = tmp_path / "map.db"
    with serve_map() as srv:
        srv.pages["2412.10400"] = OTHER.encode()  # /paper/2412.10400/ answers with 2507.04136's page
        r = mapwatch("refresh", "--db", db, "--source", srv.base, "--out", tmp_path / "public")
        assert "2412.10400" in srv.ids_requested()
    assert r.returncode == 1, r.stderr
    assert (f"rejected: {srv.base}/paper/2412.10400/: the page is 2507.04136's, fetched for 2412.10400"
            in r.stderr)
    assert "Traceback" not in r.stderr
    assert rows(db, "SELECT id FROM papers WHERE has_page") == []
    assert rows(db, "SELECT count(*) FROM citations") == [(0,)]
    assert rows(db, "SELECT count(*) FROM snapshots") == [(0,)]


def test_refresh_rejects_a_page_whose_links_disagree(tmp_path: Path) -> None:
    db = tmp_path / "map.db"
    with serve_map() as srv:
        # Fetched for 2412.10400 and its arXiv link says so, but its own link names 2507.04136.
        srv.pages["2412.10400"] = with_links("https://arxiv.org/abs/2412.10400",
                                             f"{srv.base}/paper/2507.04136/").encode()
        r = mapwatch("refresh", "--db", db, "--source", srv.base, "--out", tmp_path / "public")
    assert r.returncode == 1, r.stderr
    assert (f"rejected: {srv.base}/paper/2412.10400/:3: the page's links disagree: its arXiv link names "
            "2412.10400, its HTML link names 2507.04136" in r.stderr)
    assert rows(db, "SELECT id FROM papers WHERE has_page") == []
    assert rows(db, "SELECT count(*) FROM snapshots") == [(0,)]


def test_ingest_rejects_a_folder_page_whose_links_disagree(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    bad = folder / "a.txt"
    bad.write_text(with_links("https://arxiv.org/abs/2507.04136", "https://mlsanity.com/paper/2412.10400/"),
                   encoding="utf-8")
    (folder / "b.txt").write_text(OTHER, encoding="utf-8")  # the real 2507.04136: stored as it is
    db = tmp_path / "map.db"
    r = mapwatch("ingest", folder, "--db", db)
    assert r.returncode == 1, r.stderr
    assert (f"rejected: {bad.resolve()}:3: the page's links disagree: its arXiv link names 2507.04136, "
            "its HTML link names 2412.10400") in r.stderr
    assert rows(db, "SELECT id, title FROM papers WHERE has_page") == [
        ("2507.04136", parse_page(OTHER).title)]  # not overwritten by the page of 2412.10400


@pytest.mark.parametrize("link", [
    "https://arxiv.org/abs/../../etc/passwd",
    "https://arxiv.org/abs/2412.10400/../../../etc/passwd",
    "https://evil.example/abs/2412.10400",
    "https://arxiv.org.evil.example/abs/2412.10400",
    "https://arxiv.org/abs/2412.10400?next=https://evil.example/",
    "https://arxiv.org/login/2412.10400",
    "http://user@evil.example#arxiv.org/abs/2412.10400",
])
def test_an_arxiv_link_that_names_no_paper_is_derived_from_the_id(link: str) -> None:
    page = parse_page(with_links(link, "https://mlsanity.com/paper/2412.10400/"))
    assert page.id == "2412.10400"
    assert page.arxiv_url == "https://arxiv.org/abs/2412.10400"


def test_ingest_stores_the_derived_arxiv_link(tmp_path: Path) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    (folder / "a.txt").write_text(with_links("https://arxiv.org/abs/../../etc/passwd",
                                             "https://mlsanity.com/paper/2412.10400/"), encoding="utf-8")
    db = tmp_path / "map.db"
    r = mapwatch("ingest", folder, "--db", db)
    assert r.returncode == 0, r.stderr
    assert rows(db, "SELECT id, arxiv_url FROM papers WHERE has_page") == [
        ("2412.10400", "https://arxiv.org/abs/2412.10400")]


@pytest.mark.parametrize(("link", "paper_id"), [
    ("https://arxiv.org/abs/2412.10400", "2412.10400"),
    ("https://arxiv.org/abs/2412.10400v3", "2412.10400"),
    ("http://www.arxiv.org/pdf/2412.10400v2.pdf", "2412.10400"),
    ("https://export.arxiv.org/abs/2412.10400", "2412.10400"),
    ("https://arxiv.org/abs/hep-th/9901001v1", "hep-th/9901001"),
    ("https://arxiv.org/pdf/math.GT/0309136", "math.GT/0309136"),
])
def test_true_arxiv_links_are_kept(link: str, paper_id: str) -> None:
    assert arxiv_link_id(link) == paper_id
    page = parse_page(with_links(link, f"https://mlsanity.com/paper/{paper_id}/"))
    assert (page.id, page.arxiv_url) == (paper_id, link)


@pytest.mark.parametrize("link", ["https://arxiv.org/abs/../../etc/passwd", "https://arxiv.org/abs/2412.104",
                                  "https://arxiv.org/abs/2412.10400/x", "ftp://arxiv.org/abs/2412.10400"])
def test_not_arxiv_links(link: str) -> None:
    assert arxiv_link_id(link) is None


def test_a_page_with_only_a_bad_arxiv_link_has_no_id() -> None:
    text = SEED.replace(LINKS, "arXiv: https://evil.example/abs/2412.10400")
    with pytest.raises(ParseError, match="no arXiv id") as e:
        parse_page(text)
    assert e.value.line == 3


def test_a_second_arxiv_link_that_names_another_paper_is_rejected() -> None:
    text = SEED.replace(LINKS, LINKS + " · arXiv: https://arxiv.org/abs/2507.04136")
    with pytest.raises(ParseError) as e:
        parse_page(text)
    assert (e.value.line, e.value.reason) == (
        3, "the page's links disagree: it names 2412.10400, another arXiv link names 2507.04136")
    same = SEED.replace(LINKS, LINKS + " · arXiv: https://arxiv.org/abs/2412.10400v2")
    assert parse_page(same).arxiv_url == "https://arxiv.org/abs/2412.10400"  # agrees: the first is kept
