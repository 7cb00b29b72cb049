"""Questions asked of the database: papers, citers, directions, search and
autocomplete (full-text), graph questions on bounded subgraphs, the feeds' queries,
the citers an export lists (citer_records), and the answer dataclasses they share (types).

May import: the store's top, pages, database. Nothing of sources or
subscriptions (tests/system/test_package.py)."""
