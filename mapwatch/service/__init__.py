"""The service of `mapwatch run`, above the layers: what the command read (settings:
RunSettings), the tick (tick: refresh -> publish -> deliver -> enrich), its schedule
(schedule: $MAPWATCH_REFRESH, APScheduler, coalesced, never two at once), the feed server and
the scheduler on one loop (services), and `run_all(settings)` (run: those beside the
supervised Discord bot and the enrichment round). mapwatch/service may import
(mapwatch/layers.py): store/, feeds/, bot/. None of them imports it; the command that starts
it is mapwatch.cli.run."""
