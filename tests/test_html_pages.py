"""HTML map pages: the same `MapPage`s and rows as the pages' text, from the site's HTML
(tests/mapsite.py renders the seeds with a Markdown library inside two site templates)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from store.ingest import ingest_paths
from store.model import MapPage
from store.parse import parse_document, parse_page
from tests.conftest import FakeClock
from tests.mapsite import DECOY_IDS, HOST, render_page, seed_texts
from tests.seedfacts import assert_seed_facts

TEMPLATES = ("a", "b")
DATA_TABLES = ("papers", "citations", "directions", "placements")


def fields(page: MapPage) -> dict[str, object]:
    return {f.name: getattr(page, f.name) for f in dataclasses.fields(page)}


def ids_in(page: MapPage) -> set[str]:
    out = {page.id}
    for lst in (page.builds_on, page.built_on_by):
        out |= {item.id for item in (lst.items if lst else ())}
    return out


@pytest.mark.parametrize("template", TEMPLATES)
@pytest.mark.parametrize("paper_id", sorted(seed_texts()))
def test_html_page_is_the_same_page_as_its_text(paper_id: str, template: str) -> None:
    text = seed_texts()[paper_id]
    url = f"{HOST}/paper/{paper_id}/"
    from_html = parse_document(render_page(text, template).encode(), url=url)
    assert fields(from_html) == fields(parse_page(text))
    assert not ids_in(from_html) & DECOY_IDS


def test_seed_facts_hold_for_a_folder_of_html_pages(db, tmp_path: Path, clock: FakeClock) -> None:
    folder = tmp_path / "site"
    folder.mkdir()
    for i, (pid, text) in enumerate(sorted(seed_texts().items())):
        (folder / f"{pid}.html").write_text(render_page(text, TEMPLATES[i % 2]), encoding="utf-8")
    report = ingest_paths(db, [folder], clock=clock)
    assert (report.pages_read, report.stored, report.rejected) == (2, 2, [])
    assert_seed_facts(db)
