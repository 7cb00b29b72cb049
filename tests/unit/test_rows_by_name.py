"""Query rows are read by column name, not by position (issue 31): `r[5]` and `row[1:]`
shift silently when a column is added to a SELECT, `r["cited_by"]` does not.

The check walks the AST of every module of store/, feeds/ and bot/ for a subscript of a
variable named `r` or `row` (or an attribute `.row`) by a constant index or a slice, and for
a call spreading one (`Webhook(*row)`). store/database/rows.py holds the helpers that read by
name instead (named_rows, named_row, named_cursor, one_column, scalar, fill).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("store", "feeds", "bot")
ROW_NAMES = {"r", "row"}

# path -> (functions allowed to read by position, or None for the whole file; why)
ALLOWED: dict[str, tuple[frozenset[str] | None, str]] = {
}


def _is_row(node: ast.expr) -> bool:
    return ((isinstance(node, ast.Name) and node.id in ROW_NAMES)
            or (isinstance(node, ast.Attribute) and node.attr == "row"))


def _is_position(index: ast.expr) -> bool:
    if isinstance(index, ast.Slice):
        return True
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool)


def positional_reads(source: str) -> list[tuple[int, str, str]]:
    """(line, enclosing function or "", the expression) of every positional row read in `source`."""
    found: list[tuple[int, str, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            function = node.name
        if isinstance(node, ast.Subscript) and _is_row(node.value) and _is_position(node.slice):
            found.append((node.lineno, function, ast.unparse(node)))
        if isinstance(node, ast.Call):
            for arg in node.args:
                if isinstance(arg, ast.Starred) and _is_row(arg.value):
                    found.append((node.lineno, function, ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(ast.parse(source), "")
    return found


def test_query_rows_are_read_by_name() -> None:
    problems = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            allowed = ALLOWED.get(rel, (frozenset(), ""))[0]
            for line, function, text in positional_reads(path.read_text(encoding="utf-8")):
                if allowed is None or function in allowed:
                    continue
                problems.append(f"{rel}:{line} ({function or 'module'}): {text}")
    assert not problems, ("read query rows by column name (store/database/rows.py), not by position:\n"
                          + "\n".join(problems))


def test_allow_list_is_still_needed() -> None:
    """An entry goes once its file reads by name (no stale exceptions)."""
    for rel, (functions, reason) in ALLOWED.items():
        assert reason
        reads = positional_reads((ROOT / rel).read_text(encoding="utf-8"))
        used = {function for _, function, _ in reads}
        assert reads, f"{rel} reads no row by position any more: drop it from ALLOWED"
        if functions is not None:
            assert functions <= used, f"{rel}: {sorted(functions - used)} no longer read by position"


def test_the_check_finds_positional_reads() -> None:
    sample = (
        "def f(db):\n"
        "    r = db.execute('SELECT id, title FROM papers').fetchone()\n"
        "    a = r[1]\n"
        "    b = row[-1]\n"
        "    c = r[:6]\n"
        "    d = p.row[5]\n"
        "    e = Webhook(*row)\n"
        "    return r['title'], row['id'], rows[0], r[key]\n"
    )
    found = [(line, function) for line, function, _ in positional_reads(sample)]
    assert found == [(3, "f"), (4, "f"), (5, "f"), (6, "f"), (7, "f")]
    assert [text for _, _, text in positional_reads("x = r[5]\n")] == ["r[5]"]
