"""mapwatch: follow a citation map (SQLite history, Atom feeds per research direction, a Discord bot).

The layers install as mapwatch.store, mapwatch.feeds and mapwatch.bot; the `mapwatch`
command is mapwatch.cli (docs/architecture.md, "The layers"). The top modules here (log_format)
sit above the layers: mapwatch/*.py may import (mapwatch/layers.py): store/, feeds/, bot/."""

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here)
