"""Autocomplete for the bot's <paper> and <direction> options: up to 25 choices, each
query index-backed (ids and titles by prefix on their indexes, title words on the titles'
own full-text index, papers_title_fts, so the abstracts' much larger one is never read):
a keystroke costs a few milliseconds on a large map."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from sqlite_utils import Database

from mapwatch.store.database.rows import named_rows
from mapwatch.store.ids import paper_key
from mapwatch.store.questions.fts_text import MIN_PREFIX_CHARS, WORD, fold, fts_query, query_words
from mapwatch.store.questions.paper_rows import PAPER_COLS
from mapwatch.store.questions.queries import CHOICE_MAX, DIR_COLS, clip, nocase_prefix_bounds

AUTOCOMPLETE_LIMIT = 25
PREFIX_CANDIDATES = 200  # titles holding the whole words typed read at most, checked for the last one's prefix


@dataclass(frozen=True)
class Choice:
    """An autocomplete choice: `name` shown, `value` sent back (both <= 100 characters)."""

    name: str
    value: str


def autocomplete_papers(db: Database, text: str, limit: int = AUTOCOMPLETE_LIMIT) -> tuple[Choice, ...]:
    """Up to 25 choices for a <paper> option: by id prefix, title prefix, then title words."""
    text = " ".join(text.split())[:200]
    limit = min(limit, AUTOCOMPLETE_LIMIT)
    seen: dict[str, sqlite3.Row] = {}

    def add(rows: list[sqlite3.Row]) -> None:
        for r in rows:
            if len(seen) < limit:
                seen.setdefault(r["id"], r)

    c = db.conn
    if not text:
        add(named_rows(c, f"SELECT {PAPER_COLS} FROM papers p INDEXED BY papers_cited_by"
                       " WHERE p.cited_by IS NOT NULL ORDER BY p.cited_by DESC LIMIT ?", (limit,)))
    else:
        pid = paper_key(text)
        if pid:
            add(named_rows(c, f"SELECT {PAPER_COLS} FROM papers p WHERE p.id = ?", (pid,)))
        if re.fullmatch(r"[\w.\-/]+", text):
            lo, hi = text, text + "\U0010ffff"
            add(named_rows(c, f"SELECT {PAPER_COLS} FROM papers p WHERE p.id >= ? AND p.id < ? ORDER BY p.id LIMIT ?",
                           (lo, hi, limit)))
        if len(seen) < limit:
            lo, hi = nocase_prefix_bounds(text)
            add(named_rows(c, f"SELECT {PAPER_COLS} FROM papers p WHERE p.title >= ? COLLATE NOCASE"
                           " AND p.title < ? COLLATE NOCASE ORDER BY p.title COLLATE NOCASE LIMIT ?",
                           (lo, hi, limit)))
        if len(seen) < limit:
            add(_title_words(db, text, limit))
    out = []
    for r in seen.values():
        pid, title, year = r["id"], r["title"], r["year"]
        if len(pid) > CHOICE_MAX:
            continue
        label = f"{pid} · {title}" + (f" ({year})" if year else "")
        out.append(Choice(clip(" ".join(label.split())), pid))
    return tuple(out)


def _title_words(db: Database, text: str, limit: int) -> list[sqlite3.Row]:
    """Papers whose titles hold the words typed, the last one as a prefix (oldest first,
    the index's order). A prefix such as "learn" would merge the index entries of every word
    it starts, most of the map for a common one; so the titles holding the whole words are
    read in the index's order and checked for the prefix here (a word of the title starting
    with it), stopping at `limit` found or PREFIX_CANDIDATES read. Only when more titles hold
    the whole words and fewer than `limit` of those read start a word with the prefix (so the
    prefix is rare: its index entries are few) does the index expand the prefix itself, its
    answers added to those found."""
    words = query_words(text)
    q = fts_query(text, prefix_last=True)
    if not q:
        return []
    found: list[int] = []
    if len(words) > 1 and len(words[-1]) >= MIN_PREFIX_CHARS:
        last = fold(words[-1])
        cur = db.conn.execute("SELECT p.rowid, p.title FROM papers_title_fts t JOIN papers p ON p.rowid = t.rowid"
                              " WHERE papers_title_fts MATCH ?", (fts_query(" ".join(words[:-1])),))
        for read, (rowid, title) in enumerate(cur):
            if read == PREFIX_CANDIDATES:
                break
            if _has_prefix(title, last):
                found.append(rowid)
                if len(found) == limit:
                    break
        else:
            return _papers_by_rowid(db, found)
        cur.close()
        if len(found) == limit:
            return _papers_by_rowid(db, found)
    found += [r for (r,) in db.conn.execute(
        "SELECT rowid FROM papers_title_fts WHERE papers_title_fts MATCH ? LIMIT ?", (q, limit))]
    return _papers_by_rowid(db, sorted(set(found))[:limit])


def _has_prefix(title: str, prefix: str) -> bool:
    """Whether a word of `title` starts with `prefix` (folded, see fts_text.fold)."""
    t = title.casefold()
    if not t.isascii():
        t = fold(t)
    return prefix in t and any(w.startswith(prefix) for w in WORD.findall(t))


def _papers_by_rowid(db: Database, rowids: list[int]) -> list[sqlite3.Row]:
    """The papers' rows (PAPER_COLS, and their rowid), in the order of `rowids`."""
    rows = {r["rowid"]: r for r in named_rows(
        db, f"SELECT p.rowid, {PAPER_COLS} FROM papers p WHERE p.rowid IN ({','.join('?' * len(rowids))})", rowids)}
    return [rows[r] for r in rowids if r in rows]


