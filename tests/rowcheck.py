"""Finding query rows read by position (shared by tests/unit/test_rows_by_name.py).

A read like `r[5]`, `row[1:]` or `Webhook(*row)` shifts silently when a column is added to a
SELECT; `r["cited_by"]` does not. So the check follows values, not variable names: it marks what
came from a query and flags every subscript of a row by a constant index or a slice, and every
`*` spread of one, whatever the variable holding it is called.

What comes from a query, followed across the whole package (store/, feeds/, bot/, mapwatch/):

- a call of `execute`, `fetchall`, `fetchmany` (rows) or `fetchone` (a row);
- a call of a function annotated to return `sqlite3.Row` (a row) or a container of them, or a
  `sqlite3.Cursor` (rows): the helpers in store/database/rows.py among them;
- a call of a project function that returns such a value, found by following its `return`s;
- a parameter annotated so, or one a project function is called with such a value for;
- a name bound from any of these in the same function: by assignment, as the target of a `for`
  or a comprehension over rows, as an element of a list (or dict) of rows, `.append`ed to one;
  lambdas given as `key=` over rows (`sorted(rows, key=lambda r: ...)`) get a row.

Tuple-unpacking a row (`for a, b in conn.execute("SELECT a, b ...")`, `(n,) = row`, and
`dict(conn.execute("SELECT key, value ..."))`, which unpacks pairs) is not flagged: the names
sit beside the SELECT that gives them, and a column added to it is a ValueError at once, not a
shifted read. Neither is what the check cannot see as a subscript (`operator.itemgetter(0)`):
none is left in the package.
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

ROW, ROWS = "row", "rows"  # a query row; something holding or yielding rows (cursor, list, dict)
Kinds = frozenset[str]
NONE: Kinds = frozenset()
A_ROW: Kinds = frozenset({ROW})
SOME_ROWS: Kinds = frozenset({ROWS})

QUERY_CALLS: dict[str, Kinds] = {"execute": SOME_ROWS, "fetchall": SOME_ROWS, "fetchmany": SOME_ROWS,
                                 "fetchone": A_ROW}
SAME_KIND = {"list", "tuple", "sorted", "reversed", "iter", "set", "frozenset"}  # f(rows) -> rows
KEYED = {"sorted", "min", "max", "sort", "nsmallest", "nlargest", "groupby"}  # key=lambda gets an element
Key = tuple[str, str]  # (module, qualified function name)
Env = dict[str, Kinds]


def _annotation_kinds(annotation: ast.expr | None) -> Kinds:
    """`sqlite3.Row | None`: a row; `list[sqlite3.Row]`, `sqlite3.Cursor`: rows. (A bare `Row` may
    be a module's own tuple alias, as in direction_pagerank.py: it is not one.)"""
    if annotation is None:
        return NONE
    text = ast.unparse(annotation)
    if re.search(r"\[[^]]*\bsqlite3\.Row\b", text) or "sqlite3.Cursor" in text:
        return SOME_ROWS
    return A_ROW if re.search(r"\bsqlite3\.Row\b", text) else NONE


def _is_position(index: ast.expr) -> bool:
    if isinstance(index, ast.Slice):
        return True
    if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
        index = index.operand
    return isinstance(index, ast.Constant) and isinstance(index.value, int) and not isinstance(index.value, bool)


def _called_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


@dataclass
class Function:
    key: Key
    node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.Module
    module: Module
    cls: str | None = None  # the class a method is defined in
    local_defs: dict[str, Key] = field(default_factory=dict)  # functions defined inside it
    parent: Function | None = None

    def param_names(self) -> list[str]:
        if isinstance(self.node, ast.Module):
            return []
        a = self.node.args
        return [p.arg for p in [*a.posonlyargs, *a.args, *a.kwonlyargs]]


@dataclass
class Module:
    name: str
    path: str  # relative to the root, for messages
    tree: ast.Module
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    defs: dict[str, Key] = field(default_factory=dict)  # top-level functions and classes' methods


def module_name(rel: str) -> str:
    """store/questions/queries.py -> mapwatch.store.questions.queries (mapwatch/ links the folders)."""
    parts = rel.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts if parts[0] == "mapwatch" else ["mapwatch", *parts])


