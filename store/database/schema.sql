-- The mapwatch database: its whole schema in one file, as the migrations leave it.
--
-- last migration: 0050_rows_once
--
-- A new database is made from this file in one transaction (store/database/schema.py), with
-- every migration up to the one named above recorded in _sqlite_migrations; a database made
-- before takes the migrations it lacks, one by one (store/database/migrations/). A schema
-- change is a new migration AND its change here, with the line above naming it:
-- tests/unit/store/test_schema_file.py keeps the two the same.
--
-- Each statement is the text SQLite keeps for it in sqlite_master, as the migrations left it,
-- byte for byte: the indentation of the migration it came from, and the columns later
-- migrations added at the end of a table (", text_url TEXT, ..."). So a database made here and
-- one migrated are the same, and a migration that edits a stored statement
-- (migrations/_table_rebuild.py) finds the same text in both. Comments between statements are
-- this file's own (SQLite keeps none of them); comments inside one are stored with it.
--
-- Not here, made with what needs them: _sqlite_migrations (sqlite-utils' record of the
-- migrations applied), sqlite_sequence (SQLite's, with the first AUTOINCREMENT table) and the
-- FTS5 shadow tables (papers_fts_data, ...: with their virtual table).
--
-- Dates are ISO YYYY-MM-DD, timestamps ISO 8601 UTC. docs/database.md describes every column
-- (generated from a new database and docs/gen/schema_notes.py).


-- ------------------------------------------------------------------------------------------------
-- The map: papers, directions, the pages stored and what changed
-- ------------------------------------------------------------------------------------------------

-- A paper: with a page in the map (has_page 1), or only seen in other pages' lists (0).
-- refs_in_map and refs_total: R and T of its page's "builds on R of its T references".
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

-- Title lookups in any case; lists of citers sorted by count without reading whole rows.
CREATE INDEX papers_title_nocase ON papers(title COLLATE NOCASE);
CREATE INDEX papers_id_cited_by ON papers(id, cited_by);

-- The papers the crawl has no page of yet.
CREATE INDEX papers_without_page ON papers(id) WHERE has_page = 0;

-- Full-text index (FTS5, porter stemming) over titles and abstracts, /search's. External
-- content (the text stays in papers), kept in step by the triggers below (sqlite-utils'
-- enable_fts made them; since migration 0045 a row written again with the same text leaves
-- the index alone).
CREATE VIRTUAL TABLE "papers_fts" USING FTS5 (
    "title", "abstract",
    tokenize='porter',
    content="papers"
);
CREATE TRIGGER "papers_ai" AFTER INSERT ON "papers" BEGIN
  INSERT INTO "papers_fts" (rowid, "title", "abstract") VALUES (new.rowid, new."title", new."abstract");
END;
CREATE TRIGGER "papers_ad" AFTER DELETE ON "papers" BEGIN
  INSERT INTO "papers_fts" ("papers_fts", rowid, "title", "abstract") VALUES('delete', old.rowid, old."title", old."abstract");
END;
CREATE TRIGGER "papers_au" AFTER UPDATE ON "papers"
            WHEN old.title IS NOT new.title OR old.abstract IS NOT new.abstract BEGIN
          INSERT INTO "papers_fts" ("papers_fts", rowid, "title", "abstract")
              VALUES('delete', old.rowid, old."title", old."abstract");
          INSERT INTO "papers_fts" (rowid, "title", "abstract") VALUES (new.rowid, new."title", new."abstract");
        END;

-- Titles alone, for autocomplete and title lookups without reading the abstracts' much larger
-- index; external content, kept in step with papers by the triggers below.
CREATE VIRTUAL TABLE papers_title_fts USING fts5(title, tokenize='porter', content='papers',
                                                         content_rowid='rowid');
CREATE TRIGGER papers_title_ai AFTER INSERT ON papers BEGIN
          INSERT INTO papers_title_fts (rowid, title) VALUES (new.rowid, new.title);
        END;
CREATE TRIGGER papers_title_ad AFTER DELETE ON papers BEGIN
          INSERT INTO papers_title_fts (papers_title_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
        END;
CREATE TRIGGER papers_title_au AFTER UPDATE OF title ON papers WHEN old.title IS NOT new.title BEGIN
          INSERT INTO papers_title_fts (papers_title_fts, rowid, title) VALUES ('delete', old.rowid, old.title);
          INSERT INTO papers_title_fts (rowid, title) VALUES (new.rowid, new.title);
        END;

-- A research direction of the map.
CREATE TABLE directions (
            slug TEXT PRIMARY KEY,        -- the link's path, e.g. lr/reinforcement-learning-for-reasoning
            name TEXT NOT NULL,
            area TEXT NOT NULL,
            breadcrumb TEXT NOT NULL,
            url TEXT,
            direction_count INTEGER       -- "one of K directions in <area>", when stated
        );
CREATE INDEX directions_name_nocase ON directions(name COLLATE NOCASE);

-- A paper placed in a direction.
CREATE TABLE "placements" (
            paper_id TEXT NOT NULL REFERENCES papers(id),
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            position INTEGER NOT NULL,    -- 1 = the paper's main direction
            PRIMARY KEY (paper_id, direction_slug)
        ) WITHOUT ROWID;
CREATE INDEX placements_direction ON placements(direction_slug);

-- One stored version of a paper's page, with the counts it stated: the history the feeds and
-- charts read. citers_listed and refs_listed: the citers and references the page names.
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

-- Each paper's key, which the citations and events hold in place of its id (migration 0049): a
-- new-style arXiv id is its own number, in its order (2412.10400 -> 241210400; four digits after
-- the dot before 1501, five from then on), so a paper's citers sort on their keys as on their
-- ids; any other id takes the next key from 1,000,000,000 on
-- (store/database/migrations/_paper_keys.py). Read the ids from the views below.
CREATE TABLE paper_keys (
            key INTEGER PRIMARY KEY,   -- a new-style arXiv id's own number, else from 1,000,000,000 on
            id TEXT NOT NULL UNIQUE    -- papers.id
        );

-- citing_key cites cited_key, first seen at first_seen_unix (Unix seconds, UTC: read it as text,
-- with the ids, from the view `citations` below; migrations 0048, 0049). at_first_read 1: known
-- at the cited paper's first read (revealed while its first page was read, or before it had
-- one), so not new (docs/feeds.md, "What new means"). provenance 'map': a map page names it;
-- 'openalex' or 's2': only that source has said so, no snapshot yet (docs/enrichment.md,
-- "Citations the map does not name"). event_id: the edge's citation event in event_log (the one
-- home of the edge: its event is found from here, so the events need no index by edge; NULL
-- only for an edge stored before events existed).
CREATE TABLE citation_edges (
            citing_key INTEGER NOT NULL,            -- paper_keys.key
            cited_key INTEGER NOT NULL,             -- paper_keys.key
            first_seen_unix INTEGER NOT NULL,       -- Unix time (UTC seconds) of the ingest that revealed it
            snapshot_id INTEGER,                    -- snapshots.id
            at_first_read INTEGER NOT NULL DEFAULT 0,
            provenance TEXT NOT NULL DEFAULT 'map' CHECK (provenance IN ('map', 'openalex', 's2')),
            event_id INTEGER,                       -- event_log.id
            PRIMARY KEY (citing_key, cited_key)
        ) WITHOUT ROWID;

