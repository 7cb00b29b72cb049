"""Fetching map pages: the folder source (files) and the map over HTTP (a polite crawl:
its plan, priority queue, re-check schedule, robots.txt, sitemaps, one page's
conditional GET), and refresh, one tick of either source.

store/sources may import (mapwatch/layers.py): store/*.py, store/pages, store/database. Refresh
stores what it fetched; it is handed what it needs from above: the tracked papers it fetches
first come as the caller's `priority`, and the directions' ranks are the caller's next step
(`mapwatch run`'s tick, `mapwatch refresh`)."""
