"""Citations of README and docs headings in code and docs point at headings that exist (issue 31, item 6).

Forms found: `README, "Heading"` (or without the comma), `README: Section, "Heading"`, `README: Section` and
`README, Section` (a capitalised word), `docs/page.md`, `docs/page.md#anchor`, `docs/page.md, "Heading"`; the
parts, and a heading's words, may be split over lines and `#` comment prefixes. A cited heading is
the heading's text without its inline-code backticks and double quotes (it is itself written in double
quotes): `## What "new" means` is cited as "What new means". An `#anchor` is one of the page's heading
anchors as MkDocs makes them (markdown.extensions.toc.slugify). The canonical form is
`(docs/page.md, "Heading")`, or `(README, "Heading")` for a heading of the README (docs/development.md).
This file is not checked: its examples are broken on purpose.
"""

import pathlib
import re
import unicodedata

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
FOLDERS = ("store", "feeds", "bot", "mapwatch", "tests", "bench", "docs")
_GAP = r"(?:\s|#)*"
# A quoted heading, whose words may go on to one more line (not to a string literal that starts there).
_HEADING = r'"(?P<{}>[^"\n]+(?:\n[ \t#]*[^"\s#][^"\n]*)?)"'
CITATION = re.compile(
    r"README(?::" + _GAP + r"(?P<section>[A-Z][\w ]*?))?,?" + _GAP + _HEADING.format("heading")
    + r"|README[:,]" + _GAP + r"(?P<bare>[A-Z]\w*)"
    + r"|(?P<doc>docs/[\w-]+\.md)(?:#(?P<anchor>[\w-]+))?(?:," + _GAP + _HEADING.format("doc_heading") + ")?"
)


def headings(path: pathlib.Path) -> set[str]:
    """The markdown `#` headings of a file (not those in fenced code), as cited: without the hashes,
    backticks and double quotes."""
    found, fenced = set(), False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6} ", line):
            found.add(re.sub(r"\s+#*\s*$", "", line.lstrip("#").strip()).replace("`", "").replace('"', ""))
    return found


def slugify(heading: str) -> str:
    """A heading's anchor as MkDocs' toc extension makes it (markdown.extensions.toc.slugify with "-")."""
    value = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode("ascii")
    return re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", value).strip().lower())


def broken_citations(text: str, root: pathlib.Path = ROOT) -> list[str]:
    """The citations in text whose file or heading does not exist under root."""
    broken = []
    for match in CITATION.finditer(text):
        if match["doc"]:
            target, heading = match["doc"], match["doc_heading"]
        else:
            target, heading = "README.md", match["heading"] or match["bare"]
        if heading is not None:  # a heading split over lines, its `#` comment prefixes left out
            heading = re.sub(r"\s*\n[\s#]*", " ", heading)
        path = root / target
        if (
            not path.exists()
            or (heading is not None and heading not in headings(path))
            or (match["anchor"] is not None and match["anchor"] not in {slugify(h) for h in headings(path)})
        ):
            broken.append(" ".join(match.group(0).replace("#", " ").split()))
    return broken


def cited_files() -> list[pathlib.Path]:
    files = [ROOT / "README.md"]
    for folder in FOLDERS:
        files += [
            p
            for p in (ROOT / folder).rglob("*")
            if p.suffix in (".py", ".md") and p.is_file() and ".venv" not in p.parts
        ]
    return [p for p in files if p != pathlib.Path(__file__).resolve()]


def test_a_made_up_citation_is_reported() -> None:
    text = 'see (README, "No such heading") and (docs/nowhere.md, "Nothing")'
    assert broken_citations(text) == ['README, "No such heading"', 'docs/nowhere.md, "Nothing"']


def test_a_citation_split_over_lines_or_naming_only_a_section_is_checked() -> None:
    text = '(README, "A short\n    # tour") (README: Feeds) (README, Alerts) (README "Usage") (README, then)'
    assert broken_citations(text) == ["README: Feeds", "README, Alerts", 'README "Usage"']


def test_a_heading_is_cited_without_its_quotes_and_backticks() -> None:
    text = '(docs/feeds.md, "What new means") (docs/commands.md, "mapwatch ingest") (bot.md)'
    text = text.replace("(bot.md)", '(docs/bot.md, "Papers in this message")')
    assert broken_citations(text) == []
    assert broken_citations('(docs/feeds.md, "What "new" means")') != []


def test_an_anchor_is_checked_against_the_page_s_heading_anchors() -> None:
    text = "docs/feeds.md#what-new-means docs/commands.md#mapwatch-ingest docs/feeds.md#what-old-means"
    assert broken_citations(text) == ["docs/feeds.md what-old-means"]


def test_the_anchors_are_those_mkdocs_makes() -> None:
    toc = pytest.importorskip("markdown.extensions.toc")
    for heading in headings(ROOT / "docs" / "feeds.md") | headings(ROOT / "docs" / "bot.md") | {"Žlutý kůň — 2.0"}:
        assert slugify(heading) == toc.slugify(heading, "-")


def test_every_citation_points_at_an_existing_heading() -> None:
    broken = {
        f"{path.relative_to(ROOT)}: {citation}"
        for path in cited_files()
        for citation in broken_citations(path.read_text(encoding="utf-8"))
    }
    assert not broken, "\n".join(sorted(broken))
