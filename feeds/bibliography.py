"""Citer records -> a bibliography file, pure: BibTeX, CSV or RIS text (`mapwatch export citers`,
/export). One record per citing paper: authors, title, year, venue, its arXiv eprint (none for a
citer beyond arXiv, which has its DOI), DOI and
URL, and mapwatch's own facts (when it first saw the citation and where from, whether it is a
self-citation) in a note and in fields or columns of their own.

Each format is written by the library its field keeps, not by hand:

- BibTeX with bibtexparser 2.x (`Library`, `Entry`, `write_string`): its 2.x line is the
  maintained one (1.x only gets fixes) and has stable releases since 2.0.0; its writer
  encloses every value in braces, so a value that is balanced can hold anything. LaTeX's ten
  special characters (# $ % & \\ ^ _ { } ~) are escaped with pylatexenc's own table (the
  encoder bibtexparser uses); every other character stays as it is, in UTF-8, which biber,
  Zotero and JabRef read. URL, DOI and eprint are verbatim fields in biblatex: not escaped.
- RIS with rispy (`dumps`), without its "1." line before each record.
- CSV with the standard library's csv module (RFC 4180: quoted as needed, CRLF line ends).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterable, Sequence
from typing import Any, Literal, get_args

import bibtexparser
import rispy
from bibtexparser.model import Entry, Field
from pylatexenc.latexencode import (
    RULE_DICT,
    UnicodeToLatexConversionRule,
    UnicodeToLatexEncoder,
    get_builtin_uni2latex_dict,
)

from mapwatch.store.ids import is_outside_key
from mapwatch.store.questions.citer_records import CiterRecord
from mapwatch.store.questions.person_names import fold, normalise_name
from mapwatch.store.questions.types import PROVENANCE_NAMES

Format = Literal["bibtex", "csv", "ris"]
FORMATS: tuple[str, ...] = get_args(Format)
EXTENSIONS: dict[str, str] = {"bibtex": "bib", "csv": "csv", "ris": "ris"}
FORMAT_NAMES: dict[str, str] = {"bibtex": "BibTeX", "csv": "CSV", "ris": "RIS"}

CSV_COLUMNS = ("arxiv_id", "title", "authors", "year", "venue", "doi", "url", "map_url", "primary_category",
               "first_seen", "provenance", "self_citation", "cites", "self_cites")


def write(records: Sequence[CiterRecord], fmt: str) -> str:
    """The records as a file of format `fmt` (one of FORMATS)."""
    writers = {"bibtex": to_bibtex, "csv": to_csv, "ris": to_ris}
    if fmt not in writers:
        raise ValueError(f"unknown format {fmt!r}: one of {', '.join(FORMATS)}")
    return writers[fmt](records)


def note(r: CiterRecord) -> str:
    """mapwatch's facts about a citer, as a sentence for a reference manager's note."""
    cited = ", ".join(f"arXiv:{c}" for c in r.cites)
    said = (f"Cites {cited}; mapwatch first saw this on {r.first_seen[:10]}, "
            f"from {PROVENANCE_NAMES.get(r.provenance, r.provenance)}.")
    if r.self_citation:
        said += " A self-citation (shares an author with every paper it cites here)."
    elif r.self_cites:
        said += f" Shares an author with {', '.join(f'arXiv:{c}' for c in r.self_cites)}."
    return said


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- BibTeX ---------------------------------------------------------------------------------

# LaTeX's special characters, escaped as pylatexenc's default table does; the rest is kept.
_SPECIALS = "#$%&\\^_{}~"
_LATEX = UnicodeToLatexEncoder(
    conversion_rules=[UnicodeToLatexConversionRule(RULE_DICT, {
        k: v for k, v in get_builtin_uni2latex_dict().items() if chr(k) in _SPECIALS})],
    unknown_char_policy="keep", unknown_char_warning=False)
_VERBATIM_UNSAFE = {ord("{"): "%7B", ord("}"): "%7D", ord("\\"): "%5C"}  # kept out of a verbatim field
_KEY_WORD = re.compile(r"[a-z0-9]+")
# Words a key skips at the start of a title (as Google Scholar's and Better BibTeX's keys do).
_SKIPPED = frozenset({"a", "an", "the", "on", "of", "in", "for", "to", "and", "with", "from", "towards", "toward"})


def latex(text: str) -> str:
    """Plain text for a BibTeX value: one line, LaTeX's special characters escaped."""
    return str(_LATEX.unicode_to_latex(_one_line(text)))


def _name(author: str) -> str:
    """An author for BibTeX's `and`-separated list: one that would read as several (a word
    "and") or as "Last, First, Jr" parts it is not is braced whole."""
    text = latex(author)
    if re.search(r"\band\b", text, re.I) or text.count(",") > 1:
        return "{" + text + "}"
    return text


def _ascii_words(text: str) -> list[str]:
    return _KEY_WORD.findall(fold(text))