-- A paper's citers: by cited paper (every list of citers, its count), newest first (/citers
-- newest, the feeds' since-dates), covering (no row read to sort).
CREATE INDEX citations_cited_seen ON citation_edges(cited_key, first_seen_unix, citing_key);

-- The citers whose id holds no month (old-style arXiv ids, citers beyond arXiv: keys from
-- 1,000,000,000 on), by cited paper: sorting the newest citers of many papers reads these few,
-- not every citer (migrations 0046, 0049; the WHERE is newest_citations_sql's, word for word).
CREATE INDEX citations_cited_seen_old ON citation_edges(cited_key, first_seen_unix)
            WHERE citing_key >= 1000000000;

-- Every citation with its ids and its first-seen time as text, as the table was before
-- migration 0048 (same name, columns, values).
CREATE VIEW citations AS
            SELECT kc.id AS citing_id, kd.id AS cited_id,
                   strftime('%Y-%m-%dT%H:%M:%S+00:00', c.first_seen_unix, 'unixepoch') AS first_seen, c.snapshot_id,
                   c.at_first_read, c.provenance, c.event_id
            FROM citation_edges c JOIN paper_keys kc ON kc.key = c.citing_key
                 JOIN paper_keys kd ON kd.key = c.cited_key;

-- The change log feeds and alerts read with a cursor (ids only grow), as the view `events` below.
-- A citation event (citing_key newly cites paper_key) is the one with a citer; a count event
-- (the paper's stated cited-by count grew from old_count to new_count; unlisted = how many of the
-- gained citers its page does not list by name) the one without. Its time is its write's
-- (event_batches), stored once a write (migration 0047); its papers by key (0049).
CREATE TABLE event_log (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_key INTEGER NOT NULL,             -- paper_keys.key
            citing_key INTEGER,                     -- paper_keys.key: a citation event's citer; none: a count event
            old_count INTEGER,
            new_count INTEGER,
            unlisted INTEGER,
            snapshot_id INTEGER                     -- snapshots.id
        );
-- A paper's events after a cursor (alerts, digests, webhooks, its feed's mark).
CREATE INDEX events_paper ON event_log(paper_key, id);

