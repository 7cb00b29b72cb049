"""The steps that bring a database made by an earlier version up to the schema of
store/database/schema.sql (a new database is made from that file in one step instead,
store/database/schema.py), applied idempotently with sqlite-utils migrations: one module per
migration, `mNNNN_<job>.py`, each holding one `migrate(db)` and the `NAME` sqlite-utils records it
under in `_sqlite_migrations` (`NNNN_<job>`, as databases made by earlier versions have it: never
rename one). They are registered below on the one `Migrations("mapwatch")`, by explicit imports,
in the order they apply; a new migration is the next number, imported and listed last, and the
same change goes into schema.sql, whose `-- last migration:` line then names it
(docs/development.md, "Changing the schema"). No migration module imports another; code several
share goes in a `_`-named module here (`_table_rebuild`). A module with `TRANSACTIONAL = False`
runs outside one transaction and commits its own steps, each safe to run again (0038). This
folder holds more than 15 modules on purpose (tests/unit/test_layers.py only warns): one per
migration, kept flat.

Table and column names are a contract: users open the database with datasette or
sqlite-utils. Add columns and tables in new migrations; never rename.
"""

from __future__ import annotations

from types import ModuleType

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from mapwatch.store.database.migrations import (
    m0001_initial,
    m0002_feeds,
    m0003_tracking,
    m0004_graph,
    m0005_follows,
    m0006_delivery_failures,
    m0007_crawl,
    m0008_title_index,
    m0009_feed_index,
    m0010_pending_builds,
    m0011_feed_direction_days,
    m0012_drop_events_citing,
    m0013_quarantine_impossible_dates,
    m0014_crawl_schedule,
    m0015_team_channels,
    m0016_sitemap_trust,
    m0017_ranks_state,
    m0018_enrichment,
    m0019_self_citations,
    m0020_teams,
    m0021_webhook_seal,
    m0022_webhook_no_answer,
    m0023_enrichment_changes,
    m0024_first_read,
    m0025_author_indexes,
    m0026_citation_provenance,
    m0027_change_rate,
    m0028_listed_lastmods,
    m0029_source_counts,
    m0030_recent_citers,
    m0031_author_surnames,
    m0032_alert_messages,
    m0033_source_additions,
    m0034_intents,
    m0035_team_feed_tokens,
    m0036_published_files,
    m0037_paper_aliases,
    m0038_compact_edges,
    m0039_crawl_checked,
    m0040_event_batches,
    m0041_rank_scores,
    m0042_recheck_weight,
    m0043_rank_order,
    m0044_people,
    m0045_fts_changed_text,
    m0046_citers_without_month,
    m0047_lean_events,
    m0048_citation_seconds,
    m0049_paper_keys,
    m0050_rows_once,
)

# In the order they apply.
STEPS: tuple[ModuleType, ...] = (
    m0001_initial,
    m0002_feeds,
    m0003_tracking,
    m0004_graph,
    m0005_follows,
    m0006_delivery_failures,
    m0007_crawl,
    m0008_title_index,
    m0009_feed_index,
    m0010_pending_builds,
    m0011_feed_direction_days,
    m0012_drop_events_citing,
    m0013_quarantine_impossible_dates,
    m0014_crawl_schedule,
    m0015_team_channels,
    m0016_sitemap_trust,
    m0017_ranks_state,
    m0018_enrichment,
    m0019_self_citations,
    m0020_teams,
    m0021_webhook_seal,
    m0022_webhook_no_answer,
    m0023_enrichment_changes,
    m0024_first_read,
    m0025_author_indexes,
    m0026_citation_provenance,
    m0027_change_rate,
    m0028_listed_lastmods,
    m0029_source_counts,
    m0030_recent_citers,
    m0031_author_surnames,
    m0032_alert_messages,
    m0033_source_additions,
    m0034_intents,
    m0035_team_feed_tokens,
    m0036_published_files,
    m0037_paper_aliases,
    m0038_compact_edges,
    m0039_crawl_checked,
    m0040_event_batches,
    m0041_rank_scores,
    m0042_recheck_weight,
    m0043_rank_order,
    m0044_people,
    m0045_fts_changed_text,
    m0046_citers_without_month,
    m0047_lean_events,
    m0048_citation_seconds,
    m0049_paper_keys,
    m0050_rows_once,
)

migrations = Migrations("mapwatch")
for _step in STEPS:
    migrations(name=_step.NAME, transactional=getattr(_step, "TRANSACTIONAL", True))(_step.migrate)


def apply(db: Database) -> None:
    """Apply every migration `db` has not recorded yet, in order."""
    migrations.apply(db)
