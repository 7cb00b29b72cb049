"""Serving the feeds and pages over HTTP: the server (aiohttp's low-level server,
conditional GET), the folder held in memory, paper files built on demand, the
connection limits, /healthz and /metrics.

May import: the store, and feeds' builders (build, pages, paper_files, chart)."""
