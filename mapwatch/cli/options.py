"""The options more than one command takes, defined once: `--db` (every command), and the
feed options `refresh`, `publish`, `serve` and `run` share (`--source`, `--out`, `--base-url`,
`--host`, `--port`), with the functions that read each one, else its environment variable,
else its default, checked (store.settings)."""

from __future__ import annotations

import argparse
from typing import Any

from mapwatch.store import settings
from mapwatch.store.environment import of_command
from mapwatch.store.settings_table import DEFAULT_HOST, DEFAULT_PORT

DB_HELP = "SQLite database (default: $MAPWATCH_DB, else ./mapwatch.db)"


def db_arg(p: argparse.ArgumentParser, help: str = DB_HELP, default: Any = None) -> None:
    p.add_argument("--db", metavar="FILE", default=default, help=help)


class CommandParser(argparse.ArgumentParser):
    """A subcommand's parser: every command takes `--db FILE` (docs/getting-started.md, "Usage")."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        db_arg(self)


class ActionParser(argparse.ArgumentParser):
    """An action's parser (`webhook add`, ...): `--db` accepted after the action too, without
    hiding one given before it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        db_arg(self, "SQLite database", argparse.SUPPRESS)


def out_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", metavar="DIR",
                   help="folder the feeds are written to (default: $MAPWATCH_FEEDS_DIR, else ./public)")


def base_arg(p: argparse.ArgumentParser, default: str) -> None:
    p.add_argument("--base-url", metavar="URL",
                   help="public address of the feeds, used in their links "
                        f"(default: $MAPWATCH_BASE_URL, else {default})")


def source_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--source", metavar="DIR|URL",
                   help="folder of pages or the map's base URL (default: $MAPWATCH_SOURCE, else the bundled seeds)")


def listen_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument("--host", default=DEFAULT_HOST, help=f"address to listen on (default: {DEFAULT_HOST})")
    p.add_argument("--port", type=int, default=None, help="port (default: $PORT, else 8080)")


def out_dir(args: argparse.Namespace) -> str:
    """--out, else $MAPWATCH_FEEDS_DIR, else ./public: a folder, or nothing yet."""
    if args.out:
        return settings.out_folder(args.out, "--out")
    return of_command(args).feeds_folder()


def given_base_url(args: argparse.Namespace) -> str | None:
    """--base-url, else $MAPWATCH_BASE_URL, checked (an http(s) address with a host); None: neither."""
    if args.base_url is not None:
        return settings.base_url(args.base_url, "--base-url")
    return of_command(args).given_base_url()


def base_url(args: argparse.Namespace) -> str:
    """--base-url, else $MAPWATCH_BASE_URL, else the address `serve` and `run` have by default
    (`refresh` and `publish`: the default port, not $PORT, since they serve nothing)."""
    from mapwatch.feeds.serving.server import default_base_url

    return given_base_url(args) or default_base_url(DEFAULT_HOST, DEFAULT_PORT)


def answers_base_url(args: argparse.Namespace) -> str:
    """Where the bot's answers under `ask` and `sync` say the feeds are: $MAPWATCH_BASE_URL, else
    where `run` serves them by default (the address it prints: $PORT, else 8080)."""
    from mapwatch.feeds.serving.server import default_base_url

    env = of_command(args)
    return env.given_base_url() or default_base_url(DEFAULT_HOST, env.listen_port())


def host(args: argparse.Namespace) -> str:
    return settings.listen_host(args.host, "--host")


def port(args: argparse.Namespace) -> int:
    """--port, else $PORT, else 8080."""
    if args.port is not None:
        return settings.port(args.port, "--port")
    return of_command(args).listen_port()


def source(args: argparse.Namespace) -> str:
    """--source, else $MAPWATCH_SOURCE, else the bundled seeds; a URL must have a host."""
    from mapwatch.store.pages.files import SEEDS_DIR

    if args.source is not None:
        return settings.http_source(args.source, "--source")
    return of_command(args).source_or(str(SEEDS_DIR))
