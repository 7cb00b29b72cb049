"""The papers someone is told about: tracked papers, the papers of tracked people and of every
team, and the papers placed in a followed direction. Their new citers are described by the
open sources before the alerts go out (store/scholarly/before_alerts.py)."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.rows import one_column
from mapwatch.store.questions.teams import person_papers, team_paper_ids


def watched_paper_ids(db: Database) -> list[str]:
    """Every paper a track, a follow or a webhook tells someone about, or a team's (any server's)."""
    out = set(one_column(db, "SELECT paper_id FROM tracks WHERE disabled_reason IS NULL AND paper_id IS NOT NULL"
                             " UNION SELECT target FROM webhooks WHERE disabled_reason IS NULL"
                             " AND target_kind = 'paper'"))
    for key in one_column(db, "SELECT author_key FROM tracks WHERE disabled_reason IS NULL"
                              " AND author_key IS NOT NULL UNION SELECT target FROM webhooks"
                              " WHERE disabled_reason IS NULL AND target_kind = 'author'"):
        out |= person_papers(db, key)
    out.update(team_paper_ids(db))
    out.update(one_column(db, "SELECT pl.paper_id FROM placements pl WHERE pl.direction_slug IN"
                              " (SELECT direction_slug FROM follows WHERE disabled_reason IS NULL UNION"
                              " SELECT target FROM webhooks WHERE disabled_reason IS NULL"
                              " AND target_kind = 'direction')"))
    return sorted(out)


def followed_direction_papers(db: Database) -> list[str]:
    """The papers placed in a direction that a follow or a webhook follows (OpenAlex is asked
    for their newest citers daily: store/scholarly/new_works.py)."""
    return one_column(
        db, "SELECT DISTINCT pl.paper_id FROM placements pl WHERE pl.direction_slug IN"
        " (SELECT direction_slug FROM follows WHERE disabled_reason IS NULL"
        " UNION SELECT target FROM webhooks WHERE disabled_reason IS NULL AND target_kind = 'direction')"
        " ORDER BY 1")