-- The events of each write: consecutive ids, one seen_at. /rising reads the events of the last N
-- days through these rows (a few a tick) instead of an index of every event's time.
CREATE TABLE event_batches (
            first_id INTEGER PRIMARY KEY,   -- the first event id of a write
            last_id INTEGER NOT NULL,       -- its last: the ids between are its events (or deleted since)
            seen_at TEXT NOT NULL           -- the seen_at of every one of them
        );
CREATE INDEX event_batches_seen_at ON event_batches(seen_at);

-- Every event with its kind, ids and time, as the table was before migration 0047 (same name,
-- columns).
CREATE VIEW events AS
            SELECT l.id, CASE WHEN l.citing_key IS NULL THEN 'count' ELSE 'citation' END AS kind,
                   kp.id AS paper_id, (SELECT kc.id FROM paper_keys kc WHERE kc.key = l.citing_key) AS citing_id,
                   l.old_count, l.new_count, l.unlisted, l.snapshot_id,
                   (SELECT b.seen_at FROM event_batches b WHERE b.first_id <= l.id
                    ORDER BY b.first_id DESC LIMIT 1) AS seen_at
            FROM event_log l JOIN paper_keys kp ON kp.key = l.paper_key;

-- PageRank of each direction's papers over the citations among them, brought up to date after
-- each refresh for the directions its pages changed (store/questions/direction_pagerank.py):
-- computed whole, or updated by a push from what changed. A paper's PageRank is
-- score * whole / total; read it, with the rank, from the view direction_ranks below.
CREATE TABLE direction_rank_scores (
            direction_slug TEXT NOT NULL REFERENCES directions(slug),
            paper_id TEXT NOT NULL REFERENCES papers(id),
            score REAL NOT NULL,          -- PageRank = score * whole / total (direction_rank_totals)
            place REAL NOT NULL,          -- the score to 12 decimals: the order, highest first
            cited_by INTEGER NOT NULL,    -- the paper's cited-by count (0: none stated): orders equal places
            computed_at TEXT NOT NULL,    -- ISO timestamp (UTC)
            PRIMARY KEY (direction_slug, paper_id)
        ) WITHOUT ROWID;

-- A direction's papers in rank order: this index read forwards (/ranks, a direction page's
-- leaders, the view's rank). No rank is stored, so a paper that moves writes its own row alone.
CREATE INDEX direction_rank_scores_order
            ON direction_rank_scores(direction_slug, place DESC, cited_by DESC, paper_id);

-- The directions a changed paper was ranked in.
CREATE INDEX direction_rank_scores_paper ON direction_rank_scores(paper_id);

-- One row a ranked direction: the sums that turn its scores into PageRanks, and how far a
-- push may have left them from a whole computation (drift; the bound in docs/graph.md).
CREATE TABLE direction_rank_totals (
            direction_slug TEXT PRIMARY KEY REFERENCES directions(slug),
            whole REAL NOT NULL,          -- the sum of the scores' y at the last whole computation
            total REAL NOT NULL,          -- the sum of y now
            drift REAL,                   -- residual left unpushed since then (NULL: unknown)
            computed_at TEXT NOT NULL     -- the last whole computation (ISO, UTC)
        ) WITHOUT ROWID;

-- Each paper's PageRank and rank within a direction, under the name and columns the table had
-- before 0041; the rank numbers the order index (0043).
CREATE VIEW direction_ranks AS
            SELECT s.direction_slug, s.paper_id, s.score * (t.whole / t.total) AS pagerank,
                   row_number() OVER (PARTITION BY s.direction_slug
                                      ORDER BY s.place DESC, s.cited_by DESC, s.paper_id) AS rank,
                   s.computed_at
            FROM direction_rank_scores s JOIN direction_rank_totals t ON t.direction_slug = s.direction_slug;

-- The newest snapshot and event the stored ranks have seen (one row). No row: the next
-- update computes every direction.
CREATE TABLE ranks_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_snapshot_id INTEGER NOT NULL,
            last_event_id INTEGER NOT NULL
        );

-- A citer beyond arXiv (keyed by its DOI, else its OpenAlex work id) found to be an arXiv
-- paper: its rows moved to the arXiv id, and its old key is kept here so that /paper <DOI>
-- still finds it (store/scholarly/versions.py).
CREATE TABLE paper_aliases (
            alias TEXT PRIMARY KEY,         -- the key the work had before: a DOI or an OpenAlex work id
            paper_id TEXT NOT NULL,         -- the arXiv id it is stored under now
            merged_at TEXT NOT NULL,        -- when the two were found to be one work
            how TEXT NOT NULL               -- what said so: 'openalex-work', 'arxiv-doi', 'openalex-doi'
        ) WITHOUT ROWID;
CREATE INDEX paper_aliases_paper ON paper_aliases(paper_id);