def citation_key(r: CiterRecord) -> str:
    """`lastnameYEARfirstword`: the first author's surname, the year and the title's first word
    that says something, ASCII letters and digits only ("wang2024reinforcement")."""
    surname = "".join(_ascii_words(normalise_name(r.authors[0]).surname)) if r.authors else ""
    words = _ascii_words(r.title)
    first = next((w for w in words if w not in _SKIPPED), words[0] if words else "")
    return f"{surname or 'anon'}{r.year or ''}{first}"


def citation_keys(records: Iterable[CiterRecord]) -> list[str]:
    """Each record's key, unique in the file: a repeated key gets "b", "c", ... (then a number)."""
    taken: set[str] = set()
    out = []
    for r in records:
        base = key = citation_key(r)
        n = 1
        while key in taken:
            n += 1
            key = base + (chr(ord("a") + n - 1) if n <= 26 else str(n))
        taken.add(key)
        out.append(key)
    return out


def _entry(r: CiterRecord, key: str) -> Entry:
    fields: list[tuple[str, str]] = []
    if r.authors:
        fields.append(("author", " and ".join(_name(a) for a in r.authors)))
    fields.append(("title", latex(r.title)))
    if r.year:
        fields.append(("year", str(r.year)))
    if r.venue:
        fields.append(("journal", latex(r.venue)))
    if not is_outside_key(r.id):  # a citer beyond arXiv has its DOI (or OpenAlex's URL) alone
        fields += [("eprint", r.id), ("archivePrefix", "arXiv")]
    if r.primary_category:
        fields.append(("primaryClass", latex(r.primary_category)))
    if r.doi:
        fields.append(("doi", r.doi.translate(_VERBATIM_UNSAFE)))
    fields += [("url", r.arxiv_url.translate(_VERBATIM_UNSAFE)),
               ("note", latex(note(r))),
               ("mapwatch-first-seen", r.first_seen),
               ("mapwatch-provenance", r.provenance),
               ("mapwatch-self-citation", "true" if r.self_citation else "false"),
               ("mapwatch-cites", ", ".join(r.cites))]
    return Entry("article" if r.venue else "misc", key, [Field(k, v) for k, v in fields])


def to_bibtex(records: Sequence[CiterRecord]) -> str:
    """An `@article` (venue known) or `@misc` entry per citer, keys unique."""
    library = bibtexparser.Library([_entry(r, k) for r, k in zip(records, citation_keys(records), strict=True)])
    return str(bibtexparser.write_string(library))


# -- CSV ------------------------------------------------------------------------------------

_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> str:
    """A cell: text a spreadsheet would run as a formula (from an untrusted title or name) is
    prefixed with an apostrophe, as OWASP advises for CSV files."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(_FORMULA_START) else text


def to_csv(records: Sequence[CiterRecord]) -> str:
    """A header row, then a row per citer: CSV_COLUMNS; authors, cites and self_cites joined by "; "."""
    out = io.StringIO()
    w = csv.writer(out)
    w.writerow(CSV_COLUMNS)
    for r in records:
        w.writerow([_cell(v) for v in (
            "" if is_outside_key(r.id) else r.id, _one_line(r.title), "; ".join(_one_line(a) for a in r.authors),
            r.year, r.venue, r.doi,
            r.arxiv_url, r.map_url, r.primary_category, r.first_seen, r.provenance,
            "true" if r.self_citation else "false", "; ".join(r.cites), "; ".join(r.self_cites))])
    return out.getvalue()


# -- RIS ------------------------------------------------------------------------------------

class _RisWriter(rispy.RisWriter):  # type: ignore[misc]  # rispy ships no type hints
    """rispy's writer without the "1." line it puts before each record (not RIS)."""

    def set_header(self, count: int) -> str:
        return ""


def _ris(r: CiterRecord) -> dict[str, Any]:
    ref: dict[str, Any] = {"type_of_reference": "JOUR" if r.venue else "UNPB"}
    if r.authors:
        ref["authors"] = [_one_line(a) for a in r.authors]
    ref["title"] = _one_line(r.title)
    if r.year:
        ref["year"] = str(r.year)
    if r.venue:
        ref["journal_name"] = _one_line(r.venue)
        ref["secondary_title"] = _one_line(r.venue)
    if r.doi:
        ref["doi"] = r.doi
    ref["urls"] = [r.arxiv_url]
    if is_outside_key(r.id):  # a citer beyond arXiv: known from OpenAlex
        ref["name_of_database"] = "OpenAlex"
    else:
        ref["accession_number"] = f"arXiv:{r.id}"
        ref["name_of_database"] = "arXiv"
    if r.self_citation:
        ref["keywords"] = ["self-citation"]
    ref["notes"] = [note(r), f"mapwatch-first-seen: {r.first_seen}", f"mapwatch-provenance: {r.provenance}",
                    f"mapwatch-self-citation: {'true' if r.self_citation else 'false'}"]
    return ref


def to_ris(records: Sequence[CiterRecord]) -> str:
    """A record per citer: TY JOUR (venue known) or UNPB (a preprint), AU, TI, PY, JO and T2,
    DO, UR, AN (arXiv:id), DB, KW self-citation, and N1 notes with mapwatch's facts."""
    if not records:
        return ""
    return str(rispy.dumps([_ris(r) for r in records], implementation=_RisWriter))
