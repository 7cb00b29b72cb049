"""The service of `mapwatch run`, above the layers: the tick (tick: refresh -> publish -> the
after-refresh hooks), its schedule (schedule: $MAPWATCH_REFRESH, APScheduler, coalesced, never
two at once), the feed server and the scheduler on one loop (services), and `run_all` (run:
those beside the supervised Discord bot and the enrichment round). May import store, feeds
and bot; none of them imports it. The command that starts it is mapwatch.cli.run."""
