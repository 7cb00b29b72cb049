"""`mapwatch graph`: draw a paper's citation neighbourhood to a PNG file.

networkx and matplotlib are imported inside the command, so `mapwatch --help` stays fast.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from mapwatch.store.errors import EXIT_OK, EXIT_USAGE

DEFAULT_MAX_NODES = 40


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("graph", help="draw a paper's citation neighbourhood as a PNG",
                       description="Draw the papers within N citation steps of a paper (the most cited "
                                   f"{DEFAULT_MAX_NODES} at most): nodes sized by citations, coloured by "
                                   "direction, arrows from citing to cited paper, the paper ringed in red.")
    p.add_argument("paper", help="arXiv id, arXiv or map URL, or exact title")
    p.add_argument("--depth", type=int, choices=(1, 2, 3), default=1, help="citation steps (default 1)")
    p.add_argument("-o", "--output", required=True, metavar="FILE.png", help="the PNG file to write")
    p.set_defaults(func=cmd_graph)


def cmd_graph(args: argparse.Namespace) -> int:
    from mapwatch.bot.rendering.plot import draw_neighbourhood
    from mapwatch.bot.rendering.render_graph import neighbourhood_caption
    from mapwatch.store.atomic import write_atomic
    from mapwatch.store.database.db import default_db_path, open_db
    from mapwatch.store.database.db_check import output_problem
    from mapwatch.store.questions.graph import neighbourhood

    out = Path(args.output)
    if not out.parent.is_dir():
        print(f"mapwatch: error: no such folder for the output: {out.parent}", file=sys.stderr)
        return EXIT_USAGE
    problem = output_problem(out, Path(args.db or default_db_path()))  # not a device, not the database
    if problem:
        print(f"mapwatch: error: {problem}", file=sys.stderr)
        return EXIT_USAGE
    view = neighbourhood(open_db(args.db, create=False), args.paper, depth=args.depth, max_nodes=DEFAULT_MAX_NODES)
    picture = draw_neighbourhood(view)
    try:
        write_atomic(out, picture.png)
    except OSError as e:
        print(f"mapwatch: error: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return EXIT_USAGE
    print(f"Wrote {out} ({picture.width}x{picture.height}, {len(picture.png) // 1024:,} KiB): "
          f"{neighbourhood_caption(view)}")
    return EXIT_OK
