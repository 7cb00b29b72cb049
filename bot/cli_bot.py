"""`mapwatch ask` and `mapwatch sync`: the bot's commands from a terminal."""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections.abc import Coroutine
from datetime import UTC, datetime
from typing import Any

from mapwatch.feeds.cli import base_arg, listen_arg, out_arg, source_arg
from mapwatch.store.errors import EXIT_OK, EXIT_REJECTED, EXIT_USAGE

_NAMED = re.compile(r"^(?P<name>[a-z_]+):(?P<value>.*)$", re.DOTALL)


class AskError(ValueError):
    pass


def parse_slash(text: str) -> tuple[str, dict[str, Any]]:
    """'/citers 2412.10400 sort:newest' -> ('citers', {'paper': '2412.10400', 'sort': 'newest'}).

    Options come positionally in their declared order or as `name:value` (a named value
    runs until the next `name:`); a command with one option takes all the words. `page:N`
    (1-based) shows another page of a paged answer."""
    from mapwatch.bot.commands import commands

    try:
        tokens = shlex.split(text)
    except ValueError:
        tokens = text.split()
    if not tokens:
        raise AskError("give a command, e.g. \"/paper 2412.10400\"")
    name = tokens[0].lstrip("/").lower()
    cmds = commands()
    if name not in cmds:
        raise AskError(f"unknown command /{name}; commands: " + ", ".join(f"/{c}" for c in cmds))
    cmd = cmds[name]
    names = [o.name for o in cmd.options] + (["page"] if cmd.paged else [])
    named: dict[str, list[str]] = {}
    positional: list[str] = []
    current: str | None = None
    for tok in tokens[1:]:
        m = _NAMED.match(tok)
        if m and m.group("name") in names:
            current = m.group("name")
            named[current] = [m.group("value")] if m.group("value") else []
        elif current is not None:
            named[current].append(tok)
        else:
            positional.append(tok)
    options: dict[str, Any] = {k: " ".join(v) for k, v in named.items()}
    free = [o.name for o in cmd.options if o.name not in options]
    if positional:
        if not free:
            raise AskError(f"/{name} takes no more options (got {' '.join(positional)!r})")
        if len(cmd.options) == 1 or len(free) == 1:
            options[free[0]] = " ".join(positional)
        else:
            for i, tok in enumerate(positional):
                if i >= len(free):
                    options[free[-1]] += " " + tok
                else:
                    options[free[i]] = tok
    for o in cmd.options:
        if o.required and not options.get(o.name, "").strip():
            raise AskError(f"/{name} needs <{o.name}>: {o.description}")
        if o.choices and o.name in options and options[o.name] not in o.choices:
            raise AskError(f"{o.name} must be one of: {', '.join(o.choices)}")
    if "page" in options:
        try:
            options["page"] = int(options["page"]) - 1
        except ValueError:
            raise AskError("page must be a number") from None
        if options["page"] < 0:
            raise AskError("page must be 1 or more")
    return name, options


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="run a bot command locally and print the answer",
                       description="Run a slash command without Discord and print its answer as text, "
                                   "e.g. mapwatch ask \"/paper 2412.10400\". Options: positionally in "
                                   "their order, or name:value.")
    p.add_argument("command", metavar="\"/COMMAND ...\"", help="the slash command, quoted")
    p.add_argument("--guild", type=int, metavar="ID", help="as if in this server (default: a DM)")
    p.add_argument("--channel", type=int, metavar="ID", help="as if in this channel")
    p.add_argument("--user", type=int, metavar="ID", help="as this user (default 1)")
    p.set_defaults(func=cmd_ask)

    p = sub.add_parser(
        "run", help="the Discord bot, the refresh schedule and the feed server in one process",
        description="One process: the Discord bot (when DISCORD_TOKEN is set), the feed server and the "
                    "refresh schedule ($MAPWATCH_REFRESH, default 1h), with alerts after each refresh. "
                    "On an empty database the bundled seeds are stored first.")
    source_arg(p)
    out_arg(p)
    listen_arg(p)
    base_arg(p, "http://<host>:<port>")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("sync", help="register the slash commands with Discord (needs DISCORD_TOKEN)")
    p.set_defaults(func=cmd_sync)


def cmd_ask(args: argparse.Namespace) -> int:
    from mapwatch.bot import config
    from mapwatch.bot.commands import commands, run_core
    from mapwatch.bot.render import to_text
    from mapwatch.bot.replies import Ctx
    from mapwatch.store.db import open_db

    try:
        name, options = parse_slash(args.command)
    except AskError as e:
        print(f"mapwatch: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    cmd = commands()[name]
    if cmd.manage and args.channel is None and args.user is None:
        print("mapwatch: error: say where alerts go: --guild ID --channel ID, or --user ID for DMs",
              file=sys.stderr)
        return EXIT_USAGE
    user = args.user if args.user is not None else 1
    channel = args.channel if args.channel is not None else user
    ctx = Ctx(guild_id=args.guild, channel_id=channel, user_id=user, now=datetime.now(UTC), can_manage=True,
              base_url=config.base_url())
    reply, ok = run_core(open_db(args.db, create=False), ctx, name, options)
    print(to_text(reply))
    return EXIT_OK if ok else EXIT_REJECTED


def cmd_run(args: argparse.Namespace) -> Coroutine[Any, Any, None]:
    import os

    from mapwatch.bot import config
    from mapwatch.bot.run import run_all
    from mapwatch.feeds.cli import out_dir, port
    from mapwatch.feeds.run import RunConfig
    from mapwatch.store.refresh import default_source

    run_config = RunConfig(db_path=args.db, source=args.source or default_source(), out_dir=out_dir(args),
                           host=args.host, port=port(args),
                           base_url=args.base_url or os.environ.get("MAPWATCH_BASE_URL"),
                           refresh=os.environ.get("MAPWATCH_REFRESH"))
    token = config.discord_token()
    # A service: mapwatch.cli runs it until a signal.
    return run_all(run_config, token, say=lambda s: print(s, flush=True), alert_interval=config.alert_interval())


def cmd_sync(args: argparse.Namespace) -> int:
    import asyncio

    from mapwatch.bot import config

    token = config.discord_token()
    if not token:
        print("mapwatch: error: DISCORD_TOKEN is not set; sync registers the commands with Discord",
              file=sys.stderr)
        return EXIT_USAGE
    from mapwatch.bot.client import sync_commands
    from mapwatch.store.db import require_db

    count = asyncio.run(sync_commands(token, require_db(args.db)))
    print(f"Synced {count} commands.")
    return EXIT_OK
