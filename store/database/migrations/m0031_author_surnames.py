"""Migration 0031_author_surnames: authors looked up by the last word of their name."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0031_author_surnames"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """An index on the last word of each author's name (its surname, as the sources write
    names: given names first), any case, with the paper and the whole name: /search finds a
    person's papers by surname alone ("Halvorsen") or with an initial ("I. Halvorsen")
    from the index alone, newest paper first. The expression keeps what follows the last
    space (names are stored single-spaced, store/records.py `clean`); queries repeat
    it exactly (store/questions/authors.py SURNAME) for SQLite to use the index."""
    db.executescript(
        """
        CREATE INDEX paper_authors_surname
          ON paper_authors(replace(name, rtrim(name, replace(name, ' ', '')), '') COLLATE NOCASE, paper_id, name);
        """
    )
