"""Migration 0020_teams: teams of people and papers; tracks and webhooks on a person or a team."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.migrations._table_rebuild import rebuild_table

NAME = "0020_teams"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Following people (docs/bot.md, "Following people and teams"): a server's named teams of
    people and papers, and tracks (and webhooks) on a person or a team instead of one paper."""
    db.executescript(
        """
        -- A server's named set of people and papers (/team); `/track team:<slug>` follows all of it.
        CREATE TABLE teams (
            guild_id INTEGER NOT NULL,
            slug TEXT NOT NULL,                   -- unique in its server, from the name
            name TEXT NOT NULL,
            feed_slug TEXT NOT NULL UNIQUE,       -- its feed's address: /feeds/teams/<feed_slug>.atom
            created_at TEXT NOT NULL,
            created_by INTEGER,
            PRIMARY KEY (guild_id, slug)
        );
        -- Who and what a team holds: a person (by author key) or one paper.
        CREATE TABLE team_members (
            guild_id INTEGER NOT NULL,
            team_slug TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('author', 'paper')),
            value TEXT NOT NULL,                  -- author key (A…, an ORCID, name:<name>) or a paper id
            label TEXT NOT NULL,                  -- what lists show: the person's name, the paper's title
            added_at TEXT NOT NULL,
            added_by INTEGER,
            PRIMARY KEY (guild_id, team_slug, kind, value),
            FOREIGN KEY (guild_id, team_slug) REFERENCES teams(guild_id, slug) ON DELETE CASCADE
        );
        """
    )
    # A track follows one paper, one person or one team: exactly one of the three is set.
    rebuild_table(db, "tracks",
                  [("paper_id TEXT NOT NULL REFERENCES papers(id)", "paper_id TEXT REFERENCES papers(id)")],
                  "author_key TEXT, team_slug TEXT, "
                  "CHECK ((paper_id IS NOT NULL) + (author_key IS NOT NULL) + (team_slug IS NOT NULL) = 1)")
    db.executescript(
        """
        CREATE UNIQUE INDEX tracks_place_person
            ON tracks(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), coalesce(author_key, ''),
                      coalesce(team_slug, '')) WHERE paper_id IS NULL;
        """
    )
    rebuild_table(db, "webhooks", [("CHECK (target_kind IN ('paper', 'direction'))",
                                    "CHECK (target_kind IN ('paper', 'direction', 'author', 'team'))")])
