"""The parser: seeds, golden pages for each variation of the format, and rejections."""

from __future__ import annotations

import dataclasses
import json
import os
from datetime import date
from pathlib import Path

import pytest

from mapwatch.store.errors import ParseError
from mapwatch.store.ids import normalize_id
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import MapPage
from mapwatch.store.pages.parse import MAX_PAGE_BYTES, parse_page
from tests.conftest import DATA, SEED_FILES, seed_page

GOLDEN = sorted((DATA / "pages").glob("*.txt"))


def as_json(page: MapPage) -> dict:
    return json.loads(json.dumps(dataclasses.asdict(page), default=str))


def test_seed_2412_10400_every_field() -> None:
    p = seed_page("2412.10400")
    assert p.id == "2412.10400"
    assert p.title == "Reinforcement Learning Enhanced LLMs: A Survey"
    assert p.arxiv_url == "https://arxiv.org/abs/2412.10400"
    assert p.map_url == "https://mlsanity.com/paper/2412.10400/"
    assert (p.cited_by, p.data_through) == (71, date(2026, 10, 14))
    assert (p.direction, p.direction_count, p.area) == ("Reinforcement learning for reasoning", 17, "LLM reasoning")
    assert (p.refs_in_map, p.refs_total, p.first_posted) == (78, 110, date(2024, 12, 5))
    assert [(pl.area, pl.direction, pl.slug) for pl in p.placements] == [
        ("LLM reasoning", "Reinforcement learning for reasoning", "lr/reinforcement-learning-for-reasoning"),
        ("LLM alignment", "Reward modeling and RLHF", "alignment/reward-modeling-and-rlhf"),
    ]
    assert p.placements[1].breadcrumb == "LLM alignment / RLHF / preference optimisation / Reward modeling and RLHF"
    assert p.placements[1].url == "https://mlsanity.com/alignment/reward-modeling-and-rlhf/"
    assert p.builds_on is not None and p.built_on_by is not None
    assert (p.builds_on.shown, p.builds_on.total, len(p.builds_on.items)) == (30, 78, 30)
    assert (p.built_on_by.shown, p.built_on_by.total, len(p.built_on_by.items)) == (30, 71, 30)
    first = p.builds_on.items[0]
    assert (first.id, first.title, first.year, first.position) == (
        "2005.14165", "Language Models are Few-Shot Learners", 2020, 1)
    last = p.built_on_by.items[-1]
    assert (last.id, last.year, last.position) == ("2603.07197", 2026, 30)
    assert p.abstract is not None and p.abstract.startswith("Reinforcement learning (RL) enhanced")
    assert p.abstract.endswith("Reinforcement-Learning-Enhanced-LLMs-A-Survey.")


def test_seed_2507_04136_lists() -> None:
    p = seed_page("2507.04136")
    assert (p.cited_by, p.refs_in_map, p.refs_total, p.first_posted) == (21, 79, 106, date(2025, 7, 5))
    assert p.built_on_by is not None and p.builds_on is not None
    assert (p.built_on_by.shown, p.built_on_by.total, len(p.built_on_by.items)) == (21, 21, 21)
    assert (p.builds_on.shown, p.builds_on.total, len(p.builds_on.items)) == (30, 79, 30)
    assert [it.position for it in p.built_on_by.items] == list(range(1, 22))


