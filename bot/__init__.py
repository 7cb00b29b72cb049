"""mapwatch's Discord bot, the `mapwatch` command and the process that runs everything."""
