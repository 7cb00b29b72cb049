"""Every chunked `IN (...)` goes through store/database/rows.py (rows_in_chunks, rows_by_chunk,
chunked), not a loop of its own. Thirty-five loops in fourteen modules had written it out by
hand, cutting the keys themselves or through one of four private chunkers and building the
placeholders each time, and had drifted apart (an `extra` here, a `size` there).

A twin is a loop (a `for` or a comprehension, in store/, feeds/, bot/ or mapwatch/) that builds
placeholders in its body (`",".join("?" * len(chunk))`), or steps through keys with
`range(0, len(keys), n)` and runs a query in its body. Loops stepping through bytes or request
batches run no query and are left alone; so is one statement's own `IN (...)` outside a loop.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

from tests.rowcheck import package_files

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("store", "feeds", "bot", "mapwatch")
QUERIES = {"execute", "executemany", "fetchall", "fetchone", "named_rows", "named_row", "named_cursor",
           "one_column", "scalar"}


def _is_placeholders(node: ast.AST) -> bool:
    """`",".join("?" * n)`, `",".join(["(?, ?)"] * n)`: a list of SQL placeholders."""
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and isinstance(node.func.value, ast.Constant) and node.func.value.value == "," and bool(node.args)
            and any(isinstance(c, ast.Constant) and isinstance(c.value, str) and "?" in c.value
                    for c in ast.walk(node.args[0])))


def _is_query(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "") in QUERIES


def _steps_through_keys(iterable: ast.expr) -> bool:
    """range(0, len(keys), n)"""
    return (isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Name) and iterable.func.id == "range"
            and len(iterable.args) == 3 and isinstance(iterable.args[0], ast.Constant) and iterable.args[0].value == 0
            and isinstance(iterable.args[1], ast.Call) and isinstance(iterable.args[1].func, ast.Name)
            and iterable.args[1].func.id == "len")


def _loops(tree: ast.AST) -> Iterator[tuple[ast.AST, ast.expr, list[ast.AST]]]:
    """(loop, what it iterates, its body) of every for-loop and comprehension."""
    for node in ast.walk(tree):
        if isinstance(node, ast.For | ast.AsyncFor):
            yield node, node.iter, list(node.body)
        elif isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            parts: list[ast.AST] = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
            for k, gen in enumerate(node.generators):  # the generators after one run once per its item
                yield node, gen.iter, [*parts, *gen.ifs, *(g.iter for g in node.generators[k + 1:])]


def _placeholder_makers(tree: ast.AST) -> set[str]:
    """Functions that return placeholders (`def marks(n): return ",".join("?" * n)`)."""
    return {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef)
            and any(isinstance(r, ast.Return) and r.value is not None and _is_placeholders(r.value)
                    for r in ast.walk(f))}


def chunk_loops(sources: dict[str, str]) -> list[tuple[str, int, str]]:
    """(path, line, why) of every hand-written chunked query loop in the modules (path -> source);
    of loops inside one another, the innermost."""
    trees = {path: ast.parse(source) for path, source in sources.items()}
    makers = set().union(*(_placeholder_makers(tree) for tree in trees.values()))

    def makes_placeholders(node: ast.AST) -> bool:
        return _is_placeholders(node) or (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                                          and node.func.id in makers)

    found = []
    for path, tree in trees.items():
        flagged: dict[ast.AST, str] = {}
        for loop, iterable, body in _loops(tree):
            inside = [n for part in body for n in ast.walk(part)]
            if any(makes_placeholders(n) for n in inside):
                flagged[loop] = "builds `IN (...)` placeholders in a loop"
            elif _steps_through_keys(iterable) and any(_is_query(n) for n in inside):
                flagged[loop] = "queries keys a `range(0, len(keys), n)` step at a time"
        for loop, why in flagged.items():
            if not any(inner in flagged for inner in ast.walk(loop) if inner is not loop):
                found.append((path, loop.lineno, why))
    return sorted(set(found))


def test_chunked_queries_use_the_rows_helpers() -> None:
    problems = [f"{path}:{line}: {why}" for path, line, why in chunk_loops(dict(package_files(ROOT, FOLDERS)))]
    assert not problems, ("run a query over many keys with store/database/rows.py's rows_in_chunks"
                          " (or rows_by_chunk, chunked), not a loop of its own:\n" + "\n".join(problems))


def test_the_check_finds_the_twins() -> None:
    sample = (
        "def bylines(db, ids):\n"
        "    for i in range(0, len(ids), 500):\n"
        "        chunk = ids[i:i + 500]\n"
        "        marks = ','.join('?' * len(chunk))\n"
        "        db.conn.execute(f'SELECT 1 FROM papers WHERE id IN ({marks})', chunk)\n"
        "\n"
        "def counts(conn, ids):\n"
        "    return {p: c for chunk in chunks(ids) for p, c in conn.execute(\n"
        "        f\"SELECT id, cited_by FROM papers WHERE id IN ({','.join('?' * len(chunk))})\", chunk)}\n"
        "\n"
        "def edges(conn, pairs):\n"
        "    for i in range(0, len(pairs), 400):\n"
        "        conn.execute(sql.format(values(pairs[i:i + 400])), flat(pairs[i:i + 400])).fetchall()\n"
        "\n"
        "def marks(n):\n"
        "    return ','.join('?' * n)\n"
        "\n"
        "def refs(db, ids):\n"
        "    for chunk in chunks(ids):\n"
        "        for pid, title in db.conn.execute(f'SELECT id, title FROM papers WHERE id IN ({marks(len(chunk))})',\n"
        "                                          chunk):\n"
        "            print(pid, title)\n"
        "\n"
        "def ok(db, data, ids):\n"
        "    parts = [data[i:i + 64] for i in range(0, len(data), 64)]\n"
        "    marks = ','.join('?' * len(ids))\n"
        "    return parts, db.conn.execute(f'SELECT id FROM papers WHERE id IN ({marks})', ids).fetchall()\n"
    )
    assert [line for _, line, _ in chunk_loops({"store/sample.py": sample})] == [2, 8, 12, 19]
