"""Paper identifiers: arXiv ids (recognised in ids and URLs, normalised without version), and
the keys of citers beyond arXiv (docs/enrichment.md, "Citers beyond arXiv"): a work OpenAlex
names that has no arXiv id is keyed by its DOI in lower case (`10.1145/3580305.3599000`), else
by its OpenAlex work id (`W4385567890`). The three shapes never overlap: a new-style arXiv id
has its dot after four digits, an old-style one starts with a lower-case archive."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from mapwatch.store.errors import ParseError

# New style 2412.10400 (4 or 5 digits after the dot), old style hep-th/9901001 or math.GT/0309136.
ID_PATTERN = r"(?:\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})"
ID_RE = re.compile(rf"^(?P<id>{ID_PATTERN})(?:v\d+)?$")
_IN_URL = re.compile(rf"(?:/abs/|/pdf/|/paper/)(?P<id>{ID_PATTERN})(?:v\d+)?(?:\.pdf)?/?(?:[?#].*)?$")


def normalize_id(text: str) -> str | None:
    """The versionless arXiv id in `text` (an id, arXiv URL or map URL), or None."""
    text = text.strip()
    if text.lower().startswith("arxiv:"):
        text = text[6:].strip()
    m = ID_RE.match(text)
    if m:
        return m.group("id")
    m = _IN_URL.search(text)
    if m:
        return m.group("id")
    return None


def arxiv_url(paper_id: str) -> str:
    return f"https://arxiv.org/abs/{paper_id}"


# A DOI as registries give it: "10.", a registrant code, "/", a suffix of printable characters.
_DOI_KEY = re.compile(r"^10\.\d{4,9}/[\x21-\x7e]{1,200}$")
_DOI_IN = re.compile(r"^(?:doi:\s*|https?://(?:dx\.)?doi\.org/)?(10\.\d{4,9}/[\x21-\x7e]{1,200})$", re.I)
_WORK_KEY = re.compile(r"^W\d{1,15}$")
_WORK_IN = re.compile(r"^(?:https?://openalex\.org/)?(W\d{1,15})$", re.I)
ARXIV_DOI_PREFIX = "10.48550/arxiv."  # the DOI arXiv registers for each paper (DataCite)


def arxiv_only(col: str) -> str:
    """An SQL condition: the paper id in column `col` is an arXiv id (not a citer beyond arXiv).
    GLOB is case-sensitive: an old-style id never starts with "W", and no arXiv id with "10."."""
    return f"NOT ({col} GLOB '10.*' OR {col} GLOB 'W[0-9]*')"


def _doi(text: str) -> str | None:
    """The DOI in `text` (bare, `doi:…` or a doi.org URL), in lower case (DOIs are case-insensitive)."""
    m = _DOI_IN.match(text.strip()) if len(text) <= 300 else None
    return m.group(1).lower() if m else None


def doi_key(text: str) -> str | None:
    """The key of a work by its DOI (bare, `doi:…` or a doi.org URL), in lower case; None for
    anything else and for arXiv's own DOIs (`10.48550/arXiv.<id>` names an arXiv paper)."""
    key = _doi(text)
    return None if key is None or key.startswith(ARXIV_DOI_PREFIX) else key


def work_key(text: str) -> str | None:
    """The key of a work by its OpenAlex id (`W…`, bare or as an openalex.org URL)."""
    m = _WORK_IN.match(text.strip()) if len(text) <= 100 else None
    return m.group(1).upper() if m else None


def is_outside_key(paper_id: str) -> bool:
    """Whether a stored paper id is a citer beyond arXiv (a DOI or an OpenAlex work id)."""
    return bool(_DOI_KEY.match(paper_id) or _WORK_KEY.match(paper_id))


def paper_key(text: str) -> str | None:
    """The stored key a user's text names: an arXiv id (as `normalize_id`), else a DOI's or an
    OpenAlex work's key; None for anything else (a title)."""
    if len(text) > 300:
        return None
    if (pid := normalize_id(text)) is not None:
        return pid
    if (doi := _doi(text)) is not None:  # arXiv's own DOI names its paper
        return normalize_id(doi[len(ARXIV_DOI_PREFIX):]) if doi.startswith(ARXIV_DOI_PREFIX) else doi
    return work_key(text)


def paper_link(paper_id: str) -> str:
    """Where a paper is read: its arXiv abstract page, a DOI's resolver, an OpenAlex work's page."""
    if _DOI_KEY.match(paper_id):
        return f"https://doi.org/{paper_id}"
    if _WORK_KEY.match(paper_id):
        return f"https://openalex.org/{paper_id}"
    return arxiv_url(paper_id)


def id_kind(paper_id: str) -> str:
    """What a paper's id is: "arXiv", "DOI" or "OpenAlex" (a work without a DOI)."""
    if _DOI_KEY.match(paper_id):
        return "DOI"
    if _WORK_KEY.match(paper_id):
        return "OpenAlex"
    return "arXiv"


def paper_label(paper_id: str) -> str:
    """How a paper's id is named in text: "arXiv 2412.10400", "DOI 10.1145/…", "OpenAlex W…"."""
    return f"{id_kind(paper_id)} {paper_id}"


