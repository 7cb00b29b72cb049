"""Reading map pages, pure: a page's bytes (text, Markdown or HTML) -> model.MapPage or a
ParseError with its line; a folder's page files (files); the page's content hash
and the dates and slugs it may claim.

store/pages may import (mapwatch/layers.py): store/*.py. No database (nor sqlite3),
no fetching."""