def package_files(root: Path, folders: tuple[str, ...]) -> Iterator[tuple[str, str]]:
    """(path relative to root, source) of every module below the folders; links are not followed
    (mapwatch/store is store/)."""
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(root / folder):
            dirnames.sort()
            for name in sorted(filenames):
                if name.endswith(".py"):
                    path = Path(dirpath) / name
                    yield path.relative_to(root).as_posix(), path.read_text(encoding="utf-8")


class Project:
    """Every module at once: what functions return and get called with crosses files."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.modules: dict[str, Module] = {}
        self.functions: dict[Key, Function] = {}
        self.returns: dict[Key, Kinds] = {}
        self.params: dict[Key, Env] = {}
        for rel, source in sources.items():
            name = module_name(rel) if "/" in rel else rel
            module = Module(name, rel, ast.parse(source))
            self.modules[name] = module
            self._index(module)

    def _index(self, module: Module) -> None:
        top = Function((module.name, "<module>"), module.tree, module)
        self.functions[top.key] = top
        for node in ast.walk(module.tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        module.imports[alias.asname] = alias.name
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    module.imports[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        self._index_body(module, module.tree.body, top, None, "")

    def _index_body(self, module: Module, body: list[ast.stmt], parent: Function, cls: str | None,
                    prefix: str) -> None:
        for node in _own_statements(body):
            if isinstance(node, ast.ClassDef):
                self._index_body(module, node.body, parent, node.name, f"{prefix}{node.name}.")
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                fn = Function((module.name, prefix + node.name), node, module, cls, parent=parent)
                self.functions[fn.key] = fn
                if isinstance(parent.node, ast.Module):
                    module.defs[prefix + node.name] = fn.key
                if cls is None:
                    parent.local_defs.setdefault(node.name, fn.key)
                self._index_body(module, node.body, fn, None, f"{prefix}{node.name}.<locals>.")

    def resolve(self, func: ast.expr, scope: Function) -> Key | None:
        """The project function a call's callee names, if it names one."""
        if isinstance(func, ast.Name):
            s: Function | None = scope
            while s is not None:
                if func.id in s.local_defs:
                    return s.local_defs[func.id]
                s = s.parent
            return self._dotted(f"{scope.module.name}.{func.id}", 0)
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = func.value.id
            if base in {"self", "cls"} and scope.cls:
                return scope.module.defs.get(f"{scope.cls}.{func.attr}")
            target = scope.module.imports.get(base)
            if target:
                return self._dotted(f"{target}.{func.attr}", 0)
        return None

    def _dotted(self, dotted: str, depth: int) -> Key | None:
        """`mapwatch.store.x.f` -> its Key, through the names modules import from others."""
        mod, _, name = dotted.rpartition(".")
        module = self.modules.get(mod)
        if module is None or depth > 5:
            return None
        if name in module.defs:
            return module.defs[name]
        if name in module.imports:
            return self._dotted(module.imports[name], depth + 1)
        return None

    def run(self) -> list[tuple[str, int, str, str]]:
        """(path, line, enclosing function, expression) of every positional read of a row: the
        walk is repeated until what functions return and get called with stops growing."""
        # A function inside another is walked from it (it sees its names); a method on its own.
        roots = [fn for fn in self.functions.values()
                 if fn.parent is None or isinstance(fn.parent.node, ast.Module) or fn.cls is not None]
        while True:
            before = (dict(self.returns), {k: dict(v) for k, v in self.params.items()})
            found = [read for fn in roots for read in Walker(self, fn, {}).walk()]
            if (self.returns, self.params) == before:
                return sorted(set(found))