-- A date no page can claim (before arXiv, in the future, not a date), stored by a version that
-- did not check dates and moved out of its column (set to NULL there) by migration 0013, kept
-- to inspect.
CREATE TABLE quarantined_dates (
            id INTEGER PRIMARY KEY,
            table_name TEXT NOT NULL CHECK (table_name IN ('papers', 'snapshots')),
            row_key TEXT NOT NULL,          -- papers.id, or snapshots.id
            column_name TEXT NOT NULL CHECK (column_name IN ('data_through', 'first_posted')),
            value TEXT NOT NULL,            -- the date as it was stored
            reason TEXT NOT NULL,
            quarantined_at TEXT NOT NULL
        );


-- ------------------------------------------------------------------------------------------------
-- Reading the map: sources, ingests, the crawl
-- ------------------------------------------------------------------------------------------------

-- What was last read from each source location (a file, or a URL with its HTTP validators),
-- so unchanged pages are skipped; for the HTTP crawl also when each page is due. A row with
-- checked_at NULL is a page found (on a direction page, in a new page's links), not fetched yet.
-- The columns after checked_at, added by later migrations:
--   text_url: the text alternate an HTML page declares (<link rel="alternate"
--     type="text/markdown">), where later ticks read the page; NULL: the page itself.
--   changed_at, next_check_at, interval_s: the last check that found it changed, when it is
--     due, its re-check interval in seconds.
--   checks, checks_unchanged, checked_s, dated_changes, unchanged_s: its change history (checks
--     that compared it, those that found it unchanged, the seconds they covered, changes dated
--     by Last-Modified, the seconds it is known to have stayed unchanged); change_rate: the
--     changes a day estimated from them; recheck_weight: sqrt(change rate x value), which its
--     re-check period is a scale over (docs/live-map.md, "Re-checks by value").
--   listed_lastmod, listed_in: the lastmod a sitemap lists for the page, and the sitemap file
--     that lists it (NULL: none read lists it).
CREATE TABLE sources (
            location TEXT PRIMARY KEY,    -- file path or URL
            paper_id TEXT,
            sha256 TEXT,
            size INTEGER,
            mtime_ns INTEGER,
            etag TEXT,
            last_modified TEXT,
            checked_at TEXT
        , text_url TEXT, changed_at TEXT, next_check_at TEXT, interval_s INTEGER, checks INTEGER, checks_unchanged INTEGER, checked_s REAL, dated_changes INTEGER, unchanged_s REAL, change_rate REAL, recheck_weight REAL, listed_lastmod TEXT, listed_in TEXT);

-- A tick asks for the pages due (most overdue first), the pages found but never read, the
-- pages a sitemap file listed and the oldest checked, without reading every row
-- (store/sources/crawl_plan.py, store/sources/listed_pages.py).
CREATE INDEX sources_next_check ON sources(next_check_at) WHERE next_check_at IS NOT NULL;
CREATE INDEX sources_unscheduled ON sources(checked_at) WHERE next_check_at IS NULL AND checked_at IS NOT NULL;
CREATE INDEX sources_unchecked ON sources(paper_id) WHERE checked_at IS NULL;
CREATE INDEX sources_listed_in ON sources(listed_in) WHERE listed_in IS NOT NULL;
CREATE INDEX sources_listed_checked ON sources(checked_at, location) WHERE listed_in IS NOT NULL;
CREATE INDEX sources_text_url ON sources(location) WHERE text_url IS NOT NULL;

-- Pages currently rejected (cleared when the page parses again); line: the line the reason is
-- about.
CREATE TABLE ingest_errors (
            location TEXT PRIMARY KEY,
            line INTEGER,
            reason TEXT NOT NULL,
            sha256 TEXT,
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL
        );

-- One run of ingest or refresh, and what it did with the pages it read. requests: the requests
-- a refresh sent the site (NULL: a folder was read).
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
        , requests INTEGER);

-- robots.txt, sitemaps and direction pages: their validators, for conditional GETs; robots.txt
-- and sitemaps keep the body a 304 stands for. next_check_at, interval_s: direction pages'
-- polling. listed, dated: for a sitemap file of pages, the pages it lists and those with a
-- date-time lastmod (NULL: not read in full yet).
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
        , listed INTEGER, dated INTEGER);

-- Whether a host's sitemap lastmods are believed (docs/freshness.md): while they are, a page
-- they say did not change is not re-checked for weeks; pages re-checked anyway verify them,
-- and a host whose lastmods missed changes is not believed for a week.
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

-- Whether every paper with a page was found checked over HTTP, per page-location pattern of a
-- crawled site: the count and the newest papers row then (store/sources/plan_counts.py). While
-- they are the same, a tick's plan need not join every page with its sources row again, nor a
-- new process's first tick.
CREATE TABLE crawl_checked (
            head TEXT NOT NULL,             -- a page's location is head || paper_id || tail
            tail TEXT NOT NULL,
            pages INTEGER NOT NULL,         -- papers with a page when every one was found checked
            top_rowid INTEGER NOT NULL,     -- the newest papers row then (its rowid and id)
            top_id TEXT NOT NULL,
            PRIMARY KEY (head, tail)
        ) WITHOUT ROWID;

