"""SQL lives under store/ only ("The house, round 3"): feeds/, bot/ and the entry package mapwatch/
(the cli and the service) call named functions of the store and hold no SQL of their own, so a
change of the schema is a change of store/ alone (docs/architecture.md, "The layers").

The check reads the AST of every module of those folders (mapwatch/'s links to the layers are not
followed: store/ is where SQL belongs) and reports
- an SQL string: a str constant or an f-string whose text starts, after whitespace, with SELECT,
  INSERT, UPDATE, DELETE, REPLACE, CREATE, DROP, ALTER, PRAGMA, WITH, BEGIN or VACUUM (any case),
  and that SQLite's own parser takes for SQL (a missing table is no matter: " with pages)" or
  "Create Public Threads" are words, not SQL). Docstrings are documentation and are not read;
- a call of `.execute`, `.executemany`, `.executescript` or `.query` on anything, of sqlite-utils'
  table and schema methods (`.table`, `.table_names`, `.view_names`, `.create_table`,
  `.create_view`), of `sqlite3.connect`, and any use of a Database's `.conn`;
- a Database subscripted with a string (`db["papers"]`): a name annotated as a Database or
  assigned from `open_db(...)` or `Database(...)`, a property or function returning one, or a
  call of either.
There is no list of exceptions: what must stay (a PRAGMA for a process setting) goes into a
store function too.
"""

from __future__ import annotations

import ast
import os
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("feeds", "bot", "mapwatch")
SQL_START = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|WITH|BEGIN|VACUUM)\b",
                       re.IGNORECASE)
NOT_SQL = ("syntax error", "incomplete input", "unrecognized token")  # SQLite's words for text it cannot parse
DB_CALLS = frozenset({"execute", "executemany", "executescript", "query",
                      "table", "table_names", "view_names", "create_table", "create_view"})
DB_MAKERS = frozenset({"open_db", "Database"})
DATABASE = re.compile(r"\bDatabase\b")
PLACEHOLDER = re.compile(r"\{[^{}]*\}")  # str.format's fields: `IN ({})`


def layer_modules(root: Path = ROOT) -> Iterator[Path]:
    """Every module of feeds/, bot/ and mapwatch/, the links in mapwatch/ (to store/ and the rest) not followed."""
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(root / folder, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
            yield from (Path(dirpath) / f for f in sorted(filenames) if f.endswith(".py"))


_SCRATCH = sqlite3.connect(":memory:")  # an empty database: every table is missing, the grammar is all


def is_sql(text: str) -> bool:
    """Whether `text` starts with an SQL keyword and SQLite parses it (EXPLAIN: compiled, never run)."""
    if not SQL_START.match(text):
        return False
    try:
        _SCRATCH.execute("EXPLAIN " + PLACEHOLDER.sub("x", text))
    except (sqlite3.Error, sqlite3.Warning) as e:  # no such table, more than one statement: still SQL
        return not any(words in str(e) for words in NOT_SQL)
    return True


def _text(node: ast.JoinedStr) -> str:
    """An f-string's text, each replacement field standing as a name."""
    return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x"
                   for v in node.values)


def _docstrings(nodes: list[ast.AST]) -> set[int]:
    """The ids of the docstring nodes of the module, its classes and functions."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _callee(node: ast.expr) -> str | None:
    """The name a call calls: `f(...)` -> f, `x.f(...)` -> f."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _mentions_database(annotation: ast.expr | None) -> bool:
    """An annotation naming sqlite-utils' Database (`Database`, `Database | None`, `"Database"`)."""
    return annotation is not None and DATABASE.search(ast.unparse(annotation)) is not None


