"""The database: its schema (schema.sql, a new database made from it, and the migrations
that bring an older one up to it), opening and checking a --db, SQLite settings, pages as
rows, the diffed save, ingest (one run; a pool of parse workers; a bulk load's index builds),
the feeds' per-direction index, what a publish leaves for the next (published_files: the
cursors, when each file's bytes were first written), the figures /healthz reads
(health_figures), `mapwatch backup`'s checked copy (backup), and query rows read by column
name (rows: what every layer of the store
reads rows with).

store/database may import (mapwatch/layers.py): store/*.py, store/pages. Pages, as ingest
reads the folder source (pages.files)."""
