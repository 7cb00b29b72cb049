"""The bot's commands for the `mapwatch` entry point (mapwatch.cli): `ask`, `run` and `sync`
(bot/cli_bot.py) and `graph` (bot/cli_graph.py). Each imports what it needs when it runs."""

from __future__ import annotations

import argparse

from mapwatch.bot import cli_bot, cli_graph


def register(sub: argparse._SubParsersAction) -> None:
    cli_bot.register(sub)
    cli_graph.register(sub)
