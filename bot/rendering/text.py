"""Text for Discord, in one place: its limits, clipping, "… and N more", escaping and safe links.

Limits (docs/design.md, "3. Discord's limits"): content 2000; embed title 256, description 4096,
25 fields (name 256, value 1024), footer 2048, 6000 characters in total per message, 10 embeds;
autocomplete choice names and values 100. Long lists are summarised ("… and N more"), never
split into a burst of messages. Text from pages is escaped so it can neither format nor ping.
Pure: no discord import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from mapwatch.bot.rendering.replies import Embed, Field, Reply
from mapwatch.store.questions.types import Byline, CitingContext, intent_words
from mapwatch.store.urls import safe_http_url

TITLE_MAX, DESC_MAX, FIELDS_MAX, FIELD_NAME_MAX, FIELD_VALUE_MAX = 256, 4096, 25, 256, 1024
FOOTER_MAX, TOTAL_MAX, CONTENT_MAX, EMBEDS_MAX = 2048, 6000, 2000, 10
CHOICE_MAX = 100  # autocomplete choice names and values
LINK_MAX = 400  # longer links are shown as text only

_MD = re.compile(r"([\\*_~`|>\[\]<]|^[#-])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u200b-\u200f\u202a-\u202e\u2066-\u2069]")
_MENTION = re.compile(r"@(?=everyone|here|[!&]?\d)", re.IGNORECASE)
_LINKABLE = re.compile(r"https?://[^\s()<>\[\]\"'`]+")  # nothing that ends a Markdown link


# -- escaping -----------------------------------------------------------------------------------

def strip_control(text: str) -> str:
    """Without control and direction-changing characters."""
    return _CONTROL.sub("", text)


def clean(text: str | None) -> str:
    """Page text made safe to show: no control characters, no mentions, one line."""
    if not text:
        return ""
    text = _MENTION.sub("@\u2060", strip_control(text))
    return " ".join(text.split())


def esc(text: str | None) -> str:
    """Clean, then escape Markdown so titles show literally (and links stay links)."""
    return _MD.sub(r"\\\1", clean(text))


def role_mention(role_id: int) -> str:
    """The one mention a delivery may carry: the role chosen on /follow or /track."""
    return f"<@&{int(role_id)}>"


def plural(n: int, word: str, many: str = "") -> str:
    """"1 paper", "2 papers"; `many`: the plural when it is not `word` + s ("person", "people")."""
    return f"{n} {word if n == 1 else many or word + 's'}"


def thousands(n: int, word: str) -> str:
    """`plural` with the thousands separated: "1 citation", "76,883 citations"."""
    return f"{n:,} {word if n == 1 else word + 's'}"


def counted(n: int, word: str, capped: bool) -> str:
    """`plural`, or for a count that stopped at `n` (more were not counted), "5,000+ papers"."""
    return f"{n:,}+ {word}s" if capped else plural(n, word)


# -- clipping -----------------------------------------------------------------------------------

def clip(text: str, limit: int) -> str:
    """Cut at a word boundary with an ellipsis, never over `limit` characters."""
    if len(text) <= limit:
        return text
    cut = text[: max(0, limit - 1)]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    while cut.endswith("\\"):  # never leave a dangling escape
        cut = cut[:-1]
    return cut.rstrip() + "…"


def one_line(text: str, limit: int) -> str:
    """Whitespace folded to single spaces, then clipped (plain text: titles in pictures and graph answers)."""
    return clip(" ".join(text.split()), limit)


def and_more(n: int, at_least: bool = False) -> str:
    return f"… and at least {n:,} more" if at_least else f"… and {n} more"


def clip_lines(lines: Sequence[str], limit: int, more: int = 0, *, at_least: bool = False) -> str:
    """Whole lines, at most `limit` characters in all; the lines left out (and `more` not given)
    become a last line "… and N more" ("… and at least N more" when `more` is a lower bound)."""
    out: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        after = len(lines) - i - 1 + more
        need = len(line) + (1 if out else 0)
        reserve = len("\n" + and_more(after, at_least)) if after else 0
        if used + need + reserve > limit:
            left = len(lines) - i + more
            while out and used + 1 + len(and_more(left, at_least)) > limit:
                used -= len(out.pop()) + (1 if out else 0)
                left += 1
            out.append(and_more(left, at_least))
            return "\n".join(out)[:limit]
        out.append(line)
        used += need
    if more:
        out.append(and_more(more, at_least))
    return clip("\n".join(out), limit)


# -- links --------------------------------------------------------------------------------------

def safe_link(url: str | None) -> str | None:
    """`url` if it may be shown as a link: http(s) with a host (store/urls.py, the one rule for
    links from pages), at most 400 characters, and nothing that ends a Markdown link."""
    u = safe_http_url(url)
    return u if u and len(u) <= LINK_MAX and _LINKABLE.fullmatch(u) else None


def link(title: str | None, url: str | None, limit: int | None = None) -> str:
    """A Markdown link with an escaped title (plain title when the URL is not safe)."""
    t = esc(title)
    t = (clip(t, limit) if limit else t) or "untitled"
    u = safe_link(url)
    return f"[{t}]({u})" if u else t


# -- whole messages -----------------------------------------------------------------------------

def embed_size(e: Embed) -> int:
    return (len(e.title) + len(e.description) + len(e.footer)
            + sum(len(f.name) + len(f.value) for f in e.fields))


def fit_embed(e: Embed, budget: int = TOTAL_MAX) -> Embed:
    """An embed within every per-field limit and `budget` characters in total."""
    fields = tuple(Field(clip(f.name, FIELD_NAME_MAX) or "\u200b", clip(f.value, FIELD_VALUE_MAX) or "\u200b",
                         f.inline) for f in e.fields[:FIELDS_MAX])
    e = Embed(clip(e.title, TITLE_MAX), clip(e.description, DESC_MAX),
              safe_link(e.url), fields, clip(e.footer, FOOTER_MAX), e.color)
    while embed_size(e) > budget and e.fields:
        e = Embed(e.title, e.description, e.url, e.fields[:-1], e.footer, e.color)
    if embed_size(e) > budget:
        room = budget - len(e.title) - len(e.footer)
        e = Embed(e.title, clip(e.description, max(0, room)), e.url, (), e.footer, e.color)
    return e


def fit_reply(r: Reply) -> Reply:
    """The whole message within Discord's limits: content, at most 10 embeds, 6000 in total."""
    embeds: list[Embed] = []
    budget = TOTAL_MAX
    for e in r.embeds[:EMBEDS_MAX]:
        if budget < 50:
            break
        fitted = fit_embed(e, budget)
        embeds.append(fitted)
        budget -= embed_size(fitted)
    return Reply(clip(strip_control(r.content), CONTENT_MAX), tuple(embeds), r.ephemeral, r.pager, r.files)


