"""The database: its schema and migrations, opening and checking a --db, SQLite
settings, pages as rows, the diffed save, ingest (one run; a pool of parse
workers; a bulk load's index builds), the feeds' per-direction index, when each
published file's bytes were first written (published_files), and query rows read by
column name (rows: what every layer of the store reads rows with).

store/database may import (mapwatch/layers.py): store/*.py, store/pages. Pages, as ingest
reads the folder source (pages.files)."""
