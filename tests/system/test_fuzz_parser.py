"""Property tests for the page parser (hypothesis).

1. Round trip: a generated, canonical `MapPage` -> `format_page` -> `parse_page` is the same
   model. The strategies cover the variations of (docs/design.md, "1. What a map page may look like"): titles
   with brackets,
   parentheses, colons, LaTeX, markdown, non-ASCII; singular counts; thousands separators;
   empty and missing sections; old-style ids and versioned URLs; partial lists.
2. Mutation: pages derived from the seeds and golden pages by byte flips, truncations, line
   deletions and duplications, inserted CRLF/BOM/NUL/control characters and random unicode
   never raise anything but `ParseError`, whose line lies within the page and whose reason
   is not empty.

CI runs a bounded number of examples; the long form is `python -m pytest -m slow
tests/system/test_fuzz_parser.py` with `FUZZ_EXAMPLES` (default 20000) examples per test.
"""

from __future__ import annotations

import os
import re
from datetime import date
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from mapwatch.store.errors import ParseError
from mapwatch.store.pages.format import format_page
from mapwatch.store.pages.model import ListedPaper, MapPage, PaperList, Placement
from mapwatch.store.pages.page_dates import ARXIV_START
from mapwatch.store.pages.parse import parse_page
from tests.conftest import DATA, SEED_FILES

HOST = "https://mlsanity.com"
SLOW_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "20000"))


