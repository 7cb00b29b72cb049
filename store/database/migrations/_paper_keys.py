"""A paper's integer key (migration 0049_paper_keys), as SQL and as Python: the two agree on
every id (tests/unit/store/test_paper_keys.py). Not a migration itself.

The big tables (`citation_edges`, `event_log`) name their papers by these keys, not by their
text ids; `paper_keys` holds each id once. A new-style arXiv id is its own key, in its own
order: YYMM * 100,000 + its number (2412.10400 -> 241,210,400; 0704.0001 -> 70,400,001), for
the ids written as arXiv writes them (four digits after the dot before January 2015, five
from 1501 on), so that two ids never share a key. The citations' index then sorts a paper's
citers of one second by their month, and by arXiv's own numbering within it, as their ids do:
the newest citers are read off the index. Every other id (old-style arXiv ids, citers beyond
arXiv, an id written otherwise) takes the next key from OUTSIDE_FIRST on.
"""

from __future__ import annotations

import re

# The first key of an id that is not a new-style arXiv id: above every new-style key
# (9912.99999 -> 991,299,999), and under 2**31, so still 4 bytes in a record.
OUTSIDE_FIRST = 1_000_000_000
FIVE_DIGITS_FROM = "1501"  # arXiv's first month of five-digit numbers (1501.00001)
_NEW_STYLE = re.compile(r"([0-9]{4})\.([0-9]{4,5})")


def arxiv_key(paper_id: str) -> int | None:
    """The key of a new-style arXiv id written as arXiv writes it; None for any other id."""
    m = _NEW_STYLE.fullmatch(paper_id)
    if m is None:
        return None
    month, number = m.groups()
    if (len(number) == 5) != (month >= FIVE_DIGITS_FROM):
        return None
    return int(month) * 100_000 + int(number)


def arxiv_key_sql(id_sql: str) -> str:
    """SQL of `arxiv_key` of the text `id_sql`: NULL for any id that is not a new-style one."""
    four = (f"({id_sql} GLOB '[0-9][0-9][0-9][0-9].[0-9][0-9][0-9][0-9]'"
            f" AND substr({id_sql}, 1, 4) < '{FIVE_DIGITS_FROM}')")
    five = (f"({id_sql} GLOB '[0-9][0-9][0-9][0-9].[0-9][0-9][0-9][0-9][0-9]'"
            f" AND substr({id_sql}, 1, 4) >= '{FIVE_DIGITS_FROM}')")
    return (f"CASE WHEN {four} OR {five} THEN CAST(substr({id_sql}, 1, 4) AS INTEGER) * 100000"
            f" + CAST(substr({id_sql}, 6) AS INTEGER) END")
