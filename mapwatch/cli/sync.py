"""`mapwatch sync`: register the slash commands with Discord now."""

from __future__ import annotations

import argparse
import sys

from mapwatch.cli.options import answers_base_url
from mapwatch.store.errors import EXIT_OK, EXIT_USAGE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sync", help="register the slash commands with Discord (needs DISCORD_TOKEN)")
    p.set_defaults(func=cmd_sync)


def cmd_sync(args: argparse.Namespace) -> int:
    import asyncio

    from mapwatch.store.environment import of_command

    env = of_command(args)
    token = env.token()
    if not token:
        print("mapwatch: error: DISCORD_TOKEN is not set; sync registers the commands with Discord",
              file=sys.stderr)
        return EXIT_USAGE
    from mapwatch.store.database.db import require_db

    count = asyncio.run(sync_commands(token, require_db(args.db), base_url=answers_base_url(args),
                                      endpoints=env.discord_endpoints()))
    print(f"Synced {count} commands.")
    return EXIT_OK


async def sync_commands(token: str, db_path: str | None, *, base_url: str,
                        endpoints: tuple[str | None, str | None] = (None, None)) -> int:
    """`mapwatch sync`: log in (discord.py pointed at `endpoints`: $MAPWATCH_DISCORD_API,
    $MAPWATCH_DISCORD_GATEWAY; None: Discord's), sync the tree, remember its hash."""
    from mapwatch.bot.client import SYNC_HASH_KEY, MapwatchBot
    from mapwatch.bot.discord_endpoints import point_discord_py_at
    from mapwatch.store.clock import utc_now
    from mapwatch.store.database.db import open_db
    from mapwatch.store.subscriptions import bot_state

    point_discord_py_at(*endpoints)
    open_db(db_path).close()  # the schema
    client = MapwatchBot(db_path, base_url=base_url, sync="never")
    async with client:
        await client.login(token)
        synced = await client.tree.sync()
        await client.runner.call(bot_state.set_state, SYNC_HASH_KEY, client.tree_hash(), utc_now())
    return len(synced)
