"""User text as full-text (FTS5) queries: the words searches use, quoted so that no input
can break the FTS syntax. Pure functions; the queries that run them are in store/questions/queries.py
(paper lookup), store/questions/search.py (/search) and store/questions/autocomplete.py."""

from __future__ import annotations

import re
import unicodedata

MAX_QUERY_TOKENS = 12
MAX_TOKEN_CHARS = 64
MIN_PREFIX_CHARS = 3  # shortest last word autocomplete expands as a prefix
WORD = re.compile(r"\w+", re.UNICODE)


def query_words(text: str) -> list[str]:
    """The words of user text, as searches use them (at most 12)."""
    return [w[:MAX_TOKEN_CHARS] for w in WORD.findall(text)[:MAX_QUERY_TOKENS]]


def fold(text: str) -> str:
    """Text as the full-text index compares it: case folded, diacritics removed."""
    return "".join(c for c in unicodedata.normalize("NFKD", text.casefold()) if not unicodedata.combining(c))


def quote(word: str) -> str:
    return '"' + word.replace('"', '""') + '"'


def fts_query(text: str, *, prefix_last: bool = False) -> str | None:
    """User text as a safe FTS5 query: its words, each quoted (AND). None if no words."""
    words = query_words(text)
    if not words:
        return None
    quoted = [quote(w) for w in words]
    if prefix_last:
        if len(words[-1]) >= MIN_PREFIX_CHARS:
            quoted[-1] += "*"
        elif len(quoted) > 1:
            # A word still being typed ("reinforcement l"): expanding a 1-2 letter prefix
            # reads the index of every word it starts (tens of ms at 200k papers); wait for more.
            quoted.pop()
    return " ".join(quoted)


def fts_any(text: str) -> str | None:
    """Words of at least 3 characters, OR-ed: for 'did you mean' suggestions."""
    words = [w[:MAX_TOKEN_CHARS] for w in WORD.findall(text) if len(w) >= 3][:MAX_QUERY_TOKENS]
    if not words:
        return None
    return " OR ".join(quote(w) for w in words)
