"""The message context menu "Papers in this message": the papers a message names, as cards."""

from __future__ import annotations

from sqlite_utils import Database

from mapwatch.bot.commands import Command, Opt, pages
from mapwatch.bot.rendering.render_message import CARDS_PER_PAGE, papers_in_message
from mapwatch.bot.rendering.replies import Ctx, Pager, Reply
from mapwatch.store.errors import BadOption
from mapwatch.store.ids import ID_RE, TEXT_IDS_MAX, ids_in_text
from mapwatch.store.questions import queries

MENU_NAME = "Papers in this message"
TEXT_MAX = 20_000  # characters of a message read (content and embeds: Discord's own bound is ~8000)


def in_message_core(db: Database, ctx: Ctx, *, text: str = "", ids: str = "", page: int | None = None) -> Reply:
    """`text` (the message, first run) or `ids` (comma-separated, from a page button)."""
    found = [i for i in ids.split(",")[:TEXT_IDS_MAX] if ID_RE.match(i)] if ids else ids_in_text(text[:TEXT_MAX])
    n = page or 0
    if n < 0 or n > 100:
        raise BadOption("no such page")
    rows = {pid: queries.get_paper(db, pid) for pid in found}
    known = [pid for pid in found if rows[pid] is not None]
    missing = [pid for pid in found if rows[pid] is None]
    total_pages = pages(len(known), CARDS_PER_PAGE)
    n = min(n, total_pages - 1)
    views = [queries.paper_view(db, pid, top=1) for pid in known[n * CARDS_PER_PAGE:(n + 1) * CARDS_PER_PAGE]]
    return papers_in_message(views, missing, len(found), Pager("inmessage", {"ids": ",".join(found)}, n, total_pages))


COMMANDS = [
    Command("inmessage", "The papers a message names (arXiv ids and links, map links), as cards",
            (Opt("text", "the message's text"),), in_message_core, paged=True, menu=MENU_NAME, user_install=True),
]
