"""mapwatch's Discord bot: the slash commands' cores, rendering, sending, and the client.

Its top modules (client, command_tree, supervisor, ...) meet Discord: bot/*.py may import
(mapwatch/layers.py): store/, feeds/, bot/."""

# One name for one file: from the repository's root, `import bot` would load this folder a
# second time beside mapwatch.bot, with its own module state. Refuse it, saying what to write.
if __name__ != "mapwatch.bot":
    raise ImportError(f"import mapwatch.bot, not {__name__}: bot/ is installed as mapwatch.bot")
