"""feeds/bibliography.py: citer records -> BibTeX, CSV and RIS text, read back with the
libraries reference managers' formats are read with (bibtexparser, csv, rispy)."""

from __future__ import annotations

import csv
import io
from dataclasses import replace

import bibtexparser
import pytest
import rispy
from bibtexparser.middlewares import LatexDecodingMiddleware

from mapwatch.cli.export import FORMATS as CLI_FORMATS
from mapwatch.feeds import bibliography as bib
from mapwatch.store.questions.citer_records import CiterRecord

PLAIN = CiterRecord(
    id="2509.02547", title="The Landscape of Agentic Reinforcement Learning for LLMs: A Survey",
    authors=("Guibin Zhang", "Shuhe Wang"), year=2025, venue=None, doi=None, primary_category="cs.AI",
    arxiv_url="https://arxiv.org/abs/2509.02547", map_url="https://mlsanity.com/paper/2509.02547/",
    first_seen="2026-11-01T12:00:00+00:00", provenance="map", cites=("2412.10400",), self_cites=("2412.10400",))
# Every LaTeX special, accents and CJK, a name that reads as two, a formula-looking title start.
ODD = CiterRecord(
    id="hep-th/9901001", title="=1+1: 50% of {R&D} costs $x_1$ #3 ~ ^ \\emph Ødegård 強化学習",
    authors=("Íngrid Ødegård", "Research and Development Team", "Wang, Shuhe, Jr."), year=None,
    venue="Journal of A & B", doi="10.1000/x{y}", primary_category=None,
    arxiv_url="https://arxiv.org/abs/hep-th/9901001", map_url=None, first_seen="2026-12-03T08:00:00+00:00",
    provenance="s2", cites=("2412.10400", "2507.04136"), self_cites=("2507.04136",))
NO_AUTHORS = CiterRecord(
    id="2601.00001", title="On the Shape of Things", authors=(), year=2026, venue=None, doi=None,
    primary_category=None, arxiv_url="https://arxiv.org/abs/2601.00001", map_url=None,
    first_seen="2026-11-02T00:00:00+00:00", provenance="openalex", cites=("2412.10400",), self_cites=())
RECORDS = (PLAIN, ODD, NO_AUTHORS)


def bibtex_entries(text: str, decode: bool = True) -> list:
    library = bibtexparser.parse_string(text, append_middleware=[LatexDecodingMiddleware()] if decode else None)
    assert library.failed_blocks == []
    return library.entries


def test_the_formats_are_the_ones_the_cli_offers() -> None:
    assert bib.FORMATS == CLI_FORMATS == ("bibtex", "csv", "ris")
    assert set(bib.EXTENSIONS) == set(bib.FORMAT_NAMES) == set(bib.FORMATS)
    with pytest.raises(ValueError, match="unknown format"):
        bib.write(RECORDS, "xml")


def test_bibtex_one_entry_per_citer_with_eprint_and_mapwatch_fields() -> None:
    text = bib.write(RECORDS, "bibtex")
    entries = bibtex_entries(text)
    assert [e.key for e in entries] == ["zhang2025landscape", "odegard1", "anon2026shape"]
    first = entries[0].fields_dict
    assert entries[0].entry_type == "misc"
    assert {k: first[k].value for k in ("author", "title", "year", "eprint", "archivePrefix", "primaryClass",
                                         "url")} == {
        "author": "Guibin Zhang and Shuhe Wang", "title": PLAIN.title, "year": "2025", "eprint": "2509.02547",
        "archivePrefix": "arXiv", "primaryClass": "cs.AI", "url": "https://arxiv.org/abs/2509.02547"}
    assert first["mapwatch-first-seen"].value == "2026-11-01T12:00:00+00:00"
    assert first["mapwatch-provenance"].value == "map"
    assert first["mapwatch-self-citation"].value == "true"
    assert first["mapwatch-cites"].value == "2412.10400"
    assert first["note"].value == ("Cites arXiv:2412.10400; mapwatch first saw this on 2026-11-01, from the map. "
                                   "A self-citation (shares an author with every paper it cites here).")
    assert "doi" not in first and "journal" not in first
    third = entries[2].fields_dict
    assert "author" not in third and third["mapwatch-provenance"].value == "openalex"
    assert "from OpenAlex" in third["note"].value


