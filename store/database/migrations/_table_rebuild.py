"""Rebuilding a table with its CREATE statement edited, for migrations that change what SQLite
cannot alter in place (a NOT NULL dropped, a CHECK widened). Not a migration itself: a
migration module imports it (store/database/migrations/m0020_teams.py)."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.rows import named_rows, one_column, scalar


def rebuild_table(db: Database, table: str, edits: list[tuple[str, str]], extra: str = "",
                  options: str = "") -> None:
    """Rebuild `table` with its stored CREATE statement edited (SQLite cannot drop a NOT NULL or
    change a CHECK in place): every column another migration added is kept, its rows, indexes
    and AUTOINCREMENT sequence too. `extra` (columns, then table constraints) goes at its end,
    `options` after its closing parenthesis (" WITHOUT ROWID")."""
    conn = db.conn
    sql = scalar(conn, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
    for old, new in edits:
        if old not in sql:
            raise RuntimeError(f"{table}: the schema does not hold {old!r}")
        sql = sql.replace(old, new, 1)
    if extra:
        end = sql.rindex(")")
        sql = f"{sql[:end]}\n, {extra}\n)"  # a newline first: the last line may end in a comment
    head = sql.index("(")
    indexes = one_column(
        conn, "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name",
        (table,))
    columns = ", ".join(f"[{r['name']}]" for r in named_rows(conn, f"PRAGMA table_info([{table}])"))
    seq = scalar(conn, "SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)) \
        if "AUTOINCREMENT" in sql.upper() else None
    with db.atomic():  # the migration's transaction (a savepoint in it), or one of its own
        conn.execute(f"CREATE TABLE [{table}_rebuilt] {sql[head:]}{options}")
        conn.execute(f"INSERT INTO [{table}_rebuilt] ({columns}) SELECT {columns} FROM [{table}]")
        conn.execute(f"DROP TABLE [{table}]")
        conn.execute(f"ALTER TABLE [{table}_rebuilt] RENAME TO [{table}]")
        for index in indexes:
            conn.execute(index)
        if seq is not None:
            conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", (seq, table))


def rebuild_without_rowid(db: Database, table: str) -> None:
    """Rebuild `table` (a composite primary key) WITHOUT ROWID: its rows then live in the primary
    key's b-tree once, not in a table and again in the key's index. A table already WITHOUT
    ROWID is left as it is."""
    sql = scalar(db.conn, "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,))
    if sql is not None and not sql.upper().endswith("WITHOUT ROWID"):
        rebuild_table(db, table, [], options=" WITHOUT ROWID")
