"""mapwatch: follow a citation map (SQLite history, Atom feeds per research direction, a Discord bot).

The layers install as mapwatch.store, mapwatch.feeds and mapwatch.bot; the `mapwatch`
command is mapwatch.cli (docs/architecture.md, "The layers")."""

__version__ = "0.1.0"  # the package's version (pyproject.toml reads it from here)
