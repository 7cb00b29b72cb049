"""An AUTOINCREMENT table's id sequence carried over to the table that replaces it, as SQL. Not a
migration itself: 0047 and 0049 copy the events into a new table under the same ids, and an id
once given (even deleted since) must not be given again."""

from __future__ import annotations


def carry_sequence(old: str, new: str) -> str:
    """SQL giving table `new` the id sequence of table `old` where it is higher (the copy's own
    rows set `new`'s to their largest id), or `old`'s when `new` has none yet."""
    return f"""
        UPDATE sqlite_sequence SET seq = max(seq, (SELECT seq FROM sqlite_sequence WHERE name = '{old}'))
            WHERE name = '{new}' AND EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '{old}');
        INSERT INTO sqlite_sequence (name, seq)
            SELECT '{new}', seq FROM sqlite_sequence WHERE name = '{old}'
            AND NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = '{new}');
"""
