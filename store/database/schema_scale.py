"""Migrations 0008 on: the title index, the feed index, the bulk load's pending builds and the
feed index's per-day counts, which keep queries, publishes and a cold ingest bounded on a large
map. They register on `store.database.schema.migrations`, after 0001-0007, in the order they apply."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.schema import migrations


@migrations(name="0008_title_index")
def _title_index(db: Database) -> None:
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


@migrations(name="0009_feed_index")
def _feed_index(db: Database) -> None:
    db.executescript(
        """
        -- Who newly cites each direction, kept current by each publish (store/feed_index.py) so a
        -- direction's feed, page and the index read a bounded range instead of every event.
        CREATE TABLE feed_direction_citers (
            direction_slug TEXT NOT NULL,
            citing_id TEXT NOT NULL,
            first_seen TEXT NOT NULL,       -- its first citation event of a paper placed there
            first_event_id INTEGER NOT NULL,
            PRIMARY KEY (direction_slug, citing_id)
        ) WITHOUT ROWID;
        CREATE INDEX feed_direction_citers_newest
            ON feed_direction_citers(direction_slug, first_seen DESC, first_event_id);
        -- The placements the index was built from (a page that moves a paper is seen against them).
        CREATE TABLE feed_placements (
            paper_id TEXT NOT NULL,
            direction_slug TEXT NOT NULL,
            PRIMARY KEY (paper_id, direction_slug)
        ) WITHOUT ROWID;
        CREATE TABLE feed_direction_stats (
            direction_slug TEXT PRIMARY KEY,
            papers INTEGER NOT NULL,        -- papers placed in it
            since TEXT NOT NULL             -- first_seen of its first paper
        );
        CREATE TABLE feed_index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_event_id INTEGER NOT NULL,
            last_snapshot_id INTEGER NOT NULL
        );
        """
    )


@migrations(name="0010_pending_builds")
def _pending_builds(db: Database) -> None:
    db.executescript(
        """
        -- What a bulk load (a cold ingest into an empty map, store/bulk_load.py) dropped and has
        -- still to build: an index's or trigger's exact SQL from sqlite_master, or a full-text
        -- 'rebuild'. Written in the transaction that drops them; each build deletes its row.
        CREATE TABLE pending_builds (
            seq INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,    -- the index, trigger or full-text table
            kind TEXT NOT NULL CHECK (kind IN ('index', 'trigger', 'fts')),
            sql TEXT NOT NULL,
            owner_pid INTEGER NOT NULL    -- the loading process: builds wait while it lives
        );
        """
    )


@migrations(name="0011_feed_direction_days")
def _feed_direction_days(db: Database) -> None:
    """Per direction and day, how many citers the feed index gained, so the index page's 7- and
    30-day counts read a month of rows per direction, not every citer (docs/feeds.md, "Feeds and web pages")."""
    db.executescript(
        """
        -- Kept with feed_direction_citers by store/feed_index.py: a citer counts on the day of its first_seen.
        CREATE TABLE feed_direction_days (
            direction_slug TEXT NOT NULL,
            day TEXT NOT NULL,              -- the first 10 characters of first_seen (its UTC date)
            citers INTEGER NOT NULL,
            PRIMARY KEY (direction_slug, day)
        ) WITHOUT ROWID;
        -- The feed index is rebuilt whole at the next publish, counting every day.
        DELETE FROM feed_index_state;
        """
    )


@migrations(name="0012_drop_events_citing")
def _drop_events_citing(db: Database) -> None:
    """events_citing (citing_id) is a prefix of events_citing_edge (citing_id, paper_id, id),
    which answers every lookup by citer as well: one index less to write and to build
    (docs/pages.md, "mapwatch ingest [PATH ...] [--db FILE] [--force] [--quiet]")."""
    db.executescript("DROP INDEX IF EXISTS events_citing;")


@migrations(name="0013_quarantine_impossible_dates")
def _quarantine_impossible_dates(db: Database) -> None:
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


@migrations(name="0014_crawl_schedule")
def _crawl_schedule(db: Database) -> None:
    """When each location of the map is next checked, and what robots.txt, the sitemaps and the
    direction pages said last, so a tick fetches only what is due and asks conditionally
    (docs/live-map.md, "Following the live map over HTTP")."""
    db.executescript(
        """
        -- Per page: when its content last changed, its re-check interval, and when it is due.
        -- A row with checked_at NULL is a page found (on a direction page, in a new page's
        -- links) but not fetched yet.
        ALTER TABLE sources ADD COLUMN changed_at TEXT;
        ALTER TABLE sources ADD COLUMN next_check_at TEXT;
        ALTER TABLE sources ADD COLUMN interval_s INTEGER;
        -- robots.txt, sitemaps and direction pages: their validators, for conditional GETs;
        -- robots.txt and sitemaps keep the body a 304 stands for.
        CREATE TABLE crawl_resources (
            location TEXT PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('robots', 'sitemap', 'direction')),
            etag TEXT,
            last_modified TEXT,
            sha256 TEXT,
            body BLOB,
            checked_at TEXT,
            changed_at TEXT,
            next_check_at TEXT,
            interval_s INTEGER
        );
        -- Requests a refresh sent the site (NULL: a folder was read).
        ALTER TABLE ingests ADD COLUMN requests INTEGER;
        """
    )


@migrations(name="0015_team_channels")
def _team_channels(db: Database) -> None:
    """Where the team talks (docs/bot.md): per track or follow, whether each alert opens a
    discussion thread; in forum channels, the post that holds a citing paper's alerts."""
    db.executescript(
        """
        -- Delivery options of a track or follow (kind + its id); no row: the defaults.
        CREATE TABLE delivery_options (
            kind TEXT NOT NULL CHECK (kind IN ('track', 'follow')),
            item_id INTEGER NOT NULL,
            threads INTEGER NOT NULL DEFAULT 0 CHECK (threads IN (0, 1)),
            PRIMARY KEY (kind, item_id)
        );
        -- Channels chosen for tracks and follows that are forums: each alert there is a post.
        CREATE TABLE forum_channels (
            channel_id INTEGER PRIMARY KEY,
            guild_id INTEGER NOT NULL,
            added_at TEXT NOT NULL
        );
        -- Webhooks that receive a paper's alerts or a direction's follows (Discord or Slack).
        -- The URL is a secret: sealed with a key kept beside the database (store/secret_box.py);
        -- `url_hint` (host and webhook id, no token) is what lists and logs show.
        CREATE TABLE webhooks (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('discord', 'slack')),
            target_kind TEXT NOT NULL CHECK (target_kind IN ('paper', 'direction')),
            target TEXT NOT NULL,
            url_sealed BLOB NOT NULL,
            url_id TEXT NOT NULL,
            url_hint TEXT NOT NULL,
            guild_id INTEGER,
            created_by INTEGER,
            created_at TEXT NOT NULL,
            last_event_id INTEGER NOT NULL DEFAULT 0,
            last_delivery_at TEXT,
            sending_upto INTEGER,
            sending_since TEXT,
            disabled_reason TEXT,
            last_failure TEXT,
            UNIQUE (url_id, target_kind, target)
        );
        -- A forum channel's post (a thread) per citing paper (or per digest period, `citer_id`
        -- 'digest:<mode>:<period>'): later alerts about that paper go there.
        CREATE TABLE forum_posts (
            channel_id INTEGER NOT NULL,
            citer_id TEXT NOT NULL,
            thread_id INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (channel_id, citer_id)
        );
        """
    )


