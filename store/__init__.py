"""mapwatch's store: map pages -> SQLite with history, and the queries on it.

Its top modules (errors, clock, ids, urls, environment, settings, ...) sit below every
subpackage: store/*.py may import (mapwatch/layers.py): none of the other rooms."""

# One name for one file: from the repository's root, `import store` would load this folder a
# second time beside mapwatch.store, with its own module state. Refuse it, saying what to write.
if __name__ != "mapwatch.store":
    raise ImportError(f"import mapwatch.store, not {__name__}: store/ is installed as mapwatch.store")
