"""Migration 0044_people: each person stored once (issue 44): a paper's byline row holds a
number for its author, not their name, OpenAlex id and ORCID again under five indexes."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0044_people"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """`paper_authors` becomes a view of two tables, with its columns as they were:
    `people` (a name, OpenAlex id and ORCID, each combination once, under a number) and
    `paper_people` (a paper's authors in order: the person's number, and whether the list is
    OpenAlex's). The lookups by name, surname, OpenAlex id and ORCID index `people`, which has
    a row a person instead of a row an author slot; `paper_people_person` goes from a person
    to their papers. A person no byline names any more is deleted with their last row
    (trigger `paper_people_forget`; a list rewritten in place deletes the people it replaced
    itself). An empty id or ORCID (no parser gives one) is stored as none: the unique index
    takes them as the same. One transaction: a migration interrupted is rolled back and runs
    again."""
    db.executescript(
        """
        CREATE TABLE people (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            author_id TEXT,                       -- OpenAlex author id (A5023888391)
            orcid TEXT                            -- 0000-0002-1825-0097
        );
        INSERT INTO people (name, author_id, orcid)
            SELECT DISTINCT name, nullif(author_id, ''), nullif(orcid, '') FROM paper_authors ORDER BY 1, 2, 3;
        CREATE UNIQUE INDEX people_identity ON people(name, ifnull(author_id, ''), ifnull(orcid, ''));
        CREATE TABLE paper_people (
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,            -- 1 = first author
            person INTEGER NOT NULL REFERENCES people(id),
            from_openalex INTEGER NOT NULL CHECK (from_openalex IN (0, 1)),  -- 0: arXiv's list
            PRIMARY KEY (paper_id, position)
        ) WITHOUT ROWID;
        INSERT INTO paper_people (paper_id, position, person, from_openalex)
            SELECT pa.paper_id, pa.position,
                   (SELECT p.id FROM people p WHERE p.name = pa.name
                    AND ifnull(p.author_id, '') = ifnull(pa.author_id, '')
                    AND ifnull(p.orcid, '') = ifnull(pa.orcid, '')),
                   pa.source = 'openalex'
            FROM paper_authors pa ORDER BY pa.paper_id, pa.position;
        DROP TABLE paper_authors;
        CREATE INDEX paper_people_person ON paper_people(person, paper_id);
        CREATE INDEX people_name ON people(name COLLATE NOCASE);
        CREATE INDEX people_author_id ON people(author_id) WHERE author_id IS NOT NULL;
        CREATE INDEX people_orcid ON people(orcid) WHERE orcid IS NOT NULL;
        CREATE INDEX people_surname ON people(replace(name, rtrim(name, replace(name, ' ', '')), '') COLLATE NOCASE);
        CREATE TRIGGER paper_people_forget AFTER DELETE ON paper_people
            WHEN NOT EXISTS (SELECT 1 FROM paper_people WHERE person = OLD.person) BEGIN
            DELETE FROM people WHERE id = OLD.person;
        END;
        CREATE VIEW paper_authors AS
            SELECT pp.paper_id, pp.position, p.name, p.author_id, p.orcid,
                   CASE pp.from_openalex WHEN 1 THEN 'openalex' ELSE 'arxiv' END AS source
            FROM paper_people pp JOIN people p ON p.id = pp.person;
        """
    )
