"""Fetching map pages: the folder source (files) and the map over HTTP (a polite crawl:
its plan, priority queue, re-check schedule, robots.txt, sitemaps, one page's
conditional GET), and refresh, one tick of either source.

May import: the store's top, pages, database, questions, subscriptions (refresh
stores what it fetched and the crawl fetches tracked papers first)."""
