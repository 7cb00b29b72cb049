"""Rendering of "Papers in this message": short cards of the papers a message names, and the
ids the map does not have. Pure: query results -> Reply within Discord's limits."""

from __future__ import annotations

from collections.abc import Sequence

from mapwatch.bot.rendering.render import COLOR, card_head
from mapwatch.bot.rendering.replies import Embed, Field, Pager, Reply
from mapwatch.bot.rendering.text import clip, clip_lines, esc, fit_reply, link, plural
from mapwatch.store.questions.queries import PaperView

CARDS_PER_PAGE = 4
MISSING_SHOWN = 20


def short_card(v: PaperView) -> Embed:
    """A paper's card, short enough that four fit in one message."""
    p = v.paper
    head = card_head(v)
    if not p.has_page:
        head.append(f"No map page of its own yet ({plural(v.citers_stored, 'citer')} known).")
    desc = "\n".join(head) + (f"\n\n{clip(esc(v.abstract), 300)}" if v.abstract else "")
    fields: tuple[Field, ...] = ()
    if v.directions:
        fields = (Field("Directions", clip_lines([f"• {link(d.breadcrumb, d.url)}" for d in v.directions[:3]],
                                                 400)),)
    return Embed(esc(clip(p.title, 250)), desc, p.url, fields, f"/paper {p.id} for the whole card", COLOR)


def papers_in_message(views: Sequence[PaperView], missing: Sequence[str], total: int, pager: Pager) -> Reply:
    """One page of cards (ephemeral), and which ids the map does not have."""
    if total == 0:
        return Reply(content="No arXiv ids or links in this message (arXiv abs, pdf or html links, ids such as "
                             "2412.10400 or hep-th/9901001, and the map's /paper/ links count).", ephemeral=True)
    found = total - len(missing)
    words = [f"{found} of the {total} papers this message names {'is' if found == 1 else 'are'} in the map" if total > 1
             else ("The paper this message names is in the map" if found else "")]
    if missing:
        shown = ", ".join(f"`{m}`" for m in missing[:MISSING_SHOWN])
        more = f" and {len(missing) - MISSING_SHOWN} more" if len(missing) > MISSING_SHOWN else ""
        words.append(f"Not in the map: {shown}{more}.")
    if pager.pages > 1:
        words.append(f"Page {pager.page + 1} of {pager.pages}.")
    content = ". ".join(w for w in words if w).replace("..", ".")
    return fit_reply(Reply(content=content, embeds=tuple(short_card(v) for v in views), ephemeral=True,
                           pager=pager if pager.pages > 1 else None))
