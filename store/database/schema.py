"""The one schema, applied idempotently with sqlite-utils migrations.

Table and column names are a contract: users open the database with datasette or
sqlite-utils. Add columns and tables in new migrations; never rename.
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

migrations = Migrations("mapwatch")


@migrations(name="0001_initial")
def _initial(db: Database) -> None:
    db.executescript(
        """
        CREATE TABLE papers (
            id TEXT PRIMARY KEY,          -- arXiv id without version, e.g. 2412.10400
            title TEXT NOT NULL,
            year INTEGER,
            url TEXT,                     -- the paper's map page
            arxiv_url TEXT,
            abstract TEXT,
            first_posted TEXT,            -- ISO date
            cited_by INTEGER,             -- as the newest page states it
            refs_in_map INTEGER,
            refs_total INTEGER,
            data_through TEXT,            -- ISO date of the newest page stored
            has_page INTEGER NOT NULL DEFAULT 0,  -- 0: only seen in other pages' lists
            first_seen TEXT NOT NULL,     -- ISO timestamp (UTC)
            updated TEXT NOT NULL
        );
        CREATE INDEX papers_cited_by ON papers(cited_by DESC);

        CREATE TABLE directions (
            slug TEXT PRIMARY KEY,        -- the link's path, e.g. lr/reinforcement-learning-for-reasoning
            name TEXT NOT NULL,
            area TEXT NOT NULL,
            breadcrumb TEXT NOT NULL,
            url TEXT,
            direction_count INTEGER       -- "one of K directions in <area>", when stated
        );

        CREATE TABLE snapshots (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_id TEXT NOT NULL REFERENCES papers(id),
            data_through TEXT,
            cited_by INTEGER,
            refs_in_map INTEGER,
            refs_total INTEGER,
            citers_listed INTEGER,
            refs_listed INTEGER,
            content_hash TEXT NOT NULL,   -- sha256 of what the page says (see store.save.page_hash)
            source TEXT NOT NULL,         -- file path or URL
            ingested_at TEXT NOT NULL
        );
        CREATE INDEX snapshots_paper ON snapshots(paper_id, id);

        CREATE TABLE placements (
            paper_id TEXT NOT NULL REFERENCES papers(id),
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            position INTEGER NOT NULL,    -- 1 = the paper's main direction
            PRIMARY KEY (paper_id, direction_slug)
        );
        CREATE INDEX placements_direction ON placements(direction_slug);

        CREATE TABLE citations (
            citing_id TEXT NOT NULL REFERENCES papers(id),
            cited_id TEXT NOT NULL REFERENCES papers(id),
            first_seen TEXT NOT NULL,     -- ISO timestamp (UTC) of the ingest that revealed it
            snapshot_id INTEGER REFERENCES snapshots(id),
            PRIMARY KEY (citing_id, cited_id)
        ) WITHOUT ROWID;
        CREATE INDEX citations_cited ON citations(cited_id, citing_id);

        -- The change log feeds and alerts read with a cursor (ids only grow).
        -- kind 'citation': citing_id newly cites paper_id.
        -- kind 'count': paper_id's stated cited-by count grew from old_count to new_count;
        --   unlisted = how many of the gained citers its page does not list by name.
        CREATE TABLE events (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL CHECK (kind IN ('citation', 'count')),
            paper_id TEXT NOT NULL REFERENCES papers(id),
            citing_id TEXT REFERENCES papers(id),
            old_count INTEGER,
            new_count INTEGER,
            unlisted INTEGER,
            snapshot_id INTEGER REFERENCES snapshots(id),
            seen_at TEXT NOT NULL
        );
        CREATE INDEX events_paper ON events(paper_id, id);
        CREATE INDEX events_citing ON events(citing_id);

        -- What was last read from each source location, so unchanged pages are skipped.
        CREATE TABLE sources (
            location TEXT PRIMARY KEY,    -- file path or URL
            paper_id TEXT,
            sha256 TEXT,
            size INTEGER,
            mtime_ns INTEGER,
            etag TEXT,
            last_modified TEXT,
            checked_at TEXT
        );

        -- Pages currently rejected (cleared when the page parses again).
        CREATE TABLE ingest_errors (
            location TEXT PRIMARY KEY,
            line INTEGER,
            reason TEXT NOT NULL,
            sha256 TEXT,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL
        );

        CREATE TABLE ingests (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            source TEXT NOT NULL,
            started_at TEXT NOT NULL,
            finished_at TEXT NOT NULL,
            pages_read INTEGER NOT NULL,
            unchanged INTEGER NOT NULL,
            stale INTEGER NOT NULL,
            rejected INTEGER NOT NULL,
            stored INTEGER NOT NULL,
            new_citations INTEGER NOT NULL
        );
        """
    )
    db.table("papers").enable_fts(["title", "abstract"], create_triggers=True, tokenize="porter")


@migrations(name="0002_feeds")
def _feeds(db: Database) -> None:
    db.executescript(
        """
        -- Where feeds were last published, so the next publish rebuilds only what changed.
        CREATE TABLE feed_publishes (
            out_dir TEXT PRIMARY KEY,     -- absolute path of the output folder
            base_url TEXT NOT NULL,       -- the address the feeds' links used
            entry_limit INTEGER NOT NULL, -- entries per feed
            last_event_id INTEGER NOT NULL,  -- events up to this id are in the published feeds
            last_snapshot_id INTEGER NOT NULL,  -- pages stored up to this snapshot id are in them
            published_at TEXT NOT NULL
        );
        """
    )


@migrations(name="0003_tracking")
def _tracking(db: Database) -> None:
    """Tracked papers (the bot's /track) and a case-insensitive title index for lookups."""
    db.executescript(
        """
        -- A channel (or a user's DMs) that gets an alert when a paper gains citers.
        CREATE TABLE tracks (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL in a DM
            channel_id INTEGER NOT NULL,  -- where alerts go (the DM channel in a DM)
            user_id INTEGER,              -- in a DM: the user alerts go to; NULL in a server
            paper_id TEXT NOT NULL REFERENCES papers(id),
            created_at TEXT NOT NULL,
            created_by INTEGER,           -- the user who ran /track
            last_event_id INTEGER NOT NULL DEFAULT 0,  -- cursor into events: delivered up to here
            last_alert_at TEXT,
            disabled_reason TEXT          -- set when the channel is gone or forbids the bot
        );
        CREATE UNIQUE INDEX tracks_guild_channel_paper
            ON tracks(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), paper_id);
        CREATE INDEX tracks_paper ON tracks(paper_id);
        CREATE INDEX tracks_guild ON tracks(guild_id);
        CREATE INDEX papers_title_nocase ON papers(title COLLATE NOCASE);
        CREATE INDEX directions_name_nocase ON directions(name COLLATE NOCASE);
        -- Lists of citers and references sorted without reading whole rows: most cited
        -- (papers' counts), the map's listing order (the first event of each edge), newest.
        CREATE INDEX papers_id_cited_by ON papers(id, cited_by);
        CREATE INDEX events_edge ON events(paper_id, citing_id, id);
        CREATE INDEX events_citing_edge ON events(citing_id, paper_id, id);
        CREATE INDEX citations_cited_seen ON citations(cited_id, first_seen, citing_id);

        -- Small key/value state of the bot (e.g. the hash of the last synced command set).
        CREATE TABLE bot_state (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated TEXT NOT NULL
        );
        """
    )


@migrations(name="0004_graph")
def _graph(db: Database) -> None:
    db.executescript(
        """
        -- PageRank of each direction's papers over the citations among them, computed at
        -- refresh time (store.graph.compute_direction_ranks) and replaced each time.
        CREATE TABLE direction_ranks (
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            paper_id TEXT NOT NULL REFERENCES papers(id),
            pagerank REAL NOT NULL,
            rank INTEGER NOT NULL,        -- 1 = highest PageRank within the direction
            computed_at TEXT NOT NULL,    -- ISO timestamp (UTC)
            PRIMARY KEY (direction_slug, paper_id)
        ) WITHOUT ROWID;
        CREATE INDEX direction_ranks_rank ON direction_ranks(direction_slug, rank);
        -- /rising reads the events of the last N days.
        CREATE INDEX events_seen_at ON events(seen_at);
        """
    )


@migrations(name="0005_follows")
def _follows(db: Database) -> None:
    """Followed directions (the bot's /follow), digest settings and the digests delivered;
    a delivery mode and a role on tracked papers too."""
    db.executescript(
        """
        -- /track's delivery mode and the one role its alerts mention (see follows).
        ALTER TABLE tracks ADD COLUMN mode TEXT NOT NULL DEFAULT 'instant'
            CHECK (mode IN ('instant', 'daily', 'weekly'));
        ALTER TABLE tracks ADD COLUMN role_id INTEGER;

        -- A channel (or a user's DMs) that receives a direction's newly added citing papers.
        CREATE TABLE follows (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL in a DM
            channel_id INTEGER NOT NULL,  -- where deliveries go (the DM channel in a DM)
            user_id INTEGER,              -- in a DM: the user deliveries go to; NULL in a server
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            keyword TEXT,                 -- only citing papers whose title contains it (any case); NULL: all
            mode TEXT NOT NULL DEFAULT 'instant' CHECK (mode IN ('instant', 'daily', 'weekly')),
            role_id INTEGER,              -- the one role mentioned in deliveries; NULL: none
            created_at TEXT NOT NULL,
            created_by INTEGER,           -- the user who ran /follow
            last_event_id INTEGER NOT NULL DEFAULT 0,  -- cursor into events: delivered up to here
            last_delivery_at TEXT,        -- the last message that held something from this follow
            disabled_reason TEXT          -- set when the channel is gone or forbids the bot
        );
        CREATE UNIQUE INDEX follows_place_direction
            ON follows(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), direction_slug);
        CREATE INDEX follows_guild ON follows(guild_id);
        CREATE INDEX follows_direction ON follows(direction_slug);

        -- When a server (or a user, in DMs) gets its digests: a local hour in a time zone.
        CREATE TABLE digest_settings (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL: a user's DMs
            user_id INTEGER,              -- in DMs: the user; NULL for a server
            hour INTEGER NOT NULL CHECK (hour BETWEEN 0 AND 23),
            timezone TEXT NOT NULL DEFAULT 'UTC',  -- an IANA name, e.g. Europe/Paris
            updated_at TEXT NOT NULL,
            updated_by INTEGER
        );
        CREATE UNIQUE INDEX digest_settings_scope ON digest_settings(coalesce(guild_id, 0), coalesce(user_id, 0));

        -- One row per digest period handled for a channel, written only after Discord
        -- accepted the message (sent 1) or when the period was quiet (sent 0): a period
        -- is never handled twice, so a restart repeats nothing.
        CREATE TABLE digests (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL in a DM
            channel_id INTEGER NOT NULL,
            user_id INTEGER,              -- in a DM: the user; NULL in a server
            mode TEXT NOT NULL CHECK (mode IN ('daily', 'weekly')),
            period TEXT NOT NULL,         -- the scheduled time (ISO 8601 UTC) this digest stands for
            from_event_id INTEGER NOT NULL,  -- events (from_event_id, upto_event_id] were covered
            upto_event_id INTEGER NOT NULL,
            papers INTEGER NOT NULL,      -- tracked papers with something new in it
            directions INTEGER NOT NULL,  -- followed directions with something new in it
            citers INTEGER NOT NULL,      -- new citing papers it counted, over all its sections
            sent INTEGER NOT NULL,        -- 1: a message was posted; 0: a quiet period, nothing sent
            message_id INTEGER,           -- the posted message, when sent
            delivered_at TEXT NOT NULL
        );
        CREATE UNIQUE INDEX digests_place_period
            ON digests(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), mode, period);
        """
    )


@migrations(name="0006_delivery_failures")
def _delivery_failures(db: Database) -> None:
    """A delivery Discord refused for good (a 4xx other than 403, 404 and 429, three times):
    recorded with its HTTP status, Discord's code and message, and passed over (docs/bot.md, "Alerts")."""
    db.executescript(
        """
        -- The last delivery Discord refused for good: "<when>: HTTP <status>, Discord error <code>: <message>".
        ALTER TABLE tracks ADD COLUMN last_failure TEXT;
        ALTER TABLE follows ADD COLUMN last_failure TEXT;
        -- A digest period Discord refused for good: recorded (sent 0) with the reason, not retried.
        ALTER TABLE digests ADD COLUMN failure TEXT;
        """
    )


@migrations(name="0007_crawl")
def _crawl(db: Database) -> None:
    db.executescript(
        """
        -- The text alternate an HTML page declares (<link rel="alternate" type="text/markdown">):
        -- later ticks read the page from there (store.http_source). NULL: the page itself.
        ALTER TABLE sources ADD COLUMN text_url TEXT;
        """
    )


def apply(db: Database) -> None:
    migrations.apply(db)


# Migrations 0008 on, registered on the same `migrations` in the order they apply.
import importlib  # noqa: E402

for _module in ("schema_scale", "schema_people"):  # in this order: 0008-0019, then 0020 on
    importlib.import_module(f"mapwatch.store.database.{_module}")
