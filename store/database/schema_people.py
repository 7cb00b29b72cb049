"""Migrations 0020 on: following people and teams (docs/bot.md, "Following people and teams"),
and the webhooks' AES-GCM seal and silent receivers; registered on
`store.database.schema.migrations` after those of schema_scale."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.store.database.schema import migrations


def _rebuild(db: Database, table: str, edits: list[tuple[str, str]], extra: str = "") -> None:
    """Rebuild `table` with its stored CREATE statement edited (SQLite cannot drop a NOT NULL or
    change a CHECK in place): every column another migration added is kept, its rows, indexes
    and AUTOINCREMENT sequence too. `extra` (columns, then table constraints) goes at its end."""
    conn = db.conn
    sql = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (table,)).fetchone()[0]
    for old, new in edits:
        if old not in sql:
            raise RuntimeError(f"{table}: the schema does not hold {old!r}")
        sql = sql.replace(old, new, 1)
    if extra:
        end = sql.rindex(")")
        sql = f"{sql[:end]}\n, {extra}\n)"  # a newline first: the last line may end in a comment
    head = sql.index("(")
    indexes = [r[0] for r in conn.execute(
        "SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL ORDER BY name",
        (table,))]
    columns = ", ".join(f"[{r[1]}]" for r in conn.execute(f"PRAGMA table_info([{table}])"))
    seq = conn.execute("SELECT seq FROM sqlite_sequence WHERE name = ?", (table,)).fetchone() \
        if "AUTOINCREMENT" in sql.upper() else None
    with db.atomic():  # the migration's transaction (a savepoint in it), or one of its own
        conn.execute(f"CREATE TABLE [{table}_rebuilt] {sql[head:]}")
        conn.execute(f"INSERT INTO [{table}_rebuilt] ({columns}) SELECT {columns} FROM [{table}]")
        conn.execute(f"DROP TABLE [{table}]")
        conn.execute(f"ALTER TABLE [{table}_rebuilt] RENAME TO [{table}]")
        for index in indexes:
            conn.execute(index)
        if seq is not None:
            conn.execute("UPDATE sqlite_sequence SET seq = max(seq, ?) WHERE name = ?", (seq[0], table))


@migrations(name="0020_teams")
def _teams(db: Database) -> None:
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
    _rebuild(db, "tracks", [("paper_id TEXT NOT NULL REFERENCES papers(id)", "paper_id TEXT REFERENCES papers(id)")],
             "author_key TEXT, team_slug TEXT, "
             "CHECK ((paper_id IS NOT NULL) + (author_key IS NOT NULL) + (team_slug IS NOT NULL) = 1)")
    db.executescript(
        """
        CREATE UNIQUE INDEX tracks_place_person
            ON tracks(coalesce(guild_id, 0), channel_id, coalesce(user_id, 0), coalesce(author_key, ''),
                      coalesce(team_slug, '')) WHERE paper_id IS NULL;
        """
    )
    _rebuild(db, "webhooks", [("CHECK (target_kind IN ('paper', 'direction'))",
                               "CHECK (target_kind IN ('paper', 'direction', 'author', 'team'))")])


@migrations(name="0021_webhook_seal")
def _webhook_seal(db: Database) -> None:
    """Webhook URLs sealed with AES-GCM (store/secret_box.py) instead of the HMAC keystream of
    0015: each `s1` value is opened with the old construction and sealed again, bound to its
    row's `url_id`. Without the key (a database restored without it) the rows stay as they are
    and are sealed again at their first read once the key is back (store.subscriptions.webhooks)."""
    from mapwatch.store import secret_box

    rows = db.conn.execute("SELECT id, url_sealed, url_id FROM webhooks WHERE substr(url_sealed, 1, 2) = ?",
                           (secret_box.LEGACY,)).fetchall()
    if not rows:
        return
    main = db.conn.execute("PRAGMA database_list").fetchone()
    try:
        key = secret_box.load_key(str(main[2] or "") if main else "", create=False)
    except secret_box.SecretUnreadable:
        return
    for webhook_id, blob, url_id in rows:
        try:
            url = secret_box.open_legacy(key, bytes(blob))
        except secret_box.SecretUnreadable:
            continue  # altered, or another key: left for the delivery to report (the webhook is disabled)
        db.conn.execute("UPDATE webhooks SET url_sealed = ? WHERE id = ?",
                        (secret_box.seal(key, url, str(url_id).encode()), webhook_id))


@migrations(name="0022_webhook_no_answer")
def _webhook_no_answer(db: Database) -> None:
    """Webhooks whose receiver does not answer: since when, and for how many delivery rounds in a
    row (bot/sending/delivery_webhooks.py disables one after 24 h of them)."""
    db.executescript(
        """
        ALTER TABLE webhooks ADD COLUMN no_answer_since TEXT;
        ALTER TABLE webhooks ADD COLUMN no_answer_rounds INTEGER NOT NULL DEFAULT 0;
        """
    )


@migrations(name="0023_enrichment_changes")
def _enrichment_changes(db: Database) -> None:
    """When a paper's authors (or venue) changed by what a scholarly source said, so that the
    feeds and pages showing it are built again (feeds/publish_changes.py, the paper files' ETags)."""
    db.executescript(
        """
        -- One row each time a paper's authors, their institutions or its venue changed.
        CREATE TABLE enrichment_changes (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            paper_id TEXT NOT NULL,
            changed_at TEXT NOT NULL
        );
        CREATE INDEX enrichment_changes_paper ON enrichment_changes(paper_id, id);
        -- How far a publish into the folder has read them.
        ALTER TABLE feed_publishes ADD COLUMN last_enrichment_id INTEGER NOT NULL DEFAULT 0;
        """
    )


@migrations(name="0024_first_read")
def _first_read(db: Database) -> None:
    """Which citations were already there when mapwatch first read the cited paper (docs/feeds.md,
    "What new means"), so the feeds' "new in 7 days" counts only those that appeared after, and a
    first import's entries are told apart. Existing citations: at the first read when revealed no
    later than the cited paper's first stored page (or while it has none)."""
    db.executescript(
        """
        -- 1: revealed while the cited paper's first page was read, or before it was ever read.
        ALTER TABLE citations ADD COLUMN at_first_read INTEGER NOT NULL DEFAULT 0;
        UPDATE citations SET at_first_read = 1
            WHERE NOT EXISTS (SELECT 1 FROM snapshots s WHERE s.paper_id = citations.cited_id
                              AND s.ingested_at < citations.first_seen);
        -- 1: every citation of this citer into the direction's papers is at a first read.
        ALTER TABLE feed_direction_citers ADD COLUMN at_first_read INTEGER NOT NULL DEFAULT 0;
        -- The feed index is rebuilt whole at the next publish (its day counts then count the new only).
        DELETE FROM feed_index_state;
        """
    )


@migrations(name="0025_author_indexes")
def _author_indexes(db: Database) -> None:
    """A person's papers read from the index alone: /author, its autocomplete and follows look
    a person up by OpenAlex id or ORCID and want their papers' ids; with the paper id in the
    index, the few hundred rows of a prolific author are one range of it, not a table row each
    (bench/authors.py)."""
    db.executescript(
        """
        DROP INDEX paper_authors_author_id;
        DROP INDEX paper_authors_orcid;
        CREATE INDEX paper_authors_author_paper ON paper_authors(author_id, paper_id) WHERE author_id IS NOT NULL;
        CREATE INDEX paper_authors_orcid_paper ON paper_authors(orcid, paper_id) WHERE orcid IS NOT NULL;
        """
    )