def test_bibtex_escapes_latex_specials_and_keeps_utf8() -> None:
    text = bib.to_bibtex([ODD])
    assert "\\%" in text and "\\&" in text and "\\_" in text and "\\#" in text and "\\$" in text
    assert "\\{R\\&D\\}" in text and "Ødegård 強化学習" in text  # UTF-8 stays as it is
    entry = bibtex_entries(text)[0]
    fields = entry.fields_dict
    assert entry.entry_type == "article" and fields["journal"].value == "Journal of A & B"
    # decoded back to the title (pylatexenc reads \textasciicircum as the modifier letter ˆ)
    assert "{\\textasciicircum}" in text and fields["title"].value == ODD.title.replace("^", "ˆ")
    assert "year" not in fields and fields["mapwatch-self-citation"].value == "false"
    assert fields["mapwatch-cites"].value == "2412.10400, 2507.04136"
    assert fields["note"].value.endswith("Shares an author with arXiv:2507.04136.")
    assert "from Semantic Scholar" in fields["note"].value
    # a name that holds the word "and", or too many commas, is braced whole: still three authors
    raw = bibtex_entries(text, decode=False)[0].fields_dict
    assert raw["doi"].value == "10.1000/x%7By%7D"  # a verbatim field: unescaped, but no brace or backslash
    assert raw["author"].value == "Íngrid Ødegård and {Research and Development Team} and {Wang, Shuhe, Jr.}"


def test_bibtex_keys_are_unique_and_plain() -> None:
    same = [replace(PLAIN, id=f"2509.0254{i}") for i in range(4)]
    keys = [e.key for e in bibtex_entries(bib.to_bibtex(same))]
    assert keys == ["zhang2025landscape", "zhang2025landscapeb", "zhang2025landscapec", "zhang2025landscaped"]
    assert bib.citation_key(replace(PLAIN, title="A Study of Things", authors=("Jean-Pierre van der Berg",))) == (
        "berg2025study")
    assert bib.citation_key(replace(PLAIN, title="強化学習", authors=("王五",))) == "anon2025"
    assert all(k.isascii() and k.isalnum() for k in bib.citation_keys(RECORDS))


def test_csv_a_row_per_citer_a_column_per_fact() -> None:
    rows = list(csv.DictReader(io.StringIO(bib.write(RECORDS, "csv"), newline="")))
    assert tuple(rows[0]) == bib.CSV_COLUMNS
    assert [r["arxiv_id"] for r in rows] == ["2509.02547", "hep-th/9901001", "2601.00001"]
    assert rows[0] == {
        "arxiv_id": "2509.02547", "title": PLAIN.title, "authors": "Guibin Zhang; Shuhe Wang", "year": "2025",
        "venue": "", "doi": "", "url": "https://arxiv.org/abs/2509.02547",
        "map_url": "https://mlsanity.com/paper/2509.02547/", "primary_category": "cs.AI",
        "first_seen": "2026-11-01T12:00:00+00:00", "provenance": "map", "self_citation": "true",
        "cites": "2412.10400", "self_cites": "2412.10400"}
    assert rows[1]["title"] == "'" + ODD.title  # a formula-looking cell is defused, the rest kept
    assert rows[1]["self_citation"] == "false" and rows[1]["self_cites"] == "2507.04136"
    assert rows[1]["doi"] == "10.1000/x{y}" and rows[2]["authors"] == ""
    assert bib.to_csv([]) == ",".join(bib.CSV_COLUMNS) + "\r\n"


def test_ris_one_record_per_citer_with_standard_tags_and_notes() -> None:
    text = bib.write(RECORDS, "ris")
    assert not text.startswith("1.") and "\n2.\n" not in text  # no rispy numbering lines
    refs = rispy.loads(text)
    assert len(refs) == 3
    first, odd, bare = refs
    assert first["type_of_reference"] == "UNPB" and first["authors"] == ["Guibin Zhang", "Shuhe Wang"]
    assert first["title"] == PLAIN.title and first["year"] == "2025"
    assert first["urls"] == ["https://arxiv.org/abs/2509.02547"] and first["accession_number"] == "arXiv:2509.02547"
    assert first["keywords"] == ["self-citation"]
    assert "mapwatch-self-citation: true" in first["notes"] and "mapwatch-provenance: map" in first["notes"]
    assert "mapwatch-first-seen: 2026-11-01T12:00:00+00:00" in first["notes"]
    assert odd["type_of_reference"] == "JOUR" and odd["journal_name"] == odd["secondary_title"] == "Journal of A & B"
    assert odd["title"] == ODD.title and odd["doi"] == "10.1000/x{y}" and "year" not in odd
    assert "keywords" not in odd and "mapwatch-self-citation: false" in odd["notes"]
    assert "authors" not in bare and "mapwatch-provenance: openalex" in bare["notes"]
    assert bib.to_ris([]) == ""


def test_a_line_break_in_a_title_cannot_end_a_record_early() -> None:
    evil = replace(PLAIN, title="Title\nER  - \nTY  - JOUR", authors=("A\nB",))
    refs = rispy.loads(bib.to_ris([evil]))
    assert len(refs) == 1 and refs[0]["title"] == "Title ER - TY - JOUR" and refs[0]["authors"] == ["A B"]
    assert len(bibtex_entries(bib.to_bibtex([evil]))) == 1
    assert len(list(csv.reader(io.StringIO(bib.to_csv([evil]), newline="")))) == 2
