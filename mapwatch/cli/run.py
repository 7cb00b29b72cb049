"""`mapwatch run`: the bot, the refresh schedule and the feed server in one process
(mapwatch/service/run.py). Every setting is read from the environment the command started with."""

from __future__ import annotations

import argparse
from collections.abc import Coroutine
from typing import Any

from mapwatch.cli.options import base_arg, listen_arg, out_arg, source_arg

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
    from mapwatch.cli.options import given_base_url, host, out_dir, port, source
    from mapwatch.service.run import run_all
    from mapwatch.service.schedule import parse_schedule
    from mapwatch.service.services import RunConfig
    from mapwatch.store.environment import of_command
    from mapwatch.store.scholarly.enrich import EnrichSettings

    env = of_command(args)
    # Every setting is checked here, before the database is opened, the seeds written or a port
    # bound: a bad one is exit 2 with one line, and nothing is written.
    parse_schedule(env.refresh_schedule())
    env.discord_endpoints()
    env.shard_count()  # $MAPWATCH_SHARDS
    env.deadline_seconds()  # $MAPWATCH_TICK_DEADLINE
    env.header_timeout_seconds(1.0)  # $MAPWATCH_HEADER_TIMEOUT (the default does not matter here)
    env.connection_cap(1)  # $MAPWATCH_MAX_CONNECTIONS
    env.replica_url()  # $MAPWATCH_REPLICA
    env.webhook_bases()  # $MAPWATCH_SLACK_WEBHOOKS
    env.nice_steps()  # $MAPWATCH_BACKGROUND_NICE
    env.busy_timeout_ms()  # $MAPWATCH_BUSY_TIMEOUT
    env.log_format_name()
    env.admin_address()  # $MAPWATCH_ADMIN_LISTEN
    enrich = EnrichSettings.from_environment(env)  # $MAPWATCH_ENRICH, the APIs, the contact
    # The database as the process uses it: --db, else $MAPWATCH_DB (so /metrics finds its replica).
    run_config = RunConfig(db_path=args.db or env.database(), source=source(args), out_dir=out_dir(args),
                           host=host(args), port=port(args), base_url=given_base_url(args),
                           refresh=env.refresh_schedule())
    # A service: mapwatch.cli runs it until a signal.
    return run_all(run_config, env.token(), say=lambda s: print(s, flush=True), alert_interval=env.alert_seconds(),
                   enrich=enrich)


