"""Untrusted text as one line: what a source or a user typed, shown back safely."""

from __future__ import annotations

import re
import unicodedata

_SPACE = re.compile(r"\s+")


def one_line(text: object, limit: int) -> str:
    """`text` as one line of printable characters (controls and format characters such as bidi
    overrides turned into spaces), at most `limit` characters ("" for what is not a string)."""
    if not isinstance(text, str):
        return ""
    kept = "".join(c if unicodedata.category(c)[0] != "C" else " " for c in text)
    kept = _SPACE.sub(" ", kept).strip()
    if len(kept) > limit:
        kept = kept[:limit - 1].rstrip() + "…"
    return kept