def _database_names(nodes: list[ast.AST]) -> tuple[set[str], set[str]]:
    """The names that hold a Database in this module (annotated or assigned), and the functions
    and properties that return one (with open_db and Database)."""
    held: set[str] = set()
    makers = set(DB_MAKERS)
    for node in nodes:
        returns = getattr(node, "returns", None)  # a function's or property's return annotation
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _mentions_database(returns):
            makers.add(node.name)
    for node in nodes:
        if isinstance(node, ast.arg) and _mentions_database(node.annotation):
            held.add(node.arg)
        elif isinstance(node, ast.AnnAssign) and _mentions_database(node.annotation):
            held.update(name for name in [_callee(node.target)] if name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and _callee(node.value.func) in makers:
            held.update(name for t in node.targets if (name := _callee(t)))
    return held, makers


def _is_database(node: ast.expr, held: set[str], makers: set[str]) -> bool:
    """`node` is a Database: a name or attribute that holds one, or a call of what returns one."""
    if isinstance(node, ast.Call):
        return _callee(node.func) in makers
    return _callee(node) in held | makers


def _is_text(node: ast.expr) -> bool:
    """A string constant or an f-string: a table's name as `db[...]` takes it."""
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def sql_outside_the_store(source: str) -> list[tuple[int, str]]:
    """(line, what) of every SQL string, database call and table access in `source`."""
    nodes = list(ast.walk(ast.parse(source)))
    docstrings, held_and_makers = _docstrings(nodes), _database_names(nodes)
    in_fstrings = {id(v) for node in nodes if isinstance(node, ast.JoinedStr) for v in node.values}
    found: list[tuple[int, str]] = []
    for node in nodes:
        what = None
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) not in docstrings and id(node) not in in_fstrings and is_sql(node.value):
                what = "SQL string"
        elif isinstance(node, ast.JoinedStr) and is_sql(_text(node)):
            what = "SQL f-string"
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            if node.func.attr in DB_CALLS:
                what = f"a call of .{node.func.attr}"
            elif node.func.attr == "connect" and _callee(node.func.value) == "sqlite3":
                what = "an SQLite connection opened"
        elif isinstance(node, ast.Attribute) and node.attr == "conn":
            what = "a Database's connection"
        elif isinstance(node, ast.Subscript) and _is_text(node.slice) and _is_database(node.value, *held_and_makers):
            what = "a table taken from a Database"
        if what:
            found.append((getattr(node, "lineno", 0), f"{what}: {ast.unparse(node)[:100]}"))
    return sorted(found)


def problems_under(root: Path) -> list[str]:
    """`path:line: what` for each finding in the modules of feeds/, bot/ and mapwatch/ under `root`."""
    return [f"{m.relative_to(root).as_posix()}:{line}: {what}" for m in layer_modules(root)
            for line, what in sql_outside_the_store(m.read_text(encoding="utf-8"))]


def test_feeds_bot_and_the_entry_package_hold_no_sql() -> None:
    modules = list(layer_modules())
    assert len(modules) > 60, len(modules)  # the walk saw the layers
    assert not [m for m in modules if m.resolve().is_relative_to(ROOT / "store")]  # and not through the links
    problems = problems_under(ROOT)
    assert not problems, "SQL belongs in store/: call a named store function instead\n" + "\n".join(problems)


def _kinds(source: str) -> list[str]:
    return [what.split(":")[0] for _, what in sql_outside_the_store(source)]


def test_the_check_sees_sql_strings() -> None:
    assert _kinds('state = named_row(db, "SELECT base_url FROM feed_publishes WHERE out_dir = ?", (key,))\n') == [
        "SQL string"]
    assert _kinds('cols = "\\n  insert into papers (id) values (?)"\n') == ["SQL string"]
    assert _kinds('q = "WITH t AS (SELECT 1) SELECT * FROM t"\n') == ["SQL string"]
    assert _kinds('q = "DELETE FROM tracks WHERE id IN ({})".format(marks)\n') == ["SQL string"]
    assert _kinds('script = "CREATE TABLE a (x); CREATE TABLE b (y);"\n') == ["SQL string"]
    assert _kinds('q = "begin immediate"\n') == ["SQL string"]
    assert _kinds('q = f"PRAGMA busy_timeout = {int(timeout * 1000)}"\n') == ["SQL f-string"]
    assert _kinds('q = f"SELECT {cols} FROM {table} LIMIT {n}"\n') == ["SQL f-string"]