def autocomplete_directions(db: Database, text: str, limit: int = AUTOCOMPLETE_LIMIT) -> tuple[Choice, ...]:
    """Up to 25 choices for a <direction> option: name prefix first, then names containing it."""
    text = " ".join(text.split())[:200]
    limit = min(limit, AUTOCOMPLETE_LIMIT)
    c = db.conn
    lo, hi = nocase_prefix_bounds(text)
    rows = named_rows(c, f"SELECT {DIR_COLS} FROM directions d WHERE d.name >= ? COLLATE NOCASE"
                      " AND d.name < ? COLLATE NOCASE ORDER BY d.name COLLATE NOCASE LIMIT ?",
                      (lo, hi, limit))
    if len(rows) < limit and text:
        esc = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        more = named_rows(c, f"SELECT {DIR_COLS} FROM directions d WHERE (d.name LIKE ? ESCAPE '\\'"
                          " OR d.slug LIKE ? ESCAPE '\\') ORDER BY d.name LIMIT ?",
                          (f"%{esc}%", f"%{esc}%", limit * 2))
        have = {r["slug"] for r in rows}  # a slug is a direction's key: equal slugs, equal rows
        rows += [r for r in more if r["slug"] not in have]
    out = []
    for r in rows[:limit]:
        slug, name, area = r["slug"], r["name"], r["area"]
        if len(slug) > CHOICE_MAX:
            continue
        out.append(Choice(clip(f"{name} ({area})"), slug))
    return tuple(out)


def autocomplete_authors(db: Database, text: str, limit: int = AUTOCOMPLETE_LIMIT, *,
                         by_name: bool = False) -> tuple[Choice, ...]:
    """Up to 25 people whose name starts with `text` (from its 2nd character; on the names'
    NOCASE index), each once: "Ashish Vaswani · A5023888391 · Google Brain". The value is the
    person's key for /author (their OpenAlex id, ORCID or `name:<name>`), or their name for
    /search (`by_name`)."""
    text = " ".join(text.split())[:200]
    limit = min(limit, AUTOCOMPLETE_LIMIT)
    if len(text) < 2:
        return ()
    lo, hi = nocase_prefix_bounds(text)
    seen: dict[str, Choice] = {}
    for name, aid, orcid in db.conn.execute(
            "SELECT name, author_id, orcid FROM paper_authors WHERE name >= ? COLLATE NOCASE"
            " AND name < ? COLLATE NOCASE ORDER BY name COLLATE NOCASE, name LIMIT ?", (lo, hi, limit * 8)):
        key = aid or orcid or f"name:{' '.join(name.split())}"
        value = " ".join(name.split()) if by_name else key
        if len(value) > CHOICE_MAX or (value if by_name else key) in seen:
            continue
        label = name if by_name or key.startswith("name:") else f"{name} · {key}"
        seen[value if by_name else key] = Choice(clip(" ".join(label.split())), value)
        if len(seen) == limit:
            break
    return tuple(seen.values())
