"""Deliveries to a forum channel (docs/bot.md): each alert is a post (a thread) titled by its
citing paper and tagged with its direction; a later alert about a paper that has a post goes
into that post; a digest is one post per period.

The outcome is a `Sent` like any post, so bot.sending.delivery's one policy applies (retry, disable,
give up). Forum posts carry no nonce: a resend (a delivery that may have been posted before a
crash) first looks for its marker among the bot's active posts in the forum, or in the post it
goes to, and is not posted again when found.
"""

from __future__ import annotations

import logging
from typing import Any

from mapwatch.bot.rendering.render_follow import Delivery, ForumPost
from mapwatch.bot.sending.outcomes import HISTORY_LIMIT, Sent, allowed_mentions, carries_marker, outcome_of
from mapwatch.store.subscriptions import team_channels
from mapwatch.store.subscriptions.follows import Place

log = logging.getLogger("mapwatch.delivery")

FORUM_TAGS_MAX = 20  # Discord's limit of tags in a forum
POST_TAGS_MAX = 5  # tags applied to one post


def _message_payload(delivery: Delivery) -> dict[str, Any]:
    from mapwatch.bot.interactions import to_embed

    payload: dict[str, Any] = {"embeds": [to_embed(e).to_dict() for e in delivery.embeds],
                               "allowed_mentions": allowed_mentions(delivery.role_ids).to_dict()}
    if delivery.content:
        payload["content"] = delivery.content
    return payload


async def _record(client: Any, place: Place, post: ForumPost, thread_id: int) -> None:
    runner = getattr(client, "runner", None)
    if runner is not None:
        await runner.call(team_channels.record_forum_post, place.channel_id, post.keys, thread_id, client.clock())


async def tag_id(client: Any, forum_id: int, name: str) -> str | None:
    """The id of the forum's tag called `name` (any case); created when missing and the forum has
    fewer than 20; None (no tag) when it is full, or the bot may not edit the forum, or on any error."""
    import discord
    from discord.http import Route

    if not name:
        return None
    try:
        channel = await client.http.get_channel(forum_id)
        tags = list(channel.get("available_tags") or [])
        found = next((t for t in tags if str(t.get("name", "")).casefold() == name.casefold()), None)
        if found is not None:
            return str(found["id"])
        if len(tags) >= FORUM_TAGS_MAX:
            log.info("forum %d has %d tags already: the post about %r goes untagged", forum_id, len(tags), name)
            return None
        kept = [{k: t[k] for k in ("id", "name", "moderated", "emoji_id", "emoji_name") if k in t} for t in tags]
        edited = await client.http.request(Route("PATCH", "/channels/{channel_id}", channel_id=forum_id),
                                           json={"available_tags": [*kept, {"name": name}]})
        made = next((t for t in edited.get("available_tags") or [] if t.get("name") == name), None)
        return str(made["id"]) if made else None
    except (TimeoutError, discord.HTTPException, OSError) as e:
        log.warning("no tag %r for a post in forum %d (%s)", name, forum_id, getattr(e, "status", type(e).__name__))
        return None


async def _find_post(client: Any, place: Place, nonce: str) -> int | None:
    """A post of the bot in the forum whose first message carries the delivery's marker."""
    import discord
    from discord.http import Route

    me = getattr(client.user, "id", None)
    try:
        active = await client.http.request(Route("GET", "/guilds/{guild_id}/threads/active",
                                                 guild_id=place.guild_id))
        threads = [t for t in active.get("threads", []) if int(t.get("parent_id") or 0) == place.channel_id
                   and int(t.get("owner_id") or 0) == me]
        for t in sorted(threads, key=lambda t: int(t["id"]), reverse=True)[:HISTORY_LIMIT]:
            first = await client.http.get_message(int(t["id"]), int(t["id"]))
            footers = [(e.get("footer") or {}).get("text", "") for e in first.get("embeds", [])]
            footers.append(str(first.get("content") or "").rsplit("-# ", 1)[-1])
            if carries_marker(footers, nonce):
                return int(t["id"])
    except (TimeoutError, discord.HTTPException, OSError) as e:
        log.warning("could not read forum %d's posts (%s): posting", place.channel_id, type(e).__name__)
    return None


async def _into_post(client: Any, place: Place, delivery: Delivery, nonce: str, thread_id: int) -> Sent | None:
    """Post into an existing post; None when that post is gone (then a new one is opened)."""
    import discord

    from mapwatch.bot.interactions import to_embed

    channel = client.get_partial_messageable(thread_id, guild_id=place.guild_id)
    post = delivery.forum
    assert post is not None
    try:
        if post.resend:
            async for msg in channel.history(limit=HISTORY_LIMIT):
                texts = [e.footer.text or "" for e in msg.embeds if e.footer]
                if msg.author.id == getattr(client.user, "id", None) and carries_marker(texts, nonce):
                    return Sent("ok", msg.id, found=True, channel_id=thread_id)
        msg = await channel.send(content=delivery.content or None, embeds=[to_embed(e) for e in delivery.embeds],
                                 allowed_mentions=allowed_mentions(delivery.role_ids), nonce=nonce)
    except discord.NotFound:
        runner = getattr(client, "runner", None)
        if runner is not None:
            await runner.call(team_channels.forget_forum_post, thread_id)
        log.info("post %d in forum %d is gone: opening a new one", thread_id, place.channel_id)
        return None
    except (TimeoutError, discord.HTTPException, OSError) as e:
        return outcome_of(e)
    await _record(client, place, post, thread_id)  # the alert's other citers join this post
    return Sent("ok", msg.id, channel_id=thread_id)


async def send_forum(client: Any, place: Place, delivery: Delivery, nonce: str) -> Sent:
    """Deliver to a forum: into the post of one of its citing papers, or as a new post."""
    import discord
    from discord.http import Route

    post = delivery.forum
    assert post is not None
    if post.thread_id is not None:
        into = await _into_post(client, place, delivery, nonce, post.thread_id)
        if into is not None:
            return into
    if post.resend and (found := await _find_post(client, place, nonce)) is not None:
        await _record(client, place, post, found)
        return Sent("ok", found, found=True, channel_id=found)
    tag = await tag_id(client, place.channel_id, post.tag)
    body: dict[str, Any] = {"name": post.title, "message": _message_payload(delivery)}
    if tag is not None:
        body["applied_tags"] = [tag]
    try:
        thread = await client.http.request(Route("POST", "/channels/{channel_id}/threads",
                                                 channel_id=place.channel_id), json=body)
    except (TimeoutError, discord.HTTPException, OSError) as e:
        return outcome_of(e)
    thread_id = int(thread["id"])
    await _record(client, place, post, thread_id)
    return Sent("ok", thread_id, channel_id=thread_id)  # a post's first message has the post's id