-- The re-checks' total weight (Σ recheck_weight over the pages checked over HTTP) and when it was
-- summed on the tick clock: a new process's first tick reads it (store/sources/plan_counts.py).
CREATE TABLE recheck_weight (
            id INTEGER PRIMARY KEY CHECK (id = 1),  -- one row
            total REAL NOT NULL,                    -- the sum of the pages' weights
            summed_at TEXT NOT NULL                 -- when, on the tick clock (ISO, UTC)
        );

-- What a bulk load (a cold ingest into an empty map, store/database/bulk_load.py) dropped and
-- has still to build: an index's or trigger's exact SQL from sqlite_master, or a full-text
-- 'rebuild'. Written in the transaction that drops them; each build deletes its row. Empty
-- outside a bulk load.
CREATE TABLE pending_builds (
            seq INTEGER PRIMARY KEY,
            name TEXT NOT NULL UNIQUE,    -- the index, trigger or full-text table
            kind TEXT NOT NULL CHECK (kind IN ('index', 'trigger', 'fts')),
            sql TEXT NOT NULL,
            owner_pid INTEGER NOT NULL    -- the loading process: builds wait while it lives
        );


-- ------------------------------------------------------------------------------------------------
-- Feeds and published files
-- ------------------------------------------------------------------------------------------------

-- Where feeds were last published and how far they had read, so the next publish rebuilds
-- only what changed. out_dir ends in "#papers=all" for publish --papers all (its own cursors);
-- last_enrichment_id: the newest enrichment_changes row the published feeds include.
CREATE TABLE feed_publishes (
            out_dir TEXT PRIMARY KEY,     -- absolute path of the output folder
            base_url TEXT NOT NULL,       -- the address the feeds' links used
            entry_limit INTEGER NOT NULL, -- entries per feed
            last_event_id INTEGER NOT NULL,  -- events up to this id are in the published feeds
            last_snapshot_id INTEGER NOT NULL,  -- pages stored up to this snapshot id are in them
            published_at TEXT NOT NULL
        , last_enrichment_id INTEGER NOT NULL DEFAULT 0);

-- A file a publish wrote into a folder, and when its bytes were first written there: written
-- again with the same bytes (the folder lost), it keeps its modification time and
-- Last-Modified as it keeps its ETag (store/database/published_files.py).
CREATE TABLE published_files (
            out_dir TEXT NOT NULL,          -- absolute path of the output folder
            path TEXT NOT NULL,             -- the file, relative to it
            digest TEXT NOT NULL,           -- the hash of its bytes (its ETag, without the quotes)
            modified_at INTEGER NOT NULL,   -- Unix time those bytes were first written there
            PRIMARY KEY (out_dir, path)
        ) WITHOUT ROWID;

