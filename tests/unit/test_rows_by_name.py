"""Query rows are read by column name, not by position (issue 31): `r[5]` and `row[1:]`
shift silently when a column is added to a SELECT, `r["cited_by"]` does not.

The check (tests/rowcheck.py) follows what every query of store/, feeds/, bot/ and mapwatch/
returns, across functions and files, and flags each subscript of a row by a constant index or
a slice and each `*` spread of one, whatever the variable is called. There is no exemption
list. store/database/rows.py holds the helpers that read by name instead (named_rows,
named_row, named_cursor, rows_in_chunks, one_column, scalar, fill).

Tuple-unpacking a row whose SELECT is written right there (`for a, b in conn.execute("SELECT
a, b ...")`) may stay: a column added to it is a ValueError at once, not a shifted read.
"""

from __future__ import annotations

from pathlib import Path

from tests.rowcheck import package_files, positional_reads

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("store", "feeds", "bot", "mapwatch")
ROWS_MODULE = "store/database/rows.py"


def test_query_rows_are_read_by_name() -> None:
    sources = dict(package_files(ROOT, FOLDERS))
    assert "mapwatch/cli/__init__.py" in sources and "store/database/save.py" in sources
    assert not any(path.startswith("mapwatch/store/") for path in sources)  # the links are not walked twice
    problems = [f"{path}:{line} ({function or 'module'}): {text}"
                for path, line, function, text in positional_reads(sources)]
    assert not problems, ("read query rows by column name (store/database/rows.py), not by position:\n"
                          + "\n".join(problems))


def _reads(sample: str) -> list[tuple[int, str, str]]:
    """(line, function, expression) of the positional reads in `sample`, a module of the store
    that sees the real row helpers."""
    sources = {"store/sample.py": sample, ROWS_MODULE: (ROOT / ROWS_MODULE).read_text(encoding="utf-8")}
    return [(line, function, text) for path, line, function, text in positional_reads(sources)
            if path == "store/sample.py"]


def test_the_check_finds_positional_reads_whatever_the_name() -> None:
    sample = (
        "def f(db):\n"
        "    stub = db.execute('SELECT id, title, year, url FROM papers').fetchone()\n"
        "    year = stub[2]\n"
        "    for x in db.execute('SELECT id, title FROM papers'):\n"
        "        title = x[1]\n"
        "    n = db.execute('SELECT count(*) FROM papers').fetchone()[0]\n"
        "    rows = db.execute('SELECT id, title FROM papers').fetchall()\n"
        "    first = rows[0]\n"
        "    head = first[:1]\n"
        "    ids = [p[0] for p in rows]\n"
        "    last = sorted(rows, key=lambda q: q[1])\n"
        "    hook = Webhook(*first)\n"
        "    return year, title, n, head, ids, last, hook\n"
    )
    assert _reads(sample) == [(3, "f", "stub[2]"), (5, "f", "x[1]"),
                              (6, "f", "db.execute('SELECT count(*) FROM papers').fetchone()[0]"),
                              (9, "f", "first[:1]"), (10, "f", "p[0]"), (11, "f", "q[1]"),
                              (12, "f", "Webhook(*first)")]


def test_the_check_follows_rows_through_helpers_and_functions() -> None:
    sample = (
        "from mapwatch.store.database.rows import named_row, named_rows, rows_in_chunks\n"
        "\n"
        "def latest(db):\n"
        "    return db.execute('SELECT id, seen_at FROM events ORDER BY id DESC').fetchone()\n"
        "\n"
        "def track(r):\n"
        "    return r[-1]\n"
        "\n"
        "def g(db, keys):\n"
        "    a = named_rows(db, 'SELECT id, title FROM papers')[0][1]\n"
        "    b = {r['id']: r for r in rows_in_chunks(db, 'SELECT id, title FROM papers WHERE id IN ({})', keys)}\n"
        "    c = b['x'][1]\n"
        "    d = latest(db)[1]\n"
        "    e = track(named_row(db, 'SELECT id, title FROM papers'))\n"
        "    return a, c, d, e\n"
    )
    assert _reads(sample) == [(7, "track", "r[-1]"), (10, "g", "named_rows(db, 'SELECT id, title FROM papers')[0][1]"),
                              (12, "g", "b['x'][1]"), (13, "g", "latest(db)[1]")]


def test_the_check_leaves_reads_by_name_and_other_values_alone() -> None:
    sample = (
        "import re\n"
        "from mapwatch.store.database.rows import named_rows, one_column, scalar\n"
        "\n"
        "Row = tuple[str, int]  # a module's own tuple, not a query row\n"
        "\n"
        "def h(db, text: str, pairs: list[Row]):\n"
        "    rows = named_rows(db, 'SELECT id, title FROM papers')\n"
        "    first = rows[0]\n"
        "    ids = one_column(db, 'SELECT id FROM papers')\n"
        "    n = scalar(db, 'SELECT count(*) FROM papers')\n"
        "    for a, b in db.execute('SELECT id, title FROM papers'):\n"
        "        pass\n"
        "    (m,) = db.execute('SELECT max(id) FROM events').fetchone()\n"
        "    r = re.match('(x)', text)\n"
        "    return first['title'], rows[1:], ids[0], n, text[0], r[1], pairs[0][1], m\n"
    )
    assert _reads(sample) == []
