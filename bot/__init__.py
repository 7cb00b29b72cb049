"""mapwatch's Discord bot, the `mapwatch` command and the process that runs everything."""

# One name for one file: from the repository's root, `import bot` would load this folder a
# second time beside mapwatch.bot, with its own module state. Refuse it, saying what to write.
if __name__ != "mapwatch.bot":
    raise ImportError(f"import mapwatch.bot, not {__name__}: bot/ is installed as mapwatch.bot")
