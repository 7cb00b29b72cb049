"""Papers' integer keys (migration 0049): the Python and SQL functions agree on every id, two
ids never share a key, a new-style id's key sorts as the id does, and `keys_of` gives an id its
key once."""

from __future__ import annotations

import sqlite3
from contextlib import closing

import pytest

from mapwatch.store.database.db import open_db
from mapwatch.store.database.migrations._paper_keys import OUTSIDE_FIRST, arxiv_key, arxiv_key_sql
from mapwatch.store.database.paper_keys import key_of, keys_of

NEW_STYLE = ["0704.0001", "0704.0002", "0712.9999", "1412.9999", "1501.00001", "1501.00010", "2412.10400",
             "2507.04136", "9912.99999"]
OTHERS = ["hep-th/9901001", "math.AG/0601001", "10.1145/3292500.3330701", "W2741809807",
          "1501.0001",     # four digits after 2014: not how arXiv writes it
          "0704.00001",    # five digits before 2015: would share 0704.0001's key
          "2412.10400v2", "2412.1040", "24120.10400", "2412-10400", "２４１２.10400", "", " 2412.10400"]


@pytest.mark.parametrize("pid", NEW_STYLE + OTHERS)
def test_python_and_sql_give_the_same_key(pid: str) -> None:
    with closing(sqlite3.connect(":memory:")) as conn:
        (sql,) = conn.execute(f"SELECT {arxiv_key_sql('?1')}", (pid,)).fetchone()
    assert sql == arxiv_key(pid)
    assert (sql is None) == (pid in OTHERS)


def test_new_style_keys_sort_as_their_ids_and_never_meet() -> None:
    keys = [arxiv_key(pid) for pid in NEW_STYLE]
    assert keys == sorted(keys) and len(set(keys)) == len(keys)
    assert arxiv_key("2412.10400") == 241_210_400 and max(k for k in keys if k is not None) < OUTSIDE_FIRST
    assert OUTSIDE_FIRST + 10**8 < 2**31  # still a 4-byte integer in a record


def test_keys_of_gives_each_id_one_key(tmp_path) -> None:
    db = open_db(tmp_path / "k.db")
    with db.conn:
        first = keys_of(db.conn, ["2412.10400", "hep-th/9901001", "W2741809807", "2412.10400"])
    assert first == {"2412.10400": 241_210_400, "W2741809807": OUTSIDE_FIRST, "hep-th/9901001": OUTSIDE_FIRST + 1}
    with db.conn:  # asked again, with new ones: the stored keys stay, the new ones come after
        again = keys_of(db.conn, ["hep-th/9901001", "10.1145/3292500.3330701", "1501.00001"])
        assert key_of(db.conn, "W2741809807") == OUTSIDE_FIRST
    assert again == {"hep-th/9901001": OUTSIDE_FIRST + 1, "10.1145/3292500.3330701": OUTSIDE_FIRST + 2,
                     "1501.00001": 150_100_001}
    rows = db.conn.execute("SELECT key, id FROM paper_keys ORDER BY key").fetchall()
    assert len(rows) == 5 and len({i for _, i in rows}) == 5
