"""The one delivery policy and the one sender, shared by track alerts, follows and digests
(docs/bot.md, "Alerts"); bot.sending.delivery_loop runs the rounds.

How a post went (`Sent`, from `outcome_of` for a discord.py error) decides what happens:

- `ok`: Discord accepted it; the cursor moves (or the digest period is recorded).
- `gone` (404) / `forbidden` (403): what was meant for that channel is disabled, with why.
- `retry` (a 5xx, 429, a timeout, a broken connection; discord.py has already retried the
  5xx and 429 with backoff): nothing changes, the next tick tries again, for as long as it takes.
- `refused` (any other 4xx, e.g. 400 Invalid Form Body 50035): Discord will refuse it again.
  After `MAX_REFUSALS` refusals of the same delivery (counted by its nonce in `bot_state`),
  it is recorded as failed with the HTTP status, Discord's code and message (in the log and
  in /tracked), and the cursor moves past it, so later citers are delivered.

A delivery recorded as "sending" may have been posted already (a crash, a lost answer).
It is resent with the same enforced nonce, but Discord forgets nonces after a few minutes:
when its first try is older than `NONCE_WINDOW`, the channel's last `HISTORY_LIMIT`
messages are searched for its marker (`ref <nonce>` at the end of its first embed's
footer, which every delivery carries) and it is resent only when absent.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import replace
from datetime import datetime, timedelta
from typing import Any

from mapwatch.bot.rendering import text
from mapwatch.bot.rendering.render_follow import Delivery
from mapwatch.bot.rendering.replies import Reply
from mapwatch.bot.sending.outcomes import (
    FORBIDDEN,
    GONE,
    HISTORY_LIMIT,
    MARKER,
    Sent,
    allowed_mentions,
    carries_marker,
    outcome_of,
)
from mapwatch.bot.sending.pacer import Pacer
from mapwatch.store.subscriptions import bot_state
from mapwatch.store.subscriptions.follows import Place

log = logging.getLogger("mapwatch.delivery")

MAX_REFUSALS = 3  # permanent refusals of one delivery before it is recorded as failed
NONCE_WINDOW = timedelta(minutes=5)  # how long Discord is trusted to drop a repeated enforced nonce


Call = Callable[..., Awaitable[Any]]
Send = Callable[[Place, Delivery, str], Awaitable[Sent]]  # place, message, nonce
Find = Callable[[Place, str], Awaitable[int | None]]  # place, nonce -> the message carrying its marker


def marked(delivery: Delivery, nonce: str) -> Delivery:
    """The delivery with its marker at the end of its first embed's footer (or, without an
    embed, in a last line of its content), still within Discord's limits."""
    tag = f"{MARKER}{nonce}"
    if not delivery.embeds:
        content = text.clip(delivery.content, text.CONTENT_MAX - len(tag) - 4)
        return replace(delivery, content=f"{content}\n-# {tag}".strip())
    first = delivery.embeds[0]
    footer = text.clip(first.footer, text.FOOTER_MAX - len(tag) - 3)
    embeds = (replace(first, footer=f"{footer} · {tag}" if footer else tag), *delivery.embeds[1:])
    fitted = text.fit_reply(Reply(content=delivery.content, embeds=embeds))  # the first embed keeps its footer
    return replace(delivery, content=fitted.content, embeds=fitted.embeds)


def needs_lookup(sending_since: str | None, now: datetime) -> bool:
    """A resend whose first try is older than Discord's nonce memory."""
    if not sending_since:
        return False
    try:
        since = datetime.fromisoformat(sending_since)
    except ValueError:
        return True
    return now - since >= NONCE_WINDOW


async def post(send: Send, find: Find | None, pacer: Pacer, place: Place, delivery: Delivery, nonce: str,
               sending_since: str | None, now: datetime) -> Sent:
    """Post a delivery (with its marker), unless it is a resend older than the nonce window
    that the channel's recent messages already hold."""
    if find is not None and needs_lookup(sending_since, now):
        await pacer.wait()
        found = await find(place, nonce)
        if found is not None:
            log.info("delivery %s is already in channel %d (message %d): not sent again",
                     nonce, place.channel_id, found)
            return Sent("ok", found, found=True)
    await pacer.wait()
    return await send(place, marked(delivery, nonce), nonce)


async def settle(call: Call, label: str, nonce: str, result: Sent, now: datetime, *,
                 delivered: Callable[[Sent], Awaitable[Any]], disable: Callable[[str], Awaitable[Any]],
                 give_up: Callable[[str], Awaitable[Any]]) -> bool:
    """Apply the policy to one post's result. True when the delivery reached the channel."""
    if result.status == "ok":
        await delivered(result)
        await call(bot_state.clear_refusals, nonce)
        return True
    if result.status in ("gone", "forbidden"):
        await disable(GONE if result.status == "gone" else FORBIDDEN)
        await call(bot_state.clear_refusals, nonce)
        return False
    if result.status == "refused":
        n = await call(bot_state.count_refusal, nonce, now)
        if n >= MAX_REFUSALS:
            log.error("%s refused by Discord %d times (%s): recorded as failed and passed over",
                      label, n, result.reason)
            await give_up(result.reason)
            await call(bot_state.clear_refusals, nonce)
        else:
            log.warning("%s refused by Discord (%s): try %d of %d", label, result.reason, n, MAX_REFUSALS)
        return False
    why = result.reason if result.http_status else (result.text or "no answer")
    log.warning("%s not delivered (%s); will retry", label, why)
    return False


