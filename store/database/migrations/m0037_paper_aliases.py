"""Migration 0037_paper_aliases: citers beyond arXiv, one citer per work."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0037_paper_aliases"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """A citer beyond arXiv is keyed by its DOI, else its OpenAlex work id (store/ids.py). When
    the same work turns out to be an arXiv paper (OpenAlex merges the versions, or arXiv names
    the DOI), its rows move to the arXiv id and the old key is kept here, so `/paper <DOI>`
    still finds it (store/scholarly/versions.py). The two
    partial indexes find an arXiv paper by a journal DOI arXiv or OpenAlex gives it."""
    db.executescript(
        """
        CREATE TABLE paper_aliases (
            alias TEXT PRIMARY KEY,         -- the key the work had before: a DOI or an OpenAlex work id
            paper_id TEXT NOT NULL,         -- the arXiv id it is stored under now
            merged_at TEXT NOT NULL,        -- when the two were found to be one work
            how TEXT NOT NULL               -- what said so: 'openalex-work', 'arxiv-doi', 'openalex-doi'
        ) WITHOUT ROWID;
        CREATE INDEX paper_aliases_paper ON paper_aliases(paper_id);
        CREATE INDEX arxiv_records_doi ON arxiv_records(doi) WHERE doi IS NOT NULL;
        CREATE INDEX openalex_works_doi ON openalex_works(doi)
            WHERE doi IS NOT NULL AND doi NOT LIKE '10.48550/%';
        """
    )