# -- authors ------------------------------------------------------------------------------------

BYLINE_MAX = 160  # a byline under a paper in a list
SELF_MARK = "↺ self-citation"  # a citing paper sharing an author with the cited one
CONTEXT_MAX = 300  # a citing sentence in an alert
CONTEXTS_SHOWN = 2


def byline(b: Byline | None, limit: int = BYLINE_MAX) -> str:
    """"A. Vaswani, N. Shazeer, … (Google Brain)", escaped and clipped; "" without a byline."""
    if b is None or not b.authors:
        return ""
    return clip(esc(b.short()), limit)


def venue_mark(b: Byline | None) -> str:
    """" · in ACM Computing Surveys" for a citer beyond arXiv (a DOI names it less than its
    venue does); "" for an arXiv paper, or when no venue is known."""
    where = b.outside_venue() if b is not None else None
    return f" · in {clip(esc(where), 100)}" if where else ""


def citation_marks(c: CitingContext | None) -> str:
    """A list's marks of a citation: " · uses its method · influential" ("" when none)."""
    if c is None:
        return ""
    said = [*intent_words(c.intents, "its"), *(["influential"] if c.influential else [])]
    return "".join(f" · {w}" for w in said)


def intent_notes(intent: str | None, other: int, unclassified: int) -> list[str]:
    """What `intent:` left out of an alert: "2 citations of another intent and 1 Semantic Scholar
    has not classified yet left out (intent:methodology)." (none: nothing)."""
    if not intent or not (other or unclassified):
        return []
    parts = [f"{other} {'citation' if other == 1 else 'citations'} of another intent"] if other else []
    if unclassified:
        parts.append(f"{unclassified} Semantic Scholar has not classified yet")
    return [f"{' and '.join(parts)} left out (intent:{intent})."]


def citing_context(c: CitingContext | None) -> list[str]:
    """What the citing paper says where it cites: up to two sentences as quotes, clipped, then
    where it comes from, its intents as words and whether Semantic Scholar counts the citation
    as influential."""
    if c is None or not (c.sentences or c.intents or c.influential):
        return []
    quotes = [f"> “{clip(esc(s), CONTEXT_MAX)}”" for s in c.sentences[:CONTEXTS_SHOWN]]
    said = [*intent_words(c.intents), *(["influential citation"] if c.influential else [])]
    return [*quotes, "— Semantic Scholar" + "".join(f" · {w}" for w in said)]
