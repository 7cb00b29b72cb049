"""Migration 0025_author_indexes: a person's papers read from the author indexes alone."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0025_author_indexes"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """A person's papers read from the index alone: /author, its autocomplete and follows look
    a person up by OpenAlex id or ORCID and want their papers' ids; with the paper id in the
    index, the few hundred rows of a prolific author are one range of it, not a table row each
    (bench/authors.py)."""
    db.executescript(
        """
        DROP INDEX paper_authors_author_id;
        DROP INDEX paper_authors_orcid;
        CREATE INDEX paper_authors_author_paper ON paper_authors(author_id, paper_id) WHERE author_id IS NOT NULL;
        CREATE INDEX paper_authors_orcid_paper ON paper_authors(orcid, paper_id) WHERE orcid IS NOT NULL;
        """
    )