@migrations(name="0016_sitemap_trust")
def _sitemap_trust(db: Database) -> None:
    """Whether a host's sitemap `lastmod`s are believed (docs/freshness.md): while they are, a
    page they say did not change is not re-checked for weeks; pages re-checked anyway verify
    them, and a host whose lastmods missed changes is not believed for a week."""
    db.executescript(
        """
        CREATE TABLE sitemap_trust (
            host TEXT PRIMARY KEY,
            -- Since the last verdict (halved past 1,000): pages re-checked that a lastmod said
            -- were unchanged, and of those, pages that had changed all the same.
            compared INTEGER NOT NULL DEFAULT 0,
            missed INTEGER NOT NULL DEFAULT 0,
            distrusted_until TEXT,                -- lastmods not believed before this time (NULL: believed)
            reason TEXT,                          -- why they were last distrusted
            updated_at TEXT NOT NULL
        );
        """
    )


@migrations(name="0017_ranks_state")
def _ranks_state(db: Database) -> None:
    """How far the stored direction ranks have read the snapshots and events, so that a refresh recomputes
    only the directions its pages changed (store/questions/direction_pagerank.py)."""
    db.executescript(
        """
        -- The newest snapshot and event the stored ranks have seen. No row: never computed by
        -- this version, the next update computes every direction.
        CREATE TABLE ranks_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_snapshot_id INTEGER NOT NULL,
            last_event_id INTEGER NOT NULL
        );
        -- The directions a changed paper was ranked in.
        CREATE INDEX direction_ranks_paper ON direction_ranks(paper_id);
        """
    )


