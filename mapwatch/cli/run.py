"""`mapwatch run`: the bot, the refresh schedule and the feed server in one process
(mapwatch/service/run.py). Every setting is read from the environment the command started with."""

from __future__ import annotations

import argparse
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from mapwatch.cli.options import base_arg, listen_arg, out_arg, source_arg

if TYPE_CHECKING:
    from mapwatch.service.settings import RunSettings

SUMMARY = "the Discord bot, the refresh schedule and the feed server in one process"
DESCRIPTION = ("One process: the Discord bot (when DISCORD_TOKEN is set), the feed server and the refresh "
               "schedule ($MAPWATCH_REFRESH, default 1h), with alerts after each refresh, then a round of "
               "enrichment from the open scholarly sources ($MAPWATCH_ENRICH). On an empty database the "
               "bundled seeds are stored first.")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help=SUMMARY, description=DESCRIPTION)
    for add in (source_arg, out_arg, listen_arg):  # the options of `refresh` and `serve` (cli.options)
        add(p)
    base_arg(p, "http://<host>:<port>")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> Coroutine[Any, Any, None]:
    from mapwatch.service.run import run_all

    settings = run_settings(args)
    # A service: mapwatch.cli runs it until a signal.
    return run_all(settings, say=lambda s: print(s, flush=True))


def run_settings(args: argparse.Namespace) -> RunSettings:
    """The command's RunSettings, from its arguments and the environment it started with.
    Every setting is checked here, before the database is opened, the seeds written or a port
    bound: a bad one is exit 2 with one line, and nothing is written."""
    from mapwatch.cli.options import given_base_url, host, out_dir, port, source
    from mapwatch.feeds.serving.connections import limits_from_env
    from mapwatch.service.schedule import parse_schedule
    from mapwatch.service.settings import RunSettings
    from mapwatch.store.environment import of_command
    from mapwatch.store.scholarly.enrich import EnrichSettings

    env = of_command(args)
    parse_schedule(env.refresh_schedule())  # $MAPWATCH_REFRESH
    api, gateway = env.discord_endpoints()  # $MAPWATCH_DISCORD_API, $MAPWATCH_DISCORD_GATEWAY
    shards = env.shard_count()  # $MAPWATCH_SHARDS
    deadline = env.deadline_seconds()  # $MAPWATCH_TICK_DEADLINE
    limits = limits_from_env(env)  # $MAPWATCH_HEADER_TIMEOUT, _MAX_CONNECTIONS, _NOT_FOUND_BURST
    replica = env.replica_url()  # $MAPWATCH_REPLICA
    webhook_bases = env.webhook_bases()  # $MAPWATCH_SLACK_WEBHOOKS
    nice = env.nice_steps()  # $MAPWATCH_BACKGROUND_NICE
    env.busy_timeout_ms()  # $MAPWATCH_BUSY_TIMEOUT
    env.log_format_name()
    admin = env.admin_address()  # $MAPWATCH_ADMIN_LISTEN
    enrich = EnrichSettings.from_environment(env)  # $MAPWATCH_ENRICH, the APIs, the contact
    before_alerts = env.before_alerts_seconds()  # $MAPWATCH_BEFORE_ALERTS
    whole_every = env.ranks_whole_every()  # $MAPWATCH_RANKS_WHOLE_EVERY
    # The database as the process uses it: --db, else $MAPWATCH_DB (so /metrics finds its replica).
    return RunSettings(db_path=args.db or env.database(), replica=replica, source=source(args), out_dir=out_dir(args),
                       host=host(args), port=port(args), base_url=given_base_url(args),
                       refresh=env.refresh_schedule(), tick_deadline=deadline, nice=nice, enrich=enrich,
                       before_alerts=before_alerts, ranks_whole_every=whole_every,
                       limits=limits, admin=admin, token=env.token(), discord_api=api, discord_gateway=gateway,
                       shards=shards, webhook_bases=webhook_bases, alert_interval=env.alert_seconds())
