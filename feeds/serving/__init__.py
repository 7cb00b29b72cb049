"""Serving the feeds and pages over HTTP: the server (aiohttp's low-level server,
conditional GET), the folder held in memory, paper files built on demand, the
connection limits, /healthz and /metrics.

feeds/serving may import (mapwatch/layers.py): store/, feeds/. Of feeds/, the builders
(build, pages, paper_files, chart) and the folder's layout (folder_layout)."""