def discord_sender(client: Any) -> Send:
    """`send` for a discord.py client: posts to the place's channel (or DM channel)."""
    import discord

    from mapwatch.bot.interactions import to_embed

    async def send(place: Place, delivery: Delivery, nonce: str) -> Sent:
        if delivery.forum is not None:
            from mapwatch.bot.sending.delivery_forum import send_forum

            return await send_forum(client, place, delivery, nonce)
        channel = client.get_partial_messageable(place.channel_id, guild_id=place.guild_id)
        try:
            msg = await channel.send(content=delivery.content or None,
                                     embeds=[to_embed(e) for e in delivery.embeds],
                                     allowed_mentions=allowed_mentions(delivery.role_ids), nonce=nonce)
        except (TimeoutError, discord.HTTPException, OSError) as e:
            return outcome_of(e)
        if delivery.thread_name:
            await open_thread(client, place, msg.id, delivery.thread_name)
        return Sent("ok", msg.id)

    return send


THREAD_ARCHIVE_MINUTES = 10080  # a week without messages, then a discussion thread archives (docs/bot.md)
THREAD_PERMISSION = "Create Public Threads"
THREAD_EXISTS = 160004  # Discord: "A thread has already been created for this message"
THREAD_NOTICE = "thread_notice:"  # bot_state key prefix: the channel was told threads cannot be opened


async def open_thread(client: Any, place: Place, message_id: int, name: str) -> bool:
    """Open the discussion thread of an alert just posted. The alert stands whatever happens:
    a thread that exists already (a resend) is fine; without the permission, the channel is
    told once, by the permission's name, and alerts keep coming plain; other failures are
    logged. True when the message has its thread."""
    import discord

    try:
        await client.http.start_thread_with_message(place.channel_id, message_id, name=name,
                                                    auto_archive_duration=THREAD_ARCHIVE_MINUTES)
    except discord.Forbidden as e:
        log.warning("no thread for the alert in channel %d: the bot lacks %s (HTTP 403, Discord error %s)",
                    place.channel_id, THREAD_PERMISSION, e.code)
        await _notice_once(client, place)
        return False
    except discord.HTTPException as e:
        if e.code == THREAD_EXISTS:
            return True
        log.warning("no thread for the alert in channel %d (HTTP %s, Discord error %s)", place.channel_id,
                    e.status, e.code)
        return False
    except (TimeoutError, OSError) as e:
        log.warning("no thread for the alert in channel %d (%s)", place.channel_id, type(e).__name__)
        return False
    runner = getattr(client, "runner", None)
    if runner is not None and await runner.call(bot_state.get_state, f"{THREAD_NOTICE}{place.channel_id}"):
        await runner.call(bot_state.delete_state, f"{THREAD_NOTICE}{place.channel_id}")  # told again if lost again
    return True


async def _notice_once(client: Any, place: Place) -> None:
    """Tell the channel, once, that its alerts come without threads and which permission is missing."""
    import discord

    runner = getattr(client, "runner", None)
    key = f"{THREAD_NOTICE}{place.channel_id}"
    if runner is None or await runner.call(bot_state.get_state, key):
        return
    channel = client.get_partial_messageable(place.channel_id, guild_id=place.guild_id)
    try:
        await channel.send(f"Alerts here are set to open a discussion thread each, but I lack the "
                           f"**{THREAD_PERMISSION}** permission in this channel. Alerts keep coming as plain "
                           "messages; grant it and the next alert opens its thread.",
                           allowed_mentions=discord.AllowedMentions.none())
    except (TimeoutError, discord.HTTPException, OSError) as e:
        log.warning("could not tell channel %d about the missing %s permission (%s)", place.channel_id,
                    THREAD_PERMISSION, type(e).__name__)
        return
    await runner.call(bot_state.set_state, key, "told", client.clock())


def discord_finder(client: Any) -> Find:
    """`find` for a discord.py client: the id of a recent message in the place's channel
    whose footer carries the delivery's marker (None when absent or unreadable)."""
    import discord

    async def find(place: Place, nonce: str) -> int | None:
        channel = client.get_partial_messageable(place.channel_id, guild_id=place.guild_id)
        try:
            async for msg in channel.history(limit=HISTORY_LIMIT):
                if msg.author.id != getattr(client.user, "id", None):
                    continue
                texts = [e.footer.text or "" for e in msg.embeds if e.footer]
                texts.append((msg.content or "").rsplit("-# ", 1)[-1])
                if carries_marker(texts, nonce):
                    return msg.id
        except (TimeoutError, discord.HTTPException, OSError) as e:
            log.warning("could not read channel %d's recent messages (%s): resending %s",
                        place.channel_id, type(e).__name__, nonce)
        return None

    return find
