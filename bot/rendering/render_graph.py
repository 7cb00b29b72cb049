"""Plain-text answers to the graph questions (pure: store.questions.graph dataclasses in, text out).

Each answer fits one Discord message (bot/rendering/text.py): long lists end in "… and N more".
Titles come from pages: a caller posting to Discord escapes markdown and sends with
`AllowedMentions.none()`.
"""

from __future__ import annotations

from collections.abc import Sequence

from mapwatch.bot.rendering.text import CONTENT_MAX, clip_lines, one_line, plural
from mapwatch.store.questions.citation_path import CitationPath
from mapwatch.store.questions.graph import DirectionRanks, Neighbourhood, Rising
from mapwatch.store.questions.related import Related
from mapwatch.store.questions.types import PaperRef

LIMIT = CONTENT_MAX


def paper(p: PaperRef, limit: int = 70) -> str:
    return f"“{one_line(p.title, limit)}” ({p.id})"


def ids(papers: Sequence[PaperRef], total: int, shown: int = 4) -> str:
    text = ", ".join(p.id for p in papers[:shown])
    return text + (f" and {total - shown} more" if total > shown else "")


def fit(head: str, items: Sequence[str], tail: str = "", limit: int = LIMIT) -> str:
    """head, then as many items as fit in `limit` characters ("… and N more" for the rest), then tail."""
    room = limit - len(head) - 1 - (len(tail) + 1 if tail else 0)
    body = clip_lines(items, room)
    return "\n".join([head, *([body] if body else []), *([tail] if tail else [])])


def related_text(r: Related) -> str:
    head = f"Papers most like {paper(r.paper)}, by co-citation and bibliographic coupling"
    head += " (leaving out its direct citers and references):" if r.exclude_direct else ":"
    if not r.results:
        return head[:-1] + ": none found (no paper is cited together with it or shares its references)."
    items = []
    for i, x in enumerate(r.results, 1):
        why = []
        if x.co_citations:
            why.append(f"cited together by {x.co_citations} ({ids(x.cited_together_by, x.co_citations)})")
        if x.coupling:
            why.append(f"{x.coupling} shared reference{'s' if x.coupling != 1 else ''} "
                       f"({ids(x.shared_references, x.coupling)})")
        link = f"; {x.link}" if x.link else ""
        items.append(f"{i}. {paper(x.paper, 60)}, score {x.score}: {'; '.join(why)}{link}")
    tail = "" if r.complete else "(a very widely cited paper: counted over the first citers and references only)"
    return fit(head, items, tail)


def path_text(path: CitationPath | None, a: str, b: str, max_steps: int = 6) -> str:
    if path is None:
        return f"No citation chain within {max_steps} steps between {a} and {b}."
    if not path.steps:
        return f"{paper(path.start)} is the same paper at both ends."
    n = len(path.steps)
    head = f"{n} step{'s' if n != 1 else ''} from {paper(path.start, 50)} to {paper(path.end, 50)}:"
    items = [f"{i}. {s.text}  ({one_line(s.target.title, 60)})" for i, s in enumerate(path.steps, 1)]
    return fit(head, items)


def rising_text(r: Rising) -> str:
    where = f" in {r.direction_name}" if r.direction_name else ""
    days = "day" if r.days == 1 else f"{r.days} days"
    head = f"Papers{where} that gained the most citers in the last {days}:"
    if not r.papers:
        return (f"No paper{where} gained citers in the last {days} (gains are counted between "
                "stored versions of pages; the first import is the baseline).")
    items = []
    for i, x in enumerate(r.papers, 1):
        counts = f", {x.count_before} → {x.count_now}" if x.count_before is not None else ""
        named = f"; new: {ids(x.named_citers, len(x.named_citers), 3)}" if x.named_citers else ""
        items.append(f"{i}. {paper(x.paper, 60)}: +{x.gained}{counts}{named}")
    return fit(head, items)


def ranks_text(r: DirectionRanks) -> str:
    if not r.papers:
        return f"{r.name}: no PageRank computed yet (it is computed at each refresh)."
    head = f"{r.name} by PageRank within the direction (computed {r.computed_at}):"
    items = [f"{x.rank}. {paper(x.paper, 60)}: PageRank {x.pagerank:.3f}, cited by "
             f"{x.cited_by if x.cited_by is not None else '?'}" for x in r.papers]
    return fit(head, items)


def neighbourhood_caption(view: Neighbourhood) -> str:
    step = "step" if view.depth == 1 else "steps"
    text = (f"{paper(view.center)} and the papers within {view.depth} citation {step}: "
            f"{plural(len(view.nodes), 'paper')}, {plural(len(view.edges), 'citation')}")
    return text + (" (the most cited shown)." if view.truncated else ".")