-- The feed index (store/database/feed_index.py), brought up to date by each publish so that a
-- direction's feed and page read a bounded range instead of every event: who newly cites each
-- direction. at_first_read 1: every citation of this citer into the direction's papers is
-- known at a first read (citations.at_first_read), so not counted as new.
CREATE TABLE feed_direction_citers (
            direction_slug TEXT NOT NULL,
            citing_id TEXT NOT NULL,
            first_seen TEXT NOT NULL,       -- its first citation event of a paper placed there
            first_event_id INTEGER NOT NULL, at_first_read INTEGER NOT NULL DEFAULT 0,
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

-- Each direction's paper count, kept with the index.
CREATE TABLE feed_direction_stats (
            direction_slug TEXT PRIMARY KEY,
            papers INTEGER NOT NULL,        -- papers placed in it
            since TEXT NOT NULL             -- first_seen of its first paper
        );

-- The citers each direction gained per day, kept with the index (a citer counts on the day of
-- its first_seen): the index page's 7- and 30-day counts read a month of rows per direction.
CREATE TABLE feed_direction_days (
            direction_slug TEXT NOT NULL,
            day TEXT NOT NULL,              -- the first 10 characters of first_seen (its UTC date)
            citers INTEGER NOT NULL,
            PRIMARY KEY (direction_slug, day)
        ) WITHOUT ROWID;

-- How far the index has read (one row). No row: it is rebuilt whole at the next publish.
CREATE TABLE feed_index_state (
            id INTEGER PRIMARY KEY CHECK (id = 1),
            last_event_id INTEGER NOT NULL,
            last_snapshot_id INTEGER NOT NULL
        );


-- ------------------------------------------------------------------------------------------------
-- The bot: tracks, follows, teams, webhooks, digests
-- ------------------------------------------------------------------------------------------------

-- A paper, a person or a team tracked in a channel (or a user's DMs) by /track: exactly one
-- of paper_id, author_key, team_slug is set. Migration 0020 rebuilt the table (paper_id
-- became optional), hence its quoted name. The columns after disabled_reason, added later:
--   mode: 'instant' (after each refresh), or 'daily' or 'weekly' (in the channel's digest).
--   role_id: the one role its alerts mention (NULL: none).
--   last_failure: the last alert Discord refused for good: "<when>: HTTP <status>, Discord
--     error <code>: <message>".
--   hide_self 1 (self:hide): its alerts leave out citing papers that share an author with it.
--   author_key: the tracked person, an OpenAlex author id, an ORCID or name:<name>.
--   team_slug: the tracked team, teams.slug in the track's server.
--   intent: 'methodology', 'background' or 'result': only the citations Semantic Scholar gives
--     that intent are alerted; NULL: every citation.
CREATE TABLE "tracks" (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            guild_id INTEGER,             -- NULL in a DM
            channel_id INTEGER NOT NULL,  -- where alerts go (the DM channel in a DM)
            user_id INTEGER,              -- in a DM: the user alerts go to; NULL in a server
            paper_id TEXT REFERENCES papers(id),
            created_at TEXT NOT NULL,
            created_by INTEGER,           -- the user who ran /track
            last_event_id INTEGER NOT NULL DEFAULT 0,  -- cursor into events: delivered up to here
            last_alert_at TEXT,
            disabled_reason TEXT          -- set when the channel is gone or forbids the bot
        , mode TEXT NOT NULL DEFAULT 'instant'
            CHECK (mode IN ('instant', 'daily', 'weekly')), role_id INTEGER, last_failure TEXT, hide_self INTEGER NOT NULL DEFAULT 0
, author_key TEXT, team_slug TEXT, intent TEXT, CHECK ((paper_id IS NOT NULL) + (author_key IS NOT NULL) + (team_slug IS NOT NULL) = 1)
);

-- One track of a paper, and one of a person or a team, per place.
CREATE UNIQUE INDEX tracks_guild_channel_paper
            ON tracks(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), paper_id);
CREATE UNIQUE INDEX tracks_place_person
            ON tracks(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), coalesce(author_key, ''),
                      coalesce(team_slug, '')) WHERE paper_id IS NULL;
CREATE INDEX tracks_paper ON tracks(paper_id);
CREATE INDEX tracks_guild ON tracks(guild_id);

-- A direction followed in a channel (or a user's DMs) by /follow: its newly added citing
-- papers are delivered there. last_failure, as in tracks; hide_self 1: citing papers whose
-- every citation of the direction is a self-citation are left out; intent: only citing papers
-- one of whose citations of the direction Semantic Scholar gives that intent (NULL: all).
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
        , last_failure TEXT, hide_self INTEGER NOT NULL DEFAULT 0, intent TEXT);
CREATE UNIQUE INDEX follows_place_direction
            ON follows(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), direction_slug);
CREATE INDEX follows_guild ON follows(guild_id);
CREATE INDEX follows_direction ON follows(direction_slug);

-- A server's named set of people and papers (/team); /track team:<slug> follows all of it.
-- feed_slug is the slug and 160 random bits (32 base-32 letters): not guessable.
-- feed_renewed_at: when migration 0035 replaced its guessable address (8 hex digits after the
-- slug); NULL for a team made since.
CREATE TABLE teams (
            guild_id INTEGER NOT NULL,
            slug TEXT NOT NULL,                   -- unique in its server, from the name
            name TEXT NOT NULL,
            feed_slug TEXT NOT NULL UNIQUE,       -- its feed's address: /feeds/teams/<feed_slug>.atom
            created_at TEXT NOT NULL,
            created_by INTEGER, feed_renewed_at TEXT,
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

-- Delivery options of a track or follow (kind and its id); no row: the defaults. threads 1:
-- each alert opens a discussion thread.
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

-- A forum channel's post (a thread) per citing paper (or per digest period, citer_id
-- 'digest:<mode>:<period>'): later alerts about that paper go there.
CREATE TABLE forum_posts (
            channel_id INTEGER NOT NULL,
            citer_id TEXT NOT NULL,
            thread_id INTEGER NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (channel_id, citer_id)
        );

-- Webhooks (Discord or Slack) that receive a paper's, a direction's, a person's or a team's
-- alerts. The URL is a secret: url_sealed is it sealed with AES-256-GCM (store/secret_box.py),
-- bound to url_id, a keyed fingerprint of the URL (duplicates are found without it); url_hint
-- (host and webhook id, no token) is what lists and logs show. sending_upto, sending_since: a
-- delivery being sent. no_answer_since, no_answer_rounds: the delivery rounds in a row its
-- receiver did not answer (disabled after 24 h of them). Rebuilt by migration 0020 (persons
-- and teams as targets), hence its quoted name.
CREATE TABLE "webhooks" (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL CHECK (kind IN ('discord', 'slack')),
            target_kind TEXT NOT NULL CHECK (target_kind IN ('paper', 'direction', 'author', 'team')),
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
            last_failure TEXT, no_answer_since TEXT, no_answer_rounds INTEGER NOT NULL DEFAULT 0,
            UNIQUE (url_id, target_kind, target)
        );

