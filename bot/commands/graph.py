"""/related, /path, /rising, /graph: graph questions (store.questions.graph), answered as text or a picture.

networkx and matplotlib load only inside the cores that need them (plot, PageRank is stored).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt, int_option
from mapwatch.bot.rendering import render, render_graph, text
from mapwatch.bot.rendering.replies import Ctx, Embed, File, Reply
from mapwatch.store.errors import BadChoice, BadOption
from mapwatch.store.questions import citation_path, graph, related
from mapwatch.store.questions.queries import PaperView

PAPER_HELP = "arXiv id, arXiv or map URL, or title"
MAX_STEPS = 6
GRAPH_NODES = 40


def _yes(value: Any) -> bool:
    if isinstance(value, bool) or value is None:
        return bool(value)
    word = str(value).strip().lower()
    if word in ("yes", "true", "1", "on"):
        return True
    if word in ("no", "false", "0", "off", ""):
        return False
    raise BadChoice("exclude_direct", word, ("yes", "no"))


def text_reply(answer: str, footer: str = "") -> Reply:
    """A render_graph answer as an embed: its first line the title, the rest escaped."""
    head, _, body = answer.partition("\n")
    if not body:
        return Reply(content=text.esc(head))
    lines = "\n".join(text.esc(line) for line in body.split("\n"))  # esc() makes one line of its input
    title = text.clip(text.esc(head), 256)
    return text.fit_reply(Reply(embeds=(Embed(title, lines, None, (), footer, render.COLOR),)))


def related_core(db: Database, ctx: Ctx, *, paper: str, exclude_direct: Any = None) -> Reply:
    found = graph.resolve_paper(db, paper)
    return text_reply(render_graph.related_text(related.related(db, found.id, exclude_direct=_yes(exclude_direct))),
                      "score = papers citing both + references both cite")


def path_core(db: Database, ctx: Ctx, **options: Any) -> Reply:
    a, b = (options.get(k) or "" for k in ("from", "to"))
    if not a.strip() or not b.strip():
        raise BadOption("give two papers: from and to")
    start, end = graph.resolve_paper(db, a), graph.resolve_paper(db, b)
    found = citation_path.citation_path(db, start.id, end.id, max_steps=MAX_STEPS)
    answer = render_graph.path_text(found, start.id, end.id, MAX_STEPS)
    return text_reply(answer) if found else Reply(content=answer)


def rising_core(db: Database, ctx: Ctx, *, direction: str | None = None, days: Any = None) -> Reply:
    n = int_option(days, "days", 1, 365, 30)
    direction = direction if direction and direction.strip() else None
    return text_reply(render_graph.rising_text(graph.rising(db, ctx.now, days=n, direction=direction)))


def graph_core(db: Database, ctx: Ctx, *, paper: str, depth: Any = None) -> Reply:
    from mapwatch.bot.rendering.plot import draw_neighbourhood

    d = int_option(depth, "depth", 1, 3, 1)
    view = graph.neighbourhood(db, paper, depth=d, max_nodes=GRAPH_NODES)
    pic = draw_neighbourhood(view)
    name = f"graph-{view.center.id.replace('/', '_')}.png"
    caption = render_graph.neighbourhood_caption(view)
    return Reply(embeds=(Embed(text.clip(text.esc(view.center.title), 256), text.esc(caption), None, (),
                               "arrows point from citing to cited paper; red ring: this paper", render.COLOR),),
                 files=(File(name, pic.png, f"Citation neighbourhood of {view.center.id}"),))


def with_count_chart(reply: Reply, view: PaperView, today: date) -> Reply:
    """/paper: attach the cited-by chart when at least two snapshots are stored (drawn from the
    snapshots the card's view read: no query of its own)."""
    paper_id = view.paper.id
    history = graph.count_points(((s.data_through, s.cited_by) for s in view.snapshots), today)
    if len(history) < 2:
        return reply
    from mapwatch.feeds.chart import count_chart_png

    png = count_chart_png(history, title=f"{paper_id}: cited by, as the map stated it")
    if png is None:
        return reply
    return Reply(content=reply.content, embeds=reply.embeds, ephemeral=reply.ephemeral, pager=reply.pager,
                 files=(*reply.files, File(f"cited-by-{paper_id.replace('/', '_')}.png", png,
                                           f"Cited-by count of {paper_id} over stored snapshots")))


def pagerank_field(db: Database, slug: str, limit: int = 5) -> Any:
    """/direction: its papers by the PageRank stored at the last refresh (a Field, or None)."""
    from mapwatch.bot.rendering.replies import Field

    ranks = graph.direction_ranks(db, slug, limit=limit)
    if not ranks.papers:
        return None
    lines = [f"{r.rank}. {text.esc(text.clip(r.paper.title, 90))} · `{r.paper.id}` · "
             f"PageRank {r.pagerank:.3f}" for r in ranks.papers]
    return Field("By PageRank within the direction", text.clip_lines(lines, 1024))


COMMANDS = [
    Command("related", "Papers most like a paper: cited together with it, or citing the same papers",
            (Opt("paper", PAPER_HELP, "paper"),
             Opt("exclude_direct", "leave out its direct citers and references", "choice",
                 required=False, choices=("yes", "no"))),
            related_core),
    Command("path", "The shortest citation chain between two papers (up to 6 steps)",
            (Opt("from", PAPER_HELP, "paper"), Opt("to", PAPER_HELP, "paper")), path_core),
    Command("rising", "Papers that gained the most citers in the last N days",
            (Opt("direction", "only papers placed in this direction", "direction", required=False),
             Opt("days", "how many days back (default 30)", "int", required=False)),
            rising_core),
    Command("graph", "A picture of a paper's citation neighbourhood",
            (Opt("paper", PAPER_HELP, "paper"), Opt("depth", "citation steps, 1 to 3 (default 1)", "int",
                                                     required=False)),
            graph_core),
]
