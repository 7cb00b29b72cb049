"""Query rows read by column name, not by position, so an added column cannot shift a read.

`named_rows`, `named_row` and `named_cursor` give `sqlite3.Row`s: index them by the SELECT's
column names (the alias after AS, else the bare column name: `p.id` is `id`; an unknown name
is an IndexError). The row factory is set on the one cursor that runs the query, never on the
connection, whose other users (sqlite-utils among them) expect tuples; a `sqlite3.Row` is
built in C, about as cheap as a tuple.
`one_column` and `scalar` read a query of exactly one column, and fail loudly if it has more.
`rows_in_chunks` runs a query over a list of keys too long for one `IN (...)`, `rows_by_chunk`
the same a chunk at a time (its caller may stop early), and `chunked` cuts any keys into those
chunks: the one place the project writes that loop.
`fill` makes a dataclass from a row's columns named like its fields. `next_ids` reads the id
the next row of an AUTOINCREMENT table gets, for a writer that numbers its rows itself.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import fields
from itertools import islice
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:  # sqlite_utils loads numpy: `mapwatch --help` must not (bot_state imports this)
    from sqlite_utils import Database

T = TypeVar("T")

Params = Sequence[Any] | dict[str, Any]


def _conn(db: Database | sqlite3.Connection) -> sqlite3.Connection:
    return db if isinstance(db, sqlite3.Connection) else db.conn


def _cursor(db: Database | sqlite3.Connection) -> sqlite3.Cursor:
    cur = _conn(db).cursor()
    cur.row_factory = sqlite3.Row
    return cur


def named_rows(db: Database | sqlite3.Connection, sql: str, params: Params = ()) -> list[sqlite3.Row]:
    """Every row of `sql`, each readable as `row["column"]`."""
    return _cursor(db).execute(sql, params).fetchall()


def named_cursor(db: Database | sqlite3.Connection, sql: str, params: Params = ()) -> sqlite3.Cursor:
    """`sql` run, its rows read lazily (iterate the cursor; stop early), each as `row["column"]`."""
    return _cursor(db).execute(sql, params)


def named_row(db: Database | sqlite3.Connection, sql: str, params: Params = ()) -> sqlite3.Row | None:
    """The first row of `sql` (or None), readable as `row["column"]`."""
    row: sqlite3.Row | None = _cursor(db).execute(sql, params).fetchone()
    return row


def one_column(db: Database | sqlite3.Connection, sql: str, params: Params = ()) -> list[Any]:
    """The values of `sql`'s one column, in row order (ValueError if it selects more than one)."""
    return [v for (v,) in _conn(db).execute(sql, params)]


def scalar(db: Database | sqlite3.Connection, sql: str, params: Params = ()) -> Any:
    """The one column of `sql`'s first row, or None when there is no row (ValueError if it
    selects more than one column)."""
    row = _conn(db).execute(sql, params).fetchone()
    if row is None:
        return None
    (v,) = row
    return v


CHUNK = 500  # keys a query's `IN (...)` takes at a time (SQLite bounds a statement's variables)


def next_ids(db: Database | sqlite3.Connection, table: str) -> int:
    """The id the next row of AUTOINCREMENT `table` gets: rows inserted with ids from it on, in a
    transaction that holds the write lock, are numbered as SQLite would number them (an id
    once used, even deleted since, is not used again)."""
    seq = scalar(db, "SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)) or 0
    top = scalar(db, f"SELECT max(id) FROM [{table}]") or 0
    return max(int(seq), int(top)) + 1


def chunked(keys: Iterable[T], size: int = CHUNK) -> Iterator[list[T]]:
    """`keys`, at most `size` at a time and read lazily (a generator's keys are not all held):
    the keys of one statement of a chunked query, or the rows of one executemany."""
    it = iter(keys)
    while chunk := list(islice(it, size)):
        yield chunk


def rows_by_chunk(db: Database | sqlite3.Connection, sql: str, keys: Iterable[Any], params: Sequence[Any] = (),
                  size: int = CHUNK, *, after: Sequence[Any] = (), mark: str = "?") -> Iterator[list[sqlite3.Row]]:
    """The rows of `sql` run over `keys` a chunk at a time, one list per chunk, each row readable
    as `row["column"]`; a chunk's statement runs only when the caller asks for its rows, so it
    may stop early. Each `{}` in `sql` stands for the chunk's placeholders, and the chunk's keys
    are bound at each; `params` are bound before them and `after` after. A key is bound to
    `mark`: a tuple key takes a mark such as `(?, ?)`, its items bound in order."""
    lists = sql.count("{}")
    if not lists:
        raise ValueError("a chunked query has a `{}` for its keys' placeholders")
    cur = _cursor(db)
    for chunk in chunked(keys, size):
        bound = chunk if mark == "?" else [item for key in chunk for item in key]
        yield cur.execute(sql.format(*[",".join([mark] * len(chunk))] * lists),
                          [*params, *(bound * lists), *after]).fetchall()


def rows_in_chunks(db: Database | sqlite3.Connection, sql: str, keys: Iterable[Any], params: Sequence[Any] = (),
                   size: int = CHUNK, *, after: Sequence[Any] = (), mark: str = "?") -> list[sqlite3.Row]:
    """Every row of `sql` run over `keys` a chunk at a time (see `rows_by_chunk`: its `{}`,
    `params`, `after` and `mark`), in chunk order, each readable as `row["column"]`; none for a
    statement that returns none (a DELETE over the keys)."""
    return [row for rows in rows_by_chunk(db, sql, keys, params, size, after=after, mark=mark) for row in rows]


_FIELDS: dict[type, tuple[str, ...]] = {}  # a dataclass -> its field names, read once


def _field_names(cls: type) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in fields(cls))
    return names


def fill(cls: type[T], row: sqlite3.Row, **extra: Any) -> T:
    """A `cls` dataclass from the row's columns named like its fields, plus `extra`. Columns no
    field names (read by name elsewhere) are left out; a field with no column keeps its default,
    and one without a default is a TypeError."""
    keys = row.keys()
    return cls(**{name: row[name] for name in _field_names(cls) if name in keys and name not in extra}, **extra)
