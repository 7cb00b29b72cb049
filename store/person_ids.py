"""A person's keys: an ORCID iD (its check digit verified) or an OpenAlex author id, each from
its URL or bare form.

Why here, at the store's top: the scholarly sources' records (store/records.py) carry
these ids, and the questions about people (store/questions/teams.py, authors.py) resolve what a
user typed with them; the questions sit below the scholarly sources (mapwatch/layers.py), so the
keys sit below both.
"""

from __future__ import annotations

import re

_ORCID = re.compile(r"^(?:https?://orcid\.org/)?(\d{4}-\d{4}-\d{4}-\d{3}[\dX])$")
_OPENALEX_AUTHOR = re.compile(r"^(?:https?://openalex\.org/)?(A\d{1,15})$", re.I)


def orcid(value: object) -> str | None:
    """An ORCID iD (0000-0002-1825-0097) from its URL or bare form, checksum verified; None otherwise."""
    m = _ORCID.match(value.strip()) if isinstance(value, str) else None
    return m.group(1) if m and m.group(1)[-1] == _orcid_check_digit(m.group(1)) else None


def _orcid_check_digit(iD: str) -> str:
    """The check digit an ORCID iD's first 15 digits call for (ISO 7064 MOD 11-2)."""
    total = 0
    for d in iD.replace("-", "")[:15]:
        total = (total + int(d)) * 2
    check = (12 - total % 11) % 11
    return "X" if check == 10 else str(check)


def orcid_misprint(value: object) -> str | None:
    """Why a value written as an ORCID iD is not one, when its check digit is wrong (a digit
    mistyped): "0000-0002-1825-0098 is not a valid ORCID (its check digit should be 7)";
    None for a valid iD and for anything not written as one."""
    m = _ORCID.match(value.strip()) if isinstance(value, str) else None
    if not m or orcid(value):
        return None
    return (f"{m.group(1)} is not a valid ORCID (its check digit should be {_orcid_check_digit(m.group(1))}, "
            "by ISO 7064 MOD 11-2)")


def openalex_author(value: object) -> str | None:
    """An OpenAlex author id (A5023888391), from its URL or bare form, in upper case."""
    m = _OPENALEX_AUTHOR.match(value.strip()) if isinstance(value, str) else None
    return m.group(1).upper() if m else None


def person_id(value: object) -> str | None:
    """An ORCID iD or an OpenAlex author id (bare or as a URL): the key of a person; None otherwise."""
    return orcid(value) or openalex_author(value)
