"""Migration 0008_title_index: a full-text index over titles alone (papers_title_fts)."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0008_title_index"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """A full-text index over titles alone, for autocomplete and title lookups: matching
    words in titles without reading the abstracts' much larger index (docs/bot.md, "Commands")."""
    db.executescript(
        """
        -- Titles only, kept in step with papers by the triggers below (external content).
        CREATE VIRTUAL TABLE papers_title_fts USING fts5(title, tokenize='porter', content='papers',
                                                         content_rowid='rowid');
        CREATE TRIGGER papers_title_ai AFTER INSERT ON papers BEGIN
          INSERT INTO papers_title_fts (rowid, title) VALUES (new.rowid, new.title);
        END;
        CREATE TRIGGER papers_title_ad AFTER DELETE ON papers BEGIN
          INSERT INTO papers_title_fts (papers_title_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
        END;
        CREATE TRIGGER papers_title_au AFTER UPDATE OF title ON papers BEGIN
          INSERT INTO papers_title_fts (papers_title_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
          INSERT INTO papers_title_fts (rowid, title) VALUES (new.rowid, new.title);
        END;
        INSERT INTO papers_title_fts (papers_title_fts) VALUES ('rebuild');
        """
    )