def test_the_check_leaves_words_and_docstrings_alone() -> None:
    source = '''
"""SELECT * FROM papers: a docstring that shows a query."""
def f() -> str:
    """Update the feeds, then delete what is left."""
    return f"({s.papers:,} with pages), " + "Create Public Threads" + "with --team: the server" + "with"
def g(health: dict) -> int:
    row = {"id": 1}
    db = health["database"]
    return row["id"] + db["size_bytes"]
'''
    assert sql_outside_the_store(source) == []


def test_the_check_sees_database_calls() -> None:
    assert _kinds("db.conn.execute(sql, params)\n") == ["a Database's connection", "a call of .execute"]
    assert _kinds("conn.executemany(sql, rows)\nconn.executescript(script)\n") == [
        "a call of .executemany", "a call of .executescript"]
    assert _kinds("rows = list(db.query(sql))\n") == ["a call of .query"]
    assert _kinds("names = db.table_names()\n") == ["a call of .table_names"]
    assert _kinds("conn = sqlite3.connect(path)\n") == ["an SQLite connection opened"]
    assert _kinds("count_papers(db.conn)\n") == ["a Database's connection"]


def test_the_check_sees_tables_taken_from_a_database() -> None:
    assert _kinds('def f(db: Database) -> int:\n    return db["papers"].count\n') == [
        "a table taken from a Database"]
    assert _kinds('def f(db: "Database | None") -> None:\n    db["papers"].insert({})\n') == [
        "a table taken from a Database"]
    assert _kinds('d = open_db(path)\nd["tracks"].delete_where()\n') == ["a table taken from a Database"]
    assert _kinds('open_db(path)["tracks"].delete_where()\n') == ["a table taken from a Database"]
    assert _kinds('db: Database = open_db(path)\ndb[f"{name}_fts"].rows\n') == ["a table taken from a Database"]
    source = ('class C:\n    @property\n    def db(self) -> Database:\n        return self._db\n'
              '    def f(self) -> None:\n        self.db["papers"].insert({})\n')
    assert _kinds(source) == ["a table taken from a Database"]


def test_a_planted_query_in_a_layer_is_reported_and_the_store_is_not(tmp_path: Path) -> None:
    planted = ('def _record(db: Database, key: str) -> None:\n    with db.atomic():\n'
               '        db.conn.execute("INSERT INTO feed_publishes (out_dir) VALUES (?)", (key,))\n')
    for folder in ("feeds", "bot", "mapwatch/service", "store/database"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "feeds" / "publish.py").write_text(planted)
    (tmp_path / "store" / "database" / "published_files.py").write_text(planted)
    (tmp_path / "mapwatch" / "store").symlink_to(tmp_path / "store")
    (tmp_path / "mapwatch" / "service" / "services.py").write_text(
        'def has_papers(db: Database) -> bool:\n'
        '    return bool(db.execute("SELECT count(*) FROM papers").fetchone()[0])\n')
    assert problems_under(tmp_path) == [
        "feeds/publish.py:3: SQL string: 'INSERT INTO feed_publishes (out_dir) VALUES (?)'",
        "feeds/publish.py:3: a Database's connection: db.conn",
        "feeds/publish.py:3: a call of .execute:"
        " db.conn.execute('INSERT INTO feed_publishes (out_dir) VALUES (?)', (key,))",
        "mapwatch/service/services.py:2: SQL string: 'SELECT count(*) FROM papers'",
        "mapwatch/service/services.py:2: a call of .execute: db.execute('SELECT count(*) FROM papers')"]


def test_the_walk_does_not_follow_the_links(tmp_path: Path) -> None:
    for folder in ("feeds", "store", "mapwatch/cli"):
        (tmp_path / folder).mkdir(parents=True)
        (tmp_path / folder / "m.py").write_text("")
    (tmp_path / "bot").mkdir()
    (tmp_path / "mapwatch" / "store").symlink_to(tmp_path / "store")
    found = [p.relative_to(tmp_path).as_posix() for p in layer_modules(tmp_path)]
    assert found == ["feeds/m.py", "mapwatch/cli/m.py"]
