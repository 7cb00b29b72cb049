"""A delivery (bot.rendering.render_follow.Delivery) as a Slack message in Block Kit, within Slack's
documented limits: at most 50 blocks, a header's text 150 characters, a section's text 3,000, a
context's elements 10, and the top-level `text` (the notification's fallback) 40,000. Discord's
markdown becomes Slack's mrkdwn: `[title](url)` a `<url|title>` link, `**bold**` `*bold*`; `&`,
`<` and `>` are escaped as Slack asks, so page text cannot ping (`<!channel>`) or forge a link."""

from __future__ import annotations

import re
from typing import Any

from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.bot.rendering.text import clip

BLOCKS_MAX = 50
HEADER_MAX = 150
SECTION_MAX = 3000
CONTEXT_ELEMENTS_MAX = 10
TEXT_MAX = 40_000
_LINK = re.compile(r"\[([^\[\]]+)\]\((https?://[^()\s]+)\)")
_BOLD = re.compile(r"\*\*(.+?)\*\*")
_MENTION = re.compile(r"<@&?\d+>")


def escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def mrkdwn(text: str) -> str:
    """Discord markdown -> Slack mrkdwn (escaped first; links rebuilt from the escaped text)."""
    text = escape(_MENTION.sub("", text))
    text = _LINK.sub(lambda m: f"<{m[2]}|{m[1].replace('|', '/')}>", text)
    return _BOLD.sub(r"*\1*", text)


def slack_message(d: Delivery) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    lead = _MENTION.sub("", d.content).strip()
    if lead:
        blocks.append({"type": "section", "text": {"type": "mrkdwn", "text": clip(mrkdwn(lead), SECTION_MAX)}})
    for e in d.embeds:
        if e.title:
            blocks.append({"type": "header", "text": {"type": "plain_text", "text": clip(e.title, HEADER_MAX)}})
        if e.description:
            blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                       "text": clip(mrkdwn(e.description), SECTION_MAX)}})
        for f in e.fields:
            blocks.append({"type": "section", "text": {"type": "mrkdwn",
                                                       "text": clip(f"*{mrkdwn(f.name)}*\n{mrkdwn(f.value)}",
                                                                    SECTION_MAX)}})
        if e.url:
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": f"<{e.url}|open in the map>"}]})
        if e.footer:
            blocks.append({"type": "context", "elements": [{"type": "mrkdwn",
                                                            "text": clip(escape(e.footer), SECTION_MAX)}]})
    if len(blocks) > BLOCKS_MAX:
        more = {"type": "context", "elements": [
            {"type": "mrkdwn", "text": f"… and {len(blocks) - BLOCKS_MAX + 1} more parts in the map"}]}
        blocks = [*blocks[:BLOCKS_MAX - 1], more]
    fallback = lead or (d.embeds[0].title if d.embeds else "mapwatch")
    return {"text": clip(escape(fallback), TEXT_MAX), "blocks": blocks, "unfurl_links": False}
