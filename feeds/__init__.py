"""mapwatch's feeds: Atom feeds of newly added citing papers, published and served.

Its top modules build and publish them: feeds/*.py may import (mapwatch/layers.py): store/."""

# One name for one file: from the repository's root, `import feeds` would load this folder a
# second time beside mapwatch.feeds, with its own module state. Refuse it, saying what to write.
if __name__ != "mapwatch.feeds":
    raise ImportError(f"import mapwatch.feeds, not {__name__}: feeds/ is installed as mapwatch.feeds")
