"""Which direction slugs a page may give: plain path segments, nothing a file path could escape by.

A direction's slug is the path of its link on a page ("lr/reinforcement-learning-for-reasoning")
and becomes a file name when feeds are published (`feeds/<slug>.atom`, `directions/<slug>/`).
The parser rejects a page whose slug is not made of plain segments (store/pages/parse.py); publish
checks the same rule again on what is stored (feeds/build.py `safe_path`).
"""

from __future__ import annotations

import re

# One segment: a letter or digit, then letters, digits and . _ ~ - (no dot-files, no '..',
# no percent-escapes such as %2f, no backslashes).
SAFE_SEGMENT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._~-]*$")


def slug_problem(slug: str) -> str | None:
    """Why `slug` cannot be a direction's slug, or None if it can."""
    parts = slug.split("/")
    if all(SAFE_SEGMENT.match(p) for p in parts):
        return None
    if ".." in parts:
        return "has a '..' segment"
    if any(p.startswith(".") for p in parts):
        return "has a segment starting with '.'"
    if "%" in slug:
        return "has a percent-escape (such as %2f)"
    if "" in parts:
        return "has an empty segment"
    return "has a character other than letters, digits and . _ ~ -"