class Walker:
    """One function: which names hold rows, then every read of them by position."""

    def __init__(self, project: Project, fn: Function, outer: Env) -> None:
        self.project = project
        self.fn = fn
        self.env: Env = dict(outer)
        if not isinstance(fn.node, ast.Module):
            for name in fn.param_names():
                self.env.pop(name, None)
            args = fn.node.args
            for p in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                self._bind_name(p.arg, _annotation_kinds(p.annotation))
            for name, kinds in project.params.get(fn.key, {}).items():
                self._bind_name(name, kinds)
        self.found: list[tuple[str, int, str, str]] = []
        self.lambda_gets: dict[int, Kinds] = {}  # id of a lambda given to sorted() & co -> what it is called with

    # ---------------------------------------------------------------- what an expression is

    def kind(self, e: ast.expr | None, env: Env | None = None) -> Kinds:
        env = self.env if env is None else env
        if e is None:
            return NONE
        if isinstance(e, ast.Name):
            return env.get(e.id, NONE)
        if isinstance(e, ast.Call):
            return self._call_kind(e, env)
        if isinstance(e, ast.Subscript):
            base = self.kind(e.value, env)
            if ROWS in base:  # rows[0] is a row, rows[1:] rows
                return SOME_ROWS if isinstance(e.slice, ast.Slice) else A_ROW
            return A_ROW if ROW in base and isinstance(e.slice, ast.Slice) else NONE  # row[1:6]: a row still
        if isinstance(e, ast.BoolOp):
            return frozenset().union(*(self.kind(v, env) for v in e.values))
        if isinstance(e, ast.IfExp):
            return self.kind(e.body, env) | self.kind(e.orelse, env)
        if isinstance(e, ast.NamedExpr | ast.Await):
            return self.kind(e.value, env)
        if isinstance(e, ast.ListComp | ast.SetComp | ast.GeneratorExp):
            return SOME_ROWS if self.kind(e.elt, self._comprehension_env(e, env)) else NONE
        if isinstance(e, ast.DictComp):
            return SOME_ROWS if self.kind(e.value, self._comprehension_env(e, env)) else NONE
        if isinstance(e, ast.List | ast.Tuple | ast.Set):
            return SOME_ROWS if any(self.kind(x, env) for x in e.elts) else NONE
        return NONE

    def _call_kind(self, call: ast.Call, env: Env) -> Kinds:
        key = self.project.resolve(call.func, self.fn)
        if key is not None:
            target = self.project.functions[key].node
            annotated = NONE if isinstance(target, ast.Module | ast.Lambda) else _annotation_kinds(target.returns)
            return annotated | self.project.returns.get(key, NONE)
        name = _called_name(call.func)
        if name in QUERY_CALLS:
            return QUERY_CALLS[name]
        first = self.kind(call.args[0], env) if call.args else NONE
        if isinstance(call.func, ast.Name) and name in SAME_KIND:
            return first
        if isinstance(call.func, ast.Name) and name == "next":
            return A_ROW if ROWS in first else NONE
        if isinstance(call.func, ast.Attribute) and ROWS in self.kind(call.func.value, env):
            return {"get": A_ROW, "pop": A_ROW, "values": SOME_ROWS, "copy": SOME_ROWS}.get(call.func.attr, NONE)
        return NONE

    def _element(self, iterable: ast.expr, env: Env) -> Kinds:
        return A_ROW if ROWS in self.kind(iterable, env) else NONE

    # ---------------------------------------------------------------- names bound to rows

    def _bind_name(self, name: str, kinds: Kinds, env: Env | None = None) -> bool:
        env = self.env if env is None else env
        if kinds and not kinds <= env.get(name, NONE):
            env[name] = env.get(name, NONE) | kinds
            return True
        return False

    def _bind(self, target: ast.expr, kinds: Kinds, env: Env) -> bool:
        """`target = value` where value is of `kinds`; unpacking a row binds plain values."""
        if isinstance(target, ast.Name):
            return self._bind_name(target.id, kinds, env)
        if isinstance(target, ast.Starred):
            return self._bind(target.value, SOME_ROWS if ROWS in kinds else NONE, env)
        if isinstance(target, ast.Tuple | ast.List) and ROWS in kinds:
            return any([self._bind(t, A_ROW, env) for t in target.elts])
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and kinds:
            return self._bind_name(target.value.id, SOME_ROWS, env)  # rows_by_id[k] = row
        return False

    def _bind_loop(self, target: ast.expr, iterable: ast.expr, env: Env) -> bool:
        """`for target in iterable`, through enumerate(), zip() and .items()."""
        if isinstance(iterable, ast.Call) and isinstance(target, ast.Tuple):
            name = _called_name(iterable.func)
            if name == "enumerate" and iterable.args and len(target.elts) == 2:
                return self._bind(target.elts[1], self._element(iterable.args[0], env), env)
            if name == "zip" and len(iterable.args) == len(target.elts):
                pairs = zip(target.elts, iterable.args, strict=True)
                return any([self._bind(t, self._element(a, env), env) for t, a in pairs])
            if name == "items" and isinstance(iterable.func, ast.Attribute) and len(target.elts) == 2:
                return self._bind(target.elts[1], self._element(iterable.func.value, env), env)
        return self._bind(target, self._element(iterable, env), env)

    def _comprehension_env(self, e: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp,
                           env: Env) -> Env:
        inner = dict(env)
        for gen in e.generators:
            for name in _target_names(gen.target):
                inner.pop(name, None)
            self._bind_loop(gen.target, gen.iter, inner)
        return inner

    def _own_nodes(self) -> Iterator[ast.AST]:
        """The function's own statements and expressions, not those of functions inside it."""
        body = self.fn.node.body if not isinstance(self.fn.node, ast.Lambda) else [self.fn.node.body]
        stack: list[ast.AST] = list(reversed(body))
        while stack:
            node = stack.pop()
            yield node
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | ast.ClassDef):
                continue
            stack.extend(reversed(list(ast.iter_child_nodes(node))))

    def _settle(self) -> None:
        """Bind names until nothing changes (a later line may say what an earlier one holds)."""
        changed = True
        while changed:
            changed = False
            for node in self._own_nodes():
                changed |= self._binding(node)

    def _binding(self, node: ast.AST) -> bool:
        env = self.env
        if isinstance(node, ast.Assign):
            kinds = self.kind(node.value)
            return any([self._bind(t, kinds, env) for t in node.targets])
        if isinstance(node, ast.AnnAssign):
            return self._bind(node.target, self.kind(node.value) | _annotation_kinds(node.annotation), env)
        if isinstance(node, ast.AugAssign):
            return self._bind(node.target, self.kind(node.value), env)
        if isinstance(node, ast.NamedExpr):
            return self._bind(node.target, self.kind(node.value), env)
        if isinstance(node, ast.For | ast.AsyncFor):
            return self._bind_loop(node.target, node.iter, env)
        if isinstance(node, ast.withitem) and node.optional_vars is not None:
            return self._bind(node.optional_vars, self.kind(node.context_expr), env)
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name) and node.args):
            added = self.kind(node.args[-1])
            if node.func.attr in {"append", "add", "insert"} and ROW in added:
                return self._bind_name(node.func.value.id, SOME_ROWS)
            if node.func.attr == "extend" and ROWS in added:
                return self._bind_name(node.func.value.id, SOME_ROWS)
        return False

    # ---------------------------------------------------------------- the reads

    def walk(self) -> list[tuple[str, int, str, str]]:
        self._settle()
        if not isinstance(self.fn.node, ast.Module | ast.Lambda):
            returns = NONE
            for node in self._own_nodes():
                if isinstance(node, ast.Return) and node.value is not None:
                    returns |= self.kind(node.value)
                elif isinstance(node, ast.Yield) and self.kind(node.value):
                    returns |= SOME_ROWS  # a generator of rows
                elif isinstance(node, ast.YieldFrom):
                    returns |= self.kind(node.value)
            if returns:
                self.project.returns[self.fn.key] = self.project.returns.get(self.fn.key, NONE) | returns
        body = self.fn.node.body if not isinstance(self.fn.node, ast.Lambda) else [self.fn.node.body]
        for stmt in body:
            self._visit(stmt, self.env)
        return self.found

    def _function_name(self) -> str:
        name = self.fn.key[1]
        return "" if name == "<module>" else name

    def _flag(self, node: ast.AST, lineno: int) -> None:
        self.found.append((self.fn.module.path, lineno, self._function_name(), ast.unparse(node)))

    def _visit(self, node: ast.AST, env: Env) -> None:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            key = self.fn.local_defs.get(node.name)
            if key is not None and not isinstance(self.fn.node, ast.Module):  # a module's functions are roots
                self.found += Walker(self.project, self.project.functions[key], env).walk()
            return
        if isinstance(node, ast.ClassDef):
            for stmt in node.body:
                if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef):
                    self._visit(stmt, env)
            return
        if isinstance(node, ast.Lambda):
            self._visit_lambda(node, self.lambda_gets.get(id(node), NONE), env)
            return
        if isinstance(node, ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp):
            env = self._comprehension_env(node, env)
        if isinstance(node, ast.Subscript) and _is_position(node.slice) and ROW in self.kind(node.value, env):
            self._flag(node, node.lineno)
        if isinstance(node, ast.Call):
            self._visit_call(node, env)
        if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Call):
            parts = node.args if isinstance(node, ast.Call) else node.elts
            for part in parts:
                if isinstance(part, ast.Starred) and ROW in self.kind(part.value, env):
                    self._flag(node, node.lineno)
        for child in ast.iter_child_nodes(node):
            self._visit(child, env)

    def _visit_call(self, call: ast.Call, env: Env) -> None:
        """What the callee's parameters get, and what the lambdas given to sorted() & co are called with."""
        key = self.project.resolve(call.func, self.fn)
        if key is not None:
            target = self.project.functions[key]
            names = target.param_names()
            if target.cls is not None and names and names[0] in {"self", "cls"}:
                names = names[1:]
            got = self.project.params.setdefault(key, {})
            pairs = [(names[i], a) for i, a in enumerate(call.args)
                     if i < len(names) and not isinstance(a, ast.Starred)]
            pairs += [(k.arg, k.value) for k in call.keywords if k.arg in names]
            for name, arg in pairs:
                kinds = self.kind(arg, env)
                if kinds and not kinds <= got.get(name, NONE):
                    got[name] = got.get(name, NONE) | kinds
        name = _called_name(call.func)
        if name not in KEYED | {"map", "filter"}:
            return
        over = [a for a in call.args if not isinstance(a, ast.Lambda)]
        if name == "sort" and isinstance(call.func, ast.Attribute):
            over = [call.func.value]
        if any(ROWS in self.kind(a, env) for a in over):
            for fn in [*call.args, *(k.value for k in call.keywords)]:
                if isinstance(fn, ast.Lambda):
                    self.lambda_gets[id(fn)] = A_ROW

    def _visit_lambda(self, fn: ast.Lambda, element: Kinds, env: Env) -> None:
        inner = {k: v for k, v in env.items() if k not in {a.arg for a in fn.args.args}}
        if element and fn.args.args:
            inner[fn.args.args[0].arg] = element
        self._visit(fn.body, inner)


def _own_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    """The statements of a body, into its if/for/with/try blocks, not into functions or classes."""
    for stmt in body:
        yield stmt
        if not isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            for child in ast.iter_child_nodes(stmt):
                if isinstance(child, ast.stmt):
                    yield from _own_statements([child])
                elif isinstance(child, ast.excepthandler | ast.match_case):
                    yield from _own_statements(child.body)


def _target_names(target: ast.expr) -> list[str]:
    return [n.id for n in ast.walk(target) if isinstance(n, ast.Name)]


def positional_reads(sources: dict[str, str]) -> list[tuple[str, int, str, str]]:
    """(path, line, enclosing function or "", expression) of every positional row read in the
    modules given as path -> source (one analysis: calls between them are followed)."""
    return Project(sources).run()
