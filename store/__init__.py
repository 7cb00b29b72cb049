"""mapwatch's store: map pages -> SQLite with history, and the queries on it."""

# One name for one file: from the repository's root, `import store` would load this folder a
# second time beside mapwatch.store, with its own module state. Refuse it, saying what to write.
if __name__ != "mapwatch.store":
    raise ImportError(f"import mapwatch.store, not {__name__}: store/ is installed as mapwatch.store")
