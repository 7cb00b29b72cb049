"""Migration 0041_rank_scores: direction ranks kept in a form a tick can update around what it
changed (issue 44): `direction_rank_scores` and `direction_rank_totals`, read through the view
`direction_ranks` under the name and columns it had."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0041_rank_scores"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """`direction_ranks` becomes a view of two tables (store/questions/direction_pagerank.py):
    each paper's score and rank, and each direction's totals, PageRank being
    score * whole / total. The rows move across as they are, with whole = total = 1 (so each
    PageRank reads as it was stored) and no drift measure (NULL): such a direction is computed
    whole the next time its papers or citations change, before any update by a push."""
    db.executescript(
        """
        CREATE TABLE direction_rank_scores (
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            paper_id TEXT NOT NULL REFERENCES papers(id),
            score REAL NOT NULL,          -- PageRank = score * whole / total (direction_rank_totals)
            rank INTEGER NOT NULL,        -- 1 = highest PageRank within the direction
            computed_at TEXT NOT NULL,    -- ISO timestamp (UTC)
            PRIMARY KEY (direction_slug, paper_id)
        ) WITHOUT ROWID;
        INSERT INTO direction_rank_scores (direction_slug, paper_id, score, rank, computed_at)
            SELECT direction_slug, paper_id, pagerank, rank, computed_at FROM direction_ranks;
        CREATE TABLE direction_rank_totals (
            direction_slug TEXT PRIMARY KEY REFERENCES directions(slug),
            whole REAL NOT NULL,          -- the sum of the scores' y at the last whole computation
            total REAL NOT NULL,          -- the sum of y now
            drift REAL,                   -- residual left unpushed since then (NULL: unknown)
            computed_at TEXT NOT NULL     -- the last whole computation (ISO, UTC)
        ) WITHOUT ROWID;
        INSERT INTO direction_rank_totals (direction_slug, whole, total, drift, computed_at)
            SELECT direction_slug, 1.0, 1.0, NULL, max(computed_at) FROM direction_ranks GROUP BY direction_slug;
        DROP TABLE direction_ranks;
        CREATE INDEX direction_rank_scores_rank ON direction_rank_scores(direction_slug, rank);
        CREATE INDEX direction_rank_scores_paper ON direction_rank_scores(paper_id);
        CREATE VIEW direction_ranks AS
            SELECT s.direction_slug, s.paper_id, s.score * (t.whole / t.total) AS pagerank, s.rank, s.computed_at
            FROM direction_rank_scores s JOIN direction_rank_totals t ON t.direction_slug = s.direction_slug;
        """
    )
