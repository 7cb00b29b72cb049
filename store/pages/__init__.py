"""Reading map pages, pure: a page's bytes (text, Markdown or HTML) -> model.MapPage or a
ParseError with its line; a folder's page files (files); the page's content hash
and the dates and slugs it may claim.

May import: the store's top (errors, clock, ids, urls). Nothing of the database,
sources, questions or subscriptions (tests/system/test_package.py)."""