# An arXiv abstract or PDF link, as a page may state it: http(s), arxiv.org or one of its
# hosts (www., export.), /abs/ or /pdf/, one id, an optional version and ".pdf", nothing else.
_ARXIV_LINK = re.compile(
    rf"^(?i:https?://(?:[a-z0-9-]+\.)*arxiv\.org)/(?:abs|pdf)/(?P<id>{ID_PATTERN})(?:v\d+)?(?:\.pdf)?/?$")


def arxiv_link_id(url: str) -> str | None:
    """The versionless id an arXiv link names, if `url` is exactly an arXiv abstract or PDF
    link (`https://arxiv.org/abs/<id>[vN]`, `/pdf/<id>[vN][.pdf]`, new or old style); else None
    (another host, a path such as `/abs/../../etc/passwd`, a query)."""
    m = _ARXIV_LINK.match(url)
    return m["id"] if m else None


def page_identity(arxiv_link: str | None, html_link: str | None, line: int,
                  more: Sequence[tuple[str, str, int]] = ()) -> tuple[str | None, str | None]:
    """(the page's id, its arXiv link) from the links its header states (docs/pages.md,
    "Page formats"): the id of its arXiv link when that is a true arXiv link, else the id of its
    own (`HTML:`) link; the arXiv link kept only when it is one and names that id, else
    derived from the id. Raises ParseError (at `line`) when the two links name different
    papers, or when one of `more` (further links of the header: label, url, line) does."""
    stated = arxiv_link_id(arxiv_link) if arxiv_link else None
    own = normalize_id(html_link) if html_link else None
    if stated and own and stated != own:
        raise ParseError(f"the page's links disagree: its arXiv link names {stated}, "
                         f"its HTML link names {own}", line)
    paper_id = stated or own
    for label, url, at in more:
        bare = ID_RE.match(url) if label == "arXiv" else None
        other = bare["id"] if bare else arxiv_link_id(url) if label == "arXiv" else normalize_id(url)
        if other and paper_id and other != paper_id:
            raise ParseError(f"the page's links disagree: it names {paper_id}, another {label} link "
                             f"names {other}", at)
    if paper_id is None:
        return None, None
    return paper_id, arxiv_link if stated else arxiv_url(paper_id)


# -- ids in free text (a chat message) ----------------------------------------------------
# An arXiv link (abs, pdf or html, any version), a map link (/paper/<id>/), "arXiv:<id>", or a
# bare id. Bare ids are accepted only when their YYMM is a real month, so a number such as
# 1234.5678 in a sentence is not taken for a paper.
_LINKED = re.compile(
    rf"(?i:arxiv\.org/(?:abs|pdf|html)/|/paper/|arxiv:\s?)(?P<id>{ID_PATTERN})(?:v\d+)?", re.ASCII)
_BARE = re.compile(rf"(?<![\w./-])(?P<id>{ID_PATTERN})(?:v\d+)?(?![\w/]|\.\d)", re.ASCII)
TEXT_IDS_MAX = 50


def _plausible(paper_id: str) -> bool:
    yymm = paper_id.split("/")[-1][:4] if "/" in paper_id else paper_id[:4]
    month = int(yymm[2:4])
    if not 1 <= month <= 12:
        return False
    if "/" in paper_id:
        return True
    digits = len(paper_id.split(".")[1])
    return digits == 4 if yymm < "1501" else digits == 5 and yymm >= "1501"


def possible_key(paper_id: str, today: date) -> bool:
    """`possible_id` for arXiv ids; a citer beyond arXiv's key need only have its shape."""
    return is_outside_key(paper_id) or possible_id(paper_id, today)


def possible_id(paper_id: str, today: date) -> bool:
    """Whether arXiv can have given this id by `today`: a real month, the digits of its era, and
    not a month after today's (what a source says of a citer is checked so before it is stored)."""
    if not ID_RE.match(paper_id) or not _plausible(paper_id):
        return False
    yymm = paper_id.split("/")[-1][:4] if "/" in paper_id else paper_id[:4]
    year = 2000 + int(yymm[:2]) if int(yymm[:2]) < 91 else 1900 + int(yymm[:2])
    return (year, int(yymm[2:])) <= (today.year, today.month)


def ids_in_text(text: str, limit: int = TEXT_IDS_MAX) -> list[str]:
    """The versionless arXiv ids a message names, in order of first mention, each once (at
    most `limit`): arXiv abs/pdf/html links, map `/paper/<id>/` links, `arXiv:<id>`, and bare
    new- or old-style ids whose year and month are possible."""
    found: list[tuple[int, str]] = [(m.start(), m["id"]) for m in _LINKED.finditer(text)]
    found += [(m.start(), m["id"]) for m in _BARE.finditer(text) if _plausible(m["id"])]
    out: list[str] = []
    for _, pid in sorted(found):
        if pid not in out:
            out.append(pid)
            if len(out) >= limit:
                break
    return out


def posted_key(paper_id: str) -> tuple[int, int, int]:
    """(year, month, number) of an arXiv id: sorts ids by when arXiv gave them (old-style ids'
    two-digit years 91-99 are the 1990s); an id of neither style sorts first."""
    if not ID_RE.match(paper_id):
        return (0, 0, 0)
    tail = paper_id.split("/")[-1] if "/" in paper_id else paper_id.replace(".", "")
    yy, mm, number = int(tail[:2]), int(tail[2:4]), int(tail[4:])
    return (1900 + yy if yy >= 91 else 2000 + yy, mm, number)