def _settings(n: int, *, derandomize: bool) -> settings:
    return settings(max_examples=n, deadline=None, derandomize=derandomize,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# CI: fixed examples (derandomized), about 3,300 in all, a few seconds per test.
ci_round_trip = _settings(300, derandomize=True)
ci = _settings(1500, derandomize=True)
slow = _settings(SLOW_EXAMPLES, derandomize=False)

# ---------------------------------------------------------------------------------------
# Strategies for canonical pages
# ---------------------------------------------------------------------------------------

new_id = st.from_regex(r"\A[0-9]{4}\.[0-9]{4,5}\Z")
old_id = st.builds(
    lambda arch, sub, num: f"{arch}{sub}/{num}",
    st.sampled_from(["hep-th", "hep-ph", "math", "cs", "cond-mat", "astro-ph", "q-bio", "gr-qc"]),
    st.sampled_from(["", ".GT", ".AG", ".LG", ".CL"]),
    st.from_regex(r"\A[0-9]{7}\Z"),
)
paper_id = st.one_of(new_id, old_id)
version = st.one_of(st.just(""), st.integers(1, 12).map(lambda v: f"v{v}"))

# Pieces the map's titles really contain, plus arbitrary printable unicode.
TOKENS = [
    "Attention", "is", "all", "you", "need", "LLMs", "RLHF", "[revisited]", "(part 2)", "[", "]", "(", ")",
    ":", ": A Survey", r"$\mathcal{N}=4$", r"$O(n \log n)$", r"\alpha", "x^2", "Über", "naïve", "café",
    "–", "—", "“quotes”", "日本語", "Ελληνικά", "🙂", "&", "<b>bold</b>", "@everyone", "@here", "*emph*",
    "_under_", "`code`", "#", "##", "- ", "/", " / ", "v2", "1,204", "2025", "\u00a0", "\u200b", "'", '"',
    "](https://evil.example/)", "||spoiler||", "> quote", "~~strike~~",
]
_free = st.text(st.characters(exclude_categories=("Cs", "Cc")), min_size=1, max_size=12)
_piece = st.one_of(st.sampled_from(TOKENS), _free)


def _canonical_text(parts: list[str]) -> str:
    """What a one-line field of a page can be: no line breaks, no edge whitespace."""
    return re.sub(r"[\r\n]", " ", " ".join(parts)).strip()


def one_line(min_parts: int = 1, max_parts: int = 8, forbid: tuple[str, ...] = ()) -> st.SearchStrategy[str]:
    return (st.lists(_piece, min_size=min_parts, max_size=max_parts).map(_canonical_text)
            .filter(lambda s: bool(s) and not any(f in s for f in forbid)))


# A title's markdown escapes (`\[`, `\(`, ...) are undone by the parser; a backslash
# before one of those characters is not something a page can carry (see RELIABILITY.md).
_ESCAPABLE = re.compile(r"\\[\\\[\]()*_`]")
title_text = one_line().filter(lambda s: not _ESCAPABLE.search(s))
# "Placed in <direction>, one of K directions in <area>": neither part may contain the
# sentence's own connective; a breadcrumb part may not contain the link's opening " / [".
fact_text = one_line(max_parts=4, forbid=(", one of ", " / ["))
crumb_part = one_line(max_parts=3, forbid=(" / [",)).filter(lambda s: not _ESCAPABLE.search(s))
count = st.one_of(st.integers(0, 3), st.integers(0, 5_000_000))
# The dates a page may claim (store/pages/page_dates.py): from arXiv's start to a day before any test run.
dates = st.dates(min_value=ARXIV_START, max_value=date(2026, 11, 30))


@st.composite
def listed_papers(draw: st.DrawFn, max_items: int = 6) -> PaperList:
    n = draw(st.integers(0, max_items))
    items = tuple(
        ListedPaper(id=pid, title=draw(title_text), year=draw(st.one_of(st.none(), st.integers(1000, 9999))),
                    position=i + 1, url=f"{HOST}/paper/{pid}{draw(version)}/")
        for i, pid in enumerate(draw(st.lists(paper_id, min_size=n, max_size=n)))
    )
    total = n + draw(st.one_of(st.just(0), count))
    return PaperList(shown=n, total=total, items=items)


@st.composite
def placement_list(draw: st.DrawFn, area: str | None) -> tuple[Placement, ...]:
    out: list[Placement] = []
    for i in range(draw(st.integers(0, 3))):
        # The parser takes a placement's area from the page's "Placed in ... in <area>" fact
        # when the breadcrumb starts with it, else from the breadcrumb's first part; a
        # placement with no breadcrumb inherits the page's area only in first position.
        own_area = draw(st.one_of(st.just(area), crumb_part) if area else crumb_part)
        extra = draw(st.lists(crumb_part, max_size=2))
        name = draw(crumb_part)
        key = draw(st.from_regex(r"\A[a-z]{1,8}\Z"))
        slug_tail = draw(st.from_regex(r"\A[a-z0-9][a-z0-9-]{0,30}\Z"))
        slug = f"{key}/{slug_tail}"
        if draw(st.booleans()):  # no breadcrumb, only the linked direction
            crumb_area, breadcrumb = (area if i == 0 and area else ""), name
        else:
            crumb = " / ".join([own_area, *extra])
            starts_with_area = bool(area) and (crumb == area or crumb.startswith(f"{area} / "))
            crumb_area = area if starts_with_area and area else crumb.split(" / ")[0]
            breadcrumb = f"{crumb} / {name}"
        out.append(Placement(breadcrumb=breadcrumb, area=crumb_area, direction=name, slug=slug,
                             url=f"{HOST}/{slug}/"))
    return tuple(out)


abstracts = st.one_of(
    st.none(),
    st.just(""),
    st.lists(one_line(max_parts=20).filter(lambda s: not s.startswith("## ")), min_size=1, max_size=3)
    .map("\n\n".join),
)


@st.composite
def map_pages(draw: st.DrawFn) -> MapPage:
    pid = draw(paper_id)
    cited_by = draw(st.one_of(st.none(), count))
    placed = draw(st.booleans())
    direction, direction_count, area = (
        (draw(fact_text), draw(count), draw(fact_text)) if placed else (None, None, None))
    refs = draw(st.one_of(st.none(), st.tuples(count, count).map(sorted)))
    builds_on = draw(st.one_of(st.none(), listed_papers()))
    built_on_by = draw(st.one_of(st.none(), listed_papers()))
    abstract = draw(abstracts)
    if builds_on is None and built_on_by is None and abstract is None:
        abstract = ""  # a page with neither lists nor abstract is a truncated page
    return MapPage(
        id=pid,
        title=draw(title_text),
        arxiv_url=f"https://arxiv.org/abs/{pid}{draw(version)}",
        map_url=draw(st.one_of(st.none(), version.map(lambda v: f"{HOST}/paper/{pid}{v}/"))),
        cited_by=cited_by,
        data_through=draw(st.one_of(st.none(), dates)) if cited_by is not None else None,
        direction=direction,
        direction_count=direction_count,
        area=area,
        refs_in_map=refs[0] if refs else None,
        refs_total=refs[1] if refs else None,
        first_posted=draw(st.one_of(st.none(), dates)),
        placements=draw(placement_list(area)),
        builds_on=builds_on,
        built_on_by=built_on_by,
        abstract=abstract,
    )


def check_round_trip(page: MapPage) -> None:
    text = format_page(page)
    assert parse_page(text.encode("utf-8")) == page
    assert parse_page(text) == page  # str input too
    assert parse_page(("\ufeff" + text.replace("\n", "\r\n")).encode("utf-8")) == page  # BOM + CRLF


@ci_round_trip
@given(map_pages())
def test_generated_pages_round_trip(page: MapPage) -> None:
    check_round_trip(page)


@pytest.mark.slow
@slow
@given(map_pages())
def test_generated_pages_round_trip_long(page: MapPage) -> None:
    check_round_trip(page)


# ---------------------------------------------------------------------------------------
# Mutations of real pages
# ---------------------------------------------------------------------------------------

BASES = [p.read_bytes() for p in [*SEED_FILES, *sorted((DATA / "pages").glob("*.txt"))]]
INSERTS = [b"\r\n", b"\r", b"\n", b"\xef\xbb\xbf", b"\x00", b"\x1b[31m", b"\x0b", b"\x0c", b"\x1c", b"\x7f",
           b"\xc2\x85", b"\xe2\x80\xa8", b"\xe3\x80\x80", b"\xff", b"\xc3", b"## ", b"# ", b"- ", b"[", b"](",
           b")", b" (2020)", b"\\", b"<html>", b"99999999999999999999999", b"1" * 5000, b"/paper/", b" / "]


def _lines_in(data: bytes) -> int:
    return len(re.split(rb"\r\n|\r|\n", data))


@st.composite
def mutated_pages(draw: st.DrawFn) -> bytes:
    data = bytearray(draw(st.sampled_from(BASES)))
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["flip", "truncate", "del_line", "dup_line", "insert", "unicode", "swap_lines"]))
        pos = draw(st.integers(0, max(len(data) - 1, 0)))
        if op == "flip" and data:
            data[pos] ^= 1 << draw(st.integers(0, 7))
        elif op == "truncate":
            del data[pos:]
        elif op in ("del_line", "dup_line", "swap_lines"):
            lines = bytes(data).split(b"\n")
            i = draw(st.integers(0, len(lines) - 1))
            j = draw(st.integers(0, len(lines) - 1))
            if op == "del_line":
                del lines[i]
            elif op == "dup_line":
                lines.insert(i, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            data = bytearray(b"\n".join(lines))
        elif op == "insert":
            data[pos:pos] = draw(st.sampled_from(INSERTS))
        elif op == "unicode":
            data[pos:pos] = draw(st.text(max_size=8)).encode("utf-8", "surrogatepass")
    return bytes(data)


def check_only_parse_errors(data: bytes) -> None:
    try:
        page = parse_page(data)
    except ParseError as e:
        assert e.reason.strip(), "a ParseError needs a reason"
        assert 0 <= e.line <= _lines_in(data), f"line {e.line} outside a page of {_lines_in(data)} lines"
        return
    assert isinstance(page, MapPage) and page.id and page.title


# Findings of this fuzzer, kept as explicit examples (see tests/RELIABILITY.md).
FINDINGS = [
    "\ufeff".encode(),                        # BOM only: IndexError
    "\u3000\n\x1c\n".encode(),                 # unicode whitespace only: IndexError
    b"# T\narXiv: https://arxiv.org/abs/2412.10400\n## Key facts\n- Cited by " + b"1" * 5000
    + b" papers in the map.\n## Abstract\nx\n",  # over 4300 digits: ValueError
    b"# T\narXiv: https://arxiv.org/abs/2412.10400\n## Placed in\n- A / [B](https://[mlsanity.com/a/b/)\n"
    b"## Abstract\nx\n",  # unbalanced IPv6 bracket in a direction link: ValueError from urlparse
]


@ci
@example(FINDINGS[0])
@example(FINDINGS[1])
@example(FINDINGS[2])
@example(FINDINGS[3])
@given(mutated_pages())
def test_mutated_pages_raise_only_parse_error(data: bytes) -> None:
    check_only_parse_errors(data)


@ci
@given(st.binary(max_size=400) | st.text(max_size=200).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_arbitrary_bytes_raise_only_parse_error(data: bytes) -> None:
    check_only_parse_errors(data)


@pytest.mark.slow
@slow
@given(mutated_pages())
def test_mutated_pages_raise_only_parse_error_long(data: bytes) -> None:
    check_only_parse_errors(data)


@pytest.mark.slow
@slow
@given(st.binary(max_size=4000) | st.text(max_size=2000).map(lambda s: s.encode("utf-8", "surrogatepass")))
def test_arbitrary_bytes_raise_only_parse_error_long(data: bytes) -> None:
    check_only_parse_errors(data)


@pytest.mark.parametrize("data", FINDINGS,
                         ids=["bom_only", "unicode_whitespace_only", "5000_digit_count", "ipv6_bracket_in_link"])
def test_fuzz_findings_are_parse_errors(data: bytes) -> None:
    with pytest.raises(ParseError) as err:
        parse_page(data)
    assert err.value.reason and 0 <= err.value.line <= _lines_in(data)


def test_counts_beyond_sqlite_integers_are_rejected() -> None:
    """A stated count SQLite cannot store would abort the whole ingest batch in save_pages
    (OverflowError); the parser rejects the page instead, naming the line."""
    seed = Path(SEED_FILES[0]).read_text(encoding="utf-8")
    text = seed.replace("Cited by 71 papers", "Cited by " + "9" * 25 + " papers")
    with pytest.raises(ParseError) as err:
        parse_page(text)
    assert err.value.line == text.splitlines().index(next(s for s in text.splitlines() if "9" * 25 in s)) + 1
