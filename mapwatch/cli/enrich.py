"""`mapwatch enrich`: one enrichment round from the shell (store/scholarly/enrich.py,
docs/enrichment.md). Here, above the layers, because Semantic Scholar is asked about the
tracked papers (store/subscriptions) and the round lives in store/scholarly."""

from __future__ import annotations

import argparse
import sys

from mapwatch.store.errors import EXIT_OK, EXIT_REJECTED

SOURCES = ("arxiv", "openalex", "s2")
MAX_LIMIT = 10_000_000


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "enrich", help="one round of metadata from arXiv, OpenAlex and Semantic Scholar",
        description="Ask the open scholarly sources about the map's papers that are due (never asked, "
                    "or due again: monthly, weekly when not found, 1 to 24 hours after a failure) and store "
                    "what they say: arXiv's authors, categories, versions, DOI and journal reference; "
                    "OpenAlex's author ids, ORCIDs, institutions and venue; Semantic Scholar's citing sentences of the "
                    "tracked papers' new citers. Each source at its published rate, with $MAPWATCH_CONTACT "
                    "in the User-Agent. Sources: $MAPWATCH_ENRICH (default arxiv,openalex,s2). Exit 0: every "
                    "source answered; 1: a source was unavailable or answered badly (what the others said is "
                    "stored); "
                    "2: usage error.")
    p.add_argument("--limit", type=int, default=None, metavar="N",
                   help="papers asked about per source (default: 10,000)")
    p.add_argument("--source", choices=SOURCES, default=None,
                   help="ask this source only (default: those of $MAPWATCH_ENRICH)")
    p.add_argument("--retry-failed", action="store_true",
                   help="ask now about the papers a source failed on, without waiting the 1 to 24 hours after a "
                        "failure")
    p.set_defaults(func=cmd_enrich)


def cmd_enrich(args: argparse.Namespace) -> int:
    import asyncio
    import logging

    from mapwatch.store import settings
    from mapwatch.store.database.db import require_db
    from mapwatch.store.environment import of_command
    from mapwatch.store.progress import CrawlProgress
    from mapwatch.store.questions.teams import team_papers_by_server
    from mapwatch.store.scholarly.enrich import DEFAULT_LIMIT, EnrichSettings, enrich_round
    from mapwatch.store.subscriptions.tracking import tracked_paper_ids
    from mapwatch.store.subscriptions.watched import followed_direction_papers

    env = of_command(args)
    limit = settings.bounded_int(args.limit, "--limit", 1, MAX_LIMIT) if args.limit is not None else DEFAULT_LIMIT
    config = EnrichSettings.from_environment(env)
    if args.source:
        config = config.only(args.source)
    elif not config.sources:
        print("Enrichment is off ($MAPWATCH_ENRICH=off): nothing asked.")
        return EXIT_OK
    from dataclasses import replace

    config = replace(config, limit=limit, retry_failed=args.retry_failed)
    db_path = require_db(args.db)
    logging.basicConfig(level=env.log_level_name(), format="%(levelname)s %(name)s: %(message)s")
    progress = CrawlProgress(min_total=1, unit="papers")
    try:
        report = asyncio.run(enrich_round(db_path, config, tracked=tracked_paper_ids, team=team_papers_by_server,
                                          followed=followed_direction_papers, progress=progress))
    finally:
        progress.close()
    for r in report.sources.values():
        print(f"Enriched from {r.summary(retry=', or now with --retry-failed')}.")
    for line in report.trouble_lines():
        print(line, file=sys.stderr)
    return EXIT_REJECTED if report.troubles() else EXIT_OK