-- When a server (or a user, in DMs) gets its digests: a local hour in a time zone. No row:
-- 09:00 UTC.
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

-- One row per digest period handled for a channel, written only after Discord accepted the
-- message (sent 1) or when the period was quiet (sent 0): a period is never handled twice, so a
-- restart repeats nothing. failure: why Discord refused it for good (sent 0; not retried).
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
        , failure TEXT);
CREATE UNIQUE INDEX digests_place_period
            ON digests(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), mode, period);

-- An alert, follow post or forum post sent while some of its citers had no authors: the bot
-- edits it in place once they come (store/subscriptions/alert_messages.py); rows older than a
-- week, or edited, are pruned.
CREATE TABLE alert_messages (
            id INTEGER PRIMARY KEY,
            kind TEXT NOT NULL,            -- 'track' (a paper, person or team) or 'follow'
            item_id INTEGER NOT NULL,      -- tracks.id or follows.id
            after_event_id INTEGER NOT NULL,  -- the window of events the message was about: (after, upto]
            upto_event_id INTEGER NOT NULL,
            channel_id INTEGER NOT NULL,   -- where the message is (a forum post's: its thread)
            message_id INTEGER NOT NULL,
            guild_id INTEGER,
            sent_at TEXT NOT NULL,
            nonce TEXT NOT NULL,           -- its marker (`ref <nonce>`), kept on the edited message
            missing TEXT NOT NULL,         -- JSON list of the citer ids it named without authors
            edited_at TEXT,
            UNIQUE (channel_id, message_id)
        );
CREATE INDEX alert_messages_open ON alert_messages(edited_at, sent_at);

-- Small key/value state of the bot: the synced command set's hash, page-button state, the
-- next refresh, deliveries being sent, refusal counts.
CREATE TABLE bot_state (
            key TEXT PRIMARY KEY,
            value TEXT NOT NULL,
            updated TEXT NOT NULL
        );


-- ------------------------------------------------------------------------------------------------
-- Enrichment: what arXiv, OpenAlex and Semantic Scholar say (docs/enrichment.md)
-- ------------------------------------------------------------------------------------------------

-- One row per paper and source: when it was last asked, what came of it, when to ask again.
CREATE TABLE "enrichment_fetches" (
            paper_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('arxiv', 'openalex', 's2')),
            fetched_at TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('ok', 'not_found', 'failed')),
            reason TEXT,                          -- why it failed (one line)
            next_fetch_at TEXT NOT NULL,          -- asked again from then on (new versions, new ORCID links)
            PRIMARY KEY (paper_id, source)
        ) WITHOUT ROWID;
CREATE INDEX enrichment_fetches_due ON enrichment_fetches(source, next_fetch_at);

-- One row each time a paper's authors, their institutions or its venue changed, so that the
-- feeds and pages showing it are built again (the ids are their cursor).
CREATE TABLE enrichment_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_id TEXT NOT NULL,
            changed_at TEXT NOT NULL
        );
CREATE INDEX enrichment_changes_paper ON enrichment_changes(paper_id, id);

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

-- An arXiv paper found by the journal DOI arXiv (or OpenAlex, below) gives it.
CREATE INDEX arxiv_records_doi ON arxiv_records(doi) WHERE doi IS NOT NULL;

-- OpenAlex's work for a paper (for a citer beyond arXiv, all that is known of it besides its
-- title and year).
CREATE TABLE "openalex_works" (
            paper_id TEXT PRIMARY KEY,
            work_id TEXT NOT NULL,                -- W2741809807
            venue TEXT,                           -- its primary location's source, e.g. a journal
            doi TEXT,
            fetched_at TEXT NOT NULL
        ) WITHOUT ROWID;

-- New works' references matched to map papers by work id.
CREATE INDEX openalex_works_work ON openalex_works(work_id);
CREATE INDEX openalex_works_doi ON openalex_works(doi)
            WHERE doi IS NOT NULL AND doi NOT LIKE '10.48550/%';

-- Each person once: a name with its OpenAlex id and ORCID (the same name with other ids, or
-- none, is another row). A person no byline names any more is deleted: with their last row
-- (paper_people_forget), or by the write that replaced them (store/scholarly/saved.py).
CREATE TABLE people (
            id INTEGER PRIMARY KEY,
            name TEXT NOT NULL,
            author_id TEXT,                       -- OpenAlex author id (A5023888391)
            orcid TEXT                            -- 0000-0002-1825-0097
        );
CREATE UNIQUE INDEX people_identity ON people(name, ifnull(author_id, ''), ifnull(orcid, ''));

