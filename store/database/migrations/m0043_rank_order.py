"""Migration 0043_rank_order: a direction's ranks read from an index of its order, not stored
(issue 44): a paper that climbs past thousands of others in a tick writes its own row, not
theirs."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0043_rank_order"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """`direction_rank_scores` loses `rank` and gains `place` (the score to 12 decimals) and
    `cited_by` (the count that orders equal places), under the index
    `direction_rank_scores_order`: a direction's papers in rank order are that index read
    forwards. The view `direction_ranks` numbers them (its `rank`, 1 = first) as before. Each
    row's place comes from its score and its count from `papers` now: the order the stored
    ranks had, as the ranks code kept them (a re-sort followed every changed count). One
    transaction: a migration interrupted is rolled back and runs again."""
    # Python's rounding, as the ranks code's (store/questions/rank_push.py, rank_place)
    db.conn.create_function("mapwatch_rank_place", 1, lambda score: round(score, 12), deterministic=True)
    db.executescript(
        """
        DROP VIEW direction_ranks;
        DROP INDEX direction_rank_scores_rank;
        DROP INDEX direction_rank_scores_paper;
        ALTER TABLE direction_rank_scores RENAME TO direction_rank_scores_0041;
        CREATE TABLE direction_rank_scores (
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            paper_id TEXT NOT NULL REFERENCES papers(id),
            score REAL NOT NULL,          -- PageRank = score * whole / total (direction_rank_totals)
            place REAL NOT NULL,          -- the score to 12 decimals: the order, highest first
            cited_by INTEGER NOT NULL,    -- the paper's cited-by count (0: none stated): orders equal places
            computed_at TEXT NOT NULL,    -- ISO timestamp (UTC)
            PRIMARY KEY (direction_slug, paper_id)
        ) WITHOUT ROWID;
        INSERT INTO direction_rank_scores (direction_slug, paper_id, score, place, cited_by, computed_at)
            SELECT s.direction_slug, s.paper_id, s.score, mapwatch_rank_place(s.score),
                   coalesce((SELECT p.cited_by FROM papers p WHERE p.id = s.paper_id), 0), s.computed_at
            FROM direction_rank_scores_0041 s;
        DROP TABLE direction_rank_scores_0041;
        CREATE INDEX direction_rank_scores_order
            ON direction_rank_scores(direction_slug, place DESC, cited_by DESC, paper_id);
        CREATE INDEX direction_rank_scores_paper ON direction_rank_scores(paper_id);
        CREATE VIEW direction_ranks AS
            SELECT s.direction_slug, s.paper_id, s.score * (t.whole / t.total) AS pagerank,
                   row_number() OVER (PARTITION BY s.direction_slug
                                      ORDER BY s.place DESC, s.cited_by DESC, s.paper_id) AS rank,
                   s.computed_at
            FROM direction_rank_scores s JOIN direction_rank_totals t ON t.direction_slug = s.direction_slug;
        """
    )
