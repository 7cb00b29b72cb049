"""Migration 0013_quarantine_impossible_dates: impossible stored dates moved to quarantined_dates."""

from __future__ import annotations

from sqlite_utils import Database

NAME = "0013_quarantine_impossible_dates"  # as sqlite-utils records it in _sqlite_migrations: never change it


def migrate(db: Database) -> None:
    """Dates no page can truly claim (store/pages/page_dates.py: before arXiv, after today plus the
    margin, or not a date), stored by versions that did not check them, are moved out of the
    columns the stale rule, the charts and the pages read into `quarantined_dates`, where they
    stay to inspect: a page once dated 31 Dec 9999 no longer freezes its paper (docs/design.md,
    "2. History rules"). "Today" is the date the migration runs (a migration is given no clock)."""
    from mapwatch.store.clock import iso, utc_now
    from mapwatch.store.pages.page_dates import ARXIV_START, latest_possible

    now = utc_now()
    # Our own ISO dates and timestamp, written into the script as literals (a script takes no
    # parameters; executescript keeps the statements in the migration's transaction).
    earliest, latest = ARXIV_START.isoformat(), latest_possible(now.date()).isoformat()
    not_a_date = "{col} NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'"
    impossible = f"{{col}} IS NOT NULL AND ({not_a_date} OR {{col}} < '{earliest}' OR {{col}} > '{latest}')"
    reason = (f"CASE WHEN {not_a_date} THEN 'not a date' WHEN {{col}} < '{earliest}' THEN 'before arXiv existed'"
              " ELSE 'in the future' END")
    script = ["""
        -- A date moved out of its column (set to NULL there), as it was stored, and why.
        CREATE TABLE quarantined_dates (
            id INTEGER PRIMARY KEY,
            table_name TEXT NOT NULL CHECK (table_name IN ('papers', 'snapshots')),
            row_key TEXT NOT NULL,          -- papers.id, or snapshots.id
            column_name TEXT NOT NULL CHECK (column_name IN ('data_through', 'first_posted')),
            value TEXT NOT NULL,            -- the date as it was stored
            reason TEXT NOT NULL,
            quarantined_at TEXT NOT NULL
        );
        """]
    for table, key, col in (("papers", "id", "data_through"), ("papers", "id", "first_posted"),
                            ("snapshots", "id", "data_through")):
        where = impossible.format(col=col)
        script.append(
            "INSERT INTO quarantined_dates (table_name, row_key, column_name, value, reason, quarantined_at)"
            f" SELECT '{table}', {key}, '{col}', {col}, {reason.format(col=col)}, '{iso(now)}' FROM {table}"
            f" WHERE {where};\n"
            f"UPDATE {table} SET {col} = NULL WHERE {where};\n")
    db.executescript("".join(script))