@pytest.mark.parametrize("path", GOLDEN, ids=lambda p: p.stem)
def test_golden_pages(path: Path) -> None:
    got = as_json(parse_page(path.read_bytes()))
    expected_file = path.with_suffix(".json")
    if os.environ.get("UPDATE_GOLDEN"):
        expected_file.write_text(json.dumps(got, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert got == json.loads(expected_file.read_text(encoding="utf-8"))


def test_crlf_bom_and_trailing_spaces_parse_like_the_seed() -> None:
    assert parse_page((DATA / "pages" / "crlf_bom_trailing_spaces.txt").read_bytes()) == seed_page("2507.04136")


def test_old_style_ids_versions_and_singulars() -> None:
    p = parse_page((DATA / "pages" / "singular_forms_old_style_ids.txt").read_bytes())
    assert p.id == "hep-th/9901001"
    assert (p.cited_by, p.refs_in_map, p.refs_total, p.direction_count) == (1, 1, 1, 1)
    assert p.builds_on is not None and p.builds_on.items[0].id == "math.GT/0309136"
    assert p.builds_on.items[0].title == (
        "Über die Quantenmechanik: a [bracketed] title (with parens) & colons: yes")
    assert p.built_on_by is not None and p.built_on_by.items[0].id == "2507.04136"
    assert p.title == r"Quantum gravity à la Witten: $\mathcal{N}=4$ [revisited] (part 2)"
    assert p.abstract == ("First paragraph of the abstract, wrapped over two lines.\n\n"
                          "Second paragraph with unicode: naïve café – “quotes”.")


def test_counts_with_thousands_separators_and_partial_lists() -> None:
    p = parse_page((DATA / "pages" / "truncated_lists_nested_breadcrumbs.txt").read_bytes())
    assert p.cited_by == 1204
    assert p.built_on_by is not None and (p.built_on_by.shown, p.built_on_by.total) == (2, 1204)
    assert p.data_through == date(2026, 10, 14) and p.first_posted == date(2026, 1, 5)
    assert p.placements[0].area == "LLM alignment"


def test_empty_and_missing_sections() -> None:
    p = parse_page((DATA / "pages" / "empty_and_missing_sections.txt").read_bytes())
    assert p.placements == () and p.direction is None and p.area is None
    assert p.built_on_by is not None and p.built_on_by.items == () and p.built_on_by.total == 0
    assert p.abstract == ""


REJECTED = {
    "html_document.txt": (1, "HTML"),
    "empty.txt": (0, "empty file"),
    "binary.txt": (0, "binary data"),
    "not_utf8.txt": (8, "not UTF-8"),
    "truncated_mid_list.txt": (57, "truncated"),
    "truncated_before_lists.txt": (15, "ends before its lists"),
    "list_item_not_a_paper_link.txt": (23, "not a paper link"),
    "list_item_links_elsewhere.txt": (23, "not a paper link"),
    "no_title.txt": (1, "no title"),
    "no_arxiv_id.txt": (2, "no arXiv id"),
    "bad_date.txt": (7, "not a date"),
}


def test_every_rejected_sample_is_listed() -> None:
    assert sorted(p.name for p in (DATA / "rejected").glob("*.txt")) == sorted(REJECTED)


@pytest.mark.parametrize(("name", "line", "reason"), [(k, *v) for k, v in REJECTED.items()])
def test_rejected_pages_name_line_and_reason(name: str, line: int, reason: str) -> None:
    with pytest.raises(ParseError) as err:
        parse_page((DATA / "rejected" / name).read_bytes())
    assert err.value.line == line
    assert reason in err.value.reason


def test_oversized_page_is_rejected() -> None:
    data = SEED_FILES[0].read_bytes()
    big = data + b"\n" + b"x" * (MAX_PAGE_BYTES - len(data))
    with pytest.raises(ParseError, match="over 2 MB"):
        parse_page(big)
    assert parse_page(data[: MAX_PAGE_BYTES]).id  # the seed itself is fine


@pytest.mark.parametrize("path", [*SEED_FILES, *GOLDEN], ids=lambda p: p.stem)
def test_format_round_trip(path: Path) -> None:
    page = parse_page(path.read_bytes())
    assert parse_page(format_page(page)) == page


@pytest.mark.parametrize(("text", "expected"), [
    ("2412.10400", "2412.10400"),
    ("2507.04136v2", "2507.04136"),
    ("arXiv:2507.04136", "2507.04136"),
    ("https://arxiv.org/abs/2507.04136v3", "2507.04136"),
    ("https://arxiv.org/pdf/2507.04136.pdf", "2507.04136"),
    ("https://mlsanity.com/paper/2412.10400/", "2412.10400"),
    ("hep-th/9901001", "hep-th/9901001"),
    ("https://mlsanity.com/paper/math.GT/0309136v1/", "math.GT/0309136"),
    ("Attention is all you need", None),
    ("24121.0400", None),
])
def test_normalize_id(text: str, expected: str | None) -> None:
    assert normalize_id(text) == expected


def test_a_date_with_an_enormous_day_is_a_parse_error() -> None:
    text = SEED_FILES[0].read_text(encoding="utf-8")
    bad = text.replace("(data through 14 Oct 2026)", "(data through 9999999999999999999999914 Oct 2026)")
    assert bad != text
    with pytest.raises(ParseError, match="not a date"):
        parse_page(bad)