@migrations(name="0018_enrichment")
def _enrichment(db: Database) -> None:
    """What the open scholarly sources (arXiv, OpenAlex, Semantic Scholar) say of the map's
    papers, and when each was asked (store/scholarly, docs/enrichment.md)."""
    db.executescript(
        """
        -- One row per paper and source: when it was last asked, what came of it, when to ask again.
        CREATE TABLE enrichment_fetches (
            paper_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('arxiv', 'openalex', 's2')),
            fetched_at TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'not_found', 'failed')),
            reason TEXT,                          -- why it failed (one line)
            next_fetch_at TEXT NOT NULL,          -- asked again from then on (new versions, new ORCID links)
            PRIMARY KEY (paper_id, source)
        );
        CREATE INDEX enrichment_fetches_due ON enrichment_fetches(source, next_fetch_at);
        -- arXiv's record of a paper (its API's Atom entry).
        CREATE TABLE arxiv_records (
            paper_id TEXT PRIMARY KEY,
            title TEXT,
            primary_category TEXT,
            categories TEXT,                      -- space-separated, primary first
            published TEXT,                       -- the first version (ISO date-time)
            updated TEXT,                         -- the latest version
            doi TEXT,
            journal_ref TEXT,
            comments TEXT,
            fetched_at TEXT NOT NULL
        );
        -- OpenAlex's work for a paper.
        CREATE TABLE openalex_works (
            paper_id TEXT PRIMARY KEY,
            work_id TEXT NOT NULL,                -- W2741809807
            venue TEXT,                           -- its primary location's source, e.g. a journal
            doi TEXT,
            fetched_at TEXT NOT NULL
        );
        -- A paper's authors in order: arXiv's names, with OpenAlex's author id and ORCID where
        -- OpenAlex has the paper (`source` says whose list it is).
        CREATE TABLE paper_authors (
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,            -- 1 = first author
            name TEXT NOT NULL,
            author_id TEXT,                       -- OpenAlex author id (A5023888391)
            orcid TEXT,                           -- 0000-0002-1825-0097
            source TEXT NOT NULL CHECK (source IN ('arxiv', 'openalex')),
            PRIMARY KEY (paper_id, position)
        );
        CREATE INDEX paper_authors_author_id ON paper_authors(author_id) WHERE author_id IS NOT NULL;
        CREATE INDEX paper_authors_orcid ON paper_authors(orcid) WHERE orcid IS NOT NULL;
        CREATE INDEX paper_authors_name ON paper_authors(name COLLATE NOCASE);
        CREATE TABLE institutions (
            id TEXT PRIMARY KEY,                  -- OpenAlex institution id (I136199984), else "name:<name>"
            name TEXT NOT NULL,
            ror TEXT,
            country TEXT                          -- ISO 3166-1 alpha-2
        );
        -- The institutions an author gave on a paper.
        CREATE TABLE paper_author_institutions (
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            institution_id TEXT NOT NULL REFERENCES institutions(id),
            PRIMARY KEY (paper_id, position, institution_id)
        );
        -- What Semantic Scholar says of a citation: the citing sentences, intents, influence.
        CREATE TABLE citation_contexts (
            citing_id TEXT NOT NULL,
            cited_id TEXT NOT NULL,
            contexts TEXT NOT NULL,               -- JSON list of sentences (clipped)
            intents TEXT NOT NULL,                -- JSON list, e.g. ["methodology"]
            is_influential INTEGER NOT NULL,
            fetched_at TEXT NOT NULL,
            PRIMARY KEY (citing_id, cited_id)
        );
        """
    )


@migrations(name="0019_self_citations")
def _self_citations(db: Database) -> None:
    """`self:hide` on /track and /follow: leave out the citing papers that share an author with
    the paper (or every paper of the direction) they are delivered for (docs/bot.md, "Alerts")."""
    db.executescript(
        """
        ALTER TABLE tracks ADD COLUMN hide_self INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE follows ADD COLUMN hide_self INTEGER NOT NULL DEFAULT 0;
        """
    )
