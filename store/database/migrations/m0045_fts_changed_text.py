"""Migration 0045_fts_changed_text: the full-text indexes of a paper are rewritten only when its
title or abstract changed (issue 44, busy ticks), not on every write of its row."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0045_fts_changed_text"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Each page stored writes its paper's row again (its count, its dates), and that fired
    `papers_au`, which took the title and abstract out of `papers_fts` and put them back, and
    `papers_title_au` the same for the title: the text tokenised twice, for nothing when it had
    not changed. Both triggers now fire only when the text differs. The indexes hold the same
    text either way; nothing is rebuilt."""
    db.executescript(
        """
        DROP TRIGGER papers_au;
        CREATE TRIGGER "papers_au" AFTER UPDATE ON "papers"
            WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract BEGIN
          INSERT INTO "papers_fts" ("papers_fts", rowid, "title", "abstract")
              VALUES('delete', old.rowid, old."title", old."abstract");
          INSERT INTO "papers_fts" (rowid, "title", "abstract") VALUES (new.rowid, new."title", new."abstract");
        END;
        DROP TRIGGER papers_title_au;
        CREATE TRIGGER papers_title_au AFTER UPDATE OF title ON papers WHEN old.title IS NOT new.title BEGIN
          INSERT INTO papers_title_fts (papers_title_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
          INSERT INTO papers_title_fts (rowid, title) VALUES (new.rowid, new.title);
        END;
        """
    )
