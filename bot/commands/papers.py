"""/paper, /citers, /refs, /search."""

from __future__ import annotations

from typing import Any

from sqlite_utils import Database

from mapwatch.bot.commands import PAGE_SIZE, Command, Opt, pages
from mapwatch.bot.rendering import render, text
from mapwatch.bot.rendering.replies import Ctx, Pager, Reply
from mapwatch.store.errors import BadOption
from mapwatch.store.questions import fts_text, queries, search

PAPER_HELP = "arXiv id, DOI, arXiv or map URL, or title"


def _page(page: int | None) -> int:
    page = page or 0
    if page < 0 or page > 10_000:
        raise BadOption("no such page")
    return page


def paper_core(db: Database, ctx: Ctx, *, paper: str) -> Reply:
    from mapwatch.bot.commands.graph import with_count_chart

    view = queries.card_view(db, paper)
    return with_count_chart(render.paper_card(view, ctx.base_url), view, ctx.now.date())


def citers_core(db: Database, ctx: Ctx, *, paper: str, direction: str | None = None,
                sort: str | None = None, page: int | None = None) -> Reply:
    order = queries.citer_sort(sort)
    found = queries.resolve_paper(db, paper)
    d = queries.resolve_direction(db, direction) if direction and direction.strip() else None
    n = _page(page)
    result = queries.citers(db, found.id, sort=order, direction=d.slug if d else None,
                            offset=n * PAGE_SIZE, limit=PAGE_SIZE)
    args: dict[str, Any] = {"paper": found.id, "sort": order}
    if d:
        args["direction"] = d.slug
    return render.paper_list(
        f"Citers of {found.title}", found.url, result,
        subtitle=(f"Cited by {found.cited_by} (stated on its map page); {result.total} known by name"
                  if found.cited_by is not None else text.plural(result.total, "known citer"))
        + (f", placed in {d.name}" if d else "") + (" · newest first" if order == "newest" else " · most cited first"),
        empty="No citing papers known" + (" in that direction." if d else " yet."),
        pager=Pager("citers", args, n, pages(result.total)))


def refs_core(db: Database, ctx: Ctx, *, paper: str, page: int | None = None) -> Reply:
    found = queries.resolve_paper(db, paper)
    n = _page(page)
    result = queries.refs(db, found.id, offset=n * PAGE_SIZE, limit=PAGE_SIZE)
    view_total = f"{text.plural(result.total, 'reference')} in the map known by name"
    return render.paper_list(
        f"References of {found.title}", found.url, result, subtitle=view_total,
        empty="No references known (the paper has no map page of its own yet)." if not found.has_page
        else "No references in the map.",
        pager=Pager("refs", {"paper": found.id}, n, pages(result.total)))


def _match(n: int) -> str:
    return "matches" if n == 1 else "match"


def search_core(db: Database, ctx: Ctx, *, query: str, page: int | None = None) -> Reply:
    n = _page(page)
    words = fts_text.fts_query(query)
    if words is None:
        raise BadOption("Give at least one word to search for.")
    result = search.search_papers(db, query, offset=n * PAGE_SIZE, limit=PAGE_SIZE)
    shown = " ".join(queries.query_words(query))
    capped = result.total >= search.SEARCH_COUNT_CAP
    ranked = (f": the best of the newest {search.RANK_CANDIDATES} are shown; add words to narrow it"
              if result.total > search.RANK_CANDIDATES else "")
    matched = (f"{result.total:,} or more papers match in titles and abstracts{ranked}." if capped
               else f"{text.plural(result.total, 'paper')} {_match(result.total)} in titles and abstracts{ranked}.")
    if result.by_author:
        by = result.by_author
        matched = (f"{by} {'paper' if by == 1 else 'papers'} by an author of that name first (newest first);"
                   f" {result.total - by} more {_match(result.total - by)} in titles and abstracts{ranked}.")
    return render.paper_list(
        f"Search: {shown}", None, result, subtitle=matched,
        empty="No paper matches those words.",
        pager=Pager("search", {"query": shown}, n, pages(result.total)))


COMMANDS = [
    Command("paper", "A paper's card: counts, directions, top citers and references, abstract",
            (Opt("paper", PAPER_HELP, "paper"),), paper_core),
    Command("citers", "The papers citing a paper, most cited or newest first, paged",
            (Opt("paper", PAPER_HELP, "paper"),
             Opt("direction", "only citers placed in this direction", "direction", required=False),
             Opt("sort", "most cited first or newest first", "choice", required=False,
                 choices=queries.SORTS, choice_names=("most cited first", "newest first"))),
            citers_core, paged=True),
    Command("refs", "The papers a paper builds on, paged", (Opt("paper", PAPER_HELP, "paper"),), refs_core,
            paged=True),
    Command("search", "Full-text search over titles, abstracts and author names, paged",
            (Opt("query", "words to look for, or an author's name", autocomplete="author_name"),), search_core,
            paged=True),
]
