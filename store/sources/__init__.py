"""Fetching map pages: the folder source (files) and the map over HTTP (a polite crawl:
its plan, priority queue, re-check schedule, robots.txt, sitemaps, one page's
conditional GET), and refresh, one tick of either source.

store/sources may import (mapwatch/layers.py): store/*.py, store/pages, store/database,
store/questions, store/subscriptions. Refresh stores what it fetched, and the crawl fetches
tracked papers first."""
