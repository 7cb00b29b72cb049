# ruff: noqa: E501  (prose, one description a line)
"""What each table and column of the database is, for the schema reference of docs/database.md.

The columns themselves (their order, types, keys and indexes) come from the live schema: cog opens a
new database, made from store/database/schema.sql (docs/gen/schema_reference.py). Every table and column
there must have its entry here, and no entry may name a column that does not exist: the generator
refuses otherwise, so `cog --check` fails in CI until the new column is described here.
"""

from __future__ import annotations

# table: (what a row is, {column: what it holds, "" when its name says it all}), in the order the
# reference lists them.
TABLES: dict[str, tuple[str, dict[str, str]]] = {
    'papers': (
        "a paper, with a page in the map (`has_page` 1) or only seen in other pages' lists (0)",
        {
            'id': 'arXiv id without version',
            'title': 'as its page, or a list naming it, gives it',
            'year': '',
            'url': 'map page',
            'arxiv_url': 'its arXiv page (derived from the id unless the page gives a plain arXiv link)',
            'abstract': "from its page's `## Abstract`",
            'first_posted': 'its page\'s "First posted on arXiv" date',
            'cited_by': 'the cited-by count its page states',
            'refs_in_map': 'R of its page\'s "builds on R of its T references"',
            'refs_total': 'T of that line',
            'data_through': 'the "data through" date of its stored page',
            'has_page': '1: the map has its page; 0: seen only in lists',
            'first_seen': 'when mapwatch first stored it',
            'updated': '',
        }),
    'citations': (
        '`citing_id` cites `cited_id`; a view of `citation_edges` and `paper_keys` since migrations 0048 and 0049, under the name, columns and values of the table it was',
        {
            'citing_id': 'the citing paper (`papers.id`)',
            'cited_id': 'the cited paper (`papers.id`)',
            'first_seen': 'the ingest that revealed it: ISO 8601 text in UTC, to the second (`citation_edges.first_seen_unix` as text)',
            'snapshot_id': 'the page version that revealed it',
            'at_first_read': ("1: known at the cited paper's first read (revealed while its first page was read, or "
                              "before it had one), not new; 0: it appeared after (see [Feeds](feeds.md#what-new-means))"),
            'provenance': ("`map`: a map page names it; `openalex` or `s2`: only that source has (no snapshot yet; "
                           "see [Enrichment](enrichment.md#citations-the-map-does-not-name))"),
            'event_id': ("its citation event (`events.id`): the edge is stored here once, and its event found "
                         "from it (the map's listing order, a merge of two versions); NULL only for an edge stored "
                         "before events existed (see [Why each index](#why-each-index))"),
        }),
    'citation_edges': (
        "the citations as stored, the rows behind the view `citations`: each paper by its key (`paper_keys`, migration 0049), the first-seen time as Unix seconds (a number of 4 bytes, not 25 characters, here and in both indexes), in the same order",
        {
            'citing_key': 'the citing paper (`paper_keys.key`)',
            'cited_key': 'the cited paper (`paper_keys.key`)',
            'first_seen_unix': "the ingest that revealed it, in Unix seconds (UTC); `citations.first_seen` is it as text",
            'snapshot_id': '`snapshots.id`: the page version that revealed it',
            'at_first_read': '`citations.at_first_read`',
            'provenance': '`citations.provenance`',
            'event_id': '`event_log.id`: its citation event',
        }),
    'paper_keys': (
        "each paper's key, which `citation_edges` and `event_log` hold in place of its id (migration 0049): 4 bytes where an id takes 10 and more, in the rows and their indexes; the views `citations` and `events` join the ids back",
        {
            'key': ("a new-style arXiv id's own number, in its order: YYMM * 100,000 + its number (2412.10400 -> "
                    "241,210,400), so a paper's citers sort on their keys as on their ids; any other id (old-style, "
                    "beyond arXiv, written otherwise) the next from 1,000,000,000 on"),
            'id': '`papers.id` (or an id only a citation or event names)',
        }),
    'directions': (
        'a research direction',
        {
            'slug': "the link's path, e.g. `lr/reinforcement-learning-for-reasoning`",
            'name': 'as the map names it',
            'area': 'the area the index page groups it under',
            'breadcrumb': '',
            'url': 'its map page',
            'direction_count': '',
        }),
    'placements': (
        'a paper placed in a direction',
        {
            'paper_id': '',
            'direction_slug': '',
            'position': '1 = main direction',
        }),
    'snapshots': (
        'one stored version of a page, with the counts it stated',
        {
            'id': '',
            'paper_id': '',
            'data_through': 'the page\'s "data through" date',
            'cited_by': 'the cited-by count it stated',
            'refs_in_map': '',
            'refs_total': '',
            'citers_listed': 'citers the page names',
            'refs_listed': 'references the page names',
            'content_hash': 'what the page says, not its bytes (see below)',
            'source': 'where the page was read from (a file or URL)',
            'ingested_at': 'when it was stored',
        }),
    'events': (
        "the change log, ids only grow: `citation` (`citing_id` newly cites `paper_id`) or `count` (`paper_id`'s stated cited-by count grew `old_count` -> `new_count`, `unlisted` of them not named on its page); a view of `event_log`, `event_batches` and `paper_keys` since migrations 0047 and 0049, under the name and columns of the table it was",
        {
            'id': '',
            'kind': '`citation` or `count`: whether it has a citer',
            'paper_id': '',
            'citing_id': '',
            'old_count': '',
            'new_count': '',
            'unlisted': '',
            'snapshot_id': 'the page version that showed it',
            'seen_at': "when it was recorded: its write's (`event_batches`)",
        }),
    'event_log': (
        "the events as stored, the rows behind the view `events`: each without its kind (a citation event has a citer, a count event none) or its time, which its write's row in `event_batches` holds once; its papers by key (`paper_keys`, migration 0049)",
        {
            'id': '`events.id`; the sequence goes on from the table it was',
            'paper_key': '`paper_keys.key`: the paper',
            'citing_key': "`paper_keys.key`: a citation event's citer; none: a count event",
            'old_count': '',
            'new_count': '',
            'unlisted': '',
            'snapshot_id': '`snapshots.id`: the page version that showed it',
        }),
    'sources': (
        'where a page was last read from (a file, or a URL with its HTTP validators), to skip unchanged ones; for the HTTP crawl also when each page is due (a row without `checked_at`: a page found, not fetched yet)',
        {
            'location': 'the file path or URL',
            'paper_id': '',
            'sha256': 'of the bytes last read',
            'size': "the file's size, to skip unchanged files",
            'mtime_ns': "the file's modification time, to skip unchanged files",
            'etag': 'HTTP validator for conditional requests',
            'last_modified': 'HTTP validator for conditional requests',
            'checked_at': 'when it was last read or checked (the start of the tick that did it)',
            'text_url': 'the text alternate an HTML page declared: later ticks read the page from there; NULL: the page itself',
            'changed_at': 'the last check that found the page changed',
            'next_check_at': 'when it is due',
            'interval_s': 'its re-check interval, seconds',
            'checks': 'checks over HTTP that compared it with its stored version (its change history)',
            'checks_unchanged': 'of those, the checks that found it unchanged',
            'checked_s': 'the seconds those checks covered (each from the check before it)',
            'dated_changes': 'checks that found it changed and could date the change (Last-Modified)',
            'unchanged_s': 'the seconds it is known to have stayed unchanged (to the change, when dated)',
            'change_rate': 'its estimated changes a day (Cho and Garcia-Molina; docs/live-map.md, "Re-checks by value")',
            'recheck_weight': 'sqrt(change rate x value): its re-check period is a scale over it (the square-root rule)',
            'listed_lastmod': "the `lastmod` a sitemap lists for the page (docs/live-map.md, \"Sitemaps read as they change\")",
            'listed_in': 'the sitemap file that lists it; NULL: none read lists it',
        }),
    'crawl_resources': (
        'robots.txt, a sitemap or a direction page of the map, as last read, for conditional requests',
        {
            'location': 'its URL',
            'kind': '`robots`, `sitemap`, `direction`',
            'etag': 'HTTP validator for conditional requests',
            'last_modified': 'HTTP validator for conditional requests',
            'sha256': '',
            'body': 'robots.txt and sitemaps up to 4 MB: what a 304 stands for',
            'checked_at': '',
            'changed_at': '',
            'next_check_at': "direction pages' polling",
            'interval_s': "direction pages' polling",
            'listed': 'a sitemap file of pages: the pages it lists, as recorded (NULL: not read in full yet)',
            'dated': 'of those, the ones with a date-time lastmod',
        }),
    'enrichment_fetches': (
        'when each open source (arXiv, OpenAlex, Semantic Scholar) was last asked about a paper, and when it is asked again (Enrichment)',
        {
            'paper_id': '',
            'source': '`arxiv`, `openalex` or `s2`',
            'fetched_at': '',
            'status': '`ok`, `not_found` or `failed`',
            'reason': 'why it failed, one line',
            'next_fetch_at': 'asked again from then on: 30 days after `ok`, 7 after `not_found`, 1 hour after `failed`, twice the wait before after a `failed` again (at most a day)',
        }),
    'enrichment_changes': (
        "each change of a paper's authors, their institutions or its venue, so the feeds and pages showing it are built again",
        {
            'id': 'increasing: publish and the paper files\' ETags keep it as a cursor',
            'paper_id': '',
            'changed_at': '',
        }),
    'arxiv_records': (
        "arXiv's record of a paper, from its API",
        {
            'paper_id': '',
            'title': '',
            'primary_category': 'e.g. `cs.LG`',
            'categories': 'space-separated, the primary first',
            'published': 'the first version, ISO date-time',
            'updated': 'the latest version',
            'doi': 'the journal DOI the authors gave',
            'journal_ref': '',
            'comments': "the authors' comment, e.g. pages and venue",
            'fetched_at': '',
        }),
    'openalex_works': (
        "OpenAlex's work for a paper (for a citer beyond arXiv, all that is known of it besides its title and year)",
        {
            'paper_id': '',
            'work_id': 'e.g. `W2741809807`',
            'venue': "its primary location's source, e.g. a journal or conference",
            'doi': '',
            'fetched_at': '',
        }),
    'paper_authors': (
        "a paper's authors in order: arXiv's names, or OpenAlex's list with its people's ids; a view of `paper_people` and `people` since migration 0044, under the name and columns of the table it was",
        {
            'paper_id': '',
            'position': '1 = the first author',
            'name': '',
            'author_id': 'OpenAlex author id, e.g. `A5023888391`',
            'orcid': 'e.g. `0000-0002-1825-0097`',
            'source': '`arxiv` or `openalex`: whose list it is',
        }),
    'people': (
        "each person once: a name with its OpenAlex id and ORCID (the same name with other ids, or none, is another row); a person no byline names any more is deleted: with their last `paper_people` row (trigger `paper_people_forget`), or by the write that replaced them in a list",
        {
            'id': 'the number `paper_people` names them by',
            'name': '',
            'author_id': 'OpenAlex author id, e.g. `A5023888391`',
            'orcid': 'e.g. `0000-0002-1825-0097`',
        }),
    'paper_people': (
        "a paper's authors in order, each a row of `people`: the rows behind the view `paper_authors`",
        {
            'paper_id': '',
            'position': '1 = the first author',
            'person': '`people.id`',
            'from_openalex': "1: OpenAlex's list, 0: arXiv's (the view's `source`)",
        }),
    'institutions': (
        'institutions named by OpenAlex',
        {
            'id': 'OpenAlex institution id, else `name:` and the name',
            'name': '',
            'ror': 'its ROR id',
            'country': 'ISO 3166-1 alpha-2 code',
        }),
    'paper_author_institutions': (
        'the institutions an author gave on a paper',
        {
            'paper_id': '',
            'position': "the author's, as in `paper_authors`",
            'institution_id': '',
        }),
    'citation_contexts': (
        "Semantic Scholar's view of a citation: the sentences that cite, intents, influence",
        {
            'citing_id': '',
            'cited_id': '',
            'contexts': 'JSON list of citing sentences, clipped',
            'intents': 'JSON list, e.g. `["methodology"]`',
            'is_influential': '1 when Semantic Scholar counts it as influential',
            'fetched_at': '',
        }),
    'source_citations': (
        "what an open source said cites a map paper, whether or not a map page names it",
        {
            'citing_id': 'the citing paper (an arXiv id)',
            'cited_id': 'the cited map paper (`papers.id`)',
            'source': '`openalex` or `s2`',
            'first_seen': 'when the source first said so',
            'baseline': "1: in the source's first answer about the cited paper (there before mapwatch asked, not news)",
        }),
    'discovery_asked': (
        "when a source was first and last asked for a paper's citers",
        {
            'paper_id': '',
            'source': '',
            'first_asked': '',
            'last_asked': '',
            'citation_count': "Semantic Scholar's citation count of the paper when its citers were last read in full",
            'read_at': 'when they were (a round that finds the same count reads them again after a week)',
        }),
    'alert_messages': (
        "an alert or follow post sent while some of its citers had no authors: edited in place once they come",
        {
            'id': 'its row',
            'kind': '`track` (a paper, person or team: `tracks.id`) or `follow` (`follows.id`)',
            'item_id': 'the track or follow it was sent for',
            'after_event_id': 'the subscription\'s cursor when it was sent: it was about events after this one',
            'upto_event_id': '... up to this one (recomposed from the same window when edited)',
            'channel_id': 'where the message is (a forum post\'s thread)',
            'message_id': 'the message, as Discord numbered it',
            'guild_id': 'its server (NULL in DMs)',
            'sent_at': 'when Discord accepted it (after a week it is left as sent)',
            'nonce': 'its marker (`ref <nonce>` in the footer), kept when edited',
            'missing': 'JSON list of the citers it named without authors (those still missing after an edit)',
            'edited_at': 'when the last of them got its authors and the message its last edit (then pruned)',
        }),
    'recent_citers_asked': (
        "when OpenAlex was last asked for the works of the last days citing a tracked or team paper",
        {
            'paper_id': 'the tracked or team paper (`papers.id`)',
            'asked_at': 'when its answer was stored (tracked papers are asked every round, team papers daily)',
        }),
    'discovery_passes': (
        "a pass over OpenAlex's new arXiv works of one publication day, read to the end",
        {
            'day': 'the publication day (YYYY-MM-DD)',
            'lag': 'read this many days after it (1, then 3)',
            'works': 'works with an arXiv id read',
            'citations': "citations of map papers among them that no map page named",
            'finished_at': '',
        }),
    'source_additions': (
        "what an open source added on one UTC day, against its daily bound ([Enrichment](enrichment.md#how-much-a-source-may-add))",
        {
            'source': '`openalex` or `s2`',
            'day': 'the UTC day (YYYY-MM-DD)',
            'citations': 'citations it added: pairs it named a first time (`source_citations`) and those that entered `citations`',
            'stubs': 'stub papers it added (`papers`, `has_page` 0)',
            'reached': 'the first bound it reached that day (the line the round reported); NULL: none',
        }),
    'event_batches': (
        "the events one write stored (consecutive ids, one `seen_at`): `/rising` finds the events of the last N days "
        "through these rows instead of an index of every event's time (see [Why each index](#why-each-index))",
        {
            'first_id': "the write's first event id",
            'last_id': 'its last: the ids between are its events (or deleted since, by a merge)',
            'seen_at': 'the `seen_at` of every one of them (the view `events` reads it here)',
        }),
    'crawl_checked': (
        "whether every paper with a page was found checked over HTTP, for one page-location pattern of a crawled "
        "site: while the papers with a page are these, a tick's plan (and a new process's first tick) need not "
        "check every page again (see [The live map](live-map.md#re-checks-by-value))",
        {
            'head': "a page's location is `head` + paper id + `tail`",
            'tail': '',
            'pages': 'the papers with a page when every one was found checked',
            'top_rowid': 'the newest `papers` row then: its rowid ...',
            'top_id': '... and its id (a file whose papers were rebuilt is checked again)',
        }),
    'recheck_weight': (
        "the re-checks' total weight, kept between processes: a tick's plan shares its re-checks by it, and "
        "sums it again over every page checked when 6 hours of the tick clock have passed (see "
        "[The live map](live-map.md#re-checks-by-value))",
        {
            'id': 'always 1: one row',
            'total': 'Σ `sources.recheck_weight` over the pages checked over HTTP (a page without one counts as one with no history)',
            'summed_at': 'when it was summed, on the tick clock',
        }),
    'sitemap_trust': (
        'whether a host\'s sitemap `lastmod`s are believed ([Following the live map over HTTP](live-map.md#following-the-live-map-over-http): believed lastmods, verified)',
        {
            'host': 'the map\'s host (and port)',
            'compared': 'pages requested although their lastmod said they had not changed, since the last verdict (halved past 1,000)',
            'missed': 'of those, pages that had changed all the same',
            'distrusted_until': 'lastmods not believed before this time; NULL: believed',
            'reason': 'why they were last not believed',
            'updated_at': 'the last tick that added evidence',
        }),
    'delivery_options': (
        'per track or follow (`kind`, `item_id`), whether each alert opens a discussion thread (The Discord bot, "A discussion thread per alert")',
        {
            'kind': '`track` or `follow`',
            'item_id': 'the track\'s or follow\'s id',
            'threads': '1: each alert opens a discussion thread',
        }),
    'forum_channels': (
        'a channel chosen for tracks and follows that is a forum (each alert there is a post)',
        {
            'channel_id': '',
            'guild_id': '',
            'added_at': '',
        }),
    'forum_posts': (
        "in a forum channel, the post (`thread_id`) holding a citing paper's alerts",
        {
            'channel_id': 'the forum channel',
            'citer_id': 'the citing paper (or a digest period\'s key) the post is about',
            'thread_id': 'the post',
            'created_at': '',
        }),
    'webhooks': (
        "a paper's alerts or a direction's follows sent to a Discord or Slack webhook (The Discord bot, \"Webhooks\")",
        {
            'id': '',
            'kind': '`discord` or `slack`',
            'target_kind': '`paper`, `direction`, `author` or `team`',
            'target': "the paper id, the direction slug, the author key or the team's slug (in `guild_id`)",
            'url_sealed': 'the URL sealed with AES-256-GCM under `$MAPWATCH_WEBHOOK_KEY` or the key file `<db>.webhook-key`, bound to `url_id` (never stored in clear)',
            'url_id': 'a keyed fingerprint of the URL (to find duplicates without the URL)',
            'url_hint': 'host and webhook id, no token',
            'guild_id': 'the server that added it (NULL: the CLI)',
            'created_by': '',
            'created_at': '',
            'last_event_id': 'the cursor: the last event delivered',
            'last_delivery_at': '',
            'sending_upto': 'a delivery being sent: up to this event',
            'sending_since': 'and since when',
            'disabled_reason': 'why it was disabled (404, a key that does not open it, 24 h without an answer), NULL while enabled',
            'last_failure': 'the last refusal\'s reason',
            'no_answer_since': 'the first of the delivery rounds in a row in which the receiver did not answer (NULL: it answers)',
            'no_answer_rounds': 'how many such rounds in a row',
        }),
    'ingest_errors': (
        'a page currently rejected',
        {
            'location': 'the file path or URL',
            'line': 'the line the reason is about',
            'reason': 'why the page was rejected',
            'sha256': 'of the rejected bytes',
            'first_seen': 'when it was first rejected',
            'last_seen': 'when it was last rejected',
        }),
    'quarantined_dates': (
        'a date no page can claim, stored by an older version and moved out of its column (set to NULL there) by migration 0013',
        {
            'id': '',
            'table_name': '`papers` or `snapshots`',
            'row_key': 'the paper id or snapshot id',
            'column_name': '`data_through` or `first_posted`',
            'value': 'as stored',
            'reason': '`in the future`, `before arXiv existed`, `not a date`',
            'quarantined_at': '',
        }),
    'ingests': (
        'one run of ingest or refresh',
        {
            'id': '',
            'source': 'the folder, files or URL read',
            'started_at': '',
            'finished_at': '',
            'pages_read': 'pages read',
            'unchanged': 'pages already stored as they are',
            'stale': 'pages older than stored',
            'rejected': 'pages rejected',
            'stored': 'pages stored',
            'new_citations': 'citations first seen',
            'requests': 'requests a refresh sent the site; NULL for a folder',
        }),
    'feed_publishes': (
        'where feeds were last published, so the next publish rebuilds only the paper feeds that changed',
        {
            'out_dir': 'absolute path; with `#papers=all` appended for `publish --papers all`, which keeps its own cursors',
            'base_url': '',
            'entry_limit': '',
            'last_event_id': 'what the published feeds include',
            'last_snapshot_id': 'what the published feeds include',
            'published_at': '',
            'last_enrichment_id': 'the newest `enrichment_changes` row the published feeds include (authors)',
        }),
    'paper_aliases': (
        "a citer beyond arXiv (keyed by DOI or OpenAlex work id) found to be an arXiv paper: its rows moved to the arXiv id, and its old key kept here so `/paper <DOI>` still finds it ([Enrichment](enrichment.md#citers-beyond-arxiv))",
        {
            'alias': 'the key it had: a DOI in lower case, or an OpenAlex work id',
            'paper_id': 'the arXiv id it is stored under now',
            'merged_at': '',
            'how': "what said they are one work: `openalex-work` (the same OpenAlex work), `arxiv-doi` or `openalex-doi` (the arXiv paper's DOI)",
        }),
    'published_files': (
        "a file publish wrote into a folder, and when its bytes were first written there, so that it keeps its modification time and `Last-Modified` when written again with the same bytes (the folder lost; [Feeds and web pages](feeds.md#last-modified)); the paper files of `publish --papers all` are not kept",
        {
            'out_dir': 'absolute path of the output folder',
            'path': 'the file, relative to the folder',
            'digest': 'the hash of its bytes: its `ETag` without the quotes',
            'modified_at': 'Unix time those bytes were first written there: its modification time and `Last-Modified`',
        }),
    'feed_direction_citers': (
        "the feeds' index of who newly cites each direction, brought up to date by each publish (store/database/feed_index.py)",
        {
            'direction_slug': '',
            'citing_id': '',
            'first_seen': '',
            'first_event_id': '',
            'at_first_read': "1: every citation of this citer into the direction's papers is known at a first read "
                             "(`citations.at_first_read`): not counted as new",
        }),
    'feed_placements': (
        'the placements that index was built from (a page that moves a paper is found against them)',
        {
            'paper_id': '',
            'direction_slug': '',
        }),
    'feed_direction_stats': (
        "each direction's paper count for the feeds, kept with that index",
        {
            'direction_slug': '',
            'papers': '',
            'since': '`first_seen` of its first paper',
        }),
    'pending_builds': (
        'an index, trigger or full-text `rebuild` a bulk load dropped and has still to build (empty outside one; see `mapwatch ingest`)',
        {
            'seq': 'build order',
            'name': '',
            'kind': '`index`, `trigger`, `fts`',
            'sql': 'the exact statement, from `sqlite_master`',
            'owner_pid': 'the loading process: the builds wait while it runs',
        }),
    'feed_direction_days': (
        "how many citers each direction gained per day, kept with that index (the index page's 7- and 30-day counts read it)",
        {
            'direction_slug': '',
            'day': 'UTC date of `first_seen`',
            'citers': 'citers first seen that day, those known at a first read not counted',
        }),
    'feed_index_state': (
        'how far that index has read',
        {
            'id': 'always 1',
            'last_event_id': '',
            'last_snapshot_id': '',
        }),
    'teams': (
        "a server's named set of people and papers (`/team`), followed by `/track team:`",
        {
            'guild_id': 'the server it belongs to',
            'slug': "unique in its server, from the name (`/track team:<slug>`)",
            'name': 'as given to `/team add`',
            'feed_slug': "its feed's and page's address, `/feeds/teams/<feed_slug>.atom`: the slug and 160 random bits (32 base-32 letters), unique across servers and not guessable",
            'created_at': '',
            'created_by': 'the user who started it',
            'feed_renewed_at': 'when migration 0035 replaced its guessable address (8 hex digits after the slug) with this one; NULL for a team made since (`/team list` says so for 90 days)',
        }),
    'team_members': (
        'a person or a paper in a team',
        {
            'guild_id': '',
            'team_slug': '`teams.slug` in that server',
            'kind': '`author` or `paper`',
            'value': 'an author key (an OpenAlex author id `A…`, an ORCID, or `name:<name>` for someone known by name only) or a paper id',
            'label': "what lists show: the person's name, the paper's title",
            'added_at': '',
            'added_by': '',
        }),
    'tracks': (
        "a paper, a person or a team tracked in a channel (or in a user's DMs) by `/track`: exactly one of `paper_id`, `author_key`, `team_slug` is set",
        {
            'id': '',
            'guild_id': 'NULL in a DM',
            'channel_id': '',
            'user_id': 'the DM user, NULL in a server',
            'paper_id': 'the tracked paper (NULL for a person or a team)',
            'author_key': 'the tracked person: an OpenAlex author id, an ORCID or `name:<name>` (`/track author:`)',
            'team_slug': "the tracked team, `teams.slug` in the track's server (`/track team:`)",
            'created_at': '',
            'created_by': '',
            'last_event_id': 'cursor: events delivered up to here',
            'last_alert_at': '',
            'disabled_reason': 'why alerts stopped, e.g. the channel is gone',
            'mode': "`instant`, `daily` or `weekly`: alerts after each refresh, or in the channel's digest",
            'role_id': 'the one role its alerts mention, NULL: none',
            'last_failure': "the last alert Discord refused for good: when, HTTP status, Discord's code and message",
            'hide_self': '1 (`self:hide`): its alerts leave out citing papers that share an author with it (self-citations)',
            'intent': '`methodology`, `background` or `result` (`intent:`): only citations Semantic Scholar gives that '
                      'intent are alerted; NULL: every citation',
        }),
    'bot_state': (
        "small state of the bot: the synced command set's hash, long page-button state, the next refresh, deliveries being sent and refusal counts (bounded, see [Alerts](bot.md#alerts))",
        {
            'key': '',
            'value': '',
            'updated': '',
        }),
    'direction_ranks': (
        "a paper's PageRank within one of its directions, over the citations among that direction's papers (brought up to date after each refresh: the directions its pages changed, see [Graph questions](graph.md)); a view of `direction_rank_scores` and `direction_rank_totals` since migration 0041, under the name and columns of the table it was",
        {
            'direction_slug': '',
            'paper_id': '',
            'pagerank': "score × whole ÷ total: networkx's PageRank where the direction was last computed whole, within the direction's stated bound where a push updated it since",
            'rank': '1 = highest in the direction: the order of the index `direction_rank_scores_order` (place, then cited-by count, then id), numbered (since migration 0043; stored before)',
            'computed_at': "when the paper's PageRank was last computed (a direction whose papers and citations did not change keeps it)",
        }),
    'direction_rank_scores': (
        "a paper's score and place within one of its directions, the rows behind the view `direction_ranks`",
        {
            'direction_slug': '',
            'paper_id': '',
            'score': "the PageRank the last whole computation gave, or y ÷ whole after a push (y solves y = 1 + α·y·P, store/questions/rank_push.py)",
            'place': 'the score to 12 decimals: what orders the direction first, highest first (its papers share one divisor, so places order PageRanks)',
            'cited_by': "the paper's cited-by count (0: none stated), kept up to date by each rank update: it orders equal places, then the id",
            'computed_at': "when this paper's score was last computed, whole or by a push",
        }),
    'direction_rank_totals': (
        "one ranked direction's sums, which turn its scores into PageRanks, and how far pushes may have taken them from a whole computation",
        {
            'direction_slug': '',
            'whole': 'Σy at the last whole computation (1 for ranks stored before migration 0041)',
            'total': 'Σy now: a push moves it',
            'drift': 'the residual (L1) pushes left unpushed since the last whole computation; the PageRanks are within 2·drift ÷ ((1 − α)·total) of that exact solution. NULL: not known (stored before 0041): the next change computes the direction whole',
            'computed_at': 'the last whole computation of the direction; a push is refused once it is a day old',
        }),
    'ranks_state': (
        'how far the stored direction ranks have read: the next update looks only at the snapshots and citation events after these (no row: it computes every direction)',
        {
            'id': 'always 1',
            'last_snapshot_id': '',
            'last_event_id': '',
        }),
    'papers_fts': (
        'full-text index (FTS5, porter stemming) over `papers.title` and `papers.abstract`',
        {
            'title': '`papers.title`',
            'abstract': '`papers.abstract`',
        }),
    'papers_title_fts': (
        'full-text index (FTS5, porter stemming) over `papers.title` alone, for autocomplete and title lookups (kept in step with `papers` by triggers)',
        {
            'title': '`papers.title`',
        }),
    'follows': (
        "a direction followed in a channel (or in a user's DMs) by `/follow`: its newly added citing papers are delivered there",
        {
            'id': '',
            'guild_id': 'NULL in a DM',
            'channel_id': '',
            'user_id': 'the DM user, NULL in a server',
            'direction_slug': '',
            'keyword': 'only citing papers whose title contains it, any case; NULL: all',
            'mode': '`instant`, `daily` or `weekly`',
            'role_id': 'the one role mentioned, NULL: none',
            'created_at': '',
            'created_by': '',
            'last_event_id': 'cursor: events delivered up to here; starts at the newest event, so a new follow does not replay history',
            'last_delivery_at': '',
            'disabled_reason': 'why deliveries stopped, e.g. the channel is gone',
            'last_failure': 'the last delivery Discord refused for good, and why',
            'hide_self': '1 (`self:hide`): leaves out citing papers whose every citation of the direction is a self-citation',
            'intent': '`methodology`, `background` or `result` (`intent:`): only citing papers one of whose citations of '
                      'the direction Semantic Scholar gives that intent; NULL: all',
        }),
    'digest_settings': (
        'when a server (or a user, in DMs) gets its digests; without a row, 09:00 UTC',
        {
            'id': '',
            'guild_id': 'NULL for DMs',
            'user_id': 'the DM user, NULL for a server',
            'hour': '0-23, local',
            'timezone': 'IANA name, default `UTC`',
            'updated_at': '',
            'updated_by': '',
        }),
    'digests': (
        'one digest period handled for a channel, recorded after Discord accepted the message (`sent` 1) or for a quiet period (`sent` 0, nothing posted): a period is never handled twice',
        {
            'id': '',
            'guild_id': '',
            'channel_id': '',
            'user_id': '',
            'mode': '`daily` or `weekly`',
            'period': 'the scheduled time it stands for, UTC',
            'from_event_id': 'it covered events after the first, up to the second',
            'upto_event_id': 'it covered events after the first, up to the second',
            'papers': 'tracked papers and followed directions it listed',
            'directions': 'tracked papers and followed directions it listed',
            'citers': 'new citing papers it counted',
            'sent': '',
            'message_id': '',
            'delivered_at': '',
            'failure': 'a period Discord refused for good: why; `sent` is 0',
        }),
}
