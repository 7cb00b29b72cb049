"""The bot's commands for the `mapwatch` entry point (mapwatch.cli), one module each:
`ask` (bot/cli_ask.py), `run` (bot/cli_run.py), `sync` (bot/cli_sync.py) and `graph`
(bot/cli_graph.py). Each imports what it needs when it runs."""

from __future__ import annotations

import argparse

from mapwatch.bot import cli_ask, cli_graph, cli_run, cli_sync, cli_webhook


def register(sub: argparse._SubParsersAction) -> None:
    for module in (cli_ask, cli_run, cli_sync, cli_graph, cli_webhook):
        module.register(sub)