-- A paper's authors in order: arXiv's names, or OpenAlex's list with its people's ids
-- (from_openalex says whose list it is). Read it as the view paper_authors.
CREATE TABLE paper_people (
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,            -- 1 = first author
            person INTEGER NOT NULL REFERENCES people(id),
            from_openalex INTEGER NOT NULL CHECK (from_openalex IN (0, 1)),  -- 0: arXiv's list
            PRIMARY KEY (paper_id, position)
        ) WITHOUT ROWID;

-- A person's papers from the index alone, once /author or /search found the person by
-- name, surname, OpenAlex id or ORCID (the people_* indexes).
CREATE INDEX paper_people_person ON paper_people(person, paper_id);
CREATE INDEX people_name ON people(name COLLATE NOCASE);
CREATE INDEX people_author_id ON people(author_id) WHERE author_id IS NOT NULL;
CREATE INDEX people_orcid ON people(orcid) WHERE orcid IS NOT NULL;

-- The last word of each name (its surname), any case: /search finds a person by surname.
-- Queries repeat the expression exactly (store/questions/authors.py SURNAME) for SQLite to
-- use it.
CREATE INDEX people_surname ON people(replace(name, rtrim(name, replace(name, ' ', '')), '') COLLATE NOCASE);
CREATE TRIGGER paper_people_forget AFTER DELETE ON paper_people
            WHEN NOT EXISTS (SELECT 1 FROM paper_people WHERE person = OLD.person) BEGIN
            DELETE FROM people WHERE id = OLD.person;
        END;

-- A paper's authors in order, with each person's name and ids: the table it was before
-- migration 0044, under the same name and columns.
CREATE VIEW paper_authors AS
            SELECT pp.paper_id, pp.position, p.name, p.author_id, p.orcid,
                   CASE pp.from_openalex WHEN 1 THEN 'openalex' ELSE 'arxiv' END AS source
            FROM paper_people pp JOIN people p ON p.id = pp.person;

-- Institutions named by OpenAlex.
CREATE TABLE institutions (
            id TEXT PRIMARY KEY,                  -- OpenAlex institution id (I136199984), else "name:<name>"
            name TEXT NOT NULL,
            ror TEXT,
            country TEXT                          -- ISO 3166-1 alpha-2
        );

-- The institutions an author (paper_id and position, as in paper_authors) gave on a paper.
CREATE TABLE "paper_author_institutions" (
            paper_id TEXT NOT NULL,
            position INTEGER NOT NULL,
            institution_id TEXT NOT NULL REFERENCES institutions(id),
            PRIMARY KEY (paper_id, position, institution_id)
        ) WITHOUT ROWID;

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

-- What an open source said cites a map paper, whether or not it entered citations. baseline
-- 1: in the source's first answer about the cited paper (there before mapwatch asked: not news).
CREATE TABLE source_citations (
            citing_id TEXT NOT NULL,
            cited_id TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('openalex', 's2')),
            first_seen TEXT NOT NULL,
            baseline INTEGER NOT NULL DEFAULT 0,
            PRIMARY KEY (cited_id, citing_id, source)
        ) WITHOUT ROWID;

-- When a source was first and last asked for a paper's citers (what makes its later answers
-- news). citation_count, read_at: Semantic Scholar's count of the paper's citations when they
-- were last read in full, and when (a round that finds the same count asks once).
CREATE TABLE discovery_asked (
            paper_id TEXT NOT NULL,
            source TEXT NOT NULL,
            first_asked TEXT NOT NULL,
            last_asked TEXT NOT NULL, citation_count INTEGER, read_at TEXT,
            PRIMARY KEY (paper_id, source)
        ) WITHOUT ROWID;

-- A pass over OpenAlex's new arXiv works of one publication day, read to the end.
CREATE TABLE discovery_passes (
            day TEXT NOT NULL,              -- YYYY-MM-DD: OpenAlex's works of that publication day
            lag INTEGER NOT NULL,           -- read this many days after it (once at each lag)
            works INTEGER NOT NULL,
            citations INTEGER NOT NULL,
            finished_at TEXT NOT NULL,
            PRIMARY KEY (day, lag)
        );

-- When OpenAlex was last asked for the works of the last days that cite a tracked or team
-- paper (tracked: every round; team: daily).
CREATE TABLE recent_citers_asked (
            paper_id TEXT PRIMARY KEY,
            asked_at TEXT NOT NULL
        );

-- The citations and stub papers an open source added on one UTC day, so its daily bound holds
-- across rounds and restarts (store/scholarly/budget.py).
CREATE TABLE source_additions (
            source TEXT NOT NULL,
            day TEXT NOT NULL,              -- YYYY-MM-DD, UTC
            citations INTEGER NOT NULL DEFAULT 0,
            stubs INTEGER NOT NULL DEFAULT 0,
            reached TEXT,                   -- the first bound reached that day (a line); NULL: none
            PRIMARY KEY (source, day)
        ) WITHOUT ROWID;
