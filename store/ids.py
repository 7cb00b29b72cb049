"""arXiv identifiers: recognise them in ids and URLs, and normalise them (no version)."""

from __future__ import annotations

import re

# New style 2412.10400 (4 or 5 digits after the dot), old style hep-th/9901001 or math.GT/0309136.
_ID = r"(?:\d{4}\.\d{4,5}|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7})"
ID_RE = re.compile(rf"^(?P<id>{_ID})(?:v\d+)?$")
_IN_URL = re.compile(rf"(?:/abs/|/pdf/|/paper/)(?P<id>{_ID})(?:v\d+)?(?:\.pdf)?/?(?:[?#].*)?$")


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
